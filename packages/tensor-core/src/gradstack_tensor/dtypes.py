"""gradstack's dtypes and torch's type-promotion rules.

A :class:`dtype` names a numpy dtype the way torch names its own (``gradstack.float32``).
Tensors store numpy arrays; ``Tensor.dtype`` maps the array's dtype back to one of these
objects, so ``t.dtype is gradstack_tensor.float32`` holds.

Note [Torch's promotion, not numpy's]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
numpy and torch disagree on mixed operands: numpy promotes ``int64 + float32`` to float64
and treats a 0-d array as a full participant, torch keeps float32 and lets a 0-d tensor
or a Python number only raise the *category* (bool < integer < floating) of the result.
:func:`result_type` implements torch's rule (``c10::promoteTypes`` plus the
dimensioned / zero-dim / wrapped-number split of ``at::native::result_type``), and the
kernels cast to its answer before calling numpy.

Examples
--------
>>> from gradstack_tensor import dtypes
>>> dtypes.promote_types(dtypes.int64, dtypes.float32)
gradstack.float32
>>> dtypes.float64.is_floating_point
True
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "dtype",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool_",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "from_numpy_dtype",
    "promote_types",
    "result_type",
    "get_default_dtype",
    "set_default_dtype",
    "SCALAR_TYPE_NAMES",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:  # noqa: N801 - torch spells it in lower case
    """A tensor element type: a thin, named wrapper over a numpy dtype.

    Attributes
    ----------
    name : str
        torch's name (``"float32"``).
    numpy : numpy.dtype
        The storage dtype.
    is_floating_point : bool
    is_signed : bool
    itemsize : int
        Bytes per element.
    """

    __slots__ = ("name", "numpy", "is_floating_point", "is_signed", "itemsize", "_category")

    def __init__(self, name: str, np_dtype, kind: str | None = None) -> None:
        self.name = name
        self.numpy = np.dtype(np_dtype)
        kind = kind or self.numpy.kind  # ml_dtypes' bfloat16 is numpy kind "V": say "f"
        self.is_floating_point = kind == "f"
        self.is_signed = kind in "ifc"
        self.itemsize = self.numpy.itemsize
        self._category = {"b": _BOOL, "i": _INT, "u": _INT, "f": _FLOAT, "c": _COMPLEX}[kind]

    @property
    def is_complex(self) -> bool:
        return self._category == _COMPLEX

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (complex64 -> float32); a real dtype
        is its own (torch's ``dtype.to_real()``)."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> dtype:
        """The complex dtype whose parts are this floating dtype (float32 -> complex64);
        torch's ``dtype.to_complex()``."""
        if self._category == _COMPLEX:
            return self
        if self not in _TO_COMPLEX:
            raise RuntimeError(f"Unsupported dtype {self.name}")
        return _TO_COMPLEX[self]

    def __repr__(self) -> str:
        return f"gradstack.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


float16 = dtype("float16", np.float16)
# Note [bfloat16 is stored by ml_dtypes and computed in float32]: the storage is ml_dtypes'
# numpy bfloat16 (8 exponent bits, 7 mantissa bits); every op on it computes in float32 and
# rounds its result to bfloat16, as torch's CPU kernels do (``_bfloat16.py``)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, kind="f")
float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
# Note [The barebones unsigned dtypes]: torch 2.13's uint16, uint32 and uint64 are
# "limited" dtypes: tensors of them are made, copied, viewed, indexed, converted and
# printed, a few kernels take them (mul, true division, eq, bitwise and/or/xor, sum, prod,
# cumsum, the float-valued unary functions ...), and promotion with any other dtype but a
# floating one is refused (``promote_types``); ``_barebones.py`` refuses the kernels torch
# has no loop for, with torch's NotImplementedError
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
bool_ = dtype("bool", np.bool_)
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)

# torch's aliases
half, float, double = float16, float32, float64  # noqa: A001 - torch's names
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (
    float16,
    bfloat16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bool_,
    complex64,
    complex128,
)
REAL = ALL[:-2]
BAREBONES = (uint16, uint32, uint64)
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}
# the storage dtypes numpy's promotion does not order as torch's (c10::promoteTypes):
# bfloat16 with float16 is float32, with any other float the wider of the two
_FLOAT_RANK = {float16: 1, bfloat16: 1, float32: 2, float64: 3}
_BY_NUMPY = {d.numpy: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}

_default_float = float32

# set by ``_bfloat16.py``: called when a bfloat16 dtype is asked for, so that the kernel level
# starts computing bfloat16 operands in float32 (Note [bfloat16 is stored by ml_dtypes and
# computed in float32]); a program that never asks pays nothing per op
_on_bfloat16 = None
# set by ``_barebones.py``: called when a uint16/uint32/uint64 dtype is asked for, so that
# torch's refusals for them start (Note [The barebones unsigned dtypes])
_on_barebones = None

# torch's ScalarType names, as its error messages spell them (``"addmm_impl_cpu_" not
# implemented for 'Bool'``): the one table the kernels' and layers' messages read
SCALAR_TYPE_NAMES = {
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint64": "UInt64",
    "bool": "Bool",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}

