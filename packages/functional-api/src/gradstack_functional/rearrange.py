"""``rearrange``: einops' ``rearrange`` (torch 2.13's ``torch.func.rearrange``): permute,
split, merge, squeeze and unsqueeze dimensions by a pattern, with gradstack's ``reshape``,
``permute`` and ``sum``, so gradients flow as through those ops.

Note [rearrange without first-class dimensions]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch binds one first-class dimension (``d0``, ``d1`` ...) per axis of the left side, in
its order (the ellipsis' dims and a unit axis ``1``/``()`` included), indexes the tensor
with them, orders them as the right side says and sums the unit axes of the left side
away (so ``"1 h c -> h c"`` sums the first dim, whatever its size).  Here the same axes
get their sizes group by group (a group's one unknown size inferred from the others,
with torch's ``DimensionBindError`` words and dimension names when it cannot be), the
tensor is reshaped to them, the left's unit axes are summed, the rest permuted into the
right side's order and reshaped into its groups (an empty group is a new dim of size 1).

Examples
--------
>>> import gradstack_tensor as gt
>>> images = gt.zeros(32, 30, 40, 3)
>>> rearrange(images, "b h w c -> b c h w").shape
gradstack.Size([32, 3, 30, 40])
>>> rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2).shape
gradstack.Size([128, 15, 20, 3])
"""

from __future__ import annotations

import functools
import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .einops_parsing import _ellipsis, parse_pattern, validate_rearrange_expressions

__all__ = ["rearrange", "DimensionBindError"]


class DimensionBindError(Exception):
    """A size that does not fit the pattern (torch's ``functorch.dim.DimensionBindError``)."""


def _pack_name(names) -> str:
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


@functools.lru_cache(256)
def _plan(tensor_ndim: int, pattern: str, lengths: tuple):
    """The rearrangement of a tensor of ``tensor_ndim`` dims: the left side's groups of
    axis indices, the given sizes by axis index, the unit axes, the right side's order and
    groups (torch's checks and words for the pattern)."""
    axes_lengths = dict(lengths)
    left, right = parse_pattern(pattern, axes_lengths)
    validate_rearrange_expressions(left, right, axes_lengths)
    n_anon_dims = sum(not dim for dim in left.composition)
    if left.has_ellipsis:
        n_ellipsis_dims = tensor_ndim - (len(left.composition) - 1)
        n_named_dims = len(left.identifiers) - 1
        if (pattern_ndim := n_anon_dims + n_named_dims) > tensor_ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({pattern_ndim}) must be less than or equal "
                f"to the number of dimensions in the tensor ({tensor_ndim})"
            )
    else:
        n_ellipsis_dims = 0
        n_named_dims = len(left.identifiers)
        if (pattern_ndim := len(left.composition)) != tensor_ndim:
            raise ValueError(
                f"Number of dimensions in pattern ({pattern_ndim}) must be equal to the number "
                f"of dimensions in the tensor ({tensor_ndim})"
            )
    n_dims = n_named_dims + n_ellipsis_dims + n_anon_dims
    if n_dims == 0:
        return None
    index: dict = {}
    left_groups: list = []  # per tensor dim: the axis indices it holds
    anon: list = []
    i = 0
    for dimension in left.composition:
        if dimension == _ellipsis:
            index[_ellipsis] = tuple(range(i, i + n_ellipsis_dims))
            left_groups.extend((j,) for j in index[_ellipsis])
            i += n_ellipsis_dims
        elif dimension:
            members: list[int] = []
            for identifier in dimension:
                index[identifier] = (i,)
                members.append(i)
                i += 1
            left_groups.append(tuple(members))
        else:  # a unit axis: summed away
            anon.append(i)
            left_groups.append((i,))
            i += 1
    given = {index[name][0]: size for name, size in axes_lengths.items()}
    order: list[int] = []
    right_groups: list[tuple[int, ...]] = []
    for dimension in right.composition:
        if dimension == _ellipsis:
            order.extend(index[_ellipsis])
            right_groups.extend((j,) for j in index[_ellipsis])
        else:
            group = tuple(j for identifier in dimension for j in index[identifier])
            order.extend(group)
            right_groups.append(group)
    return tuple(left_groups), given, tuple(anon), tuple(order), tuple(right_groups)


def _axis_sizes(shape, left_groups, given):
    """Each axis' size, group by group, with torch's errors."""
    sizes: dict = {}
    for size, group in zip(shape, left_groups):
        unknown = [j for j in group if given.get(j, -1) == -1]
        known = [given[j] for j in group if j not in unknown]
        names = [f"d{j}" for j in group]
        if len(unknown) > 1:
            raise DimensionBindError(
                f"cannot infer the sizes of two dimensions at once d{unknown[0]} and d{unknown[1]}"
            )
        if unknown:
            product = math.prod(known)
            if size % product != 0:
                shown = tuple("?" if j in unknown else given[j] for j in group)
                raise DimensionBindError(
                    f"inferred dimension does not evenly fit into larger dimension: {size} vs "
                    f"{shown}"
                )
            sizes[unknown[0]] = size // product
        elif math.prod(known) != size:
            raise DimensionBindError(
                f"Dimension sizes to do not match ({size} != {math.prod(known)}) when "
                f"matching dimension pack {_pack_name(names)}"
            )
        for j in group:
            if j not in unknown:
                sizes[j] = given[j]
    return sizes


def rearrange(tensor, pattern: str, **axes_lengths: int) -> Tensor:
    """einops' ``rearrange``: transpose, reshape, squeeze, unsqueeze, stack and
    concatenate by a pattern (Note [rearrange without first-class dimensions]).

    Parameters
    ----------
    tensor : Tensor or sequence of Tensor
        A sequence is stacked first (along a new dim 0).
    pattern : str
        ``"left -> right"``: the axes of each side, ``(a b)`` a dim made of two axes,
        ``...`` the dims not named, ``1`` or ``()`` a unit axis.
    **axes_lengths : int
        The sizes of axes that are split (``h1=2``).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.arange(6).reshape(2, 3)
    >>> rearrange(x, "a b -> b a").tolist()
    [[0, 3], [1, 4], [2, 5]]
    >>> rearrange(x, "a (b c) -> (a b) c", c=1).shape
    gradstack.Size([6, 1])
    >>> rearrange([gt.ones(2), gt.zeros(2)], "n d -> (d n)").tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    if not isinstance(tensor, Tensor):
        tensor = gt.stack(tensor)
    plan = _plan(tensor.ndim, pattern, tuple(axes_lengths.items()))
    if plan is None:  # an identity of a 0-d tensor
        return tensor
    left_groups, given, anon, order, right_groups = plan
    sizes = _axis_sizes(tuple(tensor.shape), left_groups, given)
    n = len(sizes)
    out = tensor.reshape([sizes[j] for j in range(n)])
    if anon:
        out = out.sum(anon, keepdim=False)
        kept = [j for j in range(n) if j not in anon]
    else:
        kept = list(range(n))
    position = {j: k for k, j in enumerate(kept)}
    out = out.permute([position[j] for j in order])
    return out.reshape([math.prod(sizes[j] for j in group) for group in right_groups])
