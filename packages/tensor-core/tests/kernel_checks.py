"""What the kernel tests share (tensor-core's ``test_kernels.py``, graph-engine's
``test_backward_kernels.py``): dtypes, sizes and tolerances, random arrays, and the check
that a kernel's results do not depend on the number of threads (the ``threads`` fixture
is the workspace conftest's).  Imported as ``gradstack_tensor_tests_kernel_checks`` (Note
[Test helpers import by name])."""

from __future__ import annotations

import numpy as np

DTYPES = [np.float32, np.float64]
BIG = 1 << 17  # above PARALLEL_THRESHOLD
SIZES = [0, 1, 6, 1000, BIG]
# A few ulps: the kernels do numpy's operations in numpy's order, but a compiler may fuse
# a multiply and an add (FMA) on some targets.
TIGHT = {np.float32: dict(rtol=4e-7, atol=0), np.float64: dict(rtol=1e-15, atol=0)}


def uniform(rng, shape, dtype, low=-3.0, high=3.0):
    """An ndarray (also for shape ()) of values drawn uniformly from [low, high)."""
    return np.asarray(rng.uniform(low, high, size=shape), dtype=dtype)


def run_on_threads(set_threads, fn, counts=(1, 2)):
    """fn() once per thread count; the results, as lists of arrays."""
    results = []
    for count in counts:
        set_threads(count)
        out = fn()
        results.append(list(out) if isinstance(out, tuple) else [out])
    return results


def assert_bitwise_equal(results):
    first, *rest = results
    for other in rest:
        for a, b in zip(first, other, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()


def random_operand_pairs(seed=54321, count=2000):
    """``count`` pairs of operands, valid and invalid mixed: None, a float64 array of another
    shape, or arrays of one shape, float32 mostly, else of a random dtype (float16, int64,
    bool ...), for the tests that a kernel gives numpy's result or a clean error."""
    rng = np.random.default_rng(seed)
    shapes = [(), (1,), (4,), (2, 2), (0,), (2, 0)]
    dtypes = [np.float32, np.float64, np.float16, np.int64, bool]
    for _ in range(count):
        shape = shapes[rng.integers(len(shapes))]
        operands = []
        for _ in range(2):
            kind = rng.integers(10)
            if kind == 0:
                operands.append(None)
            elif kind == 1:
                operands.append(rng.uniform(size=shapes[rng.integers(len(shapes))]))
            else:
                dtype = dtypes[0] if kind < 6 else dtypes[rng.integers(len(dtypes))]
                operands.append(np.asarray(rng.uniform(-2, 2, size=shape)).astype(dtype))
        yield operands
