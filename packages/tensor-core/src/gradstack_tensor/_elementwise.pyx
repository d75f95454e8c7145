# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, embedsignature.format=clinic
"""The C kernels of the elementwise ops and of ``sum``, bound to the ops of the op table.

One kernel per kind of op (``KIND_BINARY``, ``KIND_COMPARE``, ``KIND_UNARY`` ... and their
in-place forms): it checks its arguments, promotes the operands (``_promotion.pyx``),
runs the small-array C loop when one applies (``_loops.pyx``) and numpy's ufunc
otherwise (``_ufuncs.pyx``), and wraps the result in a new tensor (or bumps the version
of the tensor it wrote into).  Importing this module binds the kernels (bottom of file).
"""
cimport numpy as cnp

import numpy as np

from . import dtypes as _dt
from ._dispatch cimport (
    K_BINARY, K_BINARY_FLOAT, K_COMPARE, K_UNARY, K_UNARY_FLOAT, Op, check_nargs,
)
from ._dispatch import OPS
from ._float32_transcendentals cimport sincos_f32, transcendental_f32
from ._loops cimport (
    B_DIV, B_MUL, B_SUB, U_COS, U_SIN, U_TANH, is_float_num, small_binary, small_sum, small_unary,
)
from ._loops import BINARY_CODES, UNARY_CODES
from ._promotion cimport cast_operand, operand_dtype_info, promote_binary
from ._promotion import can_cast_inplace
from ._shapes cimport check_no_partial_overlap
from ._sum_kernels cimport sum_dense_f32
from ._shapes import broadcast_error, normalize_dims
from ._tensor cimport Tensor, expect_tensor, wrap
from ._tensor_base cimport TensorBase, as_ndarray, dtype_of_array, shape_of
from ._ufuncs cimport (
    quiet_call1, quiet_call2, quiet_cast, quiet_inplace2_into, quiet_sum, unary_float_inplace,
)

cnp.import_array()

# typed, so that .get() compiles to a C dict lookup
cdef dict _BIN_CODES = BINARY_CODES
cdef dict _UN_CODES = UNARY_CODES


# Note [A float16 tensor and a scalar compute in float32]
# torch's CPU mul and div of a float16 tensor by a number (or by a 0-d tensor: a CPU
# scalar) read the scalar's original value as float32 (its opmath type,
# ``iter.original_scalar_value<opmath_t>``), compute in float32 and round once.  numpy
# rounds the number to float16 first: ``t * log(2)`` of 1.4141 came out 0.98047 where
# torch's is 0.97998; on random float16 data and six scalars 28% of the products and
# quotients differed from torch's, and the second derivatives built from them drifted
# (fuzz seed 27 #3684, and the float16 second-order class of earlier seeds).  So mul and
# div compute in float32 here, with the scalar second (as torch's kernels find it:
# ``2.0 * t`` is ``t.mul(2.0)``).  add and sub round the scalar to float16 in torch too
# (0 of 120,000 sums differ so), and keep numpy's loop.

cdef object _half_scalar_value(object a, object b, int code):
    """The float32 value of ``b`` when ``a`` is a float16 tensor and ``b`` a number or a
    0-d tensor for mul/div (Note [A float16 tensor and a scalar compute in float32]),
    else None."""
    cdef cnp.ndarray bd
    if code != B_MUL and code != B_DIV:
        return None
    if not isinstance(a, Tensor) or cnp.PyArray_TYPE((<TensorBase>a)._data) != cnp.NPY_FLOAT16:
        return None
    if type(b) is float or type(b) is int:
        return np.float32(b)
    if isinstance(b, Tensor) and cnp.PyArray_NDIM((<TensorBase>a)._data) > 0:
        # (a 0-d float16 by a 0-d float32 promotes to float32: dims rank before categories)
        bd = (<TensorBase>b)._data
        if cnp.PyArray_NDIM(bd) == 0 and cnp.PyArray_TYPE(bd) != cnp.NPY_FLOAT16 \
                and cnp.PyArray_TYPE(bd) != cnp.NPY_BOOL and bd.dtype.kind in "fiu":
            return np.float32(bd[()])
    return None


