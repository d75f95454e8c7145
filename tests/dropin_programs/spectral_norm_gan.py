# A short torch program written for gradstack's drop-in tests (issue 35): a tiny GAN on
# a 1-d Gaussian mixture whose discriminator uses nn.utils.parametrizations.spectral_norm
# and whose generator uses weight_norm, trained a few alternating steps with
# BCEWithLogitsLoss; prints losses, the discriminator's spectral norms and the state_dict.
import torch
import torch.nn as nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

torch.manual_seed(0)


def real_batch(n):
    centers = torch.tensor([-2.0, 2.0])[torch.randint(0, 2, (n,))]
    return (centers + 0.3 * torch.randn(n)).unsqueeze(1)


G = nn.Sequential(weight_norm(nn.Linear(2, 16)), nn.ReLU(), nn.Linear(16, 1))
D = nn.Sequential(
    spectral_norm(nn.Linear(1, 32)),
    nn.LeakyReLU(0.2),
    spectral_norm(nn.Linear(32, 32)),
    nn.LeakyReLU(0.2),
    spectral_norm(nn.Linear(32, 1)),
)
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

for step in range(30):
    real = real_batch(32)
    fake = G(torch.randn(32, 2))
    d_loss = bce(D(real), torch.ones(32, 1)) + bce(D(fake.detach()), torch.zeros(32, 1))
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = bce(D(fake), torch.ones(32, 1))
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if step % 6 == 0:
        print(f"step {step:2d} d_loss {d_loss.item():.4f} g_loss {g_loss.item():.4f}")

D.eval()
with torch.no_grad():
    for i in (0, 2, 4):
        sigma = torch.linalg.matrix_norm(D[i].weight, ord=2).item()
        print(f"layer {i} spectral norm {sigma:.4f}")
    samples = G(torch.randn(200, 2))
print("generated mean/std:", round(samples.mean().item(), 4), round(samples.std().item(), 4))
print(sorted(D.state_dict())[:4])
print(sorted(G.state_dict()))
print(D[0].parametrizations.weight[0].n_power_iterations, D[0].weight.shape)
g_weight = G[0].parametrizations.weight
print("weight_norm g:", g_weight.original0.flatten()[:4])
