"""``gradstack_tensor.testing`` (``gradstack.testing``): torch.testing's ``assert_close`` and
``make_tensor``.

``assert_close(actual, expected)`` passes when the two are close: tensors (or tensor-likes
such as numpy arrays, compared with their own kind) of the same shape, device and dtype
whose elements satisfy ``|actual - expected| <= atol + rtol * |expected|`` (NaN equal to
NaN only with ``equal_nan``), Python numbers, ``None``, booleans, and sequences and
mappings of them, compared element by element.  Otherwise it raises torch's
``AssertionError`` with torch's message: the mismatched elements, the greatest absolute
and relative differences with their indices, and the item of a sequence or mapping where
the failure occurred.  The default tolerances are torch's per dtype (the loosest of the
two dtypes when ``check_dtype=False``): float16 ``rtol=1e-3, atol=1e-5``, float32
``1.3e-6, 1e-5``, float64 ``1e-7, 1e-7``, exact for integers and bool.

Note [The mismatch statistics are computed in the compared dtype]
torch computes the differences of its message in the dtype of the compared tensors (after
promotion), integers and bool upcast to int64, and the relative difference as that
difference divided by ``|expected|`` in the tensors' floating dtype (``inf`` where the
expected element is 0).  The message prints the float32 difference converted to a Python
float (``0.20000000298023224``), so the numbers here are computed the same way, with
numpy's IEEE arithmetic in the same dtype.

Examples
--------
>>> import gradstack_tensor as gt
>>> assert_close(gt.tensor([1.0, 2.0]), gt.tensor([1.0, 2.0 + 1e-7]))
>>> assert_close(gt.tensor([1.0, 2.0, 3.0]), gt.tensor([1.0, 2.5, 3.1]))
Traceback (most recent call last):
  ...
AssertionError: Tensor-likes are not close!
<BLANKLINE>
Mismatched elements: 2 / 3 (66.7%)
Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
>>> make_tensor(2, 3, dtype=gt.float32, device="cpu", low=0, high=1).shape
gradstack.Size([2, 3])
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from typing import Any

import numpy as np

from ._tensor import Tensor, _data

__all__ = ["assert_close", "make_tensor", "assert_allclose"]


class _Fail(Exception):
    """A comparison failed: the exception type to raise, its message and the item."""

    def __init__(self, kind: type, msg: str, id: tuple = ()):
        super().__init__(msg)
        self.kind, self.msg, self.id = kind, msg, id

    def to_error(self, msg=None) -> Exception:
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += (
                    f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
                )
            msg = msg(generated) if callable(msg) else generated
        return self.kind(msg)


class _Unsupported(Exception):
    """This kind of pair does not handle these inputs."""


def _precisions() -> dict:
    from . import dtypes as dt

    return {
        dt.float16: (0.001, 1e-5),
        dt.bfloat16: (0.016, 1e-5),
        dt.float32: (1.3e-6, 1e-5),
        dt.float64: (1e-7, 1e-7),
    }


def _tolerances(dtypes, rtol, atol, id) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        raise _Fail(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}.",
            id,
        )
    if rtol is not None:
        return rtol, atol
    table = _precisions()
    rtols, atols = zip(*[table.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(
    identifier, default, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol
) -> str:
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            text += f" (up to {tol} allowed)"
        return text + "\n"

    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(
        None,
        "Scalars",
        f"Expected {expected} but got {actual}.",
        abs_diff,
        None,
        atol,
        rel_diff,
        None,
        rtol,
    )


def _tensor_msg(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol, atol) -> str:
    """Note [The mismatch statistics are computed in the compared dtype]."""
    a, e = _bfloat16_as_float32(a), _bfloat16_as_float32(e)
    n = matches.size
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    floating = a.dtype.kind == "f"
    if not floating:
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        divisor_dtype = a.dtype if floating else np.float32
        rel_diff = abs_diff.astype(divisor_dtype) / np.abs(ef).astype(divisor_dtype)
        rel_diff[mf] = 0

    def unravel(flat):
        return tuple(int(i) for i in np.unravel_index(flat, matches.shape)) if matches.shape else ()

    def greatest(x):
        flat = int(np.argmax(x))  # (torch.max: the first NaN, else the first maximum)
        return x[flat].item(), unravel(flat)

    abs_max, abs_idx = greatest(abs_diff)
    rel_max, rel_idx = greatest(rel_diff)
    return _mismatch_msg(
        None, "Tensor-likes", extra, abs_max, abs_idx, atol, rel_max, rel_idx, rtol
    )


def _bfloat16_as_float32(a: np.ndarray) -> np.ndarray:
    """A bfloat16 array's values in float32 (exact; numpy kind "V" computes nothing)."""
    from .dtypes import bfloat16

    return a.astype(np.float32) if a.dtype == bfloat16.numpy else a


