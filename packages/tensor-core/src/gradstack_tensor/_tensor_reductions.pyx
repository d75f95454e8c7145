# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's reductions and linear algebra: ``sum``, ``mean``, ``max`` ... ``matmul``.

``ReductionMethods`` is one link of the Tensor's class chain (see ``_tensor_base.pyx``).
Reductions take torch's ``dim`` (an int, a tuple of ints, or None for all dims) and
``keepdim``, or numpy's names for them, ``axis`` and ``keepdims``, as torch accepts; each
method calls one op through the dispatch point, except ``all``, ``any`` and
``count_nonzero``, which return bool/int64 results no layer differentiates.

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython
cimport numpy as cnp

import numpy as np

from ._dispatch cimport Op, dispatch
from . import _op_table  # no-cython-lint: imported to declare the ops looked up below
from ._dispatch import OPS
from ._shapes cimport dim_arg
from ._shapes import normalize_dims
from ._tensor_base cimport TensorBase, as_ndarray, make_tensor
from ._tensor_elementwise cimport ElementwiseMethods

cdef Op OP_SUM = OPS["sum"]
cdef Op OP_MEAN = OPS["mean"]
cdef Op OP_PROD = OPS["prod"]
cdef Op OP_MAX = OPS["max"]
cdef Op OP_MIN = OPS["min"]
cdef Op OP_MAXIMUM = OPS["maximum"]
cdef Op OP_MINIMUM = OPS["minimum"]
cdef Op OP_AMAX = OPS["amax"]
cdef Op OP_AMIN = OPS["amin"]
cdef Op OP_ARGMAX = OPS["argmax"]
cdef Op OP_ARGMIN = OPS["argmin"]
cdef Op OP_VAR = OPS["var"]
cdef Op OP_STD = OPS["std"]
cdef Op OP_NORM = OPS["norm"]
cdef Op OP_LOGSUMEXP = OPS["logsumexp"]
cdef Op OP_SOFTMAX = OPS["softmax"]
cdef Op OP_LOG_SOFTMAX = OPS["log_softmax"]
cdef Op OP_CUMSUM = OPS["cumsum"]
cdef Op OP_MATMUL = OPS["matmul"]
cdef Op OP_MM = OPS["mm"]
cdef Op OP_BMM = OPS["bmm"]
cdef Op OP_DOT = OPS["dot"]
cdef Op OP_OUTER = OPS["outer"]
cdef Op OP_MV = OPS["mv"]
cdef Op OP_ADDMM = OPS["addmm"]
cdef Op OP_COUNT_NONZERO = OPS["count_nonzero"]


cdef object numpy_alias(object value, object default, object alias, str fname, str name,
                        str alias_name):
    """torch's numpy-style keyword aliases (``axis`` for ``dim``, ``keepdims`` for
    ``keepdim``): the alias's value, unless both were given."""
    if value is not default and not (type(value) is type(default) and value == default):
        raise TypeError(
            f"{fname}() received both '{name}' and its alias '{alias_name}'; pass one of them"
        )
    return alias


class _Unset:
    """The default of a reduction's ``dim`` or ``keepdim`` when the caller gave none
    (Note [Reduction overloads are torch's])."""

    __slots__ = ("shown",)

    def __init__(self, shown):
        self.shown = shown

    def __repr__(self):
        return self.shown


NO_DIM = _Unset("None")
NO_KEEPDIM = _Unset("False")
NO_UNBIASED = _Unset("None")


# Note [Reduction overloads are torch's]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's reductions are overloads: ``sum(*, dtype)`` and ``sum(dim, keepdim=False, *,
# dtype)``; ``max()``, ``max(int dim, bool keepdim=False)`` and ``max(Tensor other)``.
# A ``keepdim`` without a ``dim`` matches none of them (``t.sum(keepdim=True)`` is a
# TypeError), and neither does ``dim=None`` where the dim is an ``int`` (``max``, ``min``,
# ``prod``); ``keepdim`` must be a bool (``t.sum(0, 1)`` is a TypeError).  A Python
# signature has one default for "not given" and "None": the defaults here are sentinels
# that say "not given", so that the calls torch refuses are refused (issue 36).

