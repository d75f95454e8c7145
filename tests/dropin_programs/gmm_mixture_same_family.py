# A short torch program written for gradstack's drop-in tests (issue 35): a 2-d Gaussian
# mixture fitted by maximum likelihood with torch.distributions (MixtureSameFamily over a
# Categorical and an Independent Normal), then a 1-d mixture density network whose head
# parametrises the same family.
import torch
import torch.distributions as D
import torch.nn as nn

torch.manual_seed(0)
centers = torch.tensor([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.5]])
data = torch.cat([c + 0.5 * torch.randn(100, 2) for c in centers])

K = 3
logits = torch.zeros(K, requires_grad=True)
locs = torch.randn(K, 2, requires_grad=True)
log_scales = torch.zeros(K, 2, requires_grad=True)
opt = torch.optim.Adam([logits, locs, log_scales], lr=0.05)


def mixture():
    comp = D.Independent(D.Normal(locs, log_scales.exp()), 1)
    return D.MixtureSameFamily(D.Categorical(logits=logits), comp)


for step in range(200):
    nll = -mixture().log_prob(data).mean()
    opt.zero_grad()
    nll.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step:3d} nll {nll.item():.4f}")

gmm = mixture()
print("batch/event shape:", gmm.batch_shape, gmm.event_shape)
print("weights:", gmm.mixture_distribution.probs.detach())
means = gmm.component_distribution.mean.tolist()
print("sorted means:", sorted([round(v, 2) for v in row] for row in means))
print("mixture mean:", gmm.mean.detach(), "variance:", gmm.variance.detach())
print("log_prob at centers:", gmm.log_prob(centers).detach())
torch.manual_seed(1)
s = gmm.sample((5,))
print("samples:", s.shape, s)
print("categorical entropy:", gmm.mixture_distribution.entropy().item())

# a mixture density network: x -> (pi, mu, sigma) of a 1-d mixture of 2 Gaussians
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = torch.where(torch.rand(64, 1) < 0.5, x**2, -(x**2)) + 0.05 * torch.randn(64, 1)
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 6))
opt = torch.optim.Adam(net.parameters(), lr=0.02)
for _ in range(100):
    out = net(x)
    pi_logits, mu, log_sigma = out[:, :2], out[:, 2:4], out[:, 4:]
    dist = D.MixtureSameFamily(D.Categorical(logits=pi_logits), D.Normal(mu, log_sigma.exp()))
    loss = -dist.log_prob(y.squeeze(1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("mdn loss:", round(loss.item(), 4), dist.batch_shape, dist.event_shape)
print("mdn mean at x=-1,0,1:", dist.mean[[0, 32, 63]].detach())
