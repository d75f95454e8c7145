# A short torch program written for gradstack's drop-in tests (issue 35): normalizing
# flows with torch.distributions: a learned affine flow on a TransformedDistribution,
# a logit-normal model of (0, 1) data (SigmoidTransform after a learned affine,
# ComposeTransform), and an ExpTransform flow for positive data, all fitted by
# maximum likelihood; then the transforms' inverses and log-det-Jacobians.
import torch
import torch.distributions as D
import torch.distributions.transforms as T

torch.manual_seed(0)
base = D.Normal(torch.zeros(2), torch.ones(2))

# 1. affine flow: y = loc + exp(log_scale) * z
data = torch.randn(500, 2) * torch.tensor([0.5, 2.0]) + torch.tensor([1.0, -3.0])
loc = torch.zeros(2, requires_grad=True)
log_scale = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([loc, log_scale], lr=0.1)
for step in range(150):
    flow = D.TransformedDistribution(base, [T.AffineTransform(loc, log_scale.exp())])
    loss = -flow.log_prob(data).sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"affine step {step:3d} nll {loss.item():.4f}")
print("loc:", loc.detach(), "scale:", log_scale.exp().detach())

# 2. logit-normal for data in (0, 1)
u = torch.sigmoid(0.7 * torch.randn(400) + 0.4)
a = torch.zeros((), requires_grad=True)
b = torch.zeros((), requires_grad=True)
opt = torch.optim.Adam([a, b], lr=0.05)
std_normal = D.Normal(torch.tensor(0.0), torch.tensor(1.0))
for _ in range(200):
    chain = T.ComposeTransform([T.AffineTransform(a, b.exp()), T.SigmoidTransform()])
    model = D.TransformedDistribution(std_normal, chain)
    loss = -model.log_prob(u).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("logit-normal mu, sigma:", round(a.item(), 4), round(b.exp().item(), 4))
print("support:", model.support, "samples:", model.sample((4,)))

# 3. log-normal as Normal + ExpTransform, checked against D.LogNormal
positive = torch.exp(0.3 * torch.randn(300) - 1.0)
mu = torch.zeros((), requires_grad=True)
log_sigma = torch.zeros((), requires_grad=True)
opt = torch.optim.SGD([mu, log_sigma], lr=0.1)
for _ in range(100):
    flow = D.TransformedDistribution(D.Normal(mu, log_sigma.exp()), [T.ExpTransform()])
    loss = -flow.log_prob(positive).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
ln = D.LogNormal(mu.detach(), log_sigma.exp().detach())
print("exp flow:", round(mu.item(), 4), round(log_sigma.exp().item(), 4))
print("same as LogNormal:", torch.allclose(flow.log_prob(positive), ln.log_prob(positive)))

# transforms by themselves
t = T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.TanhTransform()])
x = torch.tensor([-1.0, 0.0, 0.25])
y = t(x)
print("forward:", y, "inverse:", t.inv(y))
print("log|det J|:", t.log_abs_det_jacobian(x, y))
print("sigmoid ldj:", T.SigmoidTransform().log_abs_det_jacobian(x, torch.sigmoid(x)))
print("bijective:", t.bijective, T.ExpTransform().sign, T.AffineTransform(0.0, -2.0).sign)
