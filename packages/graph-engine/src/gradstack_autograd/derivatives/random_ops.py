"""The derivative table's rows for the random ops (tensor-core's ``_impl_random.py``).

Same rules as the other families (read the package's notes first): one ``@register`` row
per op naming torch's node, formulas written with gradstack ops so that
``create_graph=True`` differentiates them again, gradients of the broadcast output shape
left to the engine to reduce, the forward (JVP) formula after each row and vmap's rule
(``batch=``, the ``random_*`` kinds of ``batching``, which follow vmap's ``randomness``
flag) in it.

Note [Random draws have zero gradients]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch records a node for a random op whose input requires grad (``BernoulliBackward0``
for ``bernoulli(p)``, ``NormalBackward3`` for ``normal(mean, std)`` ...), and its formulas
are zeros: a draw is treated as not depending on its parameters.  The rows below do the
same, with torch's node names (which depend on the overload: ``bernoulli_(0.5)`` records
``BernoulliBackward2``, ``bernoulli_(p_tensor)`` ``BernoulliBackward1``).

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd as ag
>>> p = gt.tensor([0.2, 0.9], requires_grad=True)
>>> y = gt.bernoulli(p)
>>> y.grad_fn.name()
'BernoulliBackward0'
>>> ag.grad(y.sum(), p)[0].tolist()
[0.0, 0.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ._formulas import _lead, _zeros
from ._table import _not_differentiable, jvp, register
from .batching import random_inplace, random_tensor_params

__all__: list[str] = []


def _is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def _zeros_shaped(ctx, i, grad):
    """Zeros of input ``i``'s shape (behind the batch prefix of a batched backward)."""
    return gt.zeros(tuple(_lead(grad)) + tuple(ctx.input_shape(i)), dtype=grad.dtype)


def _zero_tangent(args, out, tangents, lead):
    """A draw does not depend on its parameters: a tangent of zeros."""
    return gt.zeros(tuple(lead) + tuple(out.shape), dtype=out.dtype)


def _draw(ctx, grad):
    """The gradient of a draw with respect to the tensor it draws from: zeros."""
    return (_zeros(grad),)


for _signature, _node in (
    ("bernoulli(self, p, generator)", "BernoulliBackward0"),
    ("poisson(self, generator)", "PoissonBackward0"),
):
    _rule = random_tensor_params(inplace=False)
    register(_signature, _node, inplace_variant=False, batch=_rule)(_draw)


@register(
    "bernoulli_(self, p, generator)",
    lambda args: "BernoulliBackward1" if _is_tensor(args[1]) else "BernoulliBackward2",
    inputs="self, p",
    inplace_variant=False,
    batch=random_tensor_params(inplace=True),
)
def _bernoulli_(ctx, grad):
    need_self, need_p = ctx.needs_input_grad
    return (_zeros(grad) if need_self else None), (_zeros_shaped(ctx, 1, grad) if need_p else None)


@register("exponential_(self)", "ExponentialBackward0", inplace_variant=False, batch=random_inplace)
def _exponential_(ctx, grad):
    return (_zeros(grad),)


def _random_name(args):
    """torch's overloads: ``random_(from, to)``, ``random_(to)``, ``random_()``."""
    given = (args[1] is not None) + (args[2] is not None)
    return ("RandomBackward2", "RandomBackward1", "RandomBackward0")[given]


@register("random_(self)", _random_name, inplace_variant=False, batch=random_inplace)
def _random_(ctx, grad):
    return (_zeros(grad),)


def _normal_name(args):
    mean_t, std_t = _is_tensor(args[0]), _is_tensor(args[1])
    if mean_t and std_t:
        return "NormalBackward3"
    return "NormalBackward1" if mean_t else "NormalBackward2"


@register(
    "normal(mean, std, generator)",
    _normal_name,
    inputs="mean, std",
    inplace_variant=False,
    batch=random_tensor_params(inplace=False),
)
def _normal(ctx, grad):
    need_mean, need_std = ctx.needs_input_grad
    return (
        _zeros_shaped(ctx, 0, grad) if need_mean else None,
        _zeros_shaped(ctx, 1, grad) if need_std else None,
    )


for _name, _node in (
    ("cauchy_", "CauchyBackward0"),
    ("log_normal_", "LogNormalBackward0"),
    ("geometric_", "GeometricBackward0"),
):
    register(f"{_name}(self)", _node, inplace_variant=False, batch=random_inplace)(
        lambda ctx, grad: (_zeros(grad),)
    )


jvp(
    "bernoulli",
    "bernoulli_",
    "exponential_",
    "random_",
    "normal",
    "cauchy_",
    "log_normal_",
    "geometric_",
    "poisson",
    inplace_variant=False,
)(_zero_tangent)

_not_differentiable("multinomial", batch=random_tensor_params(inplace=False))
