# A short torch program written for gradstack's drop-in tests (issue 35): Gaussian process
# regression in float64 as the GP tutorials write it: an RBF kernel by torch.cdist, the
# marginal likelihood by linalg.cholesky / cholesky_solve / solve_triangular, its
# hyperparameters (softplus-constrained) fitted by Adam, then the posterior mean and
# variance, samples through MultivariateNormal, and the negative log predictive density.
import math

import torch
import torch.nn.functional as F
from torch.distributions import MultivariateNormal

torch.manual_seed(0)
dt = torch.float64
X = torch.rand(30, 1, dtype=dt) * 6 - 3
y = torch.sin(2 * X).squeeze(1) + 0.1 * torch.randn(30, dtype=dt)
Xs = torch.linspace(-3.5, 3.5, 9, dtype=dt).unsqueeze(1)

raw = torch.zeros(3, dtype=dt, requires_grad=True)  # lengthscale, outputscale, noise


def params():
    return F.softplus(raw) + torch.tensor([1e-3, 1e-3, 1e-4], dtype=dt)


def rbf(a, b, lengthscale, outputscale):
    return outputscale * torch.exp(-0.5 * torch.cdist(a, b).pow(2) / lengthscale**2)


def neg_mll():
    ls, os_, noise = params()
    K = rbf(X, X, ls, os_) + noise * torch.eye(30, dtype=dt)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(1), L)
    fit = 0.5 * (y.unsqueeze(1) * alpha).sum()
    complexity = L.diagonal().log().sum()
    return fit + complexity + 15 * math.log(2 * math.pi)


opt = torch.optim.Adam([raw], lr=0.1)
for step in range(80):
    loss = neg_mll()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step:2d} -mll {loss.item():.6f} grad {raw.grad.tolist()}")
ls, os_, noise = params().detach()
print(f"lengthscale {ls.item():.5f} outputscale {os_.item():.5f} noise {noise.item():.6f}")

with torch.no_grad():
    K = rbf(X, X, ls, os_) + noise * torch.eye(30, dtype=dt)
    L = torch.linalg.cholesky(K)
    Ks = rbf(X, Xs, ls, os_)
    mean = Ks.T @ torch.cholesky_solve(y.unsqueeze(1), L)
    v = torch.linalg.solve_triangular(L, Ks, upper=False)
    cov = rbf(Xs, Xs, ls, os_) - v.T @ v
    var = cov.diagonal().clamp(min=0)
print("posterior mean:", [round(m, 5) for m in mean.squeeze(1).tolist()])
print("posterior std:", [round(s, 5) for s in var.sqrt().tolist()])
print("true:", [round(t, 5) for t in torch.sin(2 * Xs).squeeze(1).tolist()])
post = MultivariateNormal(mean.squeeze(1), cov + 1e-8 * torch.eye(9, dtype=dt))
torch.manual_seed(1)
draws = post.sample((3,))
print("draws:", draws.shape, draws[:, 4])
y_test = torch.sin(2 * Xs).squeeze(1)
nlpd = -torch.distributions.Normal(mean.squeeze(1), (var + noise).sqrt()).log_prob(y_test).mean()
print("nlpd:", round(nlpd.item(), 6), "logdet K:", round(torch.logdet(K).item(), 6))
