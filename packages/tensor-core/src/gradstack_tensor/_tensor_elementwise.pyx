# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's elementwise methods: Python operators, math functions, in-place forms.

Two links of the Tensor's class chain (see ``_tensor_base.pyx``): ``TensorBase`` <-
``OpTableMethods`` <- ``ElementwiseMethods`` <- ``ReductionMethods`` <- ``ShapeMethods``
<- ``CompositeMethods`` <- ``Tensor``. ``OpTableMethods`` holds the methods the op table
declares (``mul``, ``exp_``, ``atan2`` ...), written at build time into
``_op_methods.pxi``, which this module includes (Note [Generated from the op table] in
``_op_table.py``), with a C global per op (``OP_MUL``). ``ElementwiseMethods`` holds what
is written by hand: the operators (``a * b``, C slots of the type) and the methods with
arguments of their own (``div``'s ``rounding_mode``, ``clamp``, ``where``, the fills and
random draws). Every method calls one op through the dispatch point, so that every layer
(autograd, profiler, vmap) sees it. Binary ops broadcast their operands and take torch's
result dtype; in-place forms (``add_``) write into ``self``, bump its version and return
it.

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython
cimport numpy as cnp
import numpy as np

from . import dtypes as _dt
from ._dispatch cimport Op, dispatch, run_kernel
from . import _op_table  # noqa: F401  # no-cython-lint  (declares the ops looked up below)
from ._dispatch import OPS
from ._tensor_base cimport TensorBase, make_tensor

# OP_<NAME> for every op of the table, and the class OpTableMethods
include "_op_methods.pxi"


# Note [Reflected operators keep torch's operand order]
# ``2 - t`` is rsub(t, 2) and ``2 / t`` div(2, t): the op sees its operands as written,
# so that promotion, broadcasting and the derivative formulas see the same order as torch.


