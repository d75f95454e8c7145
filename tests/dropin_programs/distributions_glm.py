# A short torch program written for gradstack's drop-in tests (issue 35): generalised
# linear models fitted by maximum likelihood with torch.distributions: Poisson counts,
# Gamma-distributed waiting times, a Binomial success model, a Laplace (robust)
# regression, then the families' moments, entropies, cdfs and KL divergences.
import torch
import torch.distributions as D

torch.manual_seed(0)
X = torch.cat([torch.ones(200, 1), torch.randn(200, 2)], 1)
beta_true = torch.tensor([0.5, 0.8, -0.4])
counts = D.Poisson((X @ beta_true).exp()).sample()
print("counts:", counts[:8], counts.mean().item())


def fit(log_lik, n_params, steps=200, lr=0.05):
    w = torch.zeros(n_params, requires_grad=True)
    opt = torch.optim.Adam([w], lr=lr)
    for _ in range(steps):
        loss = -log_lik(w).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return w.detach(), loss.item()


w, nll = fit(lambda w: D.Poisson((X @ w).exp()).log_prob(counts), 3)
print("poisson beta:", w, "nll:", round(nll, 4))

shape_true = 2.0
waits = D.Gamma(shape_true, shape_true / (X @ torch.tensor([0.3, 0.2, 0.1])).exp()).sample()
w, nll = fit(lambda w: D.Gamma(w[3].exp(), w[3].exp() / (X @ w[:3]).exp()).log_prob(waits), 4)
print("gamma beta:", w[:3], "shape:", w[3].exp().item(), "nll:", round(nll, 4))

trials = torch.full((200,), 10.0)
succ = D.Binomial(trials, logits=X @ torch.tensor([-0.2, 1.0, 0.5])).sample()
w, nll = fit(lambda w: D.Binomial(trials, logits=X @ w).log_prob(succ), 3)
print("binomial beta:", w, "nll:", round(nll, 4))

y = X @ torch.tensor([1.0, 2.0, -1.0]) + D.Laplace(0.0, 0.3).sample((200,))
y[:5] += 20.0  # outliers
w, nll = fit(lambda w: D.Laplace(X @ w, 0.3).log_prob(y), 3, steps=400)
print("laplace beta:", w, "nll:", round(nll, 4))

x = torch.tensor([0.5, 1.0, 3.0])
for dist in (
    D.Exponential(torch.tensor(2.0)),
    D.Gamma(torch.tensor(3.0), torch.tensor(2.0)),
    D.Uniform(torch.tensor(0.0), torch.tensor(4.0)),
    D.Laplace(torch.tensor(1.0), torch.tensor(0.5)),
    D.Normal(torch.tensor(1.0), torch.tensor(2.0)),
):
    name = type(dist).__name__
    print(
        f"{name:12s} mean {dist.mean.item():.4f} var {dist.variance.item():.4f} "
        f"entropy {dist.entropy().item():.4f} cdf {dist.cdf(x)}"
    )
print("icdf:", D.Normal(0.0, 1.0).icdf(torch.tensor([0.025, 0.5, 0.975])))
print(
    "KL exp:", D.kl_divergence(D.Exponential(torch.tensor(2.0)), D.Exponential(torch.tensor(1.0)))
)
print(
    "KL gamma:",
    D.kl_divergence(
        D.Gamma(torch.tensor(3.0), torch.tensor(2.0)), D.Gamma(torch.tensor(2.0), torch.tensor(1.0))
    ),
)
print("KL poisson:", D.kl_divergence(D.Poisson(torch.tensor(3.0)), D.Poisson(torch.tensor(4.0))))
print(
    "binomial mean/var:",
    D.Binomial(10, probs=torch.tensor(0.3)).mean,
    D.Binomial(10, probs=torch.tensor(0.3)).variance,
)
print("poisson pmf:", D.Poisson(torch.tensor(2.0)).log_prob(torch.arange(5.0)).exp())
