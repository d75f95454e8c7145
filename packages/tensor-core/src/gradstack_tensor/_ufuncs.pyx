# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The numpy path of the elementwise ops: quiet ufunc calls and torch's rules on top of numpy.

Arrays that the small C loops (``_loops.pyx``) do not take go to numpy's ufuncs.  This
module calls them without numpy's floating-point warnings (torch returns inf/nan
silently), and wraps the ufuncs whose numpy behaviour differs from torch's: bool inputs
refused, integer division by zero raising, float16 computed in float32, sign of NaN ...
The op table (``_op_table.py``) gives these functions to the ops as their ``ufunc``.

Note [sigmoid on the numpy path]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Arrays past the C loop compute ``1 / (1 + exp(-x))`` in four in-place ufunc passes over
one buffer (numpy's SIMD exp; as fast as the bare numpy expression, which allocates
four arrays).  Where ``exp(-x)`` overflows the result is exactly 0, and only there: a
C scan for zeros finds those elements (rare) and redoes them as ``exp(x)``, which is
what ``e^x / (1 + e^x)`` rounds to, so that sigmoid(-100.) is 3.78e-44 and not 0 (torch
flushes it to 0).  The earlier fallback, two stable formulas selected with ``where=``
masks, ran numpy's masked inner loops, one call per run of equal signs, and allocated
six temporaries: ~20x slower at 1M float32 elements.
float16 sigmoid computes in float32 and rounds once, as torch does (so do tanh, whose
numpy float16 loop is ~3x slower than float32 and the casts, and rsqrt, which rounded
twice in float16).  numpy's other float16 loops already compute each element in float32
and round once, as fast as casting around the float32 loop, so they stay.

Note [Floating-point warnings]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch returns ``inf``/``nan`` silently (``log(0)``); numpy warns.  Entering
``np.errstate`` costs ~1.4 us, so the ufunc path sets numpy's errstate context variable
directly (~0.1 us) and falls back to ``np.errstate`` if a future numpy moves it.
"""
cimport numpy as cnp

import numpy as np

from ._loops cimport has_zero, pow_double_by_number, relu_float, sigmoid_tail
from ._pointwise_kernels cimport exp2_dense, sign_dense, sign_dense_inplace

from ._exp_kernels import (
    cosh_float32, exp_float32, expm1_float32, log1p_float32, sigmoid_float32, sinh_float32,
)
from ._nextafter_kernels import nextafter_ufunc

from . import _bessel_kernels, _division_kernels, _special_kernels

cnp.import_array()

# ----------------------------------------------------------------------------------------
# Floating-point error state (Note [Floating-point warnings])

try:
    from numpy._core import umath as _umath
    _errstate_var = _umath._extobj_contextvar
    _errstate_ignore = _umath._make_extobj(all="ignore")
except (ImportError, AttributeError):  # pragma: no cover - a numpy that moved it
    _errstate_var = None
    _errstate_ignore = None


cdef object quiet_call2(object ufunc, object x, object y):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x, y)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x, y)
    finally:
        _errstate_var.reset(token)


cdef object quiet_call1(object ufunc, object x):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x)
    finally:
        _errstate_var.reset(token)


def quiet(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` with numpy's floating-point warnings silenced.

    For kernels written in Python (torch returns inf/nan without warning).
    """
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return fn(*args, **kwargs)
    finally:
        _errstate_var.reset(token)


cdef object quiet_inplace2_into(object ufunc, object x, object y, cnp.ndarray out):
    """``ufunc(x, y)`` written into ``out`` (cast as needed), without warnings."""
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x, y, out=out, casting="unsafe")
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x, y, out=out, casting="unsafe")
    finally:
        _errstate_var.reset(token)


cdef object quiet_sum(cnp.ndarray x, object axis, bint keepdim, object dtype):
    """``np.add.reduce`` (accumulating in ``dtype`` when given) without warnings."""
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return np.add.reduce(x, axis=axis, keepdims=keepdim, dtype=dtype)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return np.add.reduce(x, axis=axis, keepdims=keepdim, dtype=dtype)
    finally:
        _errstate_var.reset(token)


cdef object quiet_cast(object r, object dtype):
    """``r`` (an array or a numpy scalar) as a 0-d-safe array of ``dtype``, without the
    overflow warning (a float32 sum past float16's range rounds to inf, as torch's)."""
    r = np.asarray(r)
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return r.astype(dtype)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return r.astype(dtype)
    finally:
        _errstate_var.reset(token)


# ----------------------------------------------------------------------------------------
# ufuncs with torch's rules


