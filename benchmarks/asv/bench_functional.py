"""functional-api: jacobian, hessian, vjp/jvp and hvp at several sizes (float64).

No ``setup``: see Note [Micro-benchmarks have no setup] in _common.py.
"""

from __future__ import annotations

from functools import cache

from ._common import optional, require, rng, tensor

rounds = 1  # see Note [One round] in _common.py

gt = optional("gradstack_tensor")
ag = optional("gradstack_autograd")
F = optional("gradstack_functional")


def exp_adder(x, y):
    """The tutorial's function: 2 * exp(x) + 3 * y."""
    return 2 * x.exp() + 3 * y


def scalar_fn(x):
    """The issue's Hessian workload: (sin x cos x).sum() + (x ** 3).sum()."""
    return (x.sin() * x.cos()).sum() + (x**3).sum()


def vector_fn(x):
    """R^n -> R^n with a dense Jacobian: tanh(x) * x.sum() + x ** 2."""
    return x.tanh() * x.sum() + x**2


@cache
def _vectors(n, *needed):
    require(gt, ag, F, attrs=tuple((F, name) for name in needed))
    r = rng()
    return tensor(r.uniform(-1, 1, n)), tensor(r.uniform(-1, 1, n)), tensor(r.standard_normal(n))


class Jacobian:
    params = [[3, 30, 100]]
    param_names = ["n"]

    def time_exp_adder(self, n):
        x, y, _ = _vectors(n, "jacobian")
        F.jacobian(exp_adder, (x, y))

    def time_dense(self, n):
        x, _, _ = _vectors(n, "jacobian")
        F.jacobian(vector_fn, x)


class Hessian:
    params = [[3, 30, 100]]
    param_names = ["n"]

    def time_hessian(self, n):
        x, _, _ = _vectors(n, "hessian")
        F.hessian(scalar_fn, x)


class VectorProducts:
    params = [[3, 100, 10_000]]
    param_names = ["n"]

    def time_hvp(self, n):
        x, _, v = _vectors(n, "hvp")
        F.hvp(scalar_fn, x, v)

    def time_vhp(self, n):
        x, _, v = _vectors(n, "vhp")
        F.vhp(scalar_fn, x, v)

    def time_vjp(self, n):
        x, _, v = _vectors(n, "vjp")
        F.vjp(vector_fn, x, v)

    def time_jvp(self, n):
        x, _, v = _vectors(n, "jvp")
        F.jvp(vector_fn, x, v)
