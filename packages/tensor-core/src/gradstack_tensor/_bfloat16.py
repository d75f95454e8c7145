"""bfloat16 tensors: stored as ml_dtypes' numpy bfloat16, computed in float32.

Note [bfloat16 is stored by ml_dtypes and computed in float32]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``gradstack.bfloat16`` tensors hold arrays of the ``ml_dtypes`` package's bfloat16, a numpy
dtype (1 sign, 8 exponent and 7 mantissa bits: float32's range at 3 significant digits),
so their storage, views, copies, indexing and printing are numpy's as for any dtype.  Its
numpy kind is ``"V"``, not ``"f"``, and numpy's own loops on it round after every step (a
sum of 1000 ones would stop at 256), so gradstack does not compute with them: torch's CPU
kernels compute a bfloat16 op in float32 (its "opmath" type) and round each result to
bfloat16 once, sums and means accumulating in float32, and gradstack does the same, for
every op in one place.

Once the first bfloat16 dtype is asked for (``dtypes._on_bfloat16``), the kernel level
(``_dispatch.pyx``'s ``_run_marked``, below every layer, so autograd records the op as
usual and the backward formulas' ops come here again) asks whether an argument is a
bfloat16 tensor and, if so, runs :func:`_run_in_float32`:

- an op that only moves or aliases data (a view, ``to``, ``clone``, ``copy_``, an index
  assignment ...) runs its kernel on the bfloat16 arrays (numpy moves them as they are);
- every other op runs its kernel on float32 copies of the bfloat16 tensors (a ``dtype=``
  of bfloat16 becomes float32), and its float32 results are rounded to bfloat16 when
  torch's result would be bfloat16: the op's ``dtype=`` when it has one, else torch's
  promotion of the operands (``bf16 + float16`` is float32, ``bf16 + 1.5`` is bfloat16;
  the normalisations keep their input's dtype whatever their weights' dtype, as torch's
  mixed-type CPU kernels);
- an in-place op on a bfloat16 tensor writes its float32 result back, rounded, into the
  tensor's memory (views see it) and bumps its version once.

A program that never asks for bfloat16 pays one flag test per op.  The C kernels never see
a bfloat16 array, so none of them can misread one.

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([1.0, 2.0, 3.0], dtype=gt.bfloat16)
>>> (x / 3).tolist()
[0.333984375, 0.66796875, 1.0]
>>> gt.ones(1000, dtype=gt.bfloat16).sum().item()
1000.0
"""

from __future__ import annotations

import builtins

import numpy as np

from . import dtypes as _dt
from ._dispatch import note_bfloat16_storage
from ._out import map_tensors
from ._tensor import Tensor, _wrap
from ._tensor import _data as data_of

__all__ = ["BFLOAT16", "is_bfloat16_array"]

BFLOAT16 = _dt.bfloat16.numpy
_FLOAT32 = np.dtype(np.float32)

# ops whose kernels only move or alias data: numpy does that on bfloat16 arrays as on any
_NATIVE = frozenset(
    {
        "to_dtype",
        "clone",
        "contiguous",
        "copy_",
        "detach",
        "alias",
        "fill_",
        "zero_",
        "setitem_",
        "getitem",
        "expand",
        "expand_as",
        "view",
        "reshape",
        "flatten",
        "permute",
        "transpose",
        "t",
        "squeeze",
        "unsqueeze",
        "select",
        "narrow",
        "split",
        "chunk",
        "unbind",
        "diagonal",
        "unfold",
    }
)

# ops whose result has their input's dtype whatever the dtype of their weights (torch's
# mixed-type CPU kernels: a bfloat16 input with float32 weight and bias gives bfloat16)
_INPUT_DTYPE = frozenset({"layer_norm", "batch_norm"})


