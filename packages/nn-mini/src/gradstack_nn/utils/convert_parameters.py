"""``parameters_to_vector`` and ``vector_to_parameters``, as ``torch.nn.utils`` has them:
all parameters as one flat vector and back (for second-order methods, evolution
strategies, or averaging weights).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Linear
>>> model = Linear(3, 2)
>>> vec = parameters_to_vector(model.parameters())
>>> tuple(vec.shape)
(8,)
>>> vector_to_parameters(gt.zeros(8), model.parameters())
>>> model.weight.abs().sum().item(), model.bias.abs().sum().item()
(0.0, 0.0)
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters) -> Tensor:
    """The parameters flattened and concatenated into one vector (differentiable: a
    ``cat`` of views, as torch's)."""
    return gt.cat([param.reshape(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Give each parameter, in order, the next ``numel`` entries of ``vec``.

    Note [vector_to_parameters aliases vec]: as torch (``param.data = vec[...].view_as(
    param).data``), each parameter's data becomes a view of ``vec``: writing into ``vec``
    afterwards changes the parameters.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer : pointer + num_param].view_as(param).data
        pointer += num_param


def _typename(obj) -> str:
    """``torch.typename`` for a non-tensor: the qualified class name."""
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"
