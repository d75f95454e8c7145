"""Kernels of the three discrete Fourier transforms behind ``torch.fft`` (``fft.py``):
torch's ``_fft_c2c``, ``_fft_r2c`` and ``_fft_c2r``, on numpy.fft.

Each takes torch's arguments: the transformed ``dim`` (a tuple), the normalisation as
torch's enum (0: none, 1: by ``1/sqrt(n)``, 2: by ``1/n``, ``n`` the product of the
signal sizes), and ``forward`` (c2c), ``onesided`` (r2c) or ``last_dim_size`` (c2r).

Note [numpy.fft's precision]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
numpy's complex64 c2c gives the complex128 transform rounded to complex64 (the same bits),
and takes longer than casting, transforming in complex128 in place (``out=`` its input)
and rounding: 1000 x 1000, one thread, CPU time, 14.1 ms against 8.9 ms (a fresh
complex128 result costs the difference back).  So ``fft_c2c`` does that for complex64 and
float32 inputs.  r2c and c2r call numpy on the input as it is (a double r2c is no
faster; numpy's complex64 c2r is 2.5x faster than its complex128 one).  Results are within
a few float32 ulps of torch's single-precision pocketfft; a float32 input gives a
complex64 result, as torch's.
"""

from __future__ import annotations

import math

import numpy as np

from ._dispatch import OPS
from ._tensor import _data, _wrap

__all__: list[str] = []

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


def _scale(r: np.ndarray, normalization: int, n: int) -> np.ndarray:
    if normalization == NORM_BY_N:
        r *= 1.0 / n if n else 1.0
    elif normalization == NORM_BY_ROOT_N:
        r *= 1.0 / math.sqrt(n) if n else 1.0
    return r


def _signal_size(shape, dim) -> int:
    return math.prod(shape[d] for d in dim)


def _complex_of(x: np.ndarray) -> np.dtype:
    return np.dtype(np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)


def _finish(r: np.ndarray, dtype) -> object:
    return _wrap(np.ascontiguousarray(r, dtype=dtype))


@OPS["fft_c2c"].set_kernel
def fft_c2c(input, dim, normalization, forward):
    x = _data(input)
    dim = tuple(dim)
    if not dim:
        return _wrap(x.copy())
    out_dtype = _complex_of(x)
    out = None
    if x.dtype in (np.complex64, np.float32):  # Note [numpy.fft's precision]
        x = out = x.astype(np.complex128)
    # unnormalised both ways ("forward" norm on the inverse leaves it unscaled)
    if forward:
        r = np.fft.fftn(x, axes=dim, norm="backward", out=out)
    else:
        r = np.fft.ifftn(x, axes=dim, norm="forward", out=out)
    return _finish(_scale(r, normalization, _signal_size(x.shape, dim)), out_dtype)


@OPS["fft_r2c"].set_kernel
def fft_r2c(input, dim, normalization, onesided):
    x = _data(input)
    dim = tuple(dim)
    if onesided:
        r = np.fft.rfftn(x, axes=dim, norm="backward")
    else:
        r = np.fft.fftn(x, axes=dim, norm="backward")
    return _finish(_scale(r, normalization, _signal_size(x.shape, dim)), _complex_of(x))


@OPS["fft_c2r"].set_kernel
def fft_c2r(input, dim, normalization, last_dim_size):
    x = _data(input)
    dim = tuple(dim)
    sizes = [x.shape[d] for d in dim[:-1]] + [int(last_dim_size)]
    r = np.fft.irfftn(x, s=sizes, axes=dim, norm="forward")
    real = np.float32 if x.dtype == np.complex64 else np.float64
    return _finish(_scale(r, normalization, math.prod(sizes)), real)
