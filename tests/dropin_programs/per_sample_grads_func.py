# A short torch program written for gradstack's drop-in tests (issue 35), after the
# torch.func "Per-sample gradients" and "Jacobians, Hessians, hvp, vhp, and more"
# tutorials: per-sample gradients by vmap(grad(...)) checked against a loop, then jacrev,
# jacfwd, hessian and a Hessian-vector product on a small network.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


model = Net()
data = torch.randn(6, 5)
targets = torch.randint(0, 3, (6,))
params = {k: v.detach() for k, v in model.named_parameters()}


def compute_loss(params, sample, target):
    out = functional_call(model, params, (sample.unsqueeze(0),))
    return F.cross_entropy(out, target.unsqueeze(0))


ft_per_sample = vmap(grad(compute_loss), in_dims=(None, 0, 0))(params, data, targets)
for name, g in ft_per_sample.items():
    print(name, tuple(g.shape), round(g.norm().item(), 5))

# the same by a loop of backward passes
loop = []
for x, t in zip(data, targets):
    model.zero_grad()
    F.cross_entropy(model(x.unsqueeze(0)), t.unsqueeze(0)).backward()
    loop.append(model.fc1.weight.grad.clone())
print("matches loop:", torch.allclose(ft_per_sample["fc1.weight"], torch.stack(loop), atol=1e-6))
clipped = {
    k: g / g.flatten(1).norm(dim=1).clamp(min=1.0).view(-1, *[1] * (g.dim() - 1))
    for k, g in ft_per_sample.items()
}
print("clipped mean fc2.bias:", clipped["fc2.bias"].mean(0))


# Jacobians of the outputs with respect to the input
def f(x):
    return functional_call(model, params, (x,))


x = torch.randn(5)
J = jacrev(f)(x)
print("jacrev:", J.shape, torch.allclose(J, jacfwd(f)(x), atol=1e-6))
print(J)
Jb = vmap(jacrev(f))(data)
print("batched jacobians:", Jb.shape, round(Jb.abs().sum().item(), 4))


# a Hessian of a scalar function of the input, and Hessian-vector products
def energy(x):
    return f(x).logsumexp(0)


H = hessian(energy)(x)
print("hessian symmetric:", torch.allclose(H, H.T, atol=1e-6), H.diagonal())
v = torch.randn(5)
_, hvp = jvp(grad(energy), (x,), (v,))
print("hvp == H v:", torch.allclose(hvp, H @ v, atol=1e-5))
out, vjp_fn = vjp(f, x)
print("vjp:", vjp_fn(torch.ones(3))[0], "out:", out)
print("grad with aux:", grad(lambda x: (energy(x), x.sum()), has_aux=True)(x)[1])