def _sigmoid_ufunc(x):
    """numpy path of sigmoid (Note [sigmoid on the numpy path]); ``x`` is a float array."""
    if not cnp.PyArray_Check(x):
        raise TypeError(f"sigmoid: expected a numpy array, got {type(x).__name__}")
    cdef cnp.ndarray a = x
    cdef int num = cnp.PyArray_TYPE(a)
    if num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE:
        # float16 computes in float32 and rounds once, as torch does (numpy's float32
        # passes: their values round to float16 as torch's do, within 4 of the 65536)
        return _sigmoid_passes(a.astype(np.float32)).astype(a.dtype)
    if num == cnp.NPY_FLOAT and _c_float32(a):
        return sigmoid_float32(a)  # one pass (Note [float32 exp and sigmoid in one pass])
    return _sigmoid_passes(a)


cdef object _sigmoid_passes(cnp.ndarray a):
    """``1 / (1 + exp(-a))`` in four in-place ufunc passes (Note [sigmoid on the numpy
    path])."""
    cdef cnp.ndarray out
    r = np.negative(a)
    out = r if cnp.PyArray_Check(r) else np.asarray(r)     # 0-d: numpy returns a scalar
    np.exp(out, out)                # out positionally: no keyword parsing
    np.add(out, 1, out)
    np.divide(1, out, out)
    if has_zero(out) and not sigmoid_tail(a, out):
        m = out == 0
        out[m] = np.exp(a[m])
    return out


def _tanh_ufunc(x):
    if x.dtype == np.float16:
        # numpy's float16 tanh is a scalar loop, ~3x slower than its float32 SIMD loop and
        # the two casts; both round the float32 value once (the same bits)
        return np.tanh(x.astype(np.float32)).astype(np.float16)
    return np.tanh(x)


def _relu_ufunc(x):
    if x.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu (cast with .float() first)")
    if x.dtype.kind != "f":
        return np.maximum(x, np.zeros((), x.dtype))
    # torch's ``x < 0 ? 0 : x``: NaN passes, and -0.0 stays -0.0 (np.maximum made it +0.0,
    # so ``relu(-0.0).rsqrt()`` was inf where torch's is -inf: fuzz seed 2 #9335); float32
    # and float64 take the C loop (Note [relu takes its C loop at every size], _loops.pyx)
    r = relu_float(x)
    if r is not None:
        return r
    return np.where(x < 0, np.zeros((), x.dtype), x)


def _sign_ufunc(x):
    # numpy has no sign loop for bool; torch's sign of a bool tensor is the tensor itself.
    # torch computes (0 < x) - (x < 0): sign(nan) is 0 (numpy: nan) and sign(-0.0) is +0.0
    # (for floats, the two compares subtracted as int8 and converted once: numpy's
    # vectorised byte loops, ~5x faster than np.sign then np.where then += 0, or than
    # converting a bool array to float)
    if x.dtype == np.bool_:
        return x.copy()
    if x.dtype.kind == "f":
        if cnp.PyArray_Check(x):
            r = sign_dense(<cnp.ndarray>x)  # float32/float64, one dense block: one C pass
            if r is not None:
                return r
        r = np.asarray(np.greater(x, 0)).view(np.int8)  # (a 0-d x gives a numpy scalar)
        np.subtract(r, np.asarray(np.less(x, 0)).view(np.int8), out=r)
        return r.astype(x.dtype)
    return np.sign(x)


# torch's names of the scalar types, as its "not implemented for" messages print them
_SCALAR_TYPE = {
    "float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
}


def not_implemented(str kernel, object dtype, str hint):
    """torch's error for a kernel that has no loop for ``dtype`` (a numpy dtype).

    Note [Kernels torch does not have for a dtype]
    torch raises ``NotImplementedError`` (a subclass of RuntimeError) naming its CPU
    kernel and the scalar type: ``"bitwise_xor_cpu" not implemented for 'Float'``.
    numpy either has a loop (``abs`` of bool, computed in int8) or raises its own
    TypeError about ufunc casting rules; the ufuncs of the op table check the dtype
    first and raise torch's error, with what to do after it.
    """
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{_SCALAR_TYPE[np.dtype(dtype).name]}' ({hint})"
    )


def _not_for_bool(str kernel, ufunc):
    """``ufunc`` refusing bool tensors as torch does (numpy would compute in int8/float16);
    ``kernel`` is torch's name for it (Note [Kernels torch does not have for a dtype])."""
    def checked(x):
        if x.dtype == np.bool_:
            raise not_implemented(kernel, x.dtype, "cast with .int() or .float() first")
        return ufunc(x)
    checked.__name__ = ufunc.__name__
    write = _inplace_float.get(ufunc)
    if write is None and isinstance(ufunc, np.ufunc):
        def write(x):  # (Note [An in-place unary op writes into its tensor])
            return ufunc(x, out=x)
    if write is not None:
        _inplace_float[checked] = write
    return checked