# ops torch 2.13 has no bfloat16 kernel for: its exception and words
_REFUSED = {
    "linalg_cholesky": (NotImplementedError, "\"cholesky_cpu\" not implemented for 'BFloat16'"),
    "linalg_det": (NotImplementedError, "\"lu_cpu\" not implemented for 'BFloat16'"),
    "linalg_solve": (NotImplementedError, "\"lu_cpu\" not implemented for 'BFloat16'"),
    "linalg_svd": (NotImplementedError, "\"linalg_svd_cpu\" not implemented for 'BFloat16'"),
    "linalg_inv": (RuntimeError, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
    "linalg_logabsdet": (
        RuntimeError,
        "linalg.slogdet: Low precision dtypes not supported. Got BFloat16",
    ),
    "fft_c2c": (RuntimeError, "Unsupported dtype BFloat16"),
    "fft_r2c": (RuntimeError, "Unsupported dtype BFloat16"),
    "fft_c2r": (RuntimeError, "Unsupported dtype BFloat16"),
    "view_as_complex": (
        RuntimeError,
        "view_as_complex is only supported for half, float and double tensors, but got a "
        "tensor of scalar type: BFloat16",
    ),
    "polar": (
        RuntimeError,
        "Expected both inputs to be Half, Float or Double tensors but got BFloat16 and BFloat16",
    ),
    "complex": (
        RuntimeError,
        "Expected both inputs to be Half, Float or Double tensors but got BFloat16 and BFloat16",
    ),
}


# Note [bfloat16 add and sub round their scalar]: torch's add, sub and rsub of a bfloat16
# tensor round a number operand, ``alpha`` and a 0-d tensor of another dtype to bfloat16
# first (``x - 0.3`` subtracts 0.30078125), and then compute in float32; mul and div
# compute with the number as it is (as torch's float16, _elementwise.pyx's Note [A float16
# tensor and a scalar compute in float32]).  18% of ``x - 0.3`` differed otherwise.
_SCALAR_IN_BFLOAT16 = frozenset({"add", "add_", "sub", "sub_", "rsub"})


# Note [bfloat16 ops round their other operands]: torch's TensorIterator casts each operand
# of a bfloat16 result to bfloat16 before its kernel reads it, so a number or a 0-d float32
# tensor operand of fmod, remainder, atan2 or pow (``s ** x``, ``x ** tensor(s)``) counts
# as its bfloat16 rounding (0.7978 as 0.796875).  mul and div read their second operand
# unrounded (their kernels take a scalar second operand as it is, in float), but a 0-d
# first operand is cast like any other.  Half of ``fmod(x, 0.7978)`` and a quarter of
# ``tensor(0.7978) * x`` (the tanh GELU's ``sqrt(tensor(2 / pi)) * (...)``) were off.
# The comparisons too: ``x == 0.7978`` is True where x is 0.796875, as torch's.
_OPERANDS_IN_BFLOAT16 = frozenset(
    {"fmod", "fmod_", "remainder", "remainder_", "atan2", "atan2_", "pow", "pow_"}
    | {f"{c}{s}" for c in ("eq", "ne", "lt", "le", "gt", "ge") for s in ("", "_")}
)
_FIRST_IN_BFLOAT16 = frozenset({"mul", "div"})


def _scalar_in_bfloat16(a):
    """A number or 0-d tensor operand of add/sub rounded to bfloat16 (in float32), as
    torch's (Note [bfloat16 add and sub round their scalar])."""
    if isinstance(a, (builtins.int, builtins.float)) and not isinstance(a, builtins.bool):
        return float(np.float32(a).astype(BFLOAT16))
    if isinstance(a, Tensor):
        d = data_of(a)
        if d.ndim == 0 and d.dtype.kind == "f":
            return _wrap(d.astype(BFLOAT16).astype(d.dtype))
    return a


# Note [bfloat16 pow by a number rounds as torch's]: torch's bfloat16 ``pow(x, number)``
# first rounds the exponent to bfloat16 (``x ** 1.1`` is ``x ** 1.1015625``), then takes
# its float kernel's shortcuts in bfloat16 arithmetic: ``x ** 3`` is ``x * x * x`` and
# ``x ** -2`` is ``1 / (x * x)``, each product rounded to bfloat16, so the square is
# rounded before the last step; any other exponent is a float pow rounded once.  In
# float32 with one final rounding, 22% of ``x ** 3`` (LLMs-from-scratch's GELU in a
# bfloat16 model changed its greedy tokens) and 28% of ``x ** 1.1`` were an ulp off.
_POW_BY_NUMBER = frozenset({"pow", "pow_"})


def _is_number(a) -> bool:
    return isinstance(a, (builtins.int, builtins.float)) and not isinstance(a, builtins.bool)


def _pow_by_number(op, args):
    """``pow``/``pow_`` of a bfloat16 tensor by a number, or None to run the float32
    kernel with ``args`` (Note [bfloat16 pow by a number rounds as torch's])."""
    x, exponent = args[0], args[1]
    e = float(np.float32(exponent).astype(BFLOAT16))
    if e not in (3.0, -2.0):
        return None if e == exponent else (x, e, *args[2:])
    a = data_of(x).astype(_FLOAT32)
    with np.errstate(all="ignore"):
        square = (a * a).astype(BFLOAT16).astype(_FLOAT32)
        out = (square * a if e == 3.0 else np.float32(1.0) / square).astype(BFLOAT16)
    if op.inplace:
        np.copyto(data_of(x), out, casting="unsafe")
        x._bump_version(op.name)
        return x
    return _wrap(out)


def is_bfloat16_array(a) -> bool:
    """Whether the numpy array ``a`` holds bfloat16."""
    return a.dtype == BFLOAT16


def _has_bfloat16(args) -> bool:
    """Whether an argument (or an element of a list/tuple argument) is a bfloat16 tensor."""
    for a in args:
        if type(a) in (tuple, list):
            for t in a:
                if isinstance(t, Tensor) and data_of(t).dtype == BFLOAT16:
                    return True
        elif isinstance(a, Tensor) and data_of(a).dtype == BFLOAT16:
            return True
    return False


def _up(t, operands: list):
    """``t`` for the float32 kernel (a bfloat16 tensor as a float32 copy), noting its
    ``(dtype, ndim)`` in ``operands`` for torch's promotion."""
    a = data_of(t)
    if a.dtype == BFLOAT16:
        operands.append((_dt.bfloat16, a.ndim))
        return _wrap(a.astype(_FLOAT32))
    operands.append((_dt.from_numpy_dtype(a.dtype), a.ndim))
    return t


def _round_tensor(t):
    a = data_of(t)
    return _wrap(a.astype(BFLOAT16)) if a.dtype == _FLOAT32 else t


def _round(out):
    """The op's float32 results rounded to bfloat16 (other results as they are)."""
    return map_tensors(_round_tensor, out)


def _nextafter_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The bfloat16 next to ``x`` towards ``y``: a step of the bit pattern, as C's
    ``nextafter`` on torch's ``c10::BFloat16`` (computed in float32 it would step by a
    float32 ulp and round back to ``x``)."""
    x, y = np.broadcast_arrays(x, y)
    bits = x.view(np.uint16).astype(np.int32)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    up = (yf > xf) == (xf > 0)
    stepped = np.where(up, bits + 1, bits - 1)
    tiny = np.where(yf > 0, 0x0001, 0x8001)  # from a zero: the least subnormal, y's sign
    out = np.where(xf == 0, tiny, stepped)
    out = np.where(xf == yf, y.view(np.uint16), out)
    out = out.astype(np.uint16).view(BFLOAT16)
    return np.where(np.isnan(xf) | np.isnan(yf), np.float32("nan"), out).astype(BFLOAT16)


def _nextafter(op, args):
    x, y = args[0], args[1]
    out = _nextafter_bits(data_of(x), data_of(y))
    if op.inplace:
        np.copyto(data_of(x), out.reshape(data_of(x).shape), casting="unsafe")
        x._bump_version(op.name)
        return x
    return _wrap(np.array(out, dtype=BFLOAT16))


def _run_in_float32(op, args):
    """An op with a bfloat16 tensor among its arguments (Note [bfloat16 is stored by
    ml_dtypes and computed in float32])."""
    if op.is_view or op.name in _NATIVE:
        return op.run_own_kernel(*args)
    if op.name in ("nextafter", "nextafter_") and all(
        isinstance(a, Tensor) and data_of(a).dtype == BFLOAT16 for a in args[:2]
    ):
        return _nextafter(op, args)
    if (
        op.name in _POW_BY_NUMBER
        and len(args) >= 2
        and _is_number(args[1])
        and isinstance(args[0], Tensor)
        and data_of(args[0]).dtype == BFLOAT16
    ):
        done = _pow_by_number(op, args)
        if isinstance(done, Tensor):
            return done
        if done is not None:
            args = done
    if op.name in _REFUSED and not (op.name == "linalg_det" and data_of(args[0]).size == 0):
        error, words = _REFUSED[op.name]  # (torch's det of empty matrices is 1, no kernel)
        raise error(f"{words} (compute in float32: .float() first)")
    operands: list = []
    explicit = None
    up = []
    for a in args:
        if isinstance(a, Tensor):
            up.append(_up(a, operands))
        elif type(a) in (tuple, list):
            up.append(type(a)(_up(t, operands) if isinstance(t, Tensor) else t for t in a))
        elif isinstance(a, _dt.dtype):
            explicit = a
            up.append(_dt.float32 if a is _dt.bfloat16 else a)
        else:
            if isinstance(a, (builtins.bool, builtins.int, builtins.float)):
                operands.append(a)
            up.append(a)
    if explicit is not None:
        to_bfloat16 = explicit is _dt.bfloat16
    elif op.name in _INPUT_DTYPE:
        to_bfloat16 = operands[0][0] is _dt.bfloat16
    else:
        to_bfloat16 = _dt.result_type(operands) is _dt.bfloat16
    # (an in-place op rounds its scalar when the tensor written is bfloat16; a float32 or
    # float64 tensor's add_(bfloat16 tensor, alpha=...) computes alpha in its own dtype)
    written_bfloat16 = (
        op.inplace and isinstance(args[0], Tensor) and data_of(args[0]).dtype == BFLOAT16
    )
    if op.name in _SCALAR_IN_BFLOAT16 and (to_bfloat16 or written_bfloat16):
        up = [_scalar_in_bfloat16(a) for a in up]
    elif op.name in _OPERANDS_IN_BFLOAT16 and (to_bfloat16 or op.inplace):
        up = [_scalar_in_bfloat16(a) for a in up]
    elif op.name in _FIRST_IN_BFLOAT16 and to_bfloat16 and up:
        up[0] = _scalar_in_bfloat16(up[0])
    out = op.run_own_kernel(*up)
    if op.inplace:
        target = args[0]
        if isinstance(target, Tensor) and data_of(target).dtype == BFLOAT16:
            np.copyto(data_of(target), data_of(up[0]), casting="unsafe")
            target._bump_version(op.name)
            return target
        return out
    return _round(out) if to_bfloat16 else out


def _note_bfloat16() -> None:
    note_bfloat16_storage(_has_bfloat16, _run_in_float32)
    _dt._on_bfloat16 = None  # once is enough


_dt._on_bfloat16 = _note_bfloat16
