# A short torch program written for gradstack's drop-in tests (issue 35): a Dirichlet
# fitted to compositional data by maximum likelihood, once with the log-density written
# with torch.special (gammaln, xlogy, digamma for the gradient check) and once with
# torch.distributions.Dirichlet; then a Beta-Bernoulli posterior and special functions.
import torch
import torch.distributions as D
from torch import special

torch.manual_seed(0)
true_alpha = torch.tensor([2.0, 5.0, 1.5])
data = D.Dirichlet(true_alpha).sample((300,))
print("data mean:", data.mean(0), "first row sums to 1:", round(data[0].sum().item(), 6))


def dirichlet_log_prob(x, alpha):
    norm = special.gammaln(alpha.sum(-1)) - special.gammaln(alpha).sum(-1)
    return norm + special.xlogy(alpha - 1, x).sum(-1)


log_alpha = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([log_alpha], lr=0.1)
for step in range(150):
    nll = -dirichlet_log_prob(data, log_alpha.exp()).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step:3d} nll {nll.item():.5f}")
alpha = log_alpha.exp().detach()
print("fitted alpha:", alpha)
same = torch.allclose(dirichlet_log_prob(data, alpha), D.Dirichlet(alpha).log_prob(data), atol=1e-5)
print("matches D.Dirichlet:", same)

# the analytic gradient of the mean log-likelihood in alpha, by digamma
mean_log = data.log().mean(0)
analytic = special.digamma(alpha.sum()) - special.digamma(alpha) + mean_log
a = alpha.clone().requires_grad_()
dirichlet_log_prob(data, a).mean().backward()
print("digamma gradient:", torch.allclose(a.grad, analytic, atol=1e-4), analytic.abs().max() < 1e-3)

# the same fit with the distribution's own log_prob
conc = torch.ones(3, dtype=torch.float64, requires_grad=True)
data64 = data.double()
opt = torch.optim.LBFGS([conc], lr=0.5, max_iter=30)


def closure():
    opt.zero_grad()
    loss = -D.Dirichlet(conc.abs() + 1e-3).log_prob(data64).mean()
    loss.backward()
    return loss


print("lbfgs loss:", round(opt.step(closure).item(), 4), "alpha:", (conc.abs() + 1e-3).detach())
print("entropy:", D.Dirichlet(alpha).entropy().item(), "mean:", D.Dirichlet(alpha).mean)

# Beta-Bernoulli: a conjugate posterior, its KL to the prior
flips = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0])
prior = D.Beta(torch.tensor(2.0), torch.tensor(2.0))
post = D.Beta(2.0 + flips.sum(), 2.0 + (1 - flips).sum())
print("posterior mean:", post.mean.item(), "var:", post.variance.item())
print("KL(post || prior):", D.kl_divergence(post, prior).item())
x = torch.tensor([0.5, 1.0, 2.5, 10.0])
print("polygamma(1):", special.polygamma(1, x))
print("multigammaln:", special.multigammaln(x + 2, 2))
print("log_ndtr:", special.log_ndtr(torch.tensor([-3.0, 0.0, 3.0])), "erfcx:", special.erfcx(x))
print("entr:", special.entr(torch.tensor([0.0, 0.5, 1.0])), "xlog1py:", special.xlog1py(x, x))
print("i0e:", special.i0e(x), "logit:", special.logit(torch.tensor([0.25, 0.5])))
