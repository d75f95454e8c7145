# A short torch program written for gradstack's drop-in tests (issue 35): a factor
# analysis model, LowRankMultivariateNormal(loc, cov_factor, cov_diag), fitted by
# maximum likelihood; a full-covariance MultivariateNormal parametrised by scale_tril
# (a Cholesky factor with a softplus diagonal); their KL, entropy, rsample and Mahalanobis
# distances.
# rtol: 1e-4
# (the KLs between the fitted float32 distributions sum logs and traces of products of
# Cholesky factors: float32 rounding in another order moves their 6th digit)
import torch
import torch.distributions as D
import torch.nn.functional as F

torch.manual_seed(0)
d, k = 5, 2
W_true = torch.randn(d, k)
data = torch.randn(400, k) @ W_true.T + 0.3 * torch.randn(400, d) + torch.arange(d).float()

loc = torch.zeros(d, requires_grad=True)
factor = (0.1 * torch.randn(d, k)).requires_grad_()
log_diag = torch.zeros(d, requires_grad=True)
opt = torch.optim.Adam([loc, factor, log_diag], lr=0.05)
for step in range(150):
    fa = D.LowRankMultivariateNormal(loc, factor, log_diag.exp())
    nll = -fa.log_prob(data).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 50 == 0:
        print(f"low-rank step {step:3d} nll {nll.item():.4f}")
print("loc:", loc.detach())
print("noise var:", log_diag.exp().detach())
cov_fit = fa.covariance_matrix.detach()
cov_emp = torch.cov(data.T)
print("covariance error:", round((cov_fit - cov_emp).abs().max().item(), 3))

raw = torch.zeros(d, d, requires_grad=True)
mu = torch.zeros(d, requires_grad=True)
opt = torch.optim.Adam([raw, mu], lr=0.05)


def tril():
    off = torch.tril(raw, -1)
    return off + torch.diag(F.softplus(raw.diagonal()) + 1e-4)


for _ in range(150):
    mvn = D.MultivariateNormal(mu, scale_tril=tril())
    nll = -mvn.log_prob(data).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
print("full-cov nll:", round(nll.item(), 4))
mvn = D.MultivariateNormal(mu.detach(), scale_tril=tril().detach())
fa = D.LowRankMultivariateNormal(loc.detach(), factor.detach(), log_diag.exp().detach())
print("entropies:", mvn.entropy().item(), fa.entropy().item())
print("KL(full || low-rank):", D.kl_divergence(mvn, fa).item())
print("KL(low-rank || full):", D.kl_divergence(fa, mvn).item())
same = D.MultivariateNormal(fa.loc, covariance_matrix=fa.covariance_matrix)
print("log_prob agree:", torch.allclose(same.log_prob(data[:5]), fa.log_prob(data[:5]), atol=1e-4))
torch.manual_seed(1)
z = mvn.rsample((3,))
print("rsample:", z.shape, mvn.batch_shape, mvn.event_shape)
diff = data[:3] - mvn.mean
maha = torch.linalg.solve_triangular(mvn.scale_tril, diff.T, upper=False).pow(2).sum(0)
print("mahalanobis:", maha)
print("precision diag:", mvn.precision_matrix.diagonal())