cdef object _half_by_scalar(object ufunc, cnp.ndarray x, object value):
    with np.errstate(all="ignore"):
        return ufunc(x.astype(np.float32), value).astype(np.float16)


cdef object _binary_kernel(Op op, tuple args):
    check_nargs(op, args, 2, 3)
    cdef object a = args[0], b = args[1], x, y, r
    cdef tuple prep
    cdef int code = _BIN_CODES.get(op.name, 0)
    if code == B_SUB and (_is_bool_operand(a) or _is_bool_operand(b)):
        raise _bool_sub_error()
    if len(args) > 2 and args[2] is not None and (args[2] != 1 or type(args[2]) is bool):
        # add/sub alpha (True == 1, but a bool alpha has its own rule)
        b = _scaled(a, b, args[2])
    if type(b) is int and op.name == "pow" and isinstance(a, TensorBase):
        _check_int_exponent(<TensorBase>a, b)
    if (type(b) is int or type(b) is float) and b == 2 and len(args) == 2 \
            and isinstance(a, TensorBase) and op.name == "pow" \
            and (<TensorBase>a)._data.dtype.kind == "f":
        # Note [A float tensor squared is x * x, early]: the square that _float_pow
        # computes (torch's shortcut, the same bits), without the promotion and the ufunc
        # wrapper on the way there: 2.0 -> 0.4 us for a small tensor (the tutorial's loss)
        x = (<TensorBase>a)._data
        r = small_binary(B_MUL, x, x)
        if r is None:
            r = quiet_call2(np.multiply, x, x)
        return wrap(as_ndarray(r))
    if code and (len(args) == 2 or args[2] is None or (args[2] == 1 and type(args[2]) is not bool)):
        r = _half_scalar_value(a, b, code)
        if r is not None:
            return wrap(as_ndarray(_half_by_scalar(op.ufunc, (<TensorBase>a)._data, r)))
    # promote_binary's two common cases written out (its tuple costs ~200 instructions
    # per op, a tenth of this kernel on small tensors): one dtype, or a float tensor and
    # a Python number; the rest goes to torch's promotion
    x = None
    if isinstance(a, Tensor):
        x = (<TensorBase>a)._data
        if isinstance(b, Tensor):
            y = (<TensorBase>b)._data
            if cnp.PyArray_TYPE(<cnp.ndarray>x) != cnp.PyArray_TYPE(<cnp.ndarray>y) or (
                    op.kind == K_BINARY_FLOAT
                    and not _is_inexact_num(cnp.PyArray_TYPE(<cnp.ndarray>x))):
                x = None
        elif (type(b) is float or type(b) is int) \
                and is_float_num(cnp.PyArray_TYPE(<cnp.ndarray>x)):
            y = b
        else:
            x = None
    if x is None:
        prep = promote_binary(a, b, op.kind)
        x = prep[0]
        y = prep[1]
        if _is_complex_operand(x) or _is_complex_operand(y):
            _check_complex(op.name, x if _is_complex_operand(x) else y)
    elif cnp.PyArray_ISCOMPLEX(<cnp.ndarray>x):
        _check_complex(op.name, x)
    try:
        if code:
            r = small_binary(code, x, y)
            if r is not None:
                return wrap(<cnp.ndarray>r)
        r = quiet_call2(op.ufunc, x, y)
    except ValueError as e:
        raise _shape_error_from(a, b, e) from None
    except TypeError as e:
        raise _dtype_error(op.name, a, b, e) from None
    except OverflowError as e:      # a Python number too large for the tensor's dtype
        raise RuntimeError(f"{op.name}: value cannot be converted without overflow ({e})") from None
    return wrap(as_ndarray(r))


cdef dict _INT_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
                          "int32": "int", "int64": "int64_t"}


cdef void _check_int_exponent(TensorBase t, object b) except *:
    """torch's checks of an integer tensor's Python-int exponent, before the number is
    converted to the tensor's type (which would wrap it: ``int32 ** 2**40`` gave 1, and
    ``int32 ** 2**31`` a false "negative powers" error; fuzz seed 8 #520)."""
    cdef cnp.ndarray d = t._data
    if d.dtype.kind not in "iu":
        return
    if b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if b > np.iinfo(d.dtype).max:
        raise RuntimeError(
            f"value cannot be converted to type {_INT_C_NAMES[d.dtype.name]} without overflow"
        )


