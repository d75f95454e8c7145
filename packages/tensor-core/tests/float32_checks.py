"""What the tests of the float32 SIMD loops share: the distance of two float32 arrays in
ulps, and a run with one of the loops' copies switched on (plain, AVX2, AVX-512).
Imported as ``gradstack_tensor_tests_float32_checks`` (Note [Test helpers import by name]
in the workspace's conftest.py)."""

from __future__ import annotations

import contextlib

import numpy as np
from gradstack_tensor import _kernels

# (AVX2, AVX-512) switched on: the default copy, the AVX2 one, the AVX-512 one
SIMD_COPIES = [(False, False), (True, False), (True, True)]


def ulps(a, b):
    """|a - b| in float32 ulps (the bits as a monotonic integer line; -0.0 is +0.0)."""
    a = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    b = np.asarray(b, np.float32).view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    return np.abs(a - b)


@contextlib.contextmanager
def simd_copy(avx):
    """The kernels' AVX2 and AVX-512 switches set to ``avx`` (one of SIMD_COPIES) inside
    the block; restored afterwards."""
    old = (_kernels._avx2(), _kernels._avx512())
    try:
        _kernels._avx2(avx[0])
        _kernels._avx512(avx[1])
        yield
    finally:
        _kernels._avx2(old[0])
        _kernels._avx512(old[1])