cdef tuple _dim_keepdim(str name, object dim, object keepdim, bint none_dim):
    """``(dim, keepdim)`` of reduction ``name`` with the sentinels resolved, or torch's
    TypeError (Note [Reduction overloads are torch's]); ``none_dim``: whether torch takes
    ``dim=None``."""
    if dim is NO_DIM:
        if keepdim is not NO_KEEPDIM:
            raise TypeError(
                f"{name}(): 'keepdim' was given without 'dim' (torch has no {name}(*, "
                "keepdim) overload): pass dim"
                + (", or dim=None to reduce every element" if none_dim else "")
            )
        return None, False
    if dim is None and not none_dim:
        raise TypeError(
            f"{name}(): argument 'dim' must be int, not NoneType (call {name}() without "
            "a dim to reduce every element)"
        )
    return dim, keepdim_arg(name, False if keepdim is NO_KEEPDIM else keepdim)


cdef object keepdim_arg(str name, object keepdim):
    """``keepdim``, which must be a bool, as torch's (``t.sum(0, 1)`` is a TypeError)."""
    if type(keepdim) is bool or isinstance(keepdim, np.bool_):
        return bool(keepdim)
    raise TypeError(
        f"{name}(): argument 'keepdim' must be bool, not {type(keepdim).__name__}"
    )


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class ReductionMethods(ElementwiseMethods):
    """The reductions and linear algebra of :class:`gradstack_tensor.Tensor`."""

    # -- reductions -----------------------------------------------------------------------

    def sum(self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, axis=None, keepdims=None):
        """The sum over ``dim`` (all elements by default); bool and integer tensors sum as int64.

        Examples
        --------
        >>> t = gt.tensor([[1., 2.], [3., 4.]])
        >>> t.sum().item(), t.sum(0).tolist(), t.sum(1, keepdim=True).shape
        (10.0, [4.0, 6.0], gradstack.Size([2, 1]))
        """
        if axis is not None:
            dim = numpy_alias(None if dim is NO_DIM else dim, None, axis, "sum", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(
                False if keepdim is NO_KEEPDIM else keepdim, False, keepdims, "sum", "keepdim",
                "keepdims"
            )
        dim, keepdim = _dim_keepdim("sum", dim, keepdim, True)
        return dispatch(OP_SUM, (self, dim_arg(dim), keepdim, dtype))

    def mean(self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, axis=None, keepdims=None):
        """The mean over ``dim`` (all elements by default) of a float tensor.

        Examples
        --------
        >>> gt.tensor([[1., 2.], [3., 4.]]).mean(1).tolist()
        [1.5, 3.5]
        """
        if axis is not None:
            dim = numpy_alias(None if dim is NO_DIM else dim, None, axis, "mean", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(
                False if keepdim is NO_KEEPDIM else keepdim, False, keepdims, "mean", "keepdim",
                "keepdims"
            )
        dim, keepdim = _dim_keepdim("mean", dim, keepdim, True)
        return dispatch(OP_MEAN, (self, dim_arg(dim), keepdim, dtype))

    def prod(self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, dtype=None, axis=None, keepdims=None):
        """The product over ``dim`` (all elements by default)."""
        if axis is not None:
            dim = numpy_alias(None if dim is NO_DIM else dim, None, axis, "prod", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(
                False if keepdim is NO_KEEPDIM else keepdim, False, keepdims, "prod", "keepdim",
                "keepdims"
            )
        dim, keepdim = _dim_keepdim("prod", dim, keepdim, False)
        return dispatch(OP_PROD, (self, dim, keepdim, dtype))

    def max(self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, axis=None, keepdims=None):
        """The largest element; with ``dim``, ``(values, indices)`` along it; with a tensor,
        the elementwise :meth:`maximum`.

        Examples
        --------
        >>> t = gt.tensor([[1., 5.], [7., 2.]])
        >>> t.max().item(), t.max(1).values.tolist(), t.max(1).indices.tolist()
        (7.0, [5.0, 7.0], [1, 0])
        """
        if axis is not None:
            dim = numpy_alias(None if dim is NO_DIM else dim, None, axis, "max", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(
                False if keepdim is NO_KEEPDIM else keepdim, False, keepdims, "max", "keepdim",
                "keepdims"
            )
        if isinstance(dim, TensorBase):
            if keepdim is not NO_KEEPDIM:
                raise TypeError("max(): 'keepdim' is not an argument of max(Tensor other)")
            return dispatch(OP_MAXIMUM, (self, dim))
        dim, keepdim = _dim_keepdim("max", dim, keepdim, False)
        return dispatch(OP_MAX, (self, dim, keepdim))

    def min(self, dim=NO_DIM, keepdim=NO_KEEPDIM, *, axis=None, keepdims=None):
        """The smallest element; with ``dim``, ``(values, indices)`` along it; with a tensor,
        the elementwise :meth:`minimum`."""
        if axis is not None:
            dim = numpy_alias(None if dim is NO_DIM else dim, None, axis, "min", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(
                False if keepdim is NO_KEEPDIM else keepdim, False, keepdims, "min", "keepdim",
                "keepdims"
            )
        if isinstance(dim, TensorBase):
            if keepdim is not NO_KEEPDIM:
                raise TypeError("min(): 'keepdim' is not an argument of min(Tensor other)")
            return dispatch(OP_MINIMUM, (self, dim))
        dim, keepdim = _dim_keepdim("min", dim, keepdim, False)
        return dispatch(OP_MIN, (self, dim, keepdim))

    def amax(self, dim=(), keepdim=False, *, axis=None, keepdims=None):
        """The maximum over ``dim`` (all dims by default), values only."""
        if axis is not None:
            dim = numpy_alias(dim, (), axis, "amax", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "amax", "keepdim", "keepdims")
        return dispatch(OP_AMAX, (self, dim_arg(dim), keepdim_arg("amax", keepdim)))

    def amin(self, dim=(), keepdim=False, *, axis=None, keepdims=None):
        """The minimum over ``dim`` (all dims by default), values only."""
        if axis is not None:
            dim = numpy_alias(dim, (), axis, "amin", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "amin", "keepdim", "keepdims")
        return dispatch(OP_AMIN, (self, dim_arg(dim), keepdim_arg("amin", keepdim)))

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The index of the largest element (in the flattened tensor without ``dim``).

        Examples
        --------
        >>> gt.tensor([[1., 5.], [7., 2.]]).argmax().item()
        2
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "argmax", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "argmax", "keepdim", "keepdims")
        return dispatch(OP_ARGMAX, (self, dim, keepdim_arg("argmax", keepdim)))

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """The index of the smallest element (in the flattened tensor without ``dim``)."""
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "argmin", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "argmin", "keepdim", "keepdims")
        return dispatch(OP_ARGMIN, (self, dim, keepdim_arg("argmin", keepdim)))

    def var(self, dim=None, unbiased=NO_UNBIASED, keepdim=False, *, correction=None, axis=None,
            keepdims=None):
        """The variance over ``dim``, with Bessel's correction unless ``unbiased=False`` or
        ``correction=0``.

        Examples
        --------
        >>> t = gt.tensor([1., 2., 3., 4.])
        >>> t.var().item(), t.var(correction=0).item()
        (1.6666666269302368, 1.25)
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "var", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "var", "keepdim", "keepdims")
        return dispatch(
            OP_VAR,
            (self, dim_arg(dim), _correction("var", unbiased, correction, dim, keepdim),
             keepdim_arg("var", keepdim))
        )

    def std(self, dim=None, unbiased=NO_UNBIASED, keepdim=False, *, correction=None, axis=None,
            keepdims=None):
        """The standard deviation over ``dim`` (see :meth:`var` for the correction)."""
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "std", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "std", "keepdim", "keepdims")
        return dispatch(
            OP_STD,
            (self, dim_arg(dim), _correction("std", unbiased, correction, dim, keepdim),
             keepdim_arg("std", keepdim))
        )

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        """The ``p``-norm over ``dim`` (the Frobenius norm of all elements by default).

        Examples
        --------
        >>> gt.tensor([3., 4.]).norm().item(), gt.tensor([3., -4.]).norm(1).item()
        (5.0, 7.0)
        """
        # (torch's norm is a Python function: no numpy aliases)
        if cnp.PyArray_ISCOMPLEX(self._data):
            # a complex tensor's norm is its magnitudes' (real, and so is the gradient's path)
            return dispatch(OP_NORM, (self.abs(), p, dim_arg(dim), keepdim))
        return dispatch(OP_NORM, (self, p, dim_arg(dim), keepdim))

    def logsumexp(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """``log(sum(exp(self), dim))``, computed without overflow."""
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "logsumexp", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "logsumexp", "keepdim", "keepdims")
        if dim is None:
            raise TypeError("logsumexp() missing required argument 'dim' (pos 1)")
        return dispatch(OP_LOGSUMEXP, (self, dim_arg(dim), keepdim_arg("logsumexp", keepdim)))

    def softmax(self, dim=None, dtype=None, *, axis=None):
        """``exp(self) / sum(exp(self), dim)``, computed stably.

        Examples
        --------
        >>> gt.tensor([0., 0.]).softmax(0).tolist()
        [0.5, 0.5]
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "softmax", "dim", "axis")
        if dim is None:
            raise TypeError("softmax() missing required argument 'dim' (pos 1)")
        return dispatch(OP_SOFTMAX, (self, dim, dtype))

    def log_softmax(self, dim=None, dtype=None, *, axis=None):
        """``log(softmax(self, dim))``, computed stably."""
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "log_softmax", "dim", "axis")
        if dim is None:
            raise TypeError("log_softmax() missing required argument 'dim' (pos 1)")
        return dispatch(OP_LOG_SOFTMAX, (self, dim, dtype))

    def cumsum(self, dim=None, *, dtype=None, axis=None):
        """The cumulative sum along ``dim``.

        Examples
        --------
        >>> gt.tensor([1, 2, 3]).cumsum(0).tolist()
        [1, 3, 6]
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "cumsum", "dim", "axis")
        if dim is None:
            raise TypeError("cumsum() missing required argument 'dim' (pos 1)")
        return dispatch(OP_CUMSUM, (self, dim, dtype))

    def all(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Whether every element (along ``dim``, an int or a tuple) is nonzero: a bool tensor,
        or a uint8 tensor for a uint8 input (as torch, for its legacy byte masks).

        Examples
        --------
        >>> gt.tensor([[1, 0], [1, 1]]).all(1).tolist()
        [False, True]
        >>> gt.tensor([3, 1], dtype=gt.uint8).all().dtype
        gradstack.uint8
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "all", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "all", "keepdim", "keepdims")
        return make_tensor(
            _truth_reduce(self._data, np.logical_and, dim, keepdim_arg("all", keepdim))
        )

    def any(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Whether some element (along ``dim``, an int or a tuple) is nonzero: a bool tensor
        (uint8 for a uint8 input).

        Examples
        --------
        >>> gt.tensor([[1, 0], [0, 0]]).any(1).tolist()
        [True, False]
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "any", "dim", "axis")
        if keepdims is not None:
            keepdim = numpy_alias(keepdim, False, keepdims, "any", "keepdim", "keepdims")
        return make_tensor(
            _truth_reduce(self._data, np.logical_or, dim, keepdim_arg("any", keepdim))
        )

    def count_nonzero(self, dim=None, *, axis=None):
        """The number of nonzero elements (along ``dim``, an int or a tuple): an int64 tensor.

        Examples
        --------
        >>> gt.tensor([[1, 0], [2, 3]]).count_nonzero(0).tolist()
        [2, 1]
        """
        if axis is not None:
            dim = numpy_alias(dim, None, axis, "count_nonzero", "dim", "axis")
        return dispatch(OP_COUNT_NONZERO, (self, dim))

    # -- linear algebra -------------------------------------------------------------------

    def matmul(self, other):
        """The matrix product ``self @ other`` with numpy's rules for 1-d and batched operands.

        Examples
        --------
        >>> (gt.ones(2, 3).matmul(gt.ones(3))).tolist()
        [3.0, 3.0]
        """
        return dispatch(OP_MATMUL, (self, other))

    def mm(self, mat2):
        """The product of two 2-d matrices."""
        return dispatch(OP_MM, (self, mat2))

    def bmm(self, mat2):
        """The batched product of two 3-d tensors ``(b, n, m) @ (b, m, p)``."""
        return dispatch(OP_BMM, (self, mat2))

    def dot(self, other):
        """The dot product of two 1-d tensors (a 0-d tensor).

        Examples
        --------
        >>> gt.tensor([1., 2.]).dot(gt.tensor([3., 4.])).item()
        11.0
        """
        return dispatch(OP_DOT, (self, other))

    def outer(self, vec2):
        """The outer product of two 1-d tensors."""
        return dispatch(OP_OUTER, (self, vec2))

    ger = outer

    def mv(self, vec):
        """The product of a 2-d matrix and a 1-d vector."""
        return dispatch(OP_MV, (self, vec))

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """``beta * self + alpha * (mat1 @ mat2)``.

        Examples
        --------
        >>> gt.zeros(2, 2).addmm(gt.eye(2), gt.ones(2, 2), alpha=3).tolist()
        [[3.0, 3.0], [3.0, 3.0]]
        """
        return dispatch(OP_ADDMM, (self, mat1, mat2, beta, alpha))


cdef cnp.ndarray _truth_reduce(cnp.ndarray x, object ufunc, object dim, bint keepdim):
    """all/any: ``ufunc`` (logical and/or) reduced over ``dim`` (None: every dim), with
    torch's result dtype (uint8 for uint8, bool for the rest) and dim checks."""
    axes = None if dim is None else normalize_dims(dim_arg(dim), x.ndim)
    r = as_ndarray(ufunc.reduce(x, axis=axes, keepdims=keepdim))
    if cnp.PyArray_TYPE(x) == cnp.NPY_UBYTE:
        return r.astype(np.uint8)
    return r


cdef object _correction(str name, object unbiased, object correction, object dim,
                        object keepdim):
    """var/std's correction from torch's two spellings (``unbiased`` or ``correction``).

    None (read as 1) when nothing names it and no dim or keepdim is given: torch's
    ``x.var()`` runs ``var.correction`` with ``correction=None`` (its ``_saved_correction``
    reads None), where ``x.var(0)`` runs the ``unbiased`` overload (1).  ``unbiased``, when
    given, is a bool (``x.var(0, 1.5)`` is torch's TypeError, not a truthy correction).
    """
    if unbiased is NO_UNBIASED:
        unbiased = None
    elif type(unbiased) is not bool and not isinstance(unbiased, np.bool_):
        raise TypeError(
            f"{name}(): argument 'unbiased' must be bool, not {type(unbiased).__name__}"
        )
    if correction is not None:
        if unbiased is not None:
            raise TypeError("var/std: pass either unbiased or correction, not both")
        return correction
    if unbiased is None:
        return None if dim is None and keepdim is False else 1
    return 1 if unbiased else 0
