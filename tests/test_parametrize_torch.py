"""``nn.utils.parametrize``, ``nn.utils.parametrizations`` (``weight_norm``,
``spectral_norm``, ``orthogonal``) and the legacy ``nn.utils.weight_norm`` /
``spectral_norm`` against torch 2.13: parameter and buffer names, values after the same
seed, losses and gradients over optimizer steps, ``state_dict`` keys, assignment through
``right_inverse``, ``cached``, removal, errors, gradcheck in float64.
"""

from __future__ import annotations

import warnings

import gradstack
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _compare(a, b, rtol=1e-4, atol=1e-6):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if isinstance(u, (list, str, tuple, bool)):
            assert u == v
        else:
            np.testing.assert_allclose(np.asarray(v), np.asarray(u), rtol=rtol, atol=atol)


_MAKERS = {
    "weight_norm": lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 3)),
    "weight_norm_dim1": lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 3), dim=1),
    "weight_norm_none": lambda L: L.nn.utils.parametrizations.weight_norm(
        L.nn.Linear(4, 3), dim=None
    ),
    "weight_norm_conv": lambda L: L.nn.utils.parametrizations.weight_norm(L.nn.Conv2d(2, 3, 3)),
    "spectral_norm": lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(4, 3)),
    "spectral_norm_conv": lambda L: L.nn.utils.parametrizations.spectral_norm(
        L.nn.Conv2d(2, 3, 3), n_power_iterations=2
    ),
    "spectral_norm_convT": lambda L: L.nn.utils.parametrizations.spectral_norm(
        L.nn.ConvTranspose2d(2, 3, 3)
    ),
    "orthogonal": lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(4, 4)),
    "orthogonal_cayley": lambda L: L.nn.utils.parametrizations.orthogonal(
        L.nn.Linear(4, 4), orthogonal_map="cayley"
    ),
    "orthogonal_tall": lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(5, 3)),
    "orthogonal_wide": lambda L: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(3, 5)),
    "orthogonal_wide_cayley": lambda L: L.nn.utils.parametrizations.orthogonal(
        L.nn.Linear(3, 5), orthogonal_map="cayley"
    ),
    "legacy_weight_norm": lambda L: L.nn.utils.weight_norm(L.nn.Linear(4, 3)),
    "legacy_spectral_norm": lambda L: L.nn.utils.spectral_norm(L.nn.Linear(4, 3)),
    "legacy_spectral_norm_conv": lambda L: L.nn.utils.spectral_norm(L.nn.Conv2d(2, 3, 3)),
}