# nextafter by the bits (Note [nextafter by the bits] in _nextafter_kernels.pyx), named
# here for the op table (Note [The table is read at build time] in _op_table.py)
_nextafter_bits = nextafter_ufunc


def _not_for_float(str kernel, ufunc):
    """A bitwise ``ufunc`` refusing floating-point operands as torch does (numpy raises its
    own TypeError about casting rules)."""
    def checked(x, y=None, **kwargs):
        kind = _operand_kind(x, y)
        if kind == "f":
            if y is not None:  # torch broadcasts the shapes before it picks a kernel
                try:
                    np.broadcast_shapes(np.shape(x), np.shape(y))
                except ValueError:
                    from ._shapes import broadcast_error
                    raise broadcast_error(np.shape(x), np.shape(y)) from None
            dtype = x.dtype if cnp.PyArray_Check(x) else y.dtype
            raise not_implemented(kernel, dtype, "bitwise ops take integer or bool tensors")
        return ufunc(x, **kwargs) if y is None else ufunc(x, y, **kwargs)
    checked.__name__ = ufunc.__name__
    return checked


def _shift(str kernel, bint left):
    """torch's ``bitwise_left_shift`` (``left``) or ``bitwise_right_shift`` of integer
    operands, both already in the result dtype; ``kernel`` is torch's name for it.

    Note [Shift counts outside the bit width]
    C leaves ``a << b`` undefined for a count ``b`` that is negative or not less than the
    bit width, and numpy passes that on (x86 takes the count modulo 32 or 64).  torch
    defines it: a left shift by such a count is 0; a right shift by it is the shift by
    the whole width (0 for unsigned types and non-negative values, -1 for negative
    values: the sign fills every bit).  A left shift computes in the unsigned type of
    the same width, so that bits shifted past the sign wrap (``int8(5) << 7`` is -128)
    and never overflow.  Bool and floating-point operands have no kernel in torch
    (``"lshift_cpu" not implemented for 'Bool'``).
    """
    def shift(x, y, out=None, casting=None):
        kind = _operand_kind(x, y)
        if kind not in "iu":
            try:    # torch broadcasts the shapes before it picks a kernel
                np.broadcast_shapes(np.shape(x), np.shape(y))
            except ValueError:
                from ._shapes import broadcast_error
                raise broadcast_error(np.shape(x), np.shape(y)) from None
            # (a raw op call may pass two numbers)
            dtype = x.dtype if cnp.PyArray_Check(x) else np.asarray(y).dtype
            from .dtypes import SCALAR_TYPE_NAMES
            raise NotImplementedError(
                f"\"{kernel}\" not implemented for '{SCALAR_TYPE_NAMES[np.dtype(dtype).name]}' "
                "(shifts take integer tensors: cast with .long() first)"
            )
        dtype = x.dtype if cnp.PyArray_Check(x) else np.asarray(y).dtype
        a = np.asarray(x, dtype=dtype)
        b = np.asarray(y, dtype=dtype)
        bits = dtype.itemsize * 8
        inside = np.less(b, bits) if kind == "u" else np.logical_and(b >= 0, b < bits)
        if left:
            unsigned = np.dtype(f"u{dtype.itemsize}")
            count = np.where(inside, b, 0).astype(unsigned)
            # (two 0-d operands give a numpy scalar)
            r = np.asarray(np.left_shift(a.astype(unsigned), count)).view(dtype)
            r = np.where(inside, r, np.zeros((), dtype))
        elif kind == "u":
            r = np.where(inside, np.right_shift(a, np.where(inside, b, 0)), np.zeros((), dtype))
        else:
            r = np.right_shift(a, np.where(inside, b, bits - 1).astype(dtype))
        if out is None:
            return r
        np.copyto(out, r, casting="unsafe")
        return out
    shift.__name__ = kernel
    return shift


def _integer_identity(ufunc):
    """A rounding ufunc that returns integer tensors unchanged, keeping their dtype."""
    def rounding(x):
        if x.dtype.kind in "iu":
            return x.copy()
        return ufunc(x)
    rounding.__name__ = ufunc.__name__
    _inplace_float[rounding] = lambda x: ufunc(x, out=x)
    return rounding


