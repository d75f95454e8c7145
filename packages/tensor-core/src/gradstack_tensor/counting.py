"""torch's ``bincount``: how often each value occurs in a 1-d tensor of non-negative
integers, or the sums of weights per value.

Note [bincount with weights is differentiable]
torch's ``bincount`` records a node whose backward raises ("derivative for aten::bincount
is not implemented").  Here the weighted counts are an ``index_add`` of the weights into
zeros, so the gradient reaches the weights (``grad[input]``), a superset of torch's
behaviour.  The sums are in the result's dtype in input order, as torch's kernel.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.bincount(gt.tensor([0, 1, 1, 3])).tolist()
[1, 2, 0, 1]
"""

from __future__ import annotations

import builtins

import numpy as np

from ._composite_args import _gt, _int, _integral, _long, _name, _tensor, _zeros
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap

__all__ = ["bincount"]


@checked("bincount")
def bincount(input, weights=None, minlength: int = 0) -> Tensor:
    """How often each value occurs in a 1-d tensor of non-negative integers (int64), or
    the sums of ``weights`` per value: float32 for float32 weights, float64 for any other
    dtype.  The result has ``max(input.max() + 1, minlength)`` elements.

    Note [bincount with weights is differentiable].

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.bincount(gt.tensor([0, 1, 1, 3])).tolist()
    [1, 2, 0, 1]
    >>> gt.bincount(gt.tensor([0, 1, 1]), gt.tensor([0.5, 1.0, 2.0])).tolist()
    [0.5, 3.0]
    """
    gt = _gt()
    x = _tensor(input, "bincount")
    minlength = _int(minlength, "bincount", "minlength")
    if weights is not None:
        _tensor(weights, "bincount", "weights")
    if not _integral(x.dtype):
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_name(x.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.dim() == 1 and x.numel() == 0:
        return _zeros((minlength,), gt.int64)
    a = _data(x)
    if x.dim() != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = builtins.max(int(a.max()) + 1, minlength)
    if weights is None:
        return _wrap(np.bincount(a.astype(np.int64), minlength=bins).astype(np.int64))
    dtype = gt.float32 if weights.dtype.name == "float32" else gt.float64
    return _zeros((bins,), dtype).index_add(0, _long(a), weights.to(dtype))