cdef object _scaled(object a, object b, object alpha):
    """``alpha * b`` for ``add``/``sub``, computed in the dtype of ``a (op) b``, as torch."""
    res = _dt.result_type([operand_dtype_info(a, "input"), operand_dtype_info(b)])
    if isinstance(alpha, bool):
        if res is not _dt.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and not (res.is_floating_point or res.is_complex):
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    alpha = cast_operand(alpha, res)
    if isinstance(b, Tensor):
        return wrap(as_ndarray(np.multiply(cast_operand(b, res), alpha)))
    if res is _dt.bool_:
        # a product of bools stays a bool (Python's False * True is the int 0)
        return bool(cast_operand(b, res)) and bool(alpha)
    return cast_operand(b, res) * alpha


cdef inline bint _is_bool_operand(object x):
    if type(x) is bool:
        return True
    return isinstance(x, Tensor) and cnp.PyArray_TYPE((<TensorBase>x)._data) == cnp.NPY_BOOL


cdef object _bool_sub_error():
    return RuntimeError(
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
        "trying to invert a mask, use the `~` or `logical_not()` operator instead."
    )


cdef object _shape_error_from(object a, object b, object err):
    sa = shape_of((<TensorBase>a)._data) if isinstance(a, Tensor) else ()
    sb = shape_of((<TensorBase>b)._data) if isinstance(b, Tensor) else ()
    e = broadcast_error(sa, sb)
    return e if e is not None else RuntimeError(str(err))


cdef object _dtype_error(str name, object a, object b, object err):
    da = (<TensorBase>a).dtype if isinstance(a, Tensor) else type(a).__name__
    db = (<TensorBase>b).dtype if isinstance(b, Tensor) else type(b).__name__
    return TypeError(f"{name}: not supported for operands of type {da} and {db} ({err})")


cdef inline bint _is_inexact_num(int num) noexcept:
    """Whether a numpy type number is a float or complex dtype (what torch's "floating
    point or complex" checks accept; the C loops take float32/float64 only)."""
    return is_float_num(num) or num == cnp.NPY_CFLOAT or num == cnp.NPY_CDOUBLE


# Note [Which elementwise ops take complex numbers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy orders complex numbers lexicographically and rounds their parts; torch refuses
# the ops that need an order or a rounding (comparisons, maximum, floor, relu ...) with a
# NotImplementedError, and the refusal is torch's here too.  The ops of a complex operand
# that pass are numpy's complex loops (+, *, /, exp, log, sin ...: torch's values), except
# the ufuncs written for real numbers, computed here from their definition (sigmoid, rsqrt).
cdef dict _NO_COMPLEX = {
    "lt": '"lt_cpu" not implemented for \'{}\'',
    "le": '"le_cpu" not implemented for \'{}\'',
    "gt": '"gt_cpu" not implemented for \'{}\'',
    "ge": '"ge_cpu" not implemented for \'{}\'',
    "maximum": "maximum not implemented for complex tensors.",
    "minimum": "minimum not implemented for complex tensors.",
    "remainder": '"remainder_cpu" not implemented for \'{}\'',
    "fmod": '"fmod_cpu" not implemented for \'{}\'',
    "floor_divide": '"div_floor_cpu" not implemented for \'{}\'',
    "atan2": '"atan2_cpu" not implemented for \'{}\'',
    "relu": "clamp is not supported for complex types",
    "floor": "floor is not supported for complex inputs",
    "ceil": "ceil is not supported for complex inputs",
    "round": "round is not supported for complex inputs",
    "trunc": "trunc is not supported for complex inputs",
    "sign": "Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
            "use torch.sgn instead.",
    "logical_and": None, "logical_or": None, "logical_xor": None, "logical_not": None,
}


cdef inline bint _is_complex_operand(object x):
    return (isinstance(x, cnp.ndarray) and cnp.PyArray_ISCOMPLEX(<cnp.ndarray>x)) \
        or type(x) is complex


