# A short torch program written for gradstack's drop-in tests (issue 35): image denoising
# on synthetic 16x16 images: a 2-D FFT low-pass filter (fft2, fftshift, a radial mask,
# ifft2, rfft2/irfft2), then a small conv net whose blocks are checkpointed and whose
# forward runs under bfloat16 autocast, trained a few steps on the same images.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
n = 16
yy, xx = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
clean = torch.stack([torch.sin(2 * torch.pi * (k * xx + yy) / n) for k in range(1, 5)])
clean = clean.unsqueeze(1)  # (4, 1, 16, 16)
noisy = clean + 0.5 * torch.randn_like(clean)

F2 = torch.fft.fftshift(torch.fft.fft2(noisy), dim=(-2, -1))
freq = torch.fft.fftshift(torch.fft.fftfreq(n)) * n
radius = (freq[:, None] ** 2 + freq[None, :] ** 2).sqrt()
lowpass = torch.fft.ifft2(torch.fft.ifftshift(F2 * (radius <= 5), dim=(-2, -1))).real
print("noisy mse:", F.mse_loss(noisy, clean).item())
print("low-pass mse:", F.mse_loss(lowpass, clean).item())
half = torch.fft.rfft2(noisy)
back = torch.fft.irfft2(half, s=(n, n))
print("rfft2:", half.shape, half.dtype, torch.allclose(back, noisy, atol=1e-5))
print("energy kept:", ((F2 * (radius <= 5)).abs() ** 2).sum().item() / (F2.abs() ** 2).sum().item())


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(F.relu(self.conv1(x)))


class Denoiser(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.inp = nn.Conv2d(1, c, 3, padding=1)
        self.blocks = nn.ModuleList([Block(c) for _ in range(2)])
        self.out = nn.Conv2d(c, 1, 3, padding=1)

    def forward(self, x):
        h = self.inp(x)
        for b in self.blocks:
            h = checkpoint(b, h, use_reentrant=False)
        return x - self.out(h)


model = Denoiser()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(12):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        pred = model(noisy)
    loss = F.mse_loss(pred.float(), clean)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(f"step {step:2d} loss {loss.item():.3f} pred {pred.dtype}")
grad_norm = model.out.weight.grad.norm().item()
print("grad dtype:", model.inp.weight.grad.dtype, "out grad norm:", round(grad_norm, 2))
