# A short torch program written for gradstack's drop-in tests (issue 35): a 1-d spectral
# convolution layer (the Fourier neural operator's building block: rfft, a learned complex
# weight on the lowest modes, irfft) trained to learn a smoothing operator, and FFT-based
# low-pass filtering with fftshift / fftfreq.
import math

import torch
import torch.nn as nn


class SpectralConv1d(nn.Module):
    def __init__(self, channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (channels * channels)
        self.weight = nn.Parameter(
            scale * torch.rand(channels, channels, modes, dtype=torch.cfloat)
        )

    def forward(self, x):  # x: (batch, channels, n)
        n = x.size(-1)
        x_ft = torch.fft.rfft(x)
        out_ft = torch.zeros(x.size(0), x.size(1), n // 2 + 1, dtype=torch.cfloat)
        out_ft[:, :, : self.modes] = torch.einsum(
            "bix,iox->box", x_ft[:, :, : self.modes], self.weight
        )
        return torch.fft.irfft(out_ft, n=n)


class FNO(nn.Module):
    def __init__(self, width=4, modes=6):
        super().__init__()
        self.lift = nn.Conv1d(1, width, 1)
        self.spec = SpectralConv1d(width, modes)
        self.skip = nn.Conv1d(width, width, 1)
        self.proj = nn.Conv1d(width, 1, 1)

    def forward(self, x):
        h = self.lift(x)
        h = torch.nn.functional.gelu(self.spec(h) + self.skip(h))
        return self.proj(h)


torch.manual_seed(0)
n = 32
t = torch.arange(n) / n
x = torch.randn(16, 1, n)
kernel = torch.exp(-0.5 * ((torch.arange(n) - n // 2) / 2.0) ** 2)
kernel = torch.fft.ifftshift(kernel / kernel.sum())
y = torch.fft.irfft(torch.fft.rfft(x) * torch.fft.rfft(kernel), n=n)  # circular smoothing

model = FNO()
opt = torch.optim.Adam(model.parameters(), lr=2e-2)
for step in range(40):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 8 == 0:
        dw = model.spec.weight.grad.abs().sum().item()
        print(f"step {step:2d} loss {loss.item():.6f} |dW| {dw:.5f}")
print("final loss:", round(loss.item(), 6), model.spec.weight.dtype, model.spec.weight.grad.dtype)

# low-pass filtering of a two-tone signal: keep |f| < 5
signal = torch.sin(2 * math.pi * 3 * t) + 0.5 * torch.sin(2 * math.pi * 11 * t)
spectrum = torch.fft.fftshift(torch.fft.fft(signal))
freqs = torch.fft.fftshift(torch.fft.fftfreq(n, d=1 / n))
print("freqs:", freqs[:4], freqs[-4:])
print("peaks at:", freqs[spectrum.abs() > 1].tolist())
filtered = torch.fft.ifft(torch.fft.ifftshift(spectrum * (freqs.abs() < 5))).real
residual = (filtered - torch.sin(2 * math.pi * 3 * t)).abs().max().item()
print("residual to the 3 Hz tone:", residual < 1e-5)

# a gradient through an FFT power spectrum
w = torch.randn(n, requires_grad=True)
power = torch.fft.rfft(w, norm="ortho").abs().pow(2)
(power[1:4].sum() - power[8:].sum()).backward()
print("grad:", w.grad[:6])
energy = torch.fft.fft(w, norm="ortho").abs().pow(2).sum()
print("parseval:", torch.allclose(energy, w.pow(2).sum()))
F2 = torch.fft.fft2(torch.eye(3)).abs()
print(torch.fft.rfftfreq(8), [[round(v, 4) for v in row] for row in F2.tolist()])
