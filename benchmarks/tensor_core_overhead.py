"""The cost of a small op through gradstack_tensor against the bare numpy call beneath it.

For each op (``a * b``, ``a / b``, ``a * 1.0001``, ``sin(a)``, ``a.sum()``) on 2x3 float32
arrays and on 1M-element (1024 x 1024) float32 arrays, this prints the median time of the
numpy call, of the same op through gradstack_tensor's public API, and their ratio (goal for
the small case: at most 1.5x)::

    python benchmarks/tensor_core_overhead.py
    python benchmarks/tensor_core_overhead.py --repeat 31

Only the public API is used (STYLE principle 14).  Threads are pinned to one before numpy
is imported, so neither side gets a second core.
"""

from __future__ import annotations

import os

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ[_var] = "1"  # before numpy starts its thread pools

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import gradstack_tensor as gt  # noqa: E402
import numpy as np  # noqa: E402

TARGET_SAMPLE_SECONDS = 0.002  # each sample repeats the call for about 2 ms


def _calibrate(fn):
    """How many calls of ``fn`` take about TARGET_SAMPLE_SECONDS."""
    fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= TARGET_SAMPLE_SECONDS / 4 or number >= 1 << 20:
            break
        number *= 4
    return max(1, int(number * TARGET_SAMPLE_SECONDS / max(elapsed, 1e-9)))


def paired_medians(fn_a, fn_b, repeat):
    """Median seconds per call of ``fn_a`` and of ``fn_b``, their samples interleaved so
    that drift in the machine's load reaches both columns alike."""
    n_a, n_b = _calibrate(fn_a), _calibrate(fn_b)
    samples_a, samples_b = [], []
    for _ in range(repeat):
        for fn, number, samples in ((fn_a, n_a, samples_a), (fn_b, n_b, samples_b)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples_a), statistics.median(samples_b)


def cases(shape):
    """(name, numpy call, gradstack call) triples on float32 arrays of ``shape``.

    numpy's side is the call a user would write (``np.sin(a)``, ``a.sum()``), so the
    ratio is what gradstack costs over writing numpy directly.
    """
    rng = np.random.default_rng(0)
    a = rng.uniform(-3, 3, size=shape).astype(np.float32)
    b = rng.uniform(0.5, 3, size=shape).astype(np.float32)
    ta, tb = gt.from_numpy(a), gt.from_numpy(b)  # the same memory for both columns
    sin = gt.sin
    return [
        ("mul", lambda: a * b, lambda: ta * tb),
        ("div", lambda: a / b, lambda: ta / tb),
        ("mul scalar *1.0001", lambda: a * 1.0001, lambda: ta * 1.0001),
        ("sin", lambda: np.sin(a), lambda: sin(ta)),
        ("sum", lambda: a.sum(), lambda: ta.sum()),
    ]


def check_agreement(shape):
    """The two columns compute the same numbers (a benchmark of wrong code is worthless)."""
    for name, np_call, gs_call in cases(shape):
        expected, got = np.asarray(np_call()), gs_call().numpy()
        assert got.shape == expected.shape and got.dtype == expected.dtype, name
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3, err_msg=name)


def run(repeat):
    print(
        f"gradstack_tensor {gt.__version__}, numpy {np.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}, threads pinned to 1"
    )
    print(f"median of {repeat} samples of ~{TARGET_SAMPLE_SECONDS * 1e3:.0f} ms each\n")
    header = f"{'op':<20} {'shape':<12} {'numpy':>12} {'gradstack':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    rows = []
    for shape in ((2, 3), (1024, 1024)):
        check_agreement(shape)
        for name, np_call, gs_call in cases(shape):
            t_np, t_gs = paired_medians(np_call, gs_call, repeat)
            rows.append((name, shape, t_np, t_gs))
            label = "x".join(map(str, shape))
            print(f"{name:<20} {label:<12} {_fmt(t_np):>12} {_fmt(t_gs):>12} {t_gs / t_np:>6.2f}x")
        print()
    small = [t_gs / t_np for _, shape, t_np, t_gs in rows if shape == (2, 3)]
    print(
        f"small ops: worst ratio {max(small):.2f}x, geometric mean "
        f"{statistics.geometric_mean(small):.2f}x (goal: at most 1.5x)"
    )
    return rows


def _fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3f} us"
    return f"{seconds * 1e3:.3f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=41, help="samples per timing (default 41)")
    args = parser.parse_args(argv)
    run(args.repeat)


if __name__ == "__main__":
    main()