def _train(L, name, steps=3):
    L.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the legacy weight_norm's FutureWarning)
        m = _MAKERS[name](L)
    opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    conv = "conv" in name.lower()
    x = L.randn(2, 2, 5, 5) if conv else L.randn(6, m.in_features)
    out = []
    for _ in range(steps):
        loss = m(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        out += [loss.item()] + [p.grad.numpy().copy() for _, p in sorted(m.named_parameters())]
        opt.step()
    m.eval()
    with L.no_grad():
        out.append(m(x).numpy().copy())
    out += [
        sorted(n for n, _ in m.named_parameters()),
        sorted(n for n, _ in m.named_buffers()),
        sorted(m.state_dict()),
        type(m).__name__,
    ]
    out += [t.detach().numpy().copy() for _, t in sorted(m.state_dict().items())]
    return out


@pytest.mark.parametrize("name", list(_MAKERS))
def test_values_and_gradients_over_steps_equal_torch(name):
    _compare(_train(gradstack, name), _train(torch, name))


def _modules(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(L.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, X):
            return X * self.c

        def right_inverse(self, A):
            return A / self.c

    class NoInverse(L.nn.Module):
        def forward(self, X):
            return X.exp()

    return Symmetric, Scale, NoInverse


def _parametrize_story(L):
    P = L.nn.utils.parametrize
    Symmetric, Scale, NoInverse = _modules(L)
    L.manual_seed(0)
    m = L.nn.Linear(3, 3)
    out = [P.is_parametrized(m)]
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale(2.0))  # a chain: Scale(Symmetric(W))
    out += [
        P.is_parametrized(m),
        P.is_parametrized(m, "weight"),
        P.is_parametrized(m, "bias"),
        type(m).__name__,
        P.type_before_parametrizations(m).__name__,
        isinstance(m, L.nn.Linear),
        sorted(m.state_dict()),
        m.weight.detach().numpy().copy(),
    ]
    with L.no_grad():
        m.weight = L.arange(9.0).reshape(3, 3)  # through both right_inverses
    out += [
        m.parametrizations.weight.original.detach().numpy().copy(),
        m.weight.detach().numpy().copy(),
    ]
    with P.cached():
        out.append(m.weight is m.weight)
    out.append(m.weight is m.weight)
    x = L.ones(2, 3)
    m(x).sum().backward()
    out.append(m.parametrizations.weight.original.grad.numpy().copy())
    P.remove_parametrizations(m, "weight")
    out += [
        type(m).__name__,
        sorted(n for n, _ in m.named_parameters()),
        m.weight.detach().numpy().copy(),
        P.is_parametrized(m),
    ]
    # leave_parametrized=False keeps the original's values; a buffer can be parametrized
    m2 = L.nn.Linear(2, 2)
    P.register_parametrization(m2, "weight", Scale(3.0))
    P.remove_parametrizations(m2, "weight", leave_parametrized=False)
    out.append(m2.weight.detach().numpy().copy())
    bn = L.nn.BatchNorm1d(2)
    P.register_parametrization(bn, "running_var", Scale(2.0))
    out += [sorted(n for n, _ in bn.named_buffers()), bn.running_var.numpy().copy()]
    return out


def test_parametrize_against_torch():
    _compare(_parametrize_story(gradstack), _parametrize_story(torch))


def _errors(L):
    P = L.nn.utils.parametrize
    Symmetric, Scale, NoInverse = _modules(L)

    class Shape(L.nn.Module):
        def forward(self, X):
            return X[:1]

    out = []
    for call in (
        lambda: P.register_parametrization(L.nn.Linear(2, 2), "nope", Scale(1.0)),
        lambda: P.register_parametrization(L.nn.Linear(2, 2), "weight", Shape()),
        lambda: P.remove_parametrizations(L.nn.Linear(2, 2), "weight"),
        lambda: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(2, 2), orthogonal_map="x"),
        lambda: L.nn.utils.parametrizations.orthogonal(L.nn.Linear(2, 2), "bias"),
        lambda: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), "nope"),
        lambda: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), n_power_iterations=0),
        lambda: L.nn.utils.remove_weight_norm(L.nn.Linear(2, 2)),
        lambda: L.nn.utils.remove_spectral_norm(L.nn.Linear(2, 2)),
    ):
        with pytest.raises(Exception) as info:
            call()
        text = str(info.value).replace("torch.", "LIB.").replace("gradstack.", "LIB.")
        out.append((type(info.value).__name__, text.split("\n")[0][:60]))
    m = L.nn.Linear(2, 2)
    P.register_parametrization(m, "weight", NoInverse())
    with pytest.raises(Exception) as info:
        m.weight = L.ones(2, 2)
    out.append(type(info.value).__name__)
    return out


def test_errors_are_torch_s():
    assert _errors(gradstack) == _errors(torch)


def test_legacy_forms_warn_and_remove_as_torch():
    def run(L):
        L.manual_seed(0)
        with pytest.warns(FutureWarning, match="weight_norm"):
            m = L.nn.utils.weight_norm(L.nn.Linear(3, 2))
        with pytest.raises(RuntimeError) as info:
            L.nn.utils.weight_norm(m)
        names = sorted(n for n, _ in m.named_parameters())
        L.nn.utils.remove_weight_norm(m)
        s = L.nn.utils.spectral_norm(L.nn.Linear(3, 2))
        s.train()
        s(L.ones(1, 3))
        u = s.weight_u.numpy().copy()
        L.nn.utils.remove_spectral_norm(s)
        return [
            str(info.value),
            names,
            sorted(n for n, _ in m.named_parameters()),
            m.weight.detach().numpy(),
            u,
            sorted(n for n, _ in s.named_parameters()),
            s.weight.detach().numpy(),
        ]

    _compare(run(gradstack), run(torch))


# (not the householder map: its forward multiplies by int(diag(X)), a step at the -1 it
# starts from, so finite differences jump; its gradients are compared with torch's above)
@pytest.mark.parametrize(
    "which",
    [
        "weight_norm",
        "weight_norm_none",
        "spectral_norm",
        "orthogonal",
        "orthogonal_cayley",
        "orthogonal_wide_cayley",
    ],
)
def test_gradcheck_float64(which):
    gradstack.manual_seed(0)
    m = _MAKERS[which](gradstack).double()
    m.eval()  # (spectral_norm: no power iteration inside gradcheck's repeated calls)
    params = [p for _, p in sorted(m.named_parameters())]
    x = gradstack.randn(3, m.in_features, dtype=gradstack.float64)

    def f(*ps):
        originals = dict(zip([n for n, _ in sorted(m.named_parameters())], ps))
        return gradstack.func.functional_call(m, originals, (x,))

    assert gradstack.autograd.gradcheck(f, tuple(p.detach().requires_grad_() for p in params))