# Note [An in-place unary op writes into its tensor]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``t.op_()`` must give the bits of ``t.op()``, so the in-place kernel used to compute the
# out-of-place result and copy it into the tensor: a second pass over memory and a new
# array (sgn_ of 10**6 float32 took 1.5x torch's time forward, 1.8x with its backward).
# For a float32/float64 tensor whose op's function computes elementwise by a loop that can
# write over its input (torch's sign by the bits in _pointwise_kernels.pyx, numpy's ufuncs
# with ``out=``, and the float32-in-double functions of ``_rounded_unary`` with ``out=``),
# the result is written over the tensor's data by the same loop: the same bits, one pass.
# ``_inplace_float`` maps such a function to the call that writes in place; other functions,
# dtypes and read-only arrays keep the compute-and-copy path.
cdef dict _inplace_float = {}


cdef inline bint _c_float32(cnp.ndarray a) noexcept:
    """A C-contiguous, aligned float32 array in native byte order (the kernels' arrays)."""
    return (cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT and cnp.PyArray_ISCARRAY_RO(a)
            and cnp.PyArray_ISNOTSWAPPED(a))


cdef bint unary_float_inplace(object ufunc, cnp.ndarray x) except -1:
    """Write ``ufunc(x)`` over a float32/float64 ``x`` by the same loop (Note [An in-place
    unary op writes into its tensor]); False when ``ufunc`` or ``x`` has no such path."""
    cdef int num = cnp.PyArray_TYPE(x)
    if (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or not cnp.PyArray_ISWRITEABLE(x):
        return False
    if ufunc is _sign_ufunc:
        return sign_dense_inplace(x) is not None
    if ufunc is _sigmoid_ufunc:
        if num != cnp.NPY_FLOAT or not _c_float32(x):
            return False
        sigmoid_float32(x, x)
        return True
    write = _inplace_float.get(ufunc)
    if write is None:
        return False
    quiet(write, x)
    return True


cdef str _operand_kind(object x, object y):
    """numpy kind ('b', 'i', 'u', 'f') of promoted operands, one of which is an array."""
    if cnp.PyArray_Check(x):
        return (<cnp.ndarray>x).dtype.kind
    if cnp.PyArray_Check(y):
        return (<cnp.ndarray>y).dtype.kind
    return "b" if type(x) is bool else ("f" if type(x) is float else "i")


def _pow_ufunc(x, y, **kwargs):
    """numpy's power with torch's rules for bool and integer operands.

    Note [Integer powers with negative exponents]
    torch refuses a negative Python-number exponent of an integer tensor ("Integers to
    negative integer powers are not allowed."), but computes negative exponents held in
    a tensor, as its integer ``powi``: ``1 ** -n`` is 1, ``(-1) ** -n`` is -1 for odd n
    and 1 for even n, anything else is 0 (``2 ** -1`` truncates to 0).  numpy raises
    ValueError for any negative integer exponent.
    """
    kind = _operand_kind(x, y)
    if kind == "b":
        if cnp.PyArray_Check(x) and type(y) is bool:
            # torch's pow(Tensor, Scalar) answers exponents 0 and 1 before its kernel
            r = np.array(x, copy=True) if y else np.ones(np.shape(x), dtype=np.bool_)
            return _into_out(r, kwargs)
        np.broadcast(x, y)  # torch's shape error comes first (the caller words numpy's)
        raise not_implemented("pow", np.bool_, "cast with .int() or .float() first")
    if kind not in "iu":
        return _float_pow(x, y, kwargs)
    if not cnp.PyArray_Check(y):
        if y < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return np.power(x, y, **kwargs)
    if kind == "u" or not (y < 0).any():
        return np.power(x, y, **kwargs)
    negative = y < 0
    r = np.power(x, np.where(negative, 0, y))
    base = np.asarray(x)
    at_minus_one = np.where(np.remainder(y, 2) != 0, -1, 1).astype(r.dtype)
    r = np.where(
        negative,
        np.where(base == 1, r.dtype.type(1), np.where(base == -1, at_minus_one, r.dtype.type(0))),
        r,
    )
    return _into_out(r, kwargs)


cdef object _float_pow(object x, object y, dict kwargs):
    """Float ``x ** y`` with torch's two kernels.

    Note [A number exponent and a tensor exponent]
    torch's pow by a Python number takes shortcuts (``0.5`` is sqrt, ``-0.5`` is
    ``1 / sqrt``, as numpy's for 0.5 but not for -0.5), while a tensor exponent, even a
    0-d one, is ``std::pow`` element by element: ``(-inf) ** tensor(0.5)`` is inf and
    ``(-0.0) ** tensor(0.5)`` is +0, where sqrt gives nan and -0.  numpy takes its sqrt
    shortcut for any exponent array that holds one 0.5 (0-d, one element or broadcast),
    so those two values are set as ``std::pow`` gives them (its other shortcuts, for 2,
    -1, 0 and 1, are exact and agree with ``std::pow``; fuzz seed 4 #1722).
    """
    cdef object r
    if (cnp.PyArray_Check(y) and cnp.PyArray_Check(x) and (<cnp.ndarray>y).size == 1
            and (<cnp.ndarray>y).dtype.kind == "f" and (<cnp.ndarray>x).dtype.kind == "f"
            and float(y.reshape(-1)[0]) == 0.5):
        r = np.asarray(np.power(x, y))
        r = np.where(np.isneginf(x), r.dtype.type(np.inf), np.where(x == 0, r.dtype.type(0), r))
    elif (type(y) is int or type(y) is float) and cnp.PyArray_Check(x) \
            and (<cnp.ndarray>x).dtype == np.float16:
        # Note [float16 pow by a number is one rounding]: torch's half kernel takes none of
        # the float shortcuts (x * x * x, 1 / (x * x), 1 / sqrt(x)): it rounds the exponent
        # to half and computes std::pow in float, rounded once.  The shortcuts in float16
        # round each step: 710 ** -2 underflowed to 0 (its x * x is inf; torch: 1.967e-06,
        # issue 36), 1e-6 ** -0.5 and a third of the cubes were an ulp off
        if abs(float(y)) > 65504.0 and abs(float(y)) != float("inf"):
            raise RuntimeError("value cannot be converted to type c10::Half without overflow")
        with np.errstate(all="ignore"):
            r = np.power(x.astype(np.float32), np.float32(np.float16(y))).astype(np.float16)
        if y == 0.5:  # numpy's sqrt shortcut, where std::pow gives +0 and inf
            r = np.where(np.isneginf(x), r.dtype.type(np.inf), np.where(x == 0, r.dtype.type(0), r))
    elif type(y) is float and y == -0.5 and cnp.PyArray_Check(x) and x.dtype.kind == "f":
        r = np.reciprocal(np.sqrt(x))
    elif (type(y) is int or type(y) is float) and y == 2 and cnp.PyArray_Check(x) \
            and x.dtype.kind == "f":
        # torch's shortcut: x * x, one rounding of the exact square, so the same bits as
        # the power computed in double and rounded once, without the two casts
        r = quiet_call2(np.multiply, x, x)
    elif (type(y) is int or type(y) is float) and cnp.PyArray_Check(x) \
            and x.dtype.kind == "f" and y not in (0.5, 2, -1, 0, 1):
        # Note [A number exponent is a double]: torch's other shortcuts are x * x * x and
        # 1 / (x * x); any other number exponent is std::pow(double(x), double(y)) rounded
        # to x's dtype: numpy's float32 power would round y to float32 first, which flips
        # the sign of (-1) ** (2**24 + 1) and the last bit of 2 ** 1.1 (fuzz seed 5 #7142)
        with np.errstate(all="ignore"):
            if y == 3:
                r = x * x * x
            elif y == -2:
                r = np.reciprocal(x * x)
            elif x.dtype == np.float64:
                # Note [float64 pow by a number takes libm's pow]
                # numpy's float64 power is an AVX-512 approximation on CPUs that have it
                # (1.1 ** 7 an ulp off, 6% of random inputs unlike torch's, against 1.7%
                # for libm): glibc's pow, as torch's std::pow for its scalar elements
                r = pow_double_by_number(x, float(y))
            else:
                r = np.power(x.astype(np.float64), float(y)).astype(x.dtype)
    elif _float32_operands(x, y):
        return _rounded_from_double(np.power, x, y, kwargs)
    elif (type(x) is int or type(x) is float) and cnp.PyArray_Check(y) \
            and cnp.PyArray_TYPE(<cnp.ndarray>y) == cnp.NPY_FLOAT:
        # a number ** a float32 tensor: the same (``3 ** tensor(0.5)`` was an ulp off)
        return _rounded_from_double(np.power, np.float64(x), y, kwargs)
    else:
        return np.power(x, y, **kwargs)
    return _into_out(r, kwargs)


# Note [float32 pow and atan2 are computed in double]
# numpy's float32 power and arctan2 loops are SIMD approximations whose error depends on
# the CPU: where numpy dispatches to its AVX-512 (SVML) loops they are up to a few ulp
# off, and differ from torch's in 20% (pow) to 34% (atan2) of random inputs, against ~2%
# when computed in double and rounded once.  One ulp of pow becomes a different number
# after a sin of a large result (fuzz seed 22 #11233: ``v.pow_(v)`` then ``sin_``).  Both
# run in double and round once (about twice the time of the float32 loop; float64 keeps
# numpy's loop, whose error is far below what any float32 result shows).

cdef object _into_out(object r, dict kwargs):
    """``r``, or ``r`` written into ``kwargs["out"]`` (cast) when an ``out=`` was given: the
    ufuncs written here answer numpy's ``out=`` calling convention as the kernels use it."""
    out = kwargs.get("out")
    if out is None:
        return r
    np.copyto(out, r, casting="unsafe")
    return out


cdef inline bint _float32_operands(object x, object y):
    return (cnp.PyArray_Check(x) and cnp.PyArray_Check(y)
            and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT
            and cnp.PyArray_TYPE(<cnp.ndarray>y) == cnp.NPY_FLOAT)


cdef object _rounded_from_double(object ufunc, object x, object y, dict kwargs):
    """float32 ``ufunc(x, y)`` computed in double and rounded once."""
    with np.errstate(all="ignore"):
        r = ufunc(np.asarray(x, np.float64), np.asarray(y, np.float64)).astype(np.float32)
    return _into_out(r, kwargs)


# Note [float32 transcendental functions are computed in double]
# The same holds for numpy's float32 exp, exp2, expm1, log, log2, log10, log1p, tan,
# asin, acos, atan, sinh and cosh loops on AVX-512: on random inputs they differed from
# the correctly rounded float32 value in 2% (log2) to 46% (log10) of the elements, and from
# torch's in as many (exp: 39%; torch's own differ in about 1%).  They also disagreed with
# this package's small-array C loops, which call libm in double (Note [Small float
# arrays take C loops]): the result depended on the array's size.  So float32 arrays of
# these functions are computed in double and rounded once, as the small loops do, by
# numpy's float64 loop with buffered casts (no float64 copy of the array): 2.5 times the
# time of numpy's float32 loop on a million elements (exp: 1.2 ms against 0.48 ms);
# float64 and float16 keep numpy's loops.

_ONE_PASS_FLOAT32 = {np.exp: exp_float32, np.log1p: log1p_float32, np.expm1: expm1_float32,
                     np.cosh: cosh_float32, np.sinh: sinh_float32}  # fmt: skip


def _rounded_unary(ufunc):
    """``ufunc`` whose float32 arrays are computed in double and rounded once (Note
    [float32 transcendental functions are computed in double])."""
    def rounded(x, **kwargs):
        if cnp.PyArray_Check(x) and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_FLOAT:
            out = kwargs.get("out")
            if out is None and ufunc is np.exp2:
                r = exp2_dense(<cnp.ndarray>x)  # one dense block: a vectorised C pass
                if r is not None:
                    return r
            kernel = _ONE_PASS_FLOAT32.get(ufunc)
            if kernel is not None and _c_float32(<cnp.ndarray>x) and (out is None or out is x):
                # one vectorised pass, the same bits (Note [float32 exp and sigmoid in one
                # pass], Note [float32 log1p in double], Note [float32 expm1, cosh and sinh
                # in double] in _exp_kernels.pyx)
                return kernel(x, out)
            if out is None:
                out = np.empty_like(x, order="K")
            with np.errstate(all="ignore"):  # (numpy's buffered casts: no float64 copy)
                return ufunc(x, dtype=np.float64, out=out, casting="unsafe")
        return ufunc(x, **kwargs)

    rounded.__name__ = rounded.__qualname__ = ufunc.__name__
    rounded.__doc__ = f"numpy's {ufunc.__name__}, float32 computed in double"
    if ufunc is not np.exp2:  # (exp2's own loop is not numpy's: no in-place form)
        _inplace_float[rounded] = lambda x: rounded(x, out=x)
    return rounded


def _atan2_ufunc(x, y, **kwargs):
    """arctan2 with float32 computed in double (Note [float32 pow and atan2 are computed
    in double])."""
    if _float32_operands(x, y):
        return _rounded_from_double(np.arctan2, x, y, kwargs)
    return np.arctan2(x, y, **kwargs)


def _integer_division(str name, str kernel, ufunc):
    """floor_divide/remainder: torch's errors for bool operands and integer division by zero
    (numpy returns 0, with a warning that the quiet path silences: a wrong number)."""
    def checked(x, y, **kwargs):
        kind = _operand_kind(x, y)
        if kind == "b":
            np.broadcast(x, y)  # torch's shape error comes first (the caller words numpy's)
            raise not_implemented(kernel, np.bool_, "cast with .int() first")
        # (torch checks each divisor it uses: none when the broadcast result is empty)
        if kind in "iu" and not np.all(y) and np.broadcast(x, y).size:
            raise RuntimeError(
                f"ZeroDivisionError: integer {name} by zero (cast to float for inf/nan results)"
            )
        return ufunc(x, y, **kwargs)
    checked.__name__ = name
    return checked


_DIVISION_KWARGS = frozenset(("out", "casting"))  # (the in-place ops' call: casting="unsafe")


cdef object _division_kernel(object kernel, object x, object y, dict kwargs):
    """``kernel(x, y)`` of ``_division_kernels`` (written into ``out=`` when given) when
    ``x`` is a float32/float64 C-contiguous array and ``y`` a number or an array of its
    dtype with its shape or one element (Note [Division kernels follow torch's formulas]);
    None otherwise, for numpy's loops."""
    cdef cnp.ndarray xa, ya
    if not cnp.PyArray_Check(x) or not _DIVISION_KWARGS.issuperset(kwargs):
        return None
    xa = <cnp.ndarray>x
    if (cnp.PyArray_TYPE(xa) not in (cnp.NPY_FLOAT, cnp.NPY_DOUBLE)
            or not cnp.PyArray_ISCARRAY_RO(xa) or not xa.dtype.isnative):
        return None
    if type(y) is float or type(y) is int:
        y = cnp.PyArray_FROM_O(y).astype(xa.dtype)  # (torch's number in the tensor's dtype)
    elif not cnp.PyArray_Check(y):
        return None
    ya = <cnp.ndarray>y
    if cnp.PyArray_TYPE(ya) != cnp.PyArray_TYPE(xa) or not ya.dtype.isnative:
        return None
    if cnp.PyArray_SAMESHAPE(xa, ya):
        if not cnp.PyArray_ISCARRAY_RO(ya):
            return None
    elif cnp.PyArray_SIZE(ya) != 1 or cnp.PyArray_NDIM(ya) > cnp.PyArray_NDIM(xa):
        return None
    else:
        ya = np.ascontiguousarray(ya)
    return _into_out(kernel(xa, ya), kwargs)


def _float_fmod(x, y, **kwargs):
    """C's fmod; float32/float64 take ``_division_kernels.fmod`` where the operands allow."""
    r = _division_kernel(_division_kernels.fmod, x, y, kwargs)
    return np.fmod(x, y, **kwargs) if r is None else r


def _float_floor_divide(x, y, **kwargs):
    """Floor division; float32/float64 take ``_division_kernels.floor_divide`` (torch's
    div_floor_floating, numpy's floor_divide's values, one pass) where the operands
    allow."""
    r = _division_kernel(_division_kernels.floor_divide, x, y, kwargs)
    return np.floor_divide(x, y, **kwargs) if r is None else r


def _float_remainder(x, y, **kwargs):
    """remainder with torch's arithmetic: ``fmod``, then ``+ y`` where the signs differ.

    numpy's remainder gives a zero result the sign of ``y`` (``remainder(0., -inf)`` is
    -0.0, ``remainder(4., -2.)`` -0.0), torch's the sign of ``x`` (0.0): a later ``1 / r``
    or ``atan2`` sees the difference.  Integers keep numpy's loop (Python's modulus, which
    is torch's).  float32/float64 take ``_division_kernels.remainder`` where the operands
    allow.
    """
    if _operand_kind(x, y) != "f":
        return np.remainder(x, y, **kwargs)
    k = _division_kernel(_division_kernels.remainder, x, y, kwargs)
    if k is not None:
        return k
    r = np.fmod(x, y)
    if not cnp.PyArray_Check(r):
        r = np.asarray(r)
    yb = np.broadcast_to(y, r.shape) if cnp.PyArray_Check(y) else y
    np.add(r, yb, out=r, where=(r != 0) & ((yb < 0) != (r < 0)))
    return _into_out(r, kwargs)


def _rsqrt_ufunc(x):
    if x.dtype == np.float16:
        # in float32, rounded once, as torch: 1 / sqrt(x) in float16 rounds twice, and
        # 8402 of the 65536 float16 values came out an ulp off
        return (1.0 / np.sqrt(x.astype(np.float32))).astype(np.float16)
    return 1.0 / np.sqrt(x)


def _neg_ufunc(x):
    if x.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(x)


def _bool_aware(bool_ufunc, other_ufunc):
    def ufunc(x, y):
        if x.dtype == np.bool_ if hasattr(x, "dtype") else isinstance(x, bool):
            return bool_ufunc(x, y)
        return other_ufunc(x, y)
    return ufunc


# ----------------------------------------------------------------------------------------
# torch.special's functions with C kernels (_bessel_kernels.pyx, _special_kernels.pyx)
#
# Note [The special functions' numpy path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The ops ``special_bessel_j0``, ``i0``, ``special_chebyshev_polynomial_t``, ``igamma``
# ... take these functions as their ufunc: the elementwise kernels have promoted the
# operands (integers became the default float for the unary and the polynomial ops), and
# these take float32/float64 arrays to the C loops in the layout they need (a copy of
# a non-contiguous or byte-swapped array; broadcast operands expanded unless one is a
# single element).  float16 computes in float32 and rounds once where torch's kernel
# takes Half (``i0``, ``i0e``, ``i1``, ``i1e``, ``igamma``, ``igammac``: torch's
# calc_i0(Half) upcasts); elsewhere, and for integer and bool operands of ``igamma``,
# torch's "not implemented for" error.  ``out=`` (the in-place forms) is written last.

cdef object _c_floats(object a):
    """``a`` as a C-contiguous array of native byte order (a copy only when needed)."""
    if not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>a) or not a.dtype.isnative:
        return np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    return a


