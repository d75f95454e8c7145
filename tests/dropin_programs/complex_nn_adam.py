# A short torch program written for gradstack's drop-in tests (issue 35): a complex-valued
# network (complex64 weights, a modReLU activation, a magnitude readout) trained with Adam
# and RMSprop to classify noisy phase-shifted tones from their FFT, as in the complex-valued
# signal-processing tutorials; torch's optimizers step complex parameters as real pairs.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ComplexLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in, dtype=torch.cfloat) / n_in**0.5)
        self.bias = nn.Parameter(torch.zeros(n_out, dtype=torch.cfloat))

    def forward(self, z):
        return z @ self.weight.T + self.bias


class ModReLU(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.b = nn.Parameter(torch.full((n,), -0.1))

    def forward(self, z):
        mag = z.abs()
        return F.relu(mag + self.b) * z / (mag + 1e-6)


class Net(nn.Module):
    def __init__(self, n_freq, hidden=12, classes=3):
        super().__init__()
        self.l1 = ComplexLinear(n_freq, hidden)
        self.act = ModReLU(hidden)
        self.l2 = ComplexLinear(hidden, classes)

    def forward(self, x):
        z = torch.fft.rfft(x, norm="ortho")
        return self.l2(self.act(self.l1(z))).abs()


torch.manual_seed(0)
n = 32
t = torch.arange(n) / n
labels = torch.randint(0, 3, (96,))
freqs = torch.tensor([2.0, 5.0, 9.0])[labels]
phases = 2 * math.pi * torch.rand(96)
X = torch.sin(2 * math.pi * freqs[:, None] * t + phases[:, None]) + 0.3 * torch.randn(96, n)

for name in ("Adam", "RMSprop"):
    torch.manual_seed(1)
    net = Net(n // 2 + 1)
    opt = getattr(torch.optim, name)(net.parameters(), lr=0.01)
    for _ in range(25):
        loss = F.cross_entropy(net(X), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = (net(X).argmax(1) == labels).float().mean().item()
    state = opt.state[net.l1.weight]
    print(name, "loss", round(loss.item(), 5), "accuracy", acc)
    print("  state:", sorted((k, str(v.dtype)) for k, v in state.items()))
    w = net.l1.weight.detach()
    print("  grad dtype:", net.l1.weight.grad.dtype, "|W|:", w.abs().sum().item(), w[0, :3])
print("phase of l2 bias:", net.l2.bias.detach().angle())