_NUMBER_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64}


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class ElementwiseMethods(OpTableMethods):
    """The hand-written elementwise methods and the Python operators of
    :class:`gradstack_tensor.Tensor` (the methods the op table declares are in
    ``OpTableMethods``)."""

    # -- Python operators (C slots) ---------------------------------------------------

    def __add__(self, other):
        return dispatch(OP_ADD, (self, other, 1))

    def __radd__(self, other):
        if type(other) is list or type(other) is tuple:
            # as torch: Python's sequence concatenation then decides (``[1] + t`` is its
            # TypeError, ``seq += t`` extends the list by the tensor's elements)
            return NotImplemented
        return dispatch(OP_ADD, (self, other, 1))

    def __iadd__(self, other):
        return dispatch(OP_ADD_, (self, other, 1))

    def __sub__(self, other):
        return dispatch(OP_SUB, (self, other, 1))

    def __rsub__(self, other):
        return dispatch(OP_RSUB, (self, other, 1))

    def __isub__(self, other):
        return dispatch(OP_SUB_, (self, other, 1))

    def __mul__(self, other):
        return dispatch(OP_MUL, (self, other))

    def __rmul__(self, other):
        return dispatch(OP_MUL, (self, other))

    def __imul__(self, other):
        return dispatch(OP_MUL_, (self, other))

    def __truediv__(self, other):
        return dispatch(OP_DIV, (self, other))

    def __rtruediv__(self, other):
        if isinstance(other, (bool, int, float)):
            # torch's Tensor.__rdiv__ is ``self.reciprocal() * other``: its graph saves
            # the reciprocal, never ``self`` (writing ``self`` in place later is fine)
            return dispatch(OP_MUL, (dispatch(OP_RECIPROCAL, (self,)), other))
        return dispatch(OP_DIV, (other, self))

    def __itruediv__(self, other):
        return dispatch(OP_DIV_, (self, other))

    def __floordiv__(self, other):
        return dispatch(OP_FLOOR_DIVIDE, (self, other))

    def __rfloordiv__(self, other):
        return dispatch(OP_FLOOR_DIVIDE, (other, self))

    def __mod__(self, other):
        return dispatch(OP_REMAINDER, (self, other))

    def __rmod__(self, other):
        return dispatch(OP_REMAINDER, (other, self))

    def __pow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return dispatch(OP_POW, (self, other))

    def __rpow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return dispatch(OP_POW, (other, self))

    def __ipow__(self, other):
        return dispatch(OP_POW_, (self, other))

    def __matmul__(self, other):
        return dispatch(OP_MATMUL, (self, other))

    def __rmatmul__(self, other):
        return dispatch(OP_MATMUL, (other, self))

    def __neg__(self):
        return dispatch(OP_NEG, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return dispatch(OP_ABS, (self,))

    def __invert__(self):
        cdef int num = cnp.PyArray_TYPE(self._data)
        if num == cnp.NPY_BOOL:
            return dispatch(OP_LOGICAL_NOT, (self,))
        if num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE or num == cnp.NPY_FLOAT16:
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return dispatch(OP_BITWISE_NOT, (self,))

    def __and__(self, other):
        return dispatch(OP_BITWISE_AND, (self, other))

    def __rand__(self, other):
        return dispatch(OP_BITWISE_AND, (self, other))

    def __or__(self, other):
        return dispatch(OP_BITWISE_OR, (self, other))

    def __ror__(self, other):
        return dispatch(OP_BITWISE_OR, (self, other))

    def __xor__(self, other):
        return dispatch(OP_BITWISE_XOR, (self, other))

    def __rxor__(self, other):
        return dispatch(OP_BITWISE_XOR, (self, other))

    def __iand__(self, other):
        return dispatch(OP_BITWISE_AND_, (self, other))

    def __ior__(self, other):
        return dispatch(OP_BITWISE_OR_, (self, other))

    def __ixor__(self, other):
        return dispatch(OP_BITWISE_XOR_, (self, other))

    def __lshift__(self, other):
        return dispatch(OP_BITWISE_LEFT_SHIFT, (self, other))

    def __rlshift__(self, other):
        if not isinstance(other, (int, float, complex)):
            return NotImplemented   # as torch: Python's TypeError names both types
        return dispatch(OP_BITWISE_LEFT_SHIFT, (other, self))

    def __ilshift__(self, other):
        return dispatch(OP_BITWISE_LEFT_SHIFT_, (self, other))

    def __rshift__(self, other):
        return dispatch(OP_BITWISE_RIGHT_SHIFT, (self, other))

    def __rrshift__(self, other):
        if not isinstance(other, (int, float, complex)):
            return NotImplemented   # as torch: Python's TypeError names both types
        return dispatch(OP_BITWISE_RIGHT_SHIFT, (other, self))

    def __irshift__(self, other):
        return dispatch(OP_BITWISE_RIGHT_SHIFT_, (self, other))

    def __eq__(self, other):
        return dispatch(OP_EQ, (self, other))

    def __ne__(self, other):
        return dispatch(OP_NE, (self, other))

    def __lt__(self, other):
        return dispatch(OP_LT, (self, other))

    def __le__(self, other):
        return dispatch(OP_LE, (self, other))

    def __gt__(self, other):
        return dispatch(OP_GT, (self, other))

    def __ge__(self, other):
        return dispatch(OP_GE, (self, other))

    # Note [__hash__ lives beside __eq__]
    # CPython inherits tp_richcompare and tp_hash together, and only into a class that
    # defines neither: a __hash__ in a subclass would leave Tensor without comparisons.
    def __hash__(self):
        return id(self)

    # -- arithmetic -------------------------------------------------------------------

    def div(self, other, *, rounding_mode=None):
        """``self / other``: true division (integers give the default float dtype), or rounded
        with ``rounding_mode="trunc"`` or ``"floor"``.

        Examples
        --------
        >>> gt.tensor([7, -7]).div(2).tolist()
        [3.5, -3.5]
        >>> gt.tensor([7., -7.]).div(2, rounding_mode="floor").tolist()
        [3.0, -4.0]
        """
        if rounding_mode is None:
            return dispatch(OP_DIV, (self, other))
        return _rounded_div(self, other, rounding_mode)

    def div_(self, other, *, rounding_mode=None):
        """In-place :meth:`div` (true division only); returns ``self``."""
        if rounding_mode is not None:
            raise NotImplementedError("div_ with a rounding_mode; use div(..., rounding_mode=)")
        return dispatch(OP_DIV_, (self, other))

    divide = div

    true_divide = div

    def round(self, *, decimals=None):
        """Round to the nearest integer value, halves to even; with ``decimals``, to that
        many decimal places (negative: to tens, hundreds, ...), as torch's
        ``round(x * 10**d) / 10**d`` in the tensor's dtype (zero gradients).

        Examples
        --------
        >>> gt.tensor([0.5, 1.5, -0.5]).round().tolist()
        [0.0, 2.0, -0.0]
        >>> gt.tensor([1.2345, 125.0]).round(decimals=2).tolist()
        [1.2300000190734863, 125.0]
        >>> gt.tensor([125.0, 135.0]).round(decimals=-1).tolist()
        [120.0, 140.0]
        """
        if decimals is None:
            return dispatch(OP_ROUND, (self,))
        return dispatch(OP_ROUND_DECIMALS, (self, _decimals(decimals)))

    def round_(self, *, decimals=None):
        """In-place :meth:`round`; returns ``self``."""
        if decimals is None:
            return dispatch(OP_ROUND_, (self,))
        # torch's round_.decimals: the rounded values copied in (the graph's node is the
        # copy's, the gradient zero as the round's)
        return self.copy_(dispatch(OP_ROUND_DECIMALS, (self, _decimals(decimals))))

    def square(self):
        """``self ** 2``."""
        return dispatch(OP_POW, (self, 2))

    # -- clamping, selection, filling ----------------------------------------------------

    def clamp(self, min=None, max=None):
        """Each element limited to ``[min, max]`` (either bound may be None or a tensor).

        Examples
        --------
        >>> gt.tensor([-2., 0.5, 3.]).clamp(-1, 1).tolist()
        [-1.0, 0.5, 1.0]
        """
        return dispatch(OP_CLAMP, (self, min, max))

    clip = clamp

    def clamp_(self, min=None, max=None):
        """In-place :meth:`clamp`; returns ``self``."""
        return dispatch(OP_CLAMP_, (self, min, max))

    clip_ = clamp_

    def clamp_min(self, min):
        """``clamp(min=min)``."""
        if min is None:  # (torch's clamp_min takes a Tensor or a Number, not None)
            raise TypeError("clamp_min(): argument 'min' must be Tensor or Number, not NoneType")
        return dispatch(OP_CLAMP, (self, min, None))

    def clamp_max(self, max):
        """``clamp(max=max)``."""
        if max is None:
            raise TypeError("clamp_max(): argument 'max' must be Tensor or Number, not NoneType")
        return dispatch(OP_CLAMP, (self, None, max))

    def where(self, condition, other):
        """``self`` where ``condition`` is True, else ``other`` (broadcast).

        Examples
        --------
        >>> gt.tensor([1., 2.]).where(gt.tensor([True, False]), 0.).tolist()
        [1.0, 0.0]
        """
        return dispatch(OP_WHERE, (condition, self, other))

    def masked_fill(self, mask, value):
        """A copy with ``value`` where the bool ``mask`` is True.

        Examples
        --------
        >>> gt.zeros(3).masked_fill(gt.tensor([False, True, False]), 5.).tolist()
        [0.0, 5.0, 0.0]
        """
        return dispatch(OP_MASKED_FILL, (self, mask, value))

    def masked_fill_(self, mask, value):
        """In-place :meth:`masked_fill`; returns ``self``."""
        return dispatch(OP_MASKED_FILL_, (self, mask, value))

    def zero_(self):
        """Fill with zeros in place; returns ``self``."""
        return dispatch(OP_ZERO_, (self,))

    def fill_(self, value):
        """Fill with ``value`` in place; returns ``self``.

        Examples
        --------
        >>> gt.empty(2).fill_(7).tolist()
        [7.0, 7.0]
        """
        return dispatch(OP_FILL_, (self, value))

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (broadcast to this shape, cast to this dtype) into this tensor in place.

        Examples
        --------
        >>> t = gt.zeros(2, 2)
        >>> t.copy_(gt.tensor([1., 2.])).tolist()
        [[1.0, 2.0], [1.0, 2.0]]
        >>> t.copy_(3).tolist()
        [[3.0, 3.0], [3.0, 3.0]]
        """
        if type(non_blocking) is not bool:
            raise TypeError(
                "copy_(): argument 'non_blocking' (position 2) must be bool, not "
                f"{type(non_blocking).__name__}"
            )
        if type(src) is bool or type(src) is int or type(src) is float:
            # torch takes a Python number as the 0-d tensor of its type (bool, int64,
            # float64), cast into this dtype (issue 36: it was refused)
            src = make_tensor(np.asarray(src, dtype=_NUMBER_DTYPES[type(src)]))
        return dispatch(OP_COPY_, (self, src))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fill in place with samples of the uniform distribution on ``[a, b)``."""
        return dispatch(OP_UNIFORM_, (self, a, b, generator))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fill in place with samples of the normal distribution ``N(mean, std**2)``."""
        return dispatch(OP_NORMAL_, (self, mean, std, generator))

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill in place with 0/1 draws that are 1 with probability ``p`` (a number, or a
        tensor of probabilities broadcast to this one).

        Examples
        --------
        >>> gt.zeros(3).bernoulli_(1.0).tolist()
        [1.0, 1.0, 1.0]
        """
        return dispatch(OP_BERNOULLI_, (self, p, generator))

    def bernoulli(self, p=None, *, generator=None):
        """0/1 draws of this tensor's shape and dtype, 1 with probability ``self`` (or ``p``)."""
        return dispatch(OP_BERNOULLI, (self, p, generator))

    def exponential_(self, lambd=1.0, *, generator=None):
        """Fill in place with samples of the exponential distribution of rate ``lambd``."""
        return dispatch(OP_EXPONENTIAL_, (self, lambd, generator))

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        """Fill in place with Cauchy draws: ``median + sigma * tan(pi * (u - 0.5))``.

        Examples
        --------
        >>> _ = gt.manual_seed(0)
        >>> [round(v, 4) for v in gt.empty(2).cauchy_().tolist()]
        [10.5977, 0.7648]
        """
        return dispatch(OPS["cauchy_"], (self, median, sigma, generator))

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """Fill in place with ``exp`` of normal draws of ``mean`` and ``std``.

        Examples
        --------
        >>> _ = gt.manual_seed(0)
        >>> [round(v, 4) for v in gt.empty(2).log_normal_(0.0, 1.0).tolist()]
        [4.6692, 0.7457]
        """
        return dispatch(OPS["log_normal_"], (self, mean, std, generator))

    def geometric_(self, p, *, generator=None):
        """Fill in place with the number of Bernoulli(``p``) trials up to the first success.

        Examples
        --------
        >>> _ = gt.manual_seed(0)
        >>> gt.empty(3).geometric_(0.5).tolist()
        [1.0, 1.0, 2.0]
        """
        return dispatch(OPS["geometric_"], (self, p, generator))

    def random_(self, from_=None, to=None, *, generator=None, **kwargs):
        """Fill in place with integers drawn uniformly: ``random_(to)`` from [0, to),
        ``random_(from, to)`` from [from, to), ``random_()`` over the dtype's range.

        Examples
        --------
        >>> t = gt.zeros(100, dtype=gt.int64).random_(3, 5)
        >>> sorted(set(t.tolist()))
        [3, 4]
        """
        if "from" in kwargs:
            from_ = kwargs.pop("from")
        if kwargs:
            raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return dispatch(OP_RANDOM_, (self, from_, to, generator))

    def multinomial(self, num_samples, replacement=False, *, generator=None):
        """Indices drawn from the categories of each row (weights, not necessarily
        normalised), with or without replacement."""
        return dispatch(OP_MULTINOMIAL, (self, num_samples, replacement, generator))


cdef object _tensor_other(object other, str name):
    """``other`` when it is a Tensor; torch's TypeError for a Python number (the methods
    whose torch signature takes ``Tensor other`` only: maximum, atan2, logical_and ...)."""
    if not isinstance(other, TensorBase):
        raise TypeError(
            f"{name}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}"
        )
    return other


def _decimals(decimals):
    """``decimals`` checked as torch's argument parser does (an int, not a bool)."""
    if type(decimals) is bool or not isinstance(decimals, int):
        raise TypeError(
            f"round() received an invalid combination of arguments - decimals must be int, "
            f"not {type(decimals).__name__}"
        )
    return int(decimals)


def _rounded_div(a, b, mode):
    """``div(a, b, rounding_mode=mode)``: one op, ``div_rounding`` (torch's ``aten::div``
    with a mode, whose node is ``DivBackward2``/``DivBackward3`` with zero gradients)."""
    if mode not in ("trunc", "floor"):
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {mode!r}"
        )
    return dispatch(OP_DIV_ROUNDING, (a, b, mode))