def _isclose(a: np.ndarray, e: np.ndarray, rtol, atol, equal_nan) -> np.ndarray:
    """torch.isclose in the compared dtype (bfloat16's values in float32)."""
    a, e = _bfloat16_as_float32(a), _bfloat16_as_float32(e)
    if a.dtype.kind not in "fc":
        if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
            return a == e
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        return np.abs(a64 - e64) <= atol + rtol * np.abs(e64)
    with np.errstate(all="ignore"):
        close = a == e
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
        bound = a.dtype.type(atol) + a.dtype.type(rtol) * np.abs(e)
        diff = np.abs(a - e)
        close |= np.isfinite(diff) & (diff <= bound)
    return close


class _TensorPair:
    def __init__(
        self,
        actual,
        expected,
        id,
        *,
        allow_subclasses=True,
        rtol=None,
        atol=None,
        equal_nan=False,
        check_device=True,
        check_dtype=True,
        check_layout=True,
        check_stride=False,
    ):
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            raise _Unsupported
        if not allow_subclasses and type(actual) is not type(expected):
            raise _Unsupported
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        self.actual, self.expected, self.id = actual, expected, id
        self.rtol, self.atol = _tolerances((actual.dtype, expected.dtype), rtol, atol, id)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype, self.check_stride = (
            check_device,
            check_dtype,
            check_stride,
        )

    @staticmethod
    def _to_tensor(x) -> Tensor:
        if isinstance(x, Tensor):
            return x
        from .creation import as_tensor

        try:
            return as_tensor(x)
        except Exception:
            raise _Unsupported from None

    def _attribute(self, name, a, e):
        raise _Fail(
            AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.", self.id
        )

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if a.shape != e.shape:
            self._attribute("shape", a.shape, e.shape)
        if self.check_stride and a.stride() != e.stride():
            self._attribute("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            self._attribute("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            self._attribute("dtype", a.dtype, e.dtype)
        if a.dtype != e.dtype:
            from .dtypes import promote_types

            common = promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        x, y = np.asarray(_data(a.detach())), np.asarray(_data(e.detach()))
        matches = _isclose(x, y, self.rtol, self.atol, self.equal_nan)
        if matches.all():
            return
        if x.ndim == 0:
            msg = _scalar_msg(x.item(), y.item(), self.rtol, self.atol)
        else:
            msg = _tensor_msg(x, y, matches, self.rtol, self.atol)
        raise _Fail(AssertionError, msg, self.id)


_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _NumberPair:
    def __init__(
        self, actual, expected, id, *, rtol=None, atol=None, equal_nan=False, check_dtype=False, **_
    ):
        kinds = (int, float, complex, np.number)
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        from . import dtypes as dt

        names = [_NUMBER_DTYPES.get(type(x), "int64") for x in (actual, expected)]
        dtypes = [getattr(dt, n, None) for n in names]
        self.actual, self.expected, self.id = actual, expected, id
        self.rtol, self.atol = _tolerances(dtypes, rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            raise _Fail(
                AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", self.id
            )
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(e):
            return
        raise _Fail(AssertionError, _scalar_msg(a, e, self.rtol, self.atol), self.id)


class _BooleanPair:
    def __init__(self, actual, expected, id, **_):
        kinds = (bool, np.bool_)
        if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
            raise _Unsupported
        self.actual, self.expected, self.id = bool(actual), bool(expected), id

    def compare(self) -> None:
        if self.actual is not self.expected:
            raise _Fail(
                AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}", self.id
            )


class _NonePair:
    def __init__(self, actual, expected, id, **_):
        if not (actual is None or expected is None):
            raise _Unsupported
        self.actual, self.expected, self.id = actual, expected, id

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            raise _Fail(
                AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.id
            )


_PAIRS = (_NonePair, _BooleanPair, _NumberPair, _TensorPair)


def _pairs(actual, expected, id, options) -> list:
    seq = collections.abc.Sequence
    if (
        isinstance(actual, seq)
        and not isinstance(actual, str)
        and isinstance(expected, seq)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Fail(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                id,
            )
        out = []
        for i in range(len(actual)):
            out.extend(_pairs(actual[i], expected[i], (*id, i), options))
        return out
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Fail(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                f"Additional keys in the actual mapping: {sorted(ak - ek)}",
                id,
            )
        keys: Any = ak
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        out = []
        for k in keys:
            out.extend(_pairs(actual[k], expected[k], (*id, k), options))
        return out
    for kind in _PAIRS:
        try:
            return [kind(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _Fail(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.",
        id,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg=None,
) -> None:
    """Raise torch's ``AssertionError`` unless ``actual`` and ``expected`` are close (see
    the module's docstring); ``msg`` replaces the message (a string) or rewrites it (a
    callable of the generated message).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> assert_close(gt.tensor([1, 2]), gt.tensor([1, 3]), msg="differ")
    Traceback (most recent call last):
      ...
    AssertionError: differ
    >>> assert_close([1.0, {"a": 2}], (1.0, {"a": 2}))
    """
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        for pair in _pairs(actual, expected, (), options):
            pair.compare()
    except _Fail as failure:
        raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg="") -> None:
    """torch's deprecated ``assert_allclose`` (with its FutureWarning): ``assert_close``
    with ``check_dtype=False`` and its own default tolerances."""
    from . import dtypes as dt
    from .creation import tensor

    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `torch.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {dt.float16: (1e-3, 1e-3), dt.float32: (1e-4, 1e-5), dt.float64: (1e-5, 1e-8)}
        rtols, atols = zip(*[table.get(d, (0.0, 0.0)) for d in (actual.dtype, expected.dtype)])
        rtol, atol = max(rtols), max(atols)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_dtype=False,
        msg=msg or None,
    )


def make_tensor(
    *shape,
    dtype,
    device,
    low: float | None = None,
    high: float | None = None,
    requires_grad: bool = False,
    noncontiguous: bool = False,
    exclude_zero: bool = False,
    memory_format=None,
) -> Tensor:
    """A tensor of ``shape`` with values drawn uniformly from ``[low, high)`` (torch's
    defaults per dtype: ``[-9, 9)`` for floats, ``[-9, 10)`` for signed integers, ``[0,
    10)`` for ``uint8``, ``[0, 2)`` for bool), drawn as torch's are (``randint`` or
    ``uniform_``: the same values after the same ``manual_seed``); ``noncontiguous``
    gives a view of every other element of a wider tensor, ``exclude_zero`` replaces
    zeros by 1 (integers) or the dtype's ``tiny``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> t = make_tensor((2, 3), dtype=gt.int64, device="cpu", low=1, high=4)
    >>> bool(((t >= 1) & (t < 4)).all())
    True
    >>> make_tensor(3, 4, dtype=gt.float64, device="cpu", noncontiguous=True).is_contiguous()
    False
    """
    from . import dtypes as dt
    from .creation import check_device, empty, randint
    from .numeric_info import finfo, iinfo

    check_device(device)  # (refuses a device gradstack has not)
    floating = dtype in (dt.float16, dt.bfloat16, dt.float32, dt.float64)
    integral = dtype in (dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64)
    boolean = dtype is dt.bool_

    def modify_low_high(low, high, lowest, highest, default_low, default_high):
        low = default_low if low is None else low
        high = default_high if high is None else high
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
        if low == high and floating:
            warnings.warn(
                "Passing `low==high` to `torch.testing.make_tensor` for floating or complex "
                "types is deprecated since 2.1 and will be removed in 2.3. Use "
                "`torch.full(...)` instead.",
                FutureWarning,
                stacklevel=3,
            )
        elif low >= high:
            raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
        elif high < lowest or low >= highest:
            raise ValueError(
                f"The value interval specified by `low` and `high` is [{low}, {high}), but "
                f"{dtype} only supports [{lowest}, {highest})"
            )
        low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
        if not floating:
            return math.ceil(low), math.ceil(high)
        return low, high

    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(
            "The parameters `noncontiguous` and `memory_format` are mutually exclusive, but "
            f"got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and (integral or boolean):
        raise ValueError(
            "`requires_grad=True` is not supported for boolean and integral dtypes, but got "
            f"dtype={dtype}"
        )
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if boolean:
        low, high = modify_low_high(low, high, 0, 2, 0, 2)
        result = randint(low, high, shape, dtype=dtype)
    elif integral:
        info = iinfo(dtype)
        highest = info.max + (1 if dtype is not dt.int64 else 0)
        low, high = modify_low_high(low, high, info.min, highest, -9, 10)
        result = randint(low, high, shape, dtype=dtype)
    elif floating:
        info = finfo(dtype)
        low, high = modify_low_high(low, high, info.min, info.max, -9, 9)
        result = empty(shape, dtype=dtype)
        if high - low >= info.max:
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
            "To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if not floating else finfo(dtype).tiny
    if floating:
        result.requires_grad_(requires_grad)
    return result
