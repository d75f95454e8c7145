# A short torch program written for gradstack's drop-in tests (issue 35): a small MLP
# classifier trained on CPU under torch.autocast("cpu", dtype=torch.bfloat16), as the
# mixed-precision recipes do, printing losses and the dtypes autocast gives each op;
# then bfloat16 tensors directly (casts, rounding, a bfloat16 model's forward).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(64, 10)
w_true = torch.randn(10, 3)
y = (X @ w_true).argmax(1)

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(8):
    for i in range(0, 64, 16):
        xb, yb = X[i : i + 16], y[i : i + 16]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f} logits {logits.dtype} loss {loss.dtype}")

print("weights stay", model[0].weight.dtype, "grads", model[0].weight.grad.dtype)
with torch.no_grad(), torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    h = model[0](X)
    print("linear:", h.dtype, "relu:", model[1](h).dtype, "softmax:", h.softmax(-1).dtype)
    print("matmul:", (X @ w_true).dtype, "add:", (X + 1).dtype, "sum:", h.sum().dtype)
    print("enabled:", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.autocast("cpu", enabled=False):
        print("disabled inside:", model[0](X).dtype)
print("outside:", torch.is_autocast_enabled("cpu"))
acc = (model(X).argmax(1) == y).float().mean().item()
print("accuracy:", acc)

b = torch.tensor([1.0, 1.00390625, 3.14159265, 1e-3, 65504.0, 1e38]).to(torch.bfloat16)
print(b, b.dtype, b.element_size())
print(b.float().tolist())
print(torch.finfo(torch.bfloat16))
x16 = X[:4].bfloat16()
model16 = nn.Linear(10, 3).to(torch.bfloat16)
with torch.no_grad():
    out16 = model16(x16)
print(out16.dtype, out16.float().sum().item(), (x16.float() - X[:4]).abs().max().item() < 0.01)
