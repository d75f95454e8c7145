"""torch's ``hash_tensor``: the elements' bits reduced by XOR into a uint64 tensor.

Each element is widened to its 64-bit equivalent (a float to a double, an integer or bool
to an int64) and read as a uint64; the XOR of those over ``dim`` (every dim by default)
is the hash, as torch's ``xor_sum`` (mode 0, torch's only mode).  The unsigned barebones
dtypes and complex numbers are refused, as torch has no loop for them.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.tensor([[1, 2], [3, 4]]).hash_tensor().item()
4
>>> gt.tensor([[1, 2], [3, 4]]).hash_tensor(1).tolist()
[3, 7]
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._shapes import _normalize_dim
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap

__all__ = ["hash_tensor"]


@checked("hash_tensor", "int[]? dim, bool keepdim, int mode")
def hash_tensor(input, dim=(), *, keepdim=False, mode=0) -> Tensor:
    """The XOR of the elements' 64-bit patterns over ``dim`` (all dims when empty), as a
    uint64 tensor (torch's ``hash_tensor``, mode 0).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.hash_tensor(gt.tensor([1.0, 2.0, 3.0])).item()
    4609434218613702656
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    dt = input.dtype
    if dt.is_complex or dt in _dt.BAREBONES:
        raise NotImplementedError(
            f"\"xor_sum_cpu\" not implemented for '{_dt.SCALAR_TYPE_NAMES[dt.name]}'"
        )
    x = _data(input)
    dims = [dim] if isinstance(dim, int) else list(dim or ())
    axes = tuple(sorted({_normalize_dim(d, max(x.ndim, 1)) for d in dims})) if dims else None
    if axes is None and x.size == 0:
        raise RuntimeError(
            "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    if axes is not None and x.ndim:
        for a in axes:
            if x.shape[a] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero size.")
    if dt.is_floating_point:
        bits = x.astype(np.float64).view(np.uint64) if x.size else x.astype(np.uint64)
    else:
        bits = x.astype(np.int64).view(np.uint64)
    if x.ndim == 0:
        bits = bits.reshape(())
        return _wrap(np.array(bits, dtype=np.uint64))
    out = np.bitwise_xor.reduce(bits, axis=axes, keepdims=keepdim)
    if axes is None and keepdim:
        out = out.reshape((1,) * x.ndim)
    return _wrap(np.array(out, dtype=np.uint64))  # (0-d stays 0-d)
