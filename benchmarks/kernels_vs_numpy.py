"""Time the fused kernels (tensor-core's _kernels, graph-engine's _backward_kernels) against numpy.

For every kernel, on float32 arrays of 6 and of 1M (2**20) elements by default, this prints
the median time of the numpy expression, of the kernel on one thread and on two threads,
and the speed-up (numpy time / kernel time: above 1 the kernel wins)::

    python benchmarks/kernels_vs_numpy.py
    python benchmarks/kernels_vs_numpy.py --sizes 6 1000 1048576 --dtype float64 --repeat 21

In-place kernels are compared with numpy's in-place spelling (``dst += src``), so numpy
is not charged for allocations that an optimiser would avoid.  numpy's element-wise
loops are single-threaded, so its column is the same for every thread count.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
from gradstack_autograd import _backward_kernels as B
from gradstack_tensor import kernels as K

TARGET_SAMPLE_SECONDS = 0.01  # each sample runs the call enough times to take ~10 ms


def median_seconds(fn, repeat):
    """Median over `repeat` samples of the time of one call to fn."""
    fn()  # warm up: first-touch page faults, thread start-up
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= TARGET_SAMPLE_SECONDS / 4 or number >= 1 << 20:
            break
        number *= 4
    number = max(1, int(number * TARGET_SAMPLE_SECONDS / max(elapsed, 1e-9)))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def two_d(n):
    """A (rows, cols) shape of n elements for the reductions: cols 3 for tiny n, else 64."""
    cols = 3 if n < 64 else 64
    return (max(1, n // cols), cols)


def cases(n, dtype):
    """(name, kernel call, numpy call) triples on arrays of n elements."""
    rng = np.random.default_rng(0)

    def uniform(low=-3.0, high=3.0, shape=(n,)):
        return rng.uniform(low, high, size=shape).astype(dtype)

    g, x = uniform(), uniform()
    s, t, out = uniform(0.0, 1.0), uniform(-1.0, 1.0), np.maximum(uniform(), 0)
    a, b = uniform(), uniform(0.5, 3.0)
    rows = uniform(shape=two_d(n))
    bias, row_sums = (rows.shape[1],), (rows.shape[0], 1)
    param, grad, buf = uniform(), uniform(), uniform()
    np_param, np_buf = param.copy(), buf.copy()
    dst, src = uniform(), uniform()
    lr, momentum, wd = 1e-3, 0.9, 1e-4

    def numpy_sgd():
        d = grad + wd * np_param
        np_buf.__imul__(momentum)
        np_buf.__iadd__(d)
        np_param.__isub__(lr * np_buf)

    def numpy_add_scaled():
        dst.__iadd__(-0.5 * src)

    return [
        ("sin_backward", lambda: B.sin_backward(g, x), lambda: g * np.cos(x)),
        ("cos_backward", lambda: B.cos_backward(g, x), lambda: -g * np.sin(x)),
        ("relu_backward", lambda: B.relu_backward(g, out), lambda: g * (out > 0)),
        ("sigmoid_backward", lambda: B.sigmoid_backward(g, s), lambda: g * s * (1 - s)),
        ("tanh_backward", lambda: B.tanh_backward(g, t), lambda: g * (1 - t * t)),
        ("mul_backward", lambda: B.mul_backward(g, a, b), lambda: (g * b, g * a)),
        ("div_backward", lambda: B.div_backward(g, a, b), lambda: (g / b, -g * a / (b * b))),
        (
            f"sum_to_shape {rows.shape}->{bias}",
            lambda: K.sum_to_shape(rows, bias),
            lambda: rows.sum(axis=0, keepdims=True).reshape(bias),
        ),
        (
            f"sum_to_shape {rows.shape}->{row_sums}",
            lambda: K.sum_to_shape(rows, row_sums),
            lambda: rows.sum(axis=1, keepdims=True).reshape(row_sums),
        ),
        (
            f"sum_to_shape ({n},)->()",
            lambda: K.sum_to_shape(g, ()),
            lambda: g.sum(axis=0, keepdims=True).reshape(()),
        ),
        (
            "sgd_update_ (momentum, wd)",
            lambda: K.sgd_update_(param, grad, buf, lr, momentum=momentum, weight_decay=wd),
            numpy_sgd,
        ),
        ("accumulate_", lambda: K.accumulate_(dst, src), lambda: dst.__iadd__(src)),
        ("add_scaled_", lambda: K.add_scaled_(dst, src, -0.5), numpy_add_scaled),
    ]


def format_seconds(seconds):
    if seconds < 1e-6:
        return f"{seconds * 1e9:7.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:7.1f} us"
    return f"{seconds * 1e3:7.2f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[6, 1 << 20])
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=15, help="samples per median")
    args = parser.parse_args(argv)
    dtype = np.dtype(args.dtype).type

    print(
        f"numpy {np.__version__}, {platform.machine()}, {os.cpu_count()} cores, "
        f"dtype {args.dtype}, PARALLEL_THRESHOLD {K.PARALLEL_THRESHOLD}, "
        f"TRANSCENDENTAL_THRESHOLD {B.TRANSCENDENTAL_THRESHOLD}; "
        f"median of {args.repeat} samples; speed-up = numpy / kernel"
    )
    if hasattr(os, "getloadavg"):
        # A parallel region waits for its slowest thread: other processes running on the
        # cores make the multi-threaded columns slow and noisy.
        print(f"load average before: {os.getloadavg()[0]:.2f}")
    header = f"{'kernel':36s} {'n':>8s} {'numpy':>10s}"
    for count in args.threads:
        header += f" {f'kernel {count}t':>10s} {'speed-up':>8s}"
    print(header)
    print("-" * len(header))
    before = K.get_num_threads()
    try:
        for n in args.sizes:
            for name, kernel, expression in cases(n, dtype):
                numpy_time = median_seconds(expression, args.repeat)
                line = f"{name:36s} {n:8d} {format_seconds(numpy_time)}"
                for count in args.threads:
                    K.set_num_threads(count)
                    kernel_time = median_seconds(kernel, args.repeat)
                    line += f" {format_seconds(kernel_time)} {numpy_time / kernel_time:7.2f}x"
                print(line, flush=True)
    finally:
        K.set_num_threads(before)
    if hasattr(os, "getloadavg"):
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