cdef object _into(object r, dict kwargs):
    out = kwargs.get("out")
    if out is None:
        return r
    np.copyto(out, r, casting="unsafe")
    return out


def _special_unary(str name, str kernel, bint half):
    """The ufunc of the unary special function ``name`` of ``_bessel_kernels`` (Note [The
    special functions' numpy path]); ``kernel`` is torch's name in its dtype errors."""
    def special(x, **kwargs):
        x = np.asarray(x)
        if x.dtype.name not in _SCALAR_TYPE:  # (complex, or a dtype torch does not have)
            raise TypeError(f"{name}: not supported for {x.dtype.name} tensors")
        if x.dtype == np.float16 and half:
            r = _bessel_kernels.unary(name, _c_floats(x.astype(np.float32))).astype(np.float16)
        elif x.dtype == np.float32 or x.dtype == np.float64:
            r = _bessel_kernels.unary(name, _c_floats(x))
        else:
            raise not_implemented(kernel, x.dtype, "compute in float32 or float64")
        return _into(r, kwargs)
    special.__name__ = special.__qualname__ = name
    return special


cdef tuple _binary_operands(object x, object y):
    """Two arrays of one floating dtype and the shape of the result: both of that shape,
    or one of one element (a Python number takes the array's dtype, as torch's wrapped
    number does)."""
    if not cnp.PyArray_Check(x) and not cnp.PyArray_Check(y):  # (two numbers: a raw call)
        x, y = np.asarray(x), np.asarray(y)
    elif not cnp.PyArray_Check(x):
        x = np.asarray(x, dtype=y.dtype)
    elif not cnp.PyArray_Check(y):
        y = np.asarray(y, dtype=x.dtype)
    shape = np.broadcast_shapes(x.shape, y.shape)
    if x.shape != shape and x.size != 1:
        x = np.broadcast_to(x, shape)
    if y.shape != shape and y.size != 1:
        y = np.broadcast_to(y, shape)
    return x, y, shape


