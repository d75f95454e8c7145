# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Shapes and dims: ``Size``, dim wrapping, broadcast errors, shape arguments of methods."""
import numpy as np


class Size(tuple):
    """A tensor's shape: a tuple of ints, printed as torch prints ``torch.Size``.

    >>> Size((2, 3))
    gradstack.Size([2, 3])
    >>> Size((2, 3)).numel()
    6
    """

    __slots__ = ()

    def __repr__(self):
        return f"gradstack.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def _normalize_dim(Py_ssize_t dim, Py_ssize_t ndim, str what="dim"):
    """Wrap a negative dim; IndexError in torch's words when out of range."""
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def broadcast_error(shape_a, shape_b):
    """The RuntimeError torch raises for shapes that do not broadcast."""
    a, b = tuple(shape_a), tuple(shape_b)
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                f"at non-singleton dimension {i - n + len(a) if len(a) >= len(b) else i}. "
                f"Shapes: a {list(a)}, b {list(b)}; see numpy broadcasting rules "
                "(trailing dimensions must be equal or 1)."
            )
    return None


def normalize_dims(dim, Py_ssize_t ndim):
    """A dim or a sequence of dims as a tuple of non-negative axes (for numpy).

    Note [Dims of a 0-d tensor]
    torch lets a 0-d tensor be reduced over dim 0 or -1 (``tensor(2.).sum(0)``), as if it
    had one dimension of size 1; numpy has no axis to name.  The dims are checked, then
    mapped to the empty tuple of axes, over which numpy reduces nothing.
    """
    if isinstance(dim, (tuple, list)):
        axes = tuple(_normalize_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
    else:
        axes = (_normalize_dim(dim, ndim),)
    return axes if ndim else ()


def _size_of_scalar_dim(dim):
    _normalize_dim(dim, 0)
    raise IndexError("dimension specified as 0 but tensor has no dimensions")


cdef tuple shape_from_args(tuple args, str name):
    """``view(2, 3)``, ``view((2, 3))`` and ``view(Size)`` all give ``(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' must be a tuple of ints, but found element of "
                f"type {type(s).__name__}"
            )
    return tuple(int(s) for s in args)


cdef object dim_arg(object dim):
    """A reduction's ``dim`` argument: None, an int, or a tuple of ints."""
    if dim is None or isinstance(dim, (int, np.integer)):
        return dim
    if isinstance(dim, (tuple, list)):
        return tuple(dim)
    raise TypeError(f"dim must be an int, a tuple of ints or None, got {type(dim).__name__}")