cdef void _check_complex(str name, object x) except *:
    """torch's refusal of an op that takes no complex operand (Note [Which elementwise
    ops take complex numbers])."""
    cdef str base = name[:len(name) - 1] if name.endswith("_") else name
    if base not in _NO_COMPLEX or _NO_COMPLEX[base] is None:
        return
    dt = x.dtype if isinstance(x, cnp.ndarray) else np.dtype(np.complex128)
    words = "ComplexFloat" if dt == np.complex64 else "ComplexDouble"
    raise NotImplementedError((<str>_NO_COMPLEX[base]).format(words))


cdef object _complex_unary(Op op, cnp.ndarray x):
    """A unary op of a complex array: refused, or numpy's complex loop, or computed from
    its definition where the table's ufunc is written for real numbers."""
    _check_complex(op.name, x)
    with np.errstate(all="ignore"):
        if op.name == "sigmoid":
            return wrap(as_ndarray(np.reciprocal(1 + np.exp(-x))))
        if op.name == "rsqrt":
            return wrap(as_ndarray(np.reciprocal(np.sqrt(x))))
        if op.name == "neg":
            return wrap(as_ndarray(np.negative(x)))
    try:
        return wrap(as_ndarray(quiet_call1(op.ufunc, x)))
    except TypeError as e:      # numpy has no complex loop for this ufunc
        raise NotImplementedError(
            f"{op.name}: not supported for tensors of type {dtype_of_array(x)} ({e})"
        ) from None


cdef object _compare_kernel(Op op, tuple args):
    check_nargs(op, args, 2, 2)
    cdef tuple prep = promote_binary(args[0], args[1], K_BINARY)
    if _is_complex_operand(prep[0]) or _is_complex_operand(prep[1]):
        _check_complex(op.name, prep[0] if _is_complex_operand(prep[0]) else prep[1])
    try:
        r = op.ufunc(prep[0], prep[1])
    except ValueError as e:
        raise _shape_error_from(args[0], args[1], e) from None
    return wrap(as_ndarray(r))


cdef object _unary_kernel(Op op, tuple args):
    check_nargs(op, args, 1, 1)
    cdef TensorBase t = expect_tensor(args[0], op.name)
    cdef cnp.ndarray x = t._data
    cdef int code
    if op.kind == K_UNARY_FLOAT and not _is_inexact_num(cnp.PyArray_TYPE(x)):
        x = x.astype(_dt.get_default_dtype().numpy)
    elif cnp.PyArray_ISCOMPLEX(x):
        return _complex_unary(op, x)
    code = _UN_CODES.get(op.name, 0)
    if code:
        r = small_unary(code, x)
        if r is None:
            r = _transcendental(code, x, gs_byproduct_wanted and t._requires_grad)
        if r is not None:
            return wrap(<cnp.ndarray>r)
    try:
        return wrap(as_ndarray(quiet_call1(op.ufunc, x)))
    except TypeError as e:      # numpy has no loop for this dtype (bitwise_not of a float)
        raise TypeError(
            f"{op.name}: not supported for tensors of type {dtype_of_array(x)} ({e})"
        ) from None


# Note [A kernel's by-product]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A kernel may compute, for almost nothing, a value that the op's backward formula would
# otherwise compute again: the float32 sin and cos of a tensor that requires grad write
# both functions from one pass (Note [sin and cos from one pass] in
# _float32_transcendentals.pyx), and
# sin's gradient is grad * cos(x).  The kernel leaves that by-product in one slot, with
# the input and output arrays it belongs to; the layer that records the op takes it right
# after the call (``take_byproduct(input, output)``, public in gradstack_tensor.extension).
#   - The slot holds at most one by-product, replaced by the next kernel that leaves one
#     and emptied when taken (what is left untaken, when the recording fails between the
#     call and the take, costs one array until then).
#   - It is matched by the identity of both arrays, which the slot keeps alive: a
#     by-product is never handed to another computation (an in-place op, another thread's
#     op between the kernel and the take: they find no match and compute as before).
#   - It is made only when asked: the layer that records the op says so around the
#     kernel's call (``set_byproduct_wanted``, a flag of this thread; the autograd layer
#     does it for the entries that take a by-product), and only for an input that requires
#     grad.  An op under no_grad, or of another layer, makes none and keeps nothing.

