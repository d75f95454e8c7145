# A short torch program written for gradstack's drop-in tests (issue 35): the
# torch.distributions families a probabilistic-programming tutorial walks through, each
# sampled after a seed, scored by log_prob (with its gradient in the parameters),
# summarised by mean/variance/entropy where torch defines them, and the constraints checked.
import torch
import torch.distributions as D

x_pos = torch.tensor([0.3, 1.0, 2.5])
families = {
    "HalfNormal": lambda p: D.HalfNormal(p),
    "LogNormal": lambda p: D.LogNormal(0.2, p),
    "StudentT": lambda p: D.StudentT(3.0, 0.0, p),
    "Cauchy": lambda p: D.Cauchy(0.5, p),
    "Chi2": lambda p: D.Chi2(p * 3),
    "Weibull": lambda p: D.Weibull(p, 1.5),
    "Gumbel": lambda p: D.Gumbel(0.0, p),
    "Pareto": lambda p: D.Pareto(0.2, p + 1),
    "HalfCauchy": lambda p: D.HalfCauchy(p),
    "Kumaraswamy": lambda p: D.Kumaraswamy(p, 2.0),
    "FisherSnedecor": lambda p: D.FisherSnedecor(p * 4, 5.0),
    "VonMises": lambda p: D.VonMises(0.5, p),
}
for name, make in families.items():
    p = torch.tensor(1.3, requires_grad=True)
    d = make(p)
    x = x_pos.clamp(max=0.99) if name == "Kumaraswamy" else x_pos
    lp = d.log_prob(x)
    (g,) = torch.autograd.grad(lp.sum(), p)
    torch.manual_seed(0)
    s = d.sample((4,))
    line = f"{name:14s} log_prob {lp.detach()} dlp/dp {g.item():.5f} sample {s}"
    for stat in ("mean", "variance", "entropy"):
        try:
            v = getattr(d, stat)
            v = v() if callable(v) else v
            line += f" {stat} {v.item():.5f}"
        except NotImplementedError:
            line += f" {stat} n/a"
    print(line)
    print("   support:", d.support, "in support:", d.support.check(s).all().item())

torch.manual_seed(0)
discrete = {
    "Geometric": D.Geometric(probs=torch.tensor(0.3)),
    "NegativeBinomial": D.NegativeBinomial(5.0, probs=torch.tensor(0.4)),
    "Multinomial": D.Multinomial(10, probs=torch.tensor([0.2, 0.3, 0.5])),
    "ContinuousBernoulli": D.ContinuousBernoulli(probs=torch.tensor(0.3)),
}
for name, d in discrete.items():
    s = d.sample((3,))
    print(f"{name:20s} sample {s.tolist()} log_prob {d.log_prob(s)} mean {d.mean}")
relaxed = D.RelaxedOneHotCategorical(torch.tensor(0.5), probs=torch.tensor([0.2, 0.3, 0.5]))
r = relaxed.rsample((2,))
print("relaxed:", r.sum(-1), relaxed.log_prob(r))
rb = D.RelaxedBernoulli(torch.tensor(0.5), probs=torch.tensor([0.2, 0.9]))
print("relaxed bernoulli:", rb.rsample(), D.Independent(D.Bernoulli(torch.tensor([0.2, 0.9])), 1))
print(D.constraints.positive.check(torch.tensor([-1.0, 2.0])), D.constraints.simplex)
print(D.biject_to(D.constraints.positive)(torch.tensor([0.0, 1.0])))
print(D.transform_to(D.constraints.interval(-1.0, 1.0))(torch.tensor([0.0, 2.0])))
