# A short torch program written for gradstack's drop-in tests (issue 35): a ZCA whitening
# layer built on torch.linalg.eigh (with a running covariance buffer), trained inside a
# small regression model; a ridge regression solved by linalg.lstsq and by cholesky
# solve; and the gradients that flow through eigh, cholesky, solve and slogdet.
import torch
import torch.nn as nn


class ZCAWhitening(nn.Module):
    def __init__(self, dim, eps=1e-3, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.register_buffer("running_mean", torch.zeros(dim))
        self.register_buffer("running_cov", torch.eye(dim))

    def forward(self, x):
        if self.training:
            mean = x.mean(0)
            xc = x - mean
            cov = xc.T @ xc / (x.size(0) - 1)
            with torch.no_grad():
                self.running_mean.lerp_(mean, self.momentum)
                self.running_cov.lerp_(cov, self.momentum)
        else:
            mean, cov = self.running_mean, self.running_cov
            xc = x - mean
        evals, evecs = torch.linalg.eigh(cov + self.eps * torch.eye(cov.size(0)))
        W = evecs @ torch.diag(evals.rsqrt()) @ evecs.T
        return xc @ W


torch.manual_seed(0)
mix = torch.tensor([[2.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 0.2]])
X = torch.randn(256, 3) @ mix + torch.tensor([1.0, -1.0, 0.5])
y = X @ torch.tensor([0.5, -1.0, 2.0]) + 0.1 * torch.randn(256)

zca = ZCAWhitening(3)
white = zca(X)
cov_w = white.T @ white / 255
print("whitened covariance ~ I:", torch.allclose(cov_w, torch.eye(3), atol=0.05))
model = nn.Sequential(ZCAWhitening(3), nn.Linear(3, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(40):
    idx = torch.randint(0, 256, (64,))
    loss = nn.functional.mse_loss(model(X[idx]).squeeze(1), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step:2d} loss {loss.item():.5f}")
model.eval()
print("eval loss:", round(nn.functional.mse_loss(model(X).squeeze(1), y).item(), 4))
print("running mean:", model[0].running_mean)

# ridge regression three ways
lam = 0.5
Xd = torch.cat([X, torch.ones(256, 1)], 1).double()
yd = y.double().unsqueeze(1)
A = Xd.T @ Xd + lam * torch.eye(4, dtype=torch.float64)
w_solve = torch.linalg.solve(A, Xd.T @ yd)
L = torch.linalg.cholesky(A)
w_chol = torch.cholesky_solve(Xd.T @ yd, L)
aug = torch.cat([Xd, lam**0.5 * torch.eye(4, dtype=torch.float64)])
w_lstsq = torch.linalg.lstsq(aug, torch.cat([yd, torch.zeros(4, 1, dtype=torch.float64)])).solution
print("ridge:", [round(v, 6) for v in w_solve.squeeze(1).tolist()])
print("agree:", torch.allclose(w_solve, w_chol), torch.allclose(w_solve, w_lstsq))

# gradients through the factorizations
S = torch.randn(4, 4, dtype=torch.float64)
S = (S @ S.T + 4 * torch.eye(4, dtype=torch.float64)).requires_grad_()
sign, logdet = torch.linalg.slogdet(S)
evals = torch.linalg.eigvalsh(S)
chol = torch.linalg.cholesky(S)
total = (
    logdet
    + evals.max()
    + chol.diagonal().sum()
    + torch.linalg.solve(S, torch.ones(4, dtype=torch.float64)).sum()
)
total.backward()
print("sign:", sign.item(), "logdet:", round(logdet.item(), 8))
print("grad:", S.grad.diagonal())
print(
    "inv check:",
    torch.allclose(torch.linalg.inv(S.detach()) @ S.detach(), torch.eye(4, dtype=torch.float64)),
)
print(
    "norms:",
    torch.linalg.norm(S.detach()).item(),
    torch.linalg.matrix_norm(S.detach(), "nuc").item(),
)
