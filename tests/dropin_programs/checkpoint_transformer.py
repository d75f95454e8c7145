# A short torch program written for gradstack's drop-in tests (issue 35): a small
# transformer whose blocks are checkpointed (torch.utils.checkpoint, both variants, dropout
# inside), trained a few steps beside the same model without checkpointing.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(
            nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.1)
        )

    def forward(self, x):
        q, k, v = self.attn(self.ln1(x)).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / k.size(-1) ** 0.5
        T = x.size(1)
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        x = x + self.proj(F.dropout(att.softmax(-1), 0.1, self.training) @ v)
        return x + self.mlp(self.ln2(x))


class Model(nn.Module):
    def __init__(self, vocab=11, d=16, n=2, mode=None):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n)])
        self.head = nn.Linear(d, vocab)
        self.mode = mode

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            if self.mode is None:
                x = b(x)
            else:
                x = checkpoint(b, x, use_reentrant=self.mode == "reentrant")
        return self.head(x)


data = torch.randint(0, 11, (4, 8))
for mode in (None, "reentrant", "non-reentrant"):
    torch.manual_seed(1)
    model = Model(mode=mode)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(4):
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, 11), data[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    print(mode, losses, round(model.head.weight.grad.norm().item(), 5))

torch.manual_seed(2)
seq = nn.Sequential(
    nn.Linear(6, 12), nn.ReLU(), nn.Dropout(0.2), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 1)
)
x = torch.randn(5, 6, requires_grad=True)
out = checkpoint_sequential(seq, 3, x, use_reentrant=False)
out.sum().backward()
print(out.detach().flatten(), x.grad.abs().sum().item())
