"""Physical layouts: where each vmap level's batch dim sits in a tensor's physical value.

The transforms (``eager_transforms``) hand physical tensors to the autograd engine and to
forward-mode AD, so they must line up tensors that are batched at different sets of
levels: a cotangent batched at a level its output is not, a primal the vmap around a
``grad`` does not batch.  A *layout* names each physical dim: ``("L", n)`` for the batch
dim of vmap level ``n``, ``("D", i)`` for logical dim ``i``.
"""

from __future__ import annotations

from .batched_tensor import flatten_levels, nest

__all__ = ["layout_of", "to_layout", "flatten", "nest", "expand_levels"]


def flatten(x):
    """``(physical, {level: dim})`` of a (possibly batched) tensor."""
    return flatten_levels(x)


def layout_of(phys, dims: dict) -> list:
    """The layout of a physical tensor whose level ``L`` is at ``dims[L]``."""
    at = {d: lv for lv, d in dims.items()}
    out, k = [], 0
    for i in range(phys.dim()):
        if i in at:
            out.append(("L", at[i]))
        else:
            out.append(("D", k))
            k += 1
    return out


def to_layout(phys, dims: dict, target: list, sizes: dict):
    """``phys`` (levels at ``dims``) rearranged to the ``target`` layout: missing levels
    broadcast (a view, sizes from ``sizes``), dims permuted into place.  ``phys`` must have
    no level that ``target`` lacks."""
    have = layout_of(phys, dims)
    missing = [e for e in target if e not in have]
    t = phys
    for _ in missing:
        t = t.unsqueeze(-1)
    have = have + missing
    perm = tuple(have.index(e) for e in target)
    if perm != tuple(range(len(perm))):
        t = t.permute(perm)
    if missing:
        shape = list(t.shape)
        for i, e in enumerate(target):
            if e in missing:
                shape[i] = sizes[e[1]]
        t = t.expand(tuple(shape))
    return t


def expand_levels(phys, dims: dict, levels) -> tuple:
    """``phys`` with a new leading batch dim (broadcast, a view) for each of ``levels``
    (``(number, size)`` pairs) it is not batched at; returns ``(phys, dims)``."""
    for number, size in levels:
        if number in dims:
            continue
        phys = phys.unsqueeze(0).expand((size,) + tuple(phys.shape))
        dims = {k: v + 1 for k, v in dims.items()}
        dims[number] = 0
    return phys, dims
