# A short torch program written for gradstack's drop-in tests (issue 35): complex-valued
# least squares by gradient descent: a complex64 transfer function fitted to noisy
# frequency-response data, a complex linear layer, phases by angle(), and the conjugate
# Wirtinger gradient torch defines for real losses of complex parameters.
import math

import torch

torch.manual_seed(0)
n = 40
omega = torch.linspace(0.1, 3.0, n)
s = torch.complex(torch.zeros(n), omega)  # s = i omega
true_num = torch.tensor([0.5 + 0.2j, 1.0 - 0.3j], dtype=torch.complex64)
H = (true_num[0] * s + true_num[1]) / (s + 1)
noise = torch.view_as_complex(0.01 * torch.randn(n, 2))
H_obs = H + noise

coef = torch.zeros(2, dtype=torch.complex64, requires_grad=True)
opt = torch.optim.SGD([coef], lr=0.5, momentum=0.5)
for step in range(120):
    pred = (coef[0] * s + coef[1]) / (s + 1)
    loss = (pred - H_obs).abs().pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 0:
        print("first gradient:", coef.grad.tolist())
    if step % 30 == 0:
        print(f"step {step:3d} loss {loss.item():.6f}")
print("fitted:", torch.view_as_real(coef.detach()))
print("error:", (coef.detach() - true_num).abs().max().item() < 0.05)

with torch.no_grad():
    resp = (coef[0] * s + coef[1]) / (s + 1)
    gain_db = 20 * torch.log10(resp.abs())
    phase_deg = resp.angle() * 180 / math.pi
print("gain dB:", gain_db[::10])
print("phase deg:", phase_deg[::10])

# a complex linear map z -> W z fitted with matmul, conj and a Hermitian product
W_true = torch.randn(3, 3, dtype=torch.cfloat)
Z = torch.randn(3, 50, dtype=torch.cfloat)
Y = W_true @ Z
W = torch.zeros(3, 3, dtype=torch.cfloat, requires_grad=True)
opt = torch.optim.Adam([W], lr=0.05)
for _ in range(150):
    R = W @ Z - Y
    loss = (R.conj() * R).real.sum() / 50
    opt.zero_grad()
    loss.backward()
    opt.step()
print("linear map loss:", round(loss.item(), 5), W.grad.dtype)
print("W close:", torch.allclose(W.detach(), W_true, atol=0.1))
G = Z @ Z.conj().T / 50
print("gram hermitian:", torch.allclose(G, G.mH), G.diagonal().imag.abs().max().item() < 1e-6)
print("polar:", torch.polar(torch.tensor([2.0]), torch.tensor([math.pi / 2])))
z = torch.tensor([3 + 4j, -1 - 1j], requires_grad=True)
(z.abs().sum() + z.angle().sum()).backward()
print("d(|z| + angle z):", z.grad)
print(torch.view_as_real(z.detach().conj().resolve_conj()), z.real, z.imag, z.is_complex())
