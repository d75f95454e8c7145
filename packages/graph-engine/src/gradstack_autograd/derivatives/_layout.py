"""The array whose strides autograd's bookkeeping reads: a tensor's own, or for a meta
tensor a contiguous stand-in of its shape and dtype.

Note [Meta tensors fold as contiguous ones]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Some formulas decide what torch saves by asking numpy whether a reshape would copy (a
folded matmul operand, ``ViewBackward0`` or ``UnsafeViewBackward0``).  A meta tensor's
array is one element broadcast (tensor-core's Note [Meta tensors carry no data]), with no
strides to ask about, and numpy refuses to compute with it; torch's meta results are
contiguous, so the question is asked of an array with the C-contiguous strides of the
meta tensor's shape.  That array is strided over a one-element buffer and is never read
(only its strides are), so a forward on the meta device records the graph torch records
without memory (backward through meta tensors stays unsupported).

Examples
--------
>>> import gradstack_tensor as gt
>>> layout_of(gt.empty(2, 3, device="meta")).strides
(12, 4)
"""

from __future__ import annotations

import numpy as np
from gradstack_tensor.extension import data_of as _data

__all__ = ["layout_of"]


def _contiguous_strides(shape, itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def layout_of(t) -> np.ndarray:
    """``t``'s array, or for a meta tensor a read-only contiguous stand-in (Note [Meta
    tensors fold as contiguous ones])."""
    a = _data(t)
    if not t.is_meta:
        return a
    return np.lib.stride_tricks.as_strided(
        np.zeros(1, dtype=a.dtype),
        a.shape,
        _contiguous_strides(a.shape, a.dtype.itemsize),
        writeable=False,
    )
