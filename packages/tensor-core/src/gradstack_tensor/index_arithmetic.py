"""``unravel_index``: flat indices into a shape's coordinates (torch's, as its own
composition: ``(indices // strides) % sizes``, so an index outside ``[0, numel)`` wraps
around, negative ones from the end, without an error).

Examples
--------
>>> import gradstack_tensor as gt
>>> [t.tolist() for t in unravel_index(gt.tensor([4, 1, -1]), (3, 2))]
[[2, 0, 2], [0, 1, 1]]
"""

from __future__ import annotations

from ._tensor import Tensor

__all__ = ["unravel_index"]


def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of the flat (row-major) ``indices``: one
    int64 tensor of ``indices``' shape per dim of ``shape``.

    >>> import gradstack_tensor as gt
    >>> unravel_index(gt.tensor(4), (3, 2))
    (tensor(2), tensor(0))
    """
    from . import creation

    if not isinstance(indices, Tensor):
        raise TypeError(
            f"unravel_index(): argument 'indices' must be Tensor, not {type(indices).__name__}"
        )
    if indices.is_floating_point() or indices.is_complex() or indices.dtype.name == "bool":
        raise TypeError(
            f"expected 'indices' to be integer dtype, but got "
            f"{str(indices.dtype).replace('gradstack', 'torch')}"
        )
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        shape = tuple(shape)
    except TypeError:
        raise TypeError(
            f"expected 'shape' to be int or sequence of ints, but got {type(shape)}"
        ) from None
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if not shape:
        return ()
    if 0 in shape:
        raise RuntimeError(
            f"ZeroDivisionError: unravel_index into a shape with a zero size {shape}"
        )
    strides = []
    step = 1
    for s in reversed(shape):
        strides.append(step)
        step *= s
    strides = creation.tensor(strides[::-1])
    sizes = creation.tensor(shape)
    coords = (indices.long().unsqueeze(-1) // strides) % sizes
    return tuple(coords.unbind(-1))