def _special_binary(str name, str kernel, bint half):
    """The ufunc of the binary special function ``name`` (``"zeta"`` of
    ``_special_kernels``, else of ``_bessel_kernels``): Note [The special functions' numpy
    path]."""
    def special(x, y, **kwargs):
        x, y, shape = _binary_operands(x, y)
        dtype = x.dtype
        if dtype != y.dtype or dtype.kind != "f" or (dtype == np.float16 and not half):
            bad = y.dtype if dtype.kind == "f" and dtype != np.float16 else dtype
            if bad.name not in _SCALAR_TYPE:  # (complex, or a dtype torch does not have)
                raise TypeError(f"{name}: not supported for {bad.name} operands")
            raise not_implemented(kernel, bad, "compute in float32 or float64")
        work = np.float32 if dtype == np.float16 else dtype
        a = _c_floats(x.astype(work, copy=False))
        b = _c_floats(y.astype(work, copy=False))
        if name == "zeta":
            r = _special_kernels.zeta(a, b)
        else:
            r = _bessel_kernels.binary(name, a, b)
        r = r.reshape(shape)  # (one element of each: the broadcast shape)
        if dtype == np.float16:
            r = r.astype(np.float16)
        return _into(r, kwargs)
    special.__name__ = special.__qualname__ = name
    return special


def _floats_only(str kernel, ufunc):
    """``ufunc`` of two operands refusing integer and bool ones as torch's ``kernel``
    (``nextafter_cpu``) does."""
    def checked(x, y, **kwargs):
        kind = _operand_kind(x, y)
        if kind != "f":
            np.broadcast_shapes(np.shape(x), np.shape(y))
            dtype = x.dtype if cnp.PyArray_Check(x) else y.dtype
            raise not_implemented(kernel, dtype, "compute in a floating-point dtype")
        return ufunc(x, y, **kwargs)
    checked.__name__ = checked.__qualname__ = ufunc.__name__
    return checked
