"""torch's combinatorics: ``cartesian_prod`` and ``combinations``, written as compositions of
gradstack's ops (``meshgrid`` and ``stack``; ``index_select``), so that they differentiate
through them (Note [Composites record their parts] in composites.py).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.combinations(gt.tensor([1, 2, 3])).tolist()
[[1, 2], [1, 3], [2, 3]]
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ._composite_args import _gt, _int, _long, _tensor, _zeros
from ._tensor import Tensor

__all__ = ["cartesian_prod", "combinations"]


def _vector(t, fname: str) -> Tensor:
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    return t


def cartesian_prod(*tensors) -> Tensor:
    """The Cartesian product of 1-d tensors of one dtype: a ``(prod(len), len(tensors))``
    tensor, in the order of ``itertools.product``; one tensor is returned as it is.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cartesian_prod(gt.tensor([1, 2]), gt.tensor([3, 4])).tolist()
    [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    gt = _gt()
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    for t in tensors:  # (every argument's type first, as torch)
        _vector(t, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    grids = gt.meshgrid(*tensors, indexing="ij")
    return gt.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-d tensor, as rows, in the order
    of ``itertools.combinations`` (``combinations_with_replacement``).

    ``r == 0`` gives an empty 1-d tensor, ``r > len(input)`` a ``(0, r)`` one.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.combinations(gt.tensor([1.0, 2.0]), 2, with_replacement=True).tolist()
    [[1.0, 1.0], [1.0, 2.0], [2.0, 2.0]]
    """
    x = _tensor(input, "combinations")
    r = _int(r, "combinations", "r")
    _vector(x, "combinations")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _zeros((0,), x.dtype)
    n = x.shape[0]
    count = math.comb(n + r - 1, r) if with_replacement else math.comb(n, r)
    if count * r > 2**31:
        raise RuntimeError(f"combinations(): {count} combinations of {r} are too many")
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.fromiter(
        itertools.chain.from_iterable(pick(range(n), r)), dtype=np.int64, count=count * r
    )
    # (values by index_select: the gradient of an element sums over its rows)
    return x.index_select(0, _long(index)).reshape(count, r)