cdef extern from *:
    """
    static __thread int gs_byproduct_wanted = 0;
    """
    int gs_byproduct_wanted


cdef void set_byproduct_wanted(bint wanted) noexcept nogil:
    """Whether the kernel about to run on this thread may leave a by-product for the layer
    that records it (Note [A kernel's by-product])."""
    global gs_byproduct_wanted
    gs_byproduct_wanted = wanted


def _set_byproduct_wanted(bint wanted):
    """``set_byproduct_wanted`` from Python, for tests (the recording layer calls it in C)."""
    set_byproduct_wanted(wanted)


cdef object _byproduct_input = None
cdef object _byproduct_output = None
cdef object _byproduct = None


cdef void _leave_byproduct(object x, object out, object value) noexcept:
    global _byproduct_input, _byproduct_output, _byproduct
    _byproduct_input, _byproduct_output, _byproduct = x, out, value


def take_byproduct(input, output):
    """The by-product the last kernel left for the op ``input`` -> ``output`` (tensors or
    their arrays), or None; the slot is emptied (Note [A kernel's by-product]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_tensor.extension import take_byproduct
    >>> x = gt.rand(10000)
    >>> take_byproduct(x, x.sin()) is None    # none unless the recording layer asks
    True
    """
    global _byproduct_input, _byproduct_output, _byproduct
    if isinstance(input, TensorBase):
        input = (<TensorBase>input)._data
    if isinstance(output, TensorBase):
        output = (<TensorBase>output)._data
    if _byproduct is None or input is not _byproduct_input or output is not _byproduct_output:
        return None
    value = _byproduct
    _byproduct_input = _byproduct_output = _byproduct = None
    return value


cdef object _transcendental(int code, cnp.ndarray x, bint byproduct):
    """sin, cos or tanh of a float32 array by tensor-core's own loops, faster than numpy's
    and correctly rounded (Note [float32 sin and cos], Note [float32 tanh] in
    _float32_transcendentals.pyx); None for other ops and dtypes, and for layouts whose result numpy
    would not lay out row- or column-major (numpy's loop then).  With ``byproduct``, sin
    and cos leave the other function of x (Note [A kernel's by-product])."""
    cdef int which
    cdef cnp.ndarray src
    if code == U_SIN:
        which = 0
    elif code == U_COS:
        which = 1
    elif code == U_TANH:
        which = 2
    else:
        return None
    if cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT:
        return None
    transposed = False
    if cnp.PyArray_ISCARRAY_RO(x):
        src = x
    elif cnp.PyArray_ISFARRAY_RO(x):
        src = x.T       # a transposed input keeps its layout
        transposed = True
    elif _row_ordered(x):
        # a strided input whose result is row-major in numpy and torch (both order the
        # result like the input's strides): compute on a compact copy, so that every
        # layout gives the same bits; other orders keep numpy's loop, and its layout
        src = np.ascontiguousarray(x)
    else:
        return None
    if byproduct and which != 2:
        pair = sincos_f32(src)
        if pair is None:
            return None
        r, other = pair if which == 0 else (pair[1], pair[0])
        if transposed:
            r, other = r.T, other.T
        _leave_byproduct(x, r, other)
        return r
    r = transcendental_f32(which, src)
    if r is None:
        return None
    return r.T if transposed else r


cdef bint _row_ordered(cnp.ndarray x) noexcept:
    """Whether x's strides (dims of size > 1) are positive and non-increasing."""
    cdef int d
    cdef Py_ssize_t last = -1, st
    for d in range(cnp.PyArray_NDIM(x)):
        if cnp.PyArray_DIM(x, d) <= 1:
            continue
        st = cnp.PyArray_STRIDE(x, d)
        if st <= 0 or (last >= 0 and st > last):
            return False
        last = st
    return True


