# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""dtype promotion of the operands of binary ops: torch's result type, Python numbers wrapped.

The elementwise kernels (``_elementwise.pyx``) call :func:`promote_binary` to turn two
operands (tensors or Python numbers) into numpy operands already cast to torch's result
dtype; the rules themselves are in ``dtypes.py`` (Note [Torch's promotion, not numpy's]).
"""
cimport numpy as cnp

import numpy as np

from . import dtypes as _dt
from ._dispatch cimport K_BINARY_FLOAT
from ._loops cimport is_float_num
from ._tensor cimport Tensor
from ._tensor_base cimport TensorBase, dtype_of_array

cnp.import_array()


cdef inline bint _is_number(object x):
    return (type(x) is float or type(x) is int or type(x) is bool
            or isinstance(x, (int, float, complex, np.generic)))


cdef object operand_dtype_info(object x, str arg="other"):
    if isinstance(x, Tensor):
        return (dtype_of_array((<TensorBase>x)._data), (<TensorBase>x)._data.ndim)
    if _is_number(x):
        if isinstance(x, np.generic):
            if isinstance(x, np.floating):
                return float(x)
            if isinstance(x, np.complexfloating):
                return complex(x)
            return bool(x) if isinstance(x, np.bool_) else int(x)
        return x
    # the argument is named, as torch's message names it ("argument 'other' ...")
    raise TypeError(
        f"argument '{arg}' must be a Tensor or a Python number, not {type(x).__name__} "
        "(wrap arrays and lists with gradstack.tensor(...))"
    )


cdef tuple promote_binary(object a, object b, int kind):
    """Return ``(x, y, out_dtype)``: numpy operands already cast to torch's result dtype.

    ``out_dtype`` is the numpy dtype of the result (bool for comparisons).
    """
    cdef TensorBase ta, tb
    cdef int na, nb
    cdef object x, y, res
    if isinstance(a, Tensor):
        ta = <TensorBase>a
        if isinstance(b, Tensor):
            tb = <TensorBase>b
            na = cnp.PyArray_TYPE(ta._data)
            nb = cnp.PyArray_TYPE(tb._data)
            if na == nb and (kind != K_BINARY_FLOAT or is_float_num(na)):
                return (ta._data, tb._data, None)
        elif (type(b) is float or type(b) is int) and is_float_num(cnp.PyArray_TYPE(ta._data)):
            return (ta._data, b, None)
    elif isinstance(b, Tensor) and (type(a) is float or type(a) is int) \
            and is_float_num(cnp.PyArray_TYPE((<TensorBase>b)._data)):
        return (a, (<TensorBase>b)._data, None)
    # the general case: torch's result type
    res = _dt.result_type([operand_dtype_info(a, "input"), operand_dtype_info(b)])
    if kind == K_BINARY_FLOAT and not (res.is_floating_point or res.is_complex):
        res = _dt.get_default_dtype()
    x = cast_operand(a, res)
    y = cast_operand(b, res)
    if res is _dt.bfloat16:
        # no bfloat16 operand reached here (those compute in float32 below every layer: Note
        # [bfloat16 is stored by ml_dtypes and computed in float32]), but the default dtype
        # is bfloat16 (``arange(3) * 0.5``): ml_dtypes' loops take two bfloat16 arrays (a
        # Python number beside one would promote to float32) and compute in float32
        x = np.asarray(x, dtype=res.numpy)
        y = np.asarray(y, dtype=res.numpy)
    return (x, y, None)


cdef object cast_operand(object v, object res):
    cdef cnp.ndarray arr
    if isinstance(v, Tensor):
        arr = (<TensorBase>v)._data
        if arr.dtype != res.numpy:
            return arr.astype(res.numpy)
        return arr
    if isinstance(v, np.generic):
        v = v.item()
    if res is _dt.bool_:
        return bool(v)
    if res.is_complex:
        return complex(v)
    if isinstance(v, complex):
        raise RuntimeError(
            f"value cannot be converted to type {res.name} without overflow ({v}): a complex "
            "number with a real tensor needs a complex result"
        )
    if res.is_floating_point:
        try:
            return float(v)
        except OverflowError:
            raise RuntimeError(
                f"value cannot be converted to type {res.name} without overflow ({v})"
            ) from None
    if isinstance(v, float):
        return v
    return _wrap_int(int(v), res)


cdef dict _INT_RANGE = {}


cdef object _wrap_int(object v, object res):
    """A Python int as the integer dtype ``res`` holds it.

    Note [Python ints wrap like torch's]
    torch casts a Python int to the result dtype of the op, wrapping around
    (``uint8_tensor + 300`` adds 44); numpy 2 raises OverflowError instead.  An int that
    does not fit 64 bits raises RuntimeError, as torch's "Overflow when unpacking long".
    """
    bounds = _INT_RANGE.get(res)
    if bounds is None:
        info = np.iinfo(res.numpy)
        bounds = _INT_RANGE[res] = (int(info.min), int(info.max))
    lo, hi = bounds
    if lo <= v <= hi:
        return v
    if not -2**63 <= v < 2**63:
        raise RuntimeError(f"Overflow when unpacking long: {v} does not fit in 64 bits")
    return (v - lo) % (hi - lo + 1) + lo


def can_cast_inplace(res, own):
    """Whether an op whose result dtype is ``res`` may write into a tensor of ``own``.

    torch's ``canCast``: never from floating to integral, nor from non-bool to bool;
    within a category the result is cast (``int32_tensor += int64_tensor`` is fine).
    """
    return res is own or res._category <= own._category
