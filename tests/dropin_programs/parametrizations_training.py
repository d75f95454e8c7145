# A short torch program written for gradstack's drop-in tests (issue 35), after the
# "Parametrizations" tutorial (pytorch/tutorials, intermediate_source/parametrizations.py):
# a symmetric and a skew-symmetric parametrization, cached(), right_inverse, removal, and
# weight_norm / spectral_norm / orthogonal layers trained a few SGD steps.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as P
from torch.nn.utils import parametrizations


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


layer = nn.Linear(3, 3)
P.register_parametrization(layer, "weight", Symmetric())
print(torch.allclose(layer.weight, layer.weight.T), type(layer).__name__)
print(layer.parametrizations)
layer.weight = torch.eye(3) * 2
print(layer.weight)
rot = nn.Linear(3, 3)
P.register_parametrization(rot, "weight", Skew())
P.register_parametrization(rot, "weight", MatrixExponential())
Q = rot.weight
print("orthogonal:", torch.dist(Q.T @ Q, torch.eye(3)).item() < 1e-5)
with P.cached():
    print(rot.weight is rot.weight)
P.remove_parametrizations(layer, "weight")
print(type(layer).__name__, [n for n, _ in layer.named_parameters()])

model = nn.Sequential(
    parametrizations.weight_norm(nn.Linear(4, 8)),
    nn.Tanh(),
    parametrizations.orthogonal(nn.Linear(8, 8)),
    nn.Tanh(),
    parametrizations.spectral_norm(nn.Linear(8, 1)),
)
print(sorted(model.state_dict()))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for step in range(5):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 5))
W = model[2].weight
print("still orthogonal:", torch.dist(W.T @ W, torch.eye(8)).item() < 1e-5)
print(model[4].parametrizations.weight[0]._u)
