"""The spectral windows of torch's top level: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` and ``kaiser_window``.

Each is a factory (``dtype``, ``layout``, ``device``, ``requires_grad``) of a 1-d tensor of
``window_length`` values: a symmetric window, or with ``periodic=True`` (the default, for
``stft``) the symmetric window of ``window_length + 1`` values without its last.

Note [Windows in torch's order of operations]
torch computes each window in the requested dtype, one in-place op after another
(``arange(N).mul_(2 * pi / (N - 1)).cos_().mul_(-beta).add_(alpha)`` for Hamming), so a
float32 window carries float32 roundings: ``hamming_window(5, False)[0]`` is
``0.08000001``, not ``0.08``.  The windows here run the same ops in the same order on
gradstack tensors, so they round as torch's (to an ulp: float32 ``cos`` is within one of
torch's).  The Kaiser window is computed in float64 with numpy's ``I0`` and rounded to the
dtype: torch's float32 kernel evaluates its Cephes series in float32, up to ~1e-6 from the
float64 value, so the float32 Kaiser window is the more accurate of the two by that much.

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.hann_window(4).tolist()
[0.0, 0.5, 1.0, 0.5]
>>> gt.bartlett_window(5, periodic=False).tolist()
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes as _dt
from ._tensor import Tensor, _data
from .creation import arange, ones

__all__ = [
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
]


def _options(name: str, window_length, dtype) -> _dt.dtype:
    """The window's dtype, with torch's checks of the length and the dtype."""
    if not isinstance(window_length, (int, np.integer)) or isinstance(window_length, bool):
        raise TypeError(
            f"{name}(): argument 'window_length' (position 1) must be int, not "
            f"{type(window_length).__name__}"
        )
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype, name)
    if not d.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(d.name, d.name)}, device=cpu, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
        )
    return d


# torch's C++ names of the dtypes, as its TensorOptions print them (the check that uses them
# refuses only the dtypes that are not floating point)
_CPP_NAMES = _dt.CPP_TYPE_NAMES


def _finish(window: Tensor, periodic: bool, requires_grad: bool) -> Tensor:
    out = window[:-1] if periodic else window
    if periodic:
        out = out.contiguous()
    return out.requires_grad_(True) if requires_grad else out


def _trivial(window_length: int, d, requires_grad: bool) -> Tensor | None:
    """The windows of 0 and 1 values (empty, and ``[1.]``), or None."""
    if window_length > 1:
        return None
    out = ones(window_length, dtype=d)
    return out.requires_grad_(True) if requires_grad else out


def hamming_window(
    window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None,
    device=None, pin_memory=False, requires_grad=False,
) -> Tensor:  # fmt: skip
    """``alpha - beta * cos(2 pi n / (N - 1))`` for ``n`` in ``0 .. N-1`` (``N`` the
    window's length, plus one when ``periodic``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in gt.hamming_window(4).tolist()]
    [0.08, 0.54, 1.0, 0.54]
    """
    d = _options("hamming_window", window_length, dtype)
    trivial = _trivial(window_length, d, requires_grad)
    if trivial is not None:
        return trivial
    n = window_length + int(bool(periodic))
    w = arange(n, dtype=d)
    w.mul_(math.pi * 2.0 / (n - 1)).cos_().mul_(-beta).add_(alpha)
    return _finish(w, bool(periodic), requires_grad)


def hann_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
    requires_grad=False,
) -> Tensor:  # fmt: skip
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``: the Hamming window with ``alpha = beta = 0.5``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.hann_window(5, periodic=False).tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    _options("hann_window", window_length, dtype)
    return hamming_window(
        window_length, periodic, 0.5, 0.5, dtype=dtype, requires_grad=requires_grad
    )


def blackman_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
    requires_grad=False,
) -> Tensor:  # fmt: skip
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in gt.blackman_window(5, periodic=False).tolist()]
    [-0.0, 0.34, 1.0, 0.34, -0.0]
    """
    d = _options("blackman_window", window_length, dtype)
    trivial = _trivial(window_length, d, requires_grad)
    if trivial is not None:
        return trivial
    n = window_length + int(bool(periodic))
    w = arange(n, dtype=d).mul_(math.pi / (n - 1))
    w = w.mul(4).cos_().mul_(0.08) - w.mul(2).cos_().mul_(0.5) + 0.42
    return _finish(w, bool(periodic), requires_grad)


def bartlett_window(
    window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
    requires_grad=False,
) -> Tensor:  # fmt: skip
    """The triangular window ``1 - |2 n / (N - 1) - 1|``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.bartlett_window(4).tolist()
    [0.0, 0.5, 1.0, 0.5]
    """
    d = _options("bartlett_window", window_length, dtype)
    trivial = _trivial(window_length, d, requires_grad)
    if trivial is not None:
        return trivial
    n = window_length + int(bool(periodic))
    w = arange(n, dtype=d).mul_(2.0 / (n - 1))
    first_half = ((n - 1) >> 1) + 1
    w[first_half:].mul_(-1).add_(2)
    return _finish(w, bool(periodic), requires_grad)


def kaiser_window(
    window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
    pin_memory=False, requires_grad=False,
) -> Tensor:  # fmt: skip
    """``I0(beta * sqrt(1 - ((n - a) / a) ** 2)) / I0(beta)`` with ``a = (N - 1) / 2``
    (``I0`` the modified Bessel function of order 0).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in gt.kaiser_window(5, periodic=False, beta=5.0).tolist()]
    [0.0367, 0.5529, 1.0, 0.5529, 0.0367]
    """
    d = _options("kaiser_window", window_length, dtype)
    trivial = _trivial(window_length, d, requires_grad)
    if trivial is not None:
        return trivial
    n = window_length + int(bool(periodic))
    a = (n - 1) / 2.0
    positions = _data(arange(n, dtype=d)).astype(np.float64)
    values = np.i0(beta * np.sqrt(np.abs(1 - ((positions - a) / a) ** 2))) / np.i0(beta)
    w = arange(n, dtype=d)
    _data(w)[...] = values
    return _finish(w, bool(periodic), requires_grad)
