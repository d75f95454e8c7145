"""``F.pad``: constant, reflect, replicate and circular padding, as compositions of
gradstack ops (constant: ``cat`` with filled blocks, or ``narrow`` for a negative pad;
the others: one ``index_select`` per padded dim with the indices the mode reads).

Examples
--------
>>> import gradstack_tensor as gt
>>> pad(gt.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect").tolist()
[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
>>> pad(gt.tensor([[1, 2]]), (1, 1), value=9).tolist()
[[9, 1, 2, 9]]
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _pairs(x: Tensor, pad) -> list:
    """``[(dim, before, after), ...]`` from torch's last-dim-first pad tuple."""
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {x.dim()}"
        )
    for p in pad:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(
                f"pad(): argument 'pad' must be tuple of ints, but found element of type "
                f"{type(p).__name__}"
            )
    return [(x.dim() - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(len(pad) // 2)]


def _constant(x: Tensor, pairs, value) -> Tensor:
    for dim, before, after in pairs:
        n = x.shape[dim]
        if before < 0 or after < 0:
            start, stop = max(-before, 0), n - max(-after, 0)
            if stop < start:
                raise RuntimeError(
                    f"The input size {n}, plus negative padding {min(before, 0)} and "
                    f"{min(after, 0)} resulted in a negative output size, which is invalid. "
                    f"Check dimension {dim} of your input."
                )
            x = x.narrow(dim, start, stop - start)
        parts = []
        for width in (max(before, 0), max(after, 0)):
            shape = list(x.shape)
            shape[dim] = width
            parts.append(gt.full(tuple(shape), value, dtype=x.dtype) if width else None)
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        x = gt.cat(pieces, dim) if len(pieces) > 1 else x
    return x


def _source_indices(mode: str, n: int, before: int, after: int, dim: int, shape) -> np.ndarray:
    positions = np.arange(-before, n + after)
    if mode == "reflect":
        if before >= n or after >= n:
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {dim} of input "
                f"{list(shape)}"
            )
        positions = np.abs(positions)
        return np.where(positions >= n, 2 * (n - 1) - positions, positions)
    if mode == "replicate":
        if n == 0:
            raise RuntimeError(
                f"padding size is expected to be less than the input size, got input of size "
                f"{list(shape)}"
            )
        return np.clip(positions, 0, n - 1)
    if before > n or after > n:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return positions % n


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """``input`` padded by ``pad`` = ``(before_last, after_last, before_second_last, ...)``
    elements per dim, from the last dim backwards.  ``mode="constant"`` fills with
    ``value`` (0 by default; a negative pad crops); ``"reflect"`` mirrors without the edge,
    ``"replicate"`` repeats the edge, ``"circular"`` wraps around.  The non-constant modes
    pad the trailing 1 to 3 dims of a batched ``(N, C, ...)`` or unbatched ``(C, ...)``
    input, as torch.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be Tensor, not {type(input).__name__}")
    if mode not in _MODES:
        raise NotImplementedError(
            f"Unrecognised padding mode {mode}" if isinstance(mode, str) else "padding mode"
        )
    pairs = _pairs(input, pad)
    if mode == "constant":
        return _constant(input, pairs, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    spatial = len(pairs)
    if spatial > 3 or input.dim() not in (spatial + 1, spatial + 2):
        raise NotImplementedError(
            f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now "
            f"(got a {input.dim()}-D input and a pad of length {2 * spatial} in mode {mode})"
        )
    x = input
    for dim, before, after in pairs:
        idx = _source_indices(mode, x.shape[dim], before, after, dim, tuple(input.shape))
        x = x.index_select(dim, gt.tensor(idx.astype(np.int64)))
    return x
