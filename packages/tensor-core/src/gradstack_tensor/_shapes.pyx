# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Shapes and layouts: ``Size``, dim wrapping, broadcast errors, shape arguments of methods,
memory overlap of an in-place op's operands."""
cimport numpy as cnp
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF

import numpy as np

cnp.import_array()


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


def _normalize_dim(object dim_arg, Py_ssize_t ndim, str what="dim"):
    """Wrap a negative dim; IndexError in torch's words when out of range, and torch's
    TypeError naming the argument for a dim that is not an int (a float, None or a list
    said "'float' object cannot be interpreted as an integer")."""
    if not isinstance(dim_arg, (int, np.integer)) and not hasattr(type(dim_arg), "__index__"):
        raise TypeError(f"argument '{what}' must be int, not {type(dim_arg).__name__}")
    cdef Py_ssize_t dim = dim_arg
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
                f"Shapes: a {list(a)}, b {list(b)}; to broadcast, trailing dimensions must be "
                "equal or 1."
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
                f"{name}(): argument '{_SHAPE_ARGUMENT.get(name, 'size')}' must be a tuple of "
                f"ints, but found element of type {type(s).__name__}"
            )
    return tuple(int(s) for s in args)


# torch's name of the shape argument of the methods that are not ``size``
_SHAPE_ARGUMENT = {"permute": "dims", "flip": "dims", "repeat": "repeats", "reshape": "shape"}


cdef object dim_arg(object dim):
    """A reduction's ``dim`` argument: None, an int, or a tuple of ints."""
    if dim is None or isinstance(dim, (int, np.integer)):
        return dim
    if isinstance(dim, (tuple, list)):
        for i, d in enumerate(dim):
            if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
                # torch names the argument and what it takes (``t.sum([[1]])`` said
                # "'list' object cannot be interpreted as an integer")
                raise TypeError(
                    "argument 'dim' must be an int, a tuple of ints or None, but found "
                    f"element of type {type(d).__name__} at pos {i}"
                )
        return tuple(dim)
    raise TypeError(
        f"argument 'dim' must be an int, a tuple of ints or None, not {type(dim).__name__}"
    )


# ----------------------------------------------------------------------------------------
# Memory overlap of the operands of an in-place op


cdef bint _dense(cnp.ndarray a):
    """Whether ``a``'s elements fill one block of memory (torch's "non-overlapping and
    dense": some permutation of its dims is contiguous)."""
    cdef int nd = cnp.PyArray_NDIM(a), i, j, _k
    cdef cnp.npy_intp* shape = cnp.PyArray_DIMS(a)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(a)
    cdef Py_ssize_t expected = cnp.PyArray_ITEMSIZE(a), st, best_st
    cdef int used[64]
    if nd > 64:
        return False
    for i in range(nd):
        used[i] = shape[i] == 1     # a size-1 dim's stride means nothing
    for _k in range(nd):
        # the unused dim with the smallest |stride| must continue the block
        j = -1
        best_st = 0
        for i in range(nd):
            if not used[i]:
                st = strides[i] if strides[i] >= 0 else -strides[i]
                if j < 0 or st < best_st:
                    j, best_st = i, st
        if j < 0:
            break
        if best_st != expected:
            return False
        used[j] = 1
        expected *= shape[j]
    return True


cdef char* _lowest_address(cnp.ndarray a):
    """The lowest address ``a`` reaches (its first element's, unless a stride is negative)."""
    cdef char* p = <char*>cnp.PyArray_DATA(a)
    cdef int i
    for i in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDES(a)[i] < 0 and cnp.PyArray_DIMS(a)[i] > 0:
            p += cnp.PyArray_STRIDES(a)[i] * (cnp.PyArray_DIMS(a)[i] - 1)
    return p


cdef bint _same_strides(cnp.ndarray a, cnp.ndarray b):
    """Whether ``a`` and ``b`` (of one size) have torch's equal strides.  torch compares
    every stride, a size-1 dim's too (``v.sub_(v.t())`` of a 1x1 view is refused), but a
    new axis has stride 0 in numpy where torch's unsqueeze gives it size * stride of the
    next dim: a size-1 dim of stride 0 is not compared (``x[t0, None].mul_(x)`` runs, as
    in torch: fuzz seed 1 #13383)."""
    cdef int i
    if cnp.PyArray_NDIM(a) != cnp.PyArray_NDIM(b):
        return False
    for i in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIMS(a)[i] != cnp.PyArray_DIMS(b)[i]:
            return False
        if cnp.PyArray_DIMS(a)[i] == 1 and (cnp.PyArray_STRIDES(a)[i] == 0
                                            or cnp.PyArray_STRIDES(b)[i] == 0):
            continue
        if cnp.PyArray_STRIDES(a)[i] != cnp.PyArray_STRIDES(b)[i]:
            return False
    return True


