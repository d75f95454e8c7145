# A short torch program written for gradstack's drop-in tests (issue 35): PCA by torch.svd,
# attention masking with torch.inf, torch.pi, randint(high, size=), the DataLoader imported
# from its module path, resize_, in-place forms.  Only sign-free SVD quantities are printed
# (singular vectors' signs are LAPACK's, Note [SVD's signs are LAPACK's]).
import math

import torch
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.dataset import TensorDataset

X = torch.randn(200, 5) @ torch.randn(5, 5)
X = X - X.mean(0, keepdim=True)
U, S, V = torch.svd(X)
explained = S**2 / (S**2).sum()
print("explained variance:", [round(v, 5) for v in explained.tolist()])
k = 2
recon = U[:, :k] @ torch.diag(S[:k]) @ V[:, :k].T
print("rank-2 reconstruction error:", round((X - recon).norm().item(), 4))
print("svdvals agree:", torch.allclose(torch.linalg.svdvals(X), S))

# attention scores with a causal mask of -inf
T = 4
q, kk = torch.randn(T, 8), torch.randn(T, 8)
att = (q @ kk.T) / math.sqrt(8)
att = att.masked_fill(torch.triu(torch.ones(T, T), 1).bool(), -torch.inf)
print(att.softmax(-1))
print(
    "angle:", torch.tensor([-1.0, 2.0]).angle(), "pi:", round(torch.pi, 6), "e:", round(torch.e, 6)
)

labels = torch.randint(3, size=(6,))
print("labels:", labels)
ds = TensorDataset(torch.arange(12.0).reshape(6, 2), labels)
for xb, yb in DataLoader(ds, batch_size=4, shuffle=True):
    print(xb.sum().item(), yb.tolist())

x = torch.arange(6.0)
x.resize_(2, 3)
x.unsqueeze_(0)
x.mul_(2).deg2rad_().nan_to_num_()
print(x.shape, x)
w = torch.ones(3, requires_grad=True)
loss = (w * torch.tensor([1.0, -2.0, 3.0])).clone().absolute_().sum()
loss.backward()
print("grad:", w.grad)
