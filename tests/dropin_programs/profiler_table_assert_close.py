# A short torch program written for gradstack's drop-in tests (issue 35): a training loop
# profiled with torch.profiler.profile and record_function blocks, summarised by
# key_averages() (op names and call counts only: timings differ run to run), the table's
# header, and the model's gradients checked with torch.testing.assert_close.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function
from torch.testing import assert_close

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X, y = torch.randn(40, 6), torch.randint(0, 4, (40,))

with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for step in range(3):
        with record_function("data"):
            xb, yb = X[step * 10 : step * 10 + 10], y[step * 10 : step * 10 + 10]
        with record_function("forward"):
            loss = F.cross_entropy(model(xb), yb)
        with record_function("backward"):
            opt.zero_grad()
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        print("step", step, "loss", round(loss.item(), 5))

events = {e.key: e for e in prof.key_averages()}
for name in ["data", "forward", "backward", "optimizer", "aten::addmm", "aten::relu"]:
    print(f"{name:12s} count={events[name].count}")
print("cpu time recorded:", events["forward"].cpu_time_total > 0)
table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
header = [line for line in table.splitlines() if line.strip()][1]
print(header.split()[:3])
print("total line:", any(r.startswith("Self CPU time total: ") for r in table.splitlines()))
by_shape = prof.key_averages(group_by_input_shape=True)
print(sorted({str(e.input_shapes) for e in by_shape if e.key == "aten::addmm"}))

# gradients checked against a finite-difference estimate and a float64 rerun
w = model[0].weight
loss = F.cross_entropy(model(X), y)
g = torch.autograd.grad(loss, w)[0]
model64 = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4)).double()
model64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
g64 = torch.autograd.grad(F.cross_entropy(model64(X.double()), y), model64[0].weight)[0]
assert_close(g, g64.float(), rtol=1e-4, atol=1e-6)
print("float32 grads close to float64's: ok")
try:
    assert_close(g, g64)
except AssertionError as e:
    print("dtype mismatch:", str(e).splitlines()[0])
assert_close(g.double(), g64, rtol=1e-4, atol=1e-6)
eps = 1e-3
with torch.no_grad():
    w[0, 0] += eps
    up = F.cross_entropy(model(X), y)
    w[0, 0] -= 2 * eps
    down = F.cross_entropy(model(X), y)
    w[0, 0] += eps
fd = (up - down) / (2 * eps)
assert_close(fd, g[0, 0], rtol=1e-2, atol=1e-3)
print("finite difference agrees:", round(fd.item(), 3), round(g[0, 0].item(), 3))
