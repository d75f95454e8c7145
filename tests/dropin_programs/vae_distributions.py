# A short torch program written for gradstack's drop-in tests (issue 35): a variational
# autoencoder on synthetic binary images, with torch.distributions for the posterior
# (Normal.rsample), the prior's KL (kl_divergence) and the Bernoulli likelihood.
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Normal, kl_divergence

torch.manual_seed(0)
# 64 "images" of 16 pixels: two prototypes with pixels flipped at random
protos = (torch.rand(2, 16) > 0.5).float()
flip = (torch.rand(64, 16) < 0.1).float()
data = (protos[torch.arange(64) % 2] + flip) % 2


class VAE(nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_z=2):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh())
        self.mu = nn.Linear(d_hidden, d_z)
        self.log_sigma = nn.Linear(d_hidden, d_z)
        self.dec = nn.Sequential(nn.Linear(d_z, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_in))

    def posterior(self, x):
        h = self.enc(x)
        return Normal(self.mu(h), self.log_sigma(h).exp())

    def forward(self, x):
        q = self.posterior(x)
        z = q.rsample()
        p_x = Bernoulli(logits=self.dec(z))
        prior = Normal(torch.zeros_like(z), torch.ones_like(z))
        rec = p_x.log_prob(x).sum(-1)
        kl = kl_divergence(q, prior).sum(-1)
        return -(rec - kl).mean(), rec.mean(), kl.mean()


model = VAE()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(30):
    loss, rec, kl = model(data)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step:2d} -elbo {loss.item():.4f} rec {rec.item():.4f} kl {kl.item():.4f}")

with torch.no_grad():
    q = model.posterior(data[:4])
    print("posterior means:", q.mean)
    print("posterior stddev:", q.stddev)
    print("entropy:", q.entropy().sum(-1))
    z = q.sample((3,))
    print("sample shape:", tuple(z.shape), "batch:", q.batch_shape, "event:", q.event_shape)
    probs = torch.sigmoid(model.dec(q.mean))
    print("reconstruction accuracy:", ((probs > 0.5).float() == data[:4]).float().mean().item())
    p = Bernoulli(probs=probs)
    print("bernoulli entropy:", p.entropy().sum().item(), "mean:", p.mean.sum().item())
    print("log p(x | mean z):", p.log_prob(data[:4]).sum(-1))