# C++'s names of the scalar types, as torch's messages print them (``Expected out tensor to
# have dtype long int``, ``TensorOptions(dtype=c10::Half, ...)``)
CPP_TYPE_NAMES = {
    "float32": "float",
    "float64": "double",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "int64": "long int",
    "int32": "int",
    "int16": "short int",
    "int8": "signed char",
    "uint8": "unsigned char",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "bool": "bool",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def from_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The gradstack dtype of a numpy dtype; TypeError for types gradstack does not store.

    >>> from_numpy_dtype(np.dtype("float64"))
    gradstack.float64
    """
    try:
        d = _BY_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        shown = np.dtype(np_dtype) if _is_dtype_like(np_dtype) else repr(np_dtype)
        raise TypeError(
            f"gradstack does not support numpy dtype {shown}; "
            f"supported: {', '.join(d.name for d in ALL)}. Convert with .astype(np.float32) "
            f"(or another supported dtype) first."
        ) from None
    if d is bfloat16 and _on_bfloat16 is not None:
        _on_bfloat16()
    elif d in BAREBONES and _on_barebones is not None:
        _on_barebones()
    return d


def _is_dtype_like(x) -> bool:
    try:
        np.dtype(x)
    except TypeError:
        return False
    return True


def as_dtype(x, name=None) -> dtype:
    """A ``dtype=`` argument as a gradstack dtype: a gradstack dtype, or the Python types
    ``float`` (float64, as torch's double), ``int`` (int64) and ``bool``.

    Anything else (a string such as ``"float32"``, a numpy dtype) is a TypeError, as in
    torch; ``name`` names the function in the message.

    >>> as_dtype(float)
    gradstack.float64
    """
    if isinstance(x, dtype):
        if x is bfloat16 and _on_bfloat16 is not None:
            _on_bfloat16()
        elif x in BAREBONES and _on_barebones is not None:
            _on_barebones()
        return x
    if x is builtins_float:
        return float64
    if x is builtins_int:
        return int64
    if x is builtins_bool:
        return bool_
    where = f"{name}(): " if name else ""
    hint = f" (use gradstack.{x})" if isinstance(x, str) and x in _BY_NAME else ""
    raise TypeError(
        f"{where}argument 'dtype' must be gradstack.dtype, not {type(x).__name__}{hint}"
    )


import builtins as _builtins  # noqa: E402

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d) -> None:
    """Set the dtype used for Python floats: float32 or float64 (or float16, bfloat16)."""
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError(
            "invalid dtype object: only floating-point types are supported as the default type"
        )
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: only floating-point types are allowed, got {d}")
    _default_float = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both fit in, floats winning over integers,
    complex over floats (a complex result keeps the wider float's precision).

    >>> promote_types(int32, float16)
    gradstack.float16
    >>> promote_types(float64, complex64)
    gradstack.complex128
    """
    for position, value in enumerate((a, b), 1):
        if not isinstance(value, dtype):
            raise TypeError(
                f"promote_types(): argument 'type{position}' (position {position}) must be "
                f"gradstack.dtype, not {type(value).__name__}"
            )
    if a is b:
        return a
    if (a in BAREBONES and not b.is_floating_point) or (b in BAREBONES and not a.is_floating_point):
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
            f"{SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}"
        )
    if a._category == _COMPLEX or b._category == _COMPLEX:
        # Note [Complex promotion keeps the wider precision]: torch promotes float64 with
        # complex64 to complex128 (numpy agrees), and float16 or any integer with
        # complex64 to complex64 (numpy would give complex128 for int64)
        if a._category == _FLOAT or b._category == _FLOAT:
            real = a if a._category == _FLOAT else b  # bfloat16's parts are complex64's
            other = b if real is a else a
            return from_numpy_dtype(np.promote_types(_TO_COMPLEX[real].numpy, other.numpy))
        if a._category == b._category:
            return a if a.itemsize >= b.itemsize else b
        return a if a._category > b._category else b
    if a._category != b._category:
        return a if a._category > b._category else b
    if a._category == _FLOAT and (a is bfloat16 or b is bfloat16):
        ra, rb = _FLOAT_RANK[a], _FLOAT_RANK[b]
        return float32 if ra == rb else (a if ra > rb else b)
    return from_numpy_dtype(np.promote_types(a.numpy, b.numpy))


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _COMPLEX:
        return higher
    if lower._category == _COMPLEX:
        # torch keeps the precision of a floating ``higher``: float64 tensor * 1j is
        # complex128, float32 tensor * complex128 zero-dim tensor is complex64
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value) -> dtype:
    """The dtype torch gives a Python number when it takes part in an operation."""
    if isinstance(value, _builtins.bool):
        return bool_
    if isinstance(value, _builtins.int):
        return int64
    if isinstance(value, _builtins.float):
        return _default_float
    if isinstance(value, _builtins.complex):
        return _default_float.to_complex()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"expected a tensor or a Python number, got {type(value).__name__}")


def result_type(operands) -> dtype:
    """torch.result_type over ``(dtype, ndim)`` pairs and Python numbers.

    Parameters
    ----------
    operands : iterable
        Each item is either ``(dtype, ndim)`` for a tensor, or a Python number.

    Examples
    --------
    >>> result_type([(int64, 1), 2.5])
    gradstack.float32
    >>> result_type([(float32, 1), (float64, 0)])
    gradstack.float32
    """
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        if isinstance(op, tuple):
            dt, ndim = op
            if ndim:
                dim_result = dt if dim_result is None else promote_types(dim_result, dt)
            else:
                zero_result = dt if zero_result is None else promote_types(zero_result, dt)
        else:
            dt = scalar_dtype(op)
            wrapped_result = dt if wrapped_result is None else promote_types(wrapped_result, dt)
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))