def _div_rounding_kernel(a, b, mode):
    """The kernel of ``div_rounding``: trunc and floor division.

    As torch, the result has the promoted dtype of ``a`` and ``b`` (integers stay integers,
    ``int64 // 2`` with ``"trunc"`` is int64); true division's int-to-float rule does not
    apply.  The steps run the other ops' kernels, below every layer: the op is one node.
    """
    if mode == "trunc":
        if isinstance(b, (TensorBase, int, float)) and _integral_result(a, b):
            if _unsigned_result(a, b):
                # no negative quotient: trunc is floor, whose kernel wraps a negative
                # number into the dtype first as torch does (uint8 4 by -1 is 4 // 255)
                return run_kernel(OP_FLOOR_DIVIDE, (a, b))
            return _trunc_div_integers(a, b)
        return run_kernel(OP_TRUNC, (run_kernel(OP_DIV, (a, b)),))
    return run_kernel(OP_FLOOR_DIVIDE, (a, b))


cdef bint _integral_result(object a, object b):
    """Whether torch's result dtype of ``a`` and ``b`` (a Tensor and a Tensor or number) is
    an integer or bool dtype."""
    operands = [((<TensorBase>t).dtype, (<TensorBase>t)._data.ndim)
                if isinstance(t, TensorBase) else t for t in (a, b)]
    return not _dt.result_type(operands).is_floating_point