cdef object _check_inplace_target(TensorBase t, str name):
    if not t._data.flags.writeable:
        raise RuntimeError(
            f"{name}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded or broadcast view). Please "
            "clone() the tensor before performing the operation."
        )


cdef object _check_inplace_shape(tuple own, object b):
    """torch's rule for the operand of an in-place op: it broadcasts *to* the written
    tensor's shape ``own`` (the result cannot have more dims or larger sizes)."""
    cdef tuple other, full
    if not isinstance(b, Tensor):
        return
    other = shape_of((<TensorBase>b)._data)
    if other == own:
        return
    try:
        full = tuple(np.broadcast_shapes(own, other))
    except ValueError:
        raise broadcast_error(own, other) from None
    if full != own:
        raise RuntimeError(
            f"output with shape {list(own)} doesn't match the broadcast shape {list(full)}"
        )


cdef object _inplace_binary_kernel(Op op, tuple args):
    """``t.op_(b)``: torch's checks in torch's order, then the ufunc written into ``t``.

    Note [The checks of an in-place op, in torch's order]
    torch's TensorIterator checks, in this order: that the written tensor repeats no
    element (an expanded view), that the operand does not partly overlap it
    (``y[:3].mul_(y[1:])``), that the operand broadcasts to its shape, that the result
    dtype can be cast to its dtype; then the kernel refuses dtypes it has no loop for
    (``"bitwise_and_cpu" not implemented for 'Float'``, raised by the op's ufunc).  A
    program with two faults sees the same error as in torch.
    """
    check_nargs(op, args, 2, 3)
    cdef TensorBase t = expect_tensor(args[0], op.name)
    cdef object b = args[1], x, y
    cdef object res
    if op.name == "sub_" and (_is_bool_operand(t) or _is_bool_operand(b)):
        raise _bool_sub_error()
    if op.name == "pow_" and type(b) is int:
        _check_int_exponent(t, b)
    _check_inplace_target(t, op.name)
    if isinstance(b, Tensor):
        check_no_partial_overlap(t._data, (<TensorBase>b)._data)
    _check_inplace_shape(shape_of(t._data), b)
    if len(args) > 2 and args[2] is not None and (args[2] != 1 or type(args[2]) is bool):
        b = _scaled(t, b, args[2])
    res = _dt.result_type([operand_dtype_info(t, "input"), operand_dtype_info(b)])
    if op.kind == K_BINARY_FLOAT and not (res.is_floating_point or res.is_complex):
        res = _dt.get_default_dtype()
    own = dtype_of_array(t._data)
    if not can_cast_inplace(res, own):
        raise RuntimeError(
            f"{op.name}: result type {res.name} can't be cast to the desired output type "
            f"{own.name} (the tensor written in place). Use the out-of-place op, or cast first."
        )
    # the out-of-place name (no negative index: this module sets wraparound=False)
    code = _BIN_CODES.get(op.name[: len(op.name) - 1], 0)
    half_value = _half_scalar_value(t, b, code) if code and res is own else None
    if half_value is not None:      # Note [A float16 tensor and a scalar compute in float32]
        np.copyto(t._data, _half_by_scalar(op.ufunc, t._data, half_value))
        t.bump_version(op.name)
        return t
    # both operands in the result dtype, as torch computes (a uint8 tensor's remainder_ by
    # a 0-d int64 -2 divides by 254); the result is cast into the tensor's own dtype
    x = t._data if res is own else t._data.astype(res.numpy)
    y = cast_operand(b, res)
    try:
        quiet_inplace2_into(op.ufunc, x, y, t._data)
    except ValueError as e:     # not reached for shapes (checked above); numpy's other errors
        raise RuntimeError(f"{op.name}: {e}") from None
    t.bump_version(op.name)
    return t


