"""torch's layouts and memory formats: ``layout`` (``strided``, the only one gradstack
has) and ``memory_format`` (``contiguous_format``, ``channels_last``,
``channels_last_3d``, ``preserve_format``, ``legacy_contiguous_format``).

A memory format says in which order a tensor's elements are laid out: row-major
(``contiguous_format``), or with the channels last (``channels_last``: a 4-d ``(N, C, H,
W)`` tensor stored as ``(N, H, W, C)``; ``channels_last_3d`` for 5-d).  The values never
depend on it; ``Tensor.contiguous(memory_format=)``, ``clone(memory_format=)`` and
``is_contiguous(memory_format=)`` read it (``channels_last_strides``).

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.ones(2, 3, 4, 5).contiguous(memory_format=channels_last)
>>> x.stride(), x.is_contiguous(), x.is_contiguous(memory_format=channels_last)
((60, 1, 15, 3), False, True)
>>> gt.ones(2).layout
gradstack.strided
"""

from __future__ import annotations

__all__ = [
    "layout",
    "memory_format",
    "strided",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
    "legacy_contiguous_format",
]


class _Named:
    """One of torch's named constants: compared by identity, printed as torch's."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"gradstack.{self._name}"

    def __reduce__(self):  # the same object after pickling (a module constant)
        return self._name


class layout(_Named):  # noqa: N801 - torch spells it in lower case
    """A tensor's storage layout; gradstack's tensors are all :data:`strided`."""

    __slots__ = ()


class memory_format(_Named):  # noqa: N801 - torch spells it in lower case
    """The order in which a tensor's elements are laid out in memory."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format  # (torch's is the same object)

# the permutation that lays a tensor out channels last, and the rank it needs
_ORDER = {channels_last: ((0, 2, 3, 1), 4), channels_last_3d: ((0, 2, 3, 4, 1), 5)}


def check_memory_format(value, fname: str):
    """``value`` if it is a :class:`memory_format` or None, else torch's TypeError."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(
            f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
            f"{type(value).__name__}"
        )
    return value


def channels_last_order(value, ndim: int, fname: str):
    """The permutation (to channels last) of a ``channels_last``/``_3d`` format for a
    tensor of ``ndim`` dims, None for the other formats; torch's error for a wrong rank."""
    if value not in _ORDER:
        return None
    order, rank = _ORDER[value]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {value._name} format")
    return order


def is_laid_out(shape, strides, value) -> bool:
    """Whether ``shape``/``strides`` (in elements) are ``value``'s dense layout (torch's
    rule: dims of size 1 take any stride)."""
    order, rank = _ORDER[value]
    if len(shape) != rank:
        return False
    expected = 1
    for d in reversed(order):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True
