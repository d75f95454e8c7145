"""Kernels of the three discrete Fourier transforms behind ``torch.fft`` (``fft.py``):
torch's ``_fft_c2c``, ``_fft_r2c`` and ``_fft_c2r``, on numpy.fft.

Each takes torch's arguments: the transformed ``dim`` (a tuple), the normalisation as
torch's enum (0: none, 1: by ``1/sqrt(n)``, 2: by ``1/n``, ``n`` the product of the
signal sizes), and ``forward`` (c2c), ``onesided`` (r2c) or ``last_dim_size`` (c2r).

Note [numpy.fft computes in double precision]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
numpy.fft (pocketfft, as torch's CPU backend) transforms in float64/complex128 whatever
the input; the result is cast to the input's precision, so a float32 input gives a
complex64 result as torch's.  Its values are the correctly rounded double result, which
differs from torch's single-precision pocketfft by a few float32 ulps.
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
    # unnormalised both ways ("forward" norm on the inverse leaves it unscaled)
    if forward:
        r = np.fft.fftn(x, axes=dim, norm="backward")
    else:
        r = np.fft.ifftn(x, axes=dim, norm="forward")
    return _finish(_scale(r, normalization, _signal_size(x.shape, dim)), _complex_of(x))


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
