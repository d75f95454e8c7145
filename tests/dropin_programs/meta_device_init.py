# A short torch program written for gradstack's drop-in tests (issue 35): building models
# on the 'meta' device (no memory, shapes and dtypes only), counting their parameters,
# propagating shapes through them, then materialising with to_empty and initialising
# with reset_parameters and a seeded init, as large-model loaders do.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        return x + self.ff(self.norm(x))


class Model(nn.Module):
    def __init__(self, vocab=50, d=32, n=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(n)])
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        return self.head(self.blocks(self.emb(idx)))


with torch.device("meta"):
    model = Model()
n_params = sum(p.numel() for p in model.parameters())
print("parameters:", n_params, "device:", next(model.parameters()).device)
print("is_meta:", model.head.weight.is_meta, model.head.weight.dtype)
out = model(torch.zeros(2, 7, dtype=torch.long, device="meta"))
print("meta output:", out.shape, out.device, out.dtype)
x = torch.empty(3, 4, device="meta")
print((x @ x.T).shape, x.sum(1).shape, x.t().shape, x.new_zeros(2).device)

big = nn.Linear(10_000, 10_000, device="meta")
print("meta linear:", big.weight.shape, big.weight.nbytes)

model = model.to_empty(device="cpu")
torch.manual_seed(0)
for m in model.modules():
    if isinstance(m, (nn.Linear, nn.Embedding, nn.LayerNorm)):
        m.reset_parameters()
print("materialised:", next(model.parameters()).device, model.head.weight.is_meta)
logits = model(torch.randint(0, 50, (2, 7)))
print("logits:", logits.shape, logits.mean().item(), logits.std().item())
print("layernorm init:", model.blocks[0].norm.weight[:3], model.blocks[0].norm.bias[:3])

meta_sd = Model().to("meta").state_dict()
print("meta state_dict:", len(meta_sd), meta_sd["head.weight"].device)
fresh = Model(vocab=50)
missing = fresh.load_state_dict(model.state_dict())
print(missing, torch.equal(fresh.head.weight, model.head.weight))