cdef bint _unsigned_result(object a, object b):
    operands = [((<TensorBase>t).dtype, (<TensorBase>t)._data.ndim)
                if isinstance(t, TensorBase) else t for t in (a, b)]
    return _dt.result_type(operands) is _dt.uint8


cdef object _trunc_div_integers(object a, object b):
    """Integer division rounded towards zero, exact for any int64 (no float detour):
    floor division, plus one where the division is inexact and the signs differ."""
    cdef object q, r, b_negative, signs_differ
    if _is_bool(a) and (_is_bool(b) or type(b) is bool):
        raise NotImplementedError("\"div_trunc_cpu\" not implemented for 'Bool' (cast with "
                                  ".int() first)")
    # torch converts the divisor to the result dtype first, wrapping (int8's -200 is 56),
    # as the floor division kernel does: the signs below must be the converted divisor's
    # (fuzz seed 35 #3785: a number, or a 0-d int64 tensor beside an int8 one)
    if type(b) is int or (isinstance(b, TensorBase) and isinstance(a, TensorBase)):
        operands = [((<TensorBase>t).dtype, (<TensorBase>t)._data.ndim)
                    if isinstance(t, TensorBase) else t for t in (a, b)]
        result = _dt.result_type(operands)
        if type(b) is int:
            b = int(cnp.PyArray_FROM_O(b).astype(result.numpy))
        elif (<TensorBase>b).dtype is not result:
            b = run_kernel(OP_TO_DTYPE, (b, result))
    q = run_kernel(OP_FLOOR_DIVIDE, (a, b))
    r = run_kernel(OP_REMAINDER, (a, b))
    b_negative = run_kernel(OP_LT, (b, 0)) if isinstance(b, TensorBase) else b < 0
    signs_differ = run_kernel(OP_NE, (run_kernel(OP_LT, (a, 0)), b_negative))
    inexact = run_kernel(OP_NE, (r, 0))
    return run_kernel(OP_ADD, (q, run_kernel(OP_LOGICAL_AND, (inexact, signs_differ)), 1))


cdef bint _is_bool(object t):
    return isinstance(t, TensorBase) and cnp.PyArray_TYPE((<TensorBase>t)._data) == cnp.NPY_BOOL


OP_DIV_ROUNDING.set_kernel(_div_rounding_kernel)