cpdef check_no_partial_overlap(object dst, object src):
    """torch's ``assert_no_partial_overlap``: refuse an operand ``src`` that shares some,
    but not all, of its memory with ``dst``, the array an in-place op writes
    (``y[1:].copy_(y[:-1])``, ``y[:3].mul_(y[1:])``): the result would depend on the order
    in which elements are written.

    As torch's ``get_overlap_status``, only arrays that are non-overlapping and dense (their
    elements fill one block of memory) are compared; any other layout is "too hard" and
    passes, as in torch.  The same memory element for element (``x.mul_(x)``) is allowed.
    Anything but two arrays (a Python number operand) passes.

    Raises
    ------
    RuntimeError
        torch's "unsupported operation: some elements of the input tensor and the
        written-to tensor refer to a single memory location".
    """
    if not (cnp.PyArray_Check(dst) and cnp.PyArray_Check(src)):
        return
    cdef cnp.ndarray a = dst, b = src
    cdef char *a0
    cdef char *a1
    cdef char *b0
    cdef char *b1
    if cnp.PyArray_SIZE(a) == 0 or cnp.PyArray_SIZE(b) == 0:
        return
    if not (_dense(a) and _dense(b)):
        return
    a0 = _lowest_address(a)
    b0 = _lowest_address(b)
    a1 = a0 + cnp.PyArray_SIZE(a) * cnp.PyArray_ITEMSIZE(a)
    b1 = b0 + cnp.PyArray_SIZE(b) * cnp.PyArray_ITEMSIZE(b)
    if a0 == b0 and a1 == b1:
        if _same_strides(a, b):
            return      # the same memory, element for element
    elif not (a0 < b1 and b0 < a1):
        return
    raise RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to "
        "tensor refer to a single memory location. Please clone() the tensor before "
        "performing the operation."
    )


# Note [A broadcast view built in C]
# ``np.broadcast_to`` builds its view through an nditer and Python code, ~3 us even for a
# 0-d array (the gradient of ``sum``, expanded to its input's shape in every backward);
# ``expand`` asks for the same view here: each dim of ``x`` is kept (size and stride) or,
# where ``x`` has 1 or no dim, repeated with stride 0 (a kept 1 too, as numpy's strides);
# read-only, as numpy's, and based on ``x``.

cdef extern from "numpy/arrayobject.h":
    object PyArray_NewFromDescr(
        PyTypeObject* subtype, cnp.PyArray_Descr* descr, int nd, cnp.npy_intp* dims,
        cnp.npy_intp* strides, void* data, int flags, PyObject* obj)


def broadcast_view(cnp.ndarray x not None, tuple target not None):
    """``np.broadcast_to(x, target)``: a read-only view of ``x`` repeated to ``target``
    (Note [A broadcast view built in C]).

    Raises ValueError where numpy's would: a target with fewer dims than ``x``, a negative
    size, or a dim of ``x`` that is neither 1 nor the target's.

    >>> import numpy as np
    >>> v = broadcast_view(np.array([1.0, 2.0]), (2, 2))
    >>> v.tolist(), v.strides, v.flags.writeable
    ([[1.0, 2.0], [1.0, 2.0]], (0, 8), False)
    """
    cdef int nd = len(target), xnd = cnp.PyArray_NDIM(x), lead, i
    cdef cnp.npy_intp dims[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp strides[cnp.NPY_MAXDIMS]
    cdef cnp.npy_intp have
    if nd > cnp.NPY_MAXDIMS:
        raise ValueError(f"broadcast_view: {nd} dims, more than numpy's {cnp.NPY_MAXDIMS}")
    lead = nd - xnd
    if lead < 0:
        raise ValueError(
            f"broadcast_view: cannot broadcast a shape of {xnd} dims to {nd} dims {target}"
        )
    for i in range(nd):
        dims[i] = target[i]
        if dims[i] < 0:
            raise ValueError(f"broadcast_view: negative size in the target shape {target}")
        if i < lead:
            strides[i] = 0
            continue
        have = cnp.PyArray_DIM(x, i - lead)
        if have == 1:
            strides[i] = 0      # (also where the target keeps the 1: numpy's strides)
        elif have == dims[i]:
            strides[i] = cnp.PyArray_STRIDE(x, i - lead)
        else:
            raise ValueError(
                f"broadcast_view: cannot broadcast {(<object>x).shape} to {target}"
            )
    cdef cnp.PyArray_Descr* descr = cnp.PyArray_DESCR(x)
    Py_INCREF(<object>descr)    # PyArray_NewFromDescr steals a reference to the descr
    cdef cnp.ndarray view = PyArray_NewFromDescr(
        <PyTypeObject*>np.ndarray, descr, nd, dims, strides, cnp.PyArray_DATA(x),
        cnp.PyArray_FLAGS(x) & cnp.NPY_ARRAY_ALIGNED, NULL)
    cnp.set_array_base(view, x)     # (takes its own reference to x)
    return view