cdef object _inplace_unary_kernel(Op op, tuple args):
    check_nargs(op, args, 1, 1)
    cdef TensorBase t = expect_tensor(args[0], op.name)
    _check_inplace_target(t, op.name)
    if op.kind == K_UNARY_FLOAT and not _is_inexact_num(cnp.PyArray_TYPE(t._data)):
        raise RuntimeError(
            f"{op.name}: result type Float can't be cast to the desired output type "
            f"{dtype_of_array(t._data).name}; use the out-of-place op {op.name.rstrip('_')}()"
        )
    # the path of the out-of-place op, so that t.op_() and t.op() give the same bits
    code = _UN_CODES.get(op.name, 0)
    r = small_unary(code, t._data) if code else None
    if r is None and code:
        r = _transcendental(code, t._data, False)
    if r is None:
        if unary_float_inplace(op.ufunc, t._data):  # Note [An in-place unary op writes ...]
            t.bump_version(op.name)
            return t
        r = quiet_call1(op.ufunc, t._data)
    np.copyto(t._data, r, casting="unsafe")
    t.bump_version(op.name)
    return t


cdef object _sum_kernel(Op op, tuple args):
    """``sum(input, dim, keepdim, dtype)``.

    Note [sum's accumulator]
    As torch: bool and integer tensors sum as int64; a float16 tensor (or a float16
    ``dtype=``) accumulates in float32 and is rounded once (numpy's float16 loop rounds
    after every addition: 4000 x 0.1 summed to 256, not 400); ``dtype=bool`` sums in bool,
    where addition is "or" (torch's ``sum(dtype=torch.bool)`` says whether any element is
    nonzero).
    """
    check_nargs(op, args, 1, 4)
    cdef TensorBase t = expect_tensor(args[0], "sum")
    cdef object dim = args[1] if len(args) > 1 else None
    cdef bint keepdim = args[2] if len(args) > 2 else False
    cdef object dtype = args[3] if len(args) > 3 else None
    cdef cnp.ndarray x = t._data
    cdef int num
    if dtype is not None:
        x = x.astype(_dt.as_dtype(dtype, "sum").numpy)
    elif not _is_inexact_num(cnp.PyArray_TYPE(x)):
        x = x.astype(np.int64)       # torch sums bool and integers as int64
    num = cnp.PyArray_TYPE(x)
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        if not keepdim:
            r = small_sum(x)
            if r is not None:
                return wrap(<cnp.ndarray>r)
        axis = None
    else:
        axis = normalize_dims(dim, x.ndim)
    if num == cnp.NPY_FLOAT and cnp.PyArray_SIZE(x) > 4096 and (
            axis is None or len(axis) == x.ndim):
        # every element of a float32 array: one vectorised pass (_sum_kernels.pyx)
        r = sum_dense_f32(x)
        if r is not None:
            return wrap(<cnp.ndarray>(r.reshape((1,) * x.ndim) if keepdim else r))
    if num == cnp.NPY_FLOAT16:
        r = quiet_sum(x, axis, keepdim, np.float32)
        return wrap(_c_order(as_ndarray(quiet_cast(r, np.float16))))
    if num == cnp.NPY_BOOL:
        return wrap(_c_order(as_ndarray(np.logical_or.reduce(x, axis=axis, keepdims=keepdim))))
    # in x's dtype: numpy's add.reduce would widen an int32 (``dtype=int32``) to int64
    return wrap(_c_order(as_ndarray(quiet_sum(x, axis, keepdim, x.dtype))))


cdef inline cnp.ndarray _c_order(cnp.ndarray r):
    """Note [A reduction's result is contiguous] (_impl_reduce.py): torch's sum allocates
    a contiguous result, numpy's keeps a permuted input's order."""
    if cnp.PyArray_IS_C_CONTIGUOUS(r):
        return r
    return r.copy(order="C")


# ----------------------------------------------------------------------------------------
# Binding: every elementwise op of the table gets the C kernel of its kind


cdef void _bind_kernels():
    cdef Op op
    for op in OPS.values():
        if op.kind == K_COMPARE:
            op._ckernel = _compare_kernel
        elif op.kind == K_BINARY or op.kind == K_BINARY_FLOAT:
            op._ckernel = _inplace_binary_kernel if op.inplace else _binary_kernel
        elif op.kind == K_UNARY or op.kind == K_UNARY_FLOAT:
            op._ckernel = _inplace_unary_kernel if op.inplace else _unary_kernel
    (<Op>OPS["sum"])._ckernel = _sum_kernel


_bind_kernels()
