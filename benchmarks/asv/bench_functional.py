"""functional-api: jacobian, hessian, vjp/jvp and hvp at several sizes (float64).

No ``setup``: see Note [Micro-benchmarks have no setup] in _common.py.
"""

from __future__ import annotations

from functools import cache

import numpy as np

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


# -------------------------------------------------------------------------------------
# torch.func's transforms (gradstack_functional.func): the workloads of issue 15

func = optional("gradstack_functional.func")
nn = optional("gradstack_nn")


class FuncJacobians:
    """``jacrev``/``jacfwd`` of a 100 -> 100 function, ``hessian`` of a 100 -> 1 one, and
    ``jacfwd(jacfwd)`` (nested forward mode) of the scalar one, float64."""

    params = [[10, 100]]
    param_names = ["n"]

    def _x(self, n, name):
        require(gt, func, attrs=((func, name),))
        return _vectors(n)[0]

    def time_jacrev(self, n):
        func.jacrev(vector_fn)(self._x(n, "jacrev"))

    def time_jacfwd(self, n):
        func.jacfwd(vector_fn)(self._x(n, "jacfwd"))

    def time_hessian(self, n):
        func.hessian(scalar_fn)(self._x(n, "hessian"))

    def time_jacfwd_jacfwd(self, n):
        x = self._x(n, "linearize")  # nested forward mode came with linearize
        func.jacfwd(func.jacfwd(scalar_fn))(x)


@cache
def _mlp_state(num_models):
    """``num_models`` 784-128-128-10 MLPs (float32), a batch of 64 inputs and labels."""
    require(gt, nn, func, attrs=((func, "stack_module_state"), (nn, "Sequential")))
    r = rng(15)

    def mlp():
        return nn.Sequential(
            nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
        )

    models = [mlp() for _ in range(num_models)]
    x = gt.tensor(r.standard_normal((64, 784)).astype(np.float32))
    y = gt.tensor(r.integers(0, 10, 64))
    return models, x, y


class FuncPerSample:
    """Per-sample gradients, ``vmap(grad(loss), in_dims=(None, 0, 0))``, and an ensemble of
    8 models with ``stack_module_state`` + ``vmap(functional_call)``."""

    def time_per_sample_grads(self):
        (model,), x, y = _mlp_state(1)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(params, x, y):
            out = func.functional_call(model, params, (x.unsqueeze(0),))
            return nn.functional.cross_entropy(out, y.unsqueeze(0))

        func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, x, y)

    def time_ensemble(self):
        models, x, _ = _mlp_state(8)
        params, buffers = func.stack_module_state(models)

        def fmodel(params, buffers, x):
            return func.functional_call(models[0], (params, buffers), (x,))

        func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
