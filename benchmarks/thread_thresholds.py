"""The size thresholds of the kernels that split their loop across threads, checked.

Every Cython kernel that runs an OpenMP ``prange`` does so only from a size threshold
(the number of elements it touches, or of rows x columns), written in a Note next to it;
below the threshold it runs on one thread whatever ``set_num_threads`` says.  This
script times each such kernel, through its public function, at one thread and at two
(``gradstack.set_num_threads``), at sizes from a quarter of its threshold to 16 times
it, and prints ``time at 1 thread / time at 2 threads``: 1.00 below the threshold (both
runs take one thread), and the gain of the second thread from the threshold on.  A
threshold is well placed when the speed-up is at or above ~1 at the threshold itself
and grows past it.

Samples alternate between the two thread counts (one sample of each per round, Note
[Interleaved rounds] in tools/compare.py) and a cell is the median of the per-round
ratios, so that the host's load hits both counts alike; on a loaded 2-core host the
second thread waits for a core, and the speed-ups are lower bounds.

    python benchmarks/thread_thresholds.py                 # every kernel, 7 rounds
    python benchmarks/thread_thresholds.py --only tanh adam_update_ --rounds 11
    python benchmarks/thread_thresholds.py --md build/threads.md   # also as a table

numpy's BLAS is pinned to one thread (``OPENBLAS_NUM_THREADS=1``, set before numpy is
imported) so that its threads do not compete with the kernels' (Note [Threads are
opt-in] in tensor-core's _kernels.pyx).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable

for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import gradstack as gs  # noqa: E402
import numpy as np  # noqa: E402
from gradstack_autograd import _backward_kernels as B  # noqa: E402
from gradstack_tensor import kernels as K  # noqa: E402

F = gs.nn.functional
RNG = np.random.default_rng(0)
SAMPLE_SECONDS = 0.004  # each sample loops the call for at least this long


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _t(*shape):
    return gs.from_numpy(_f32(*shape))


def _adam(n):
    p, g, m, v = _f32(n), _f32(n), _f32(n), np.abs(_f32(n))
    kw = dict(lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, step=3.0)
    return lambda: K.adam_update_(p, g, m, v, None, **kw)


def _sgd(n):
    p, g, b = _f32(n), _f32(n), _f32(n)
    return lambda: K.sgd_update_(p, g, b, 1e-3, momentum=0.9)


def _lstm_cell(n):  # n = batch * hidden, hidden 256
    rows = max(1, n // 256)
    ig, hg, cx = _f32(rows, 1024), _f32(rows, 1024), _f32(rows, 256)
    return lambda: K.lstm_cell_forward(ig, hg, cx)


def _rows(n, width=64):
    return max(1, n // width), width


def _batch_norm(n):  # (N, 16, 16, 16)
    x = _t(max(1, n // 4096), 16, 16, 16)
    w, b = gs.ones(16), gs.zeros(16)
    rm, rv = gs.zeros(16), gs.ones(16)
    return lambda: F.batch_norm(x, rm, rv, w, b, training=True)


def _max_pool(n):  # (N, 16, 32, 32) -> 2x2 windows
    x = _t(max(1, n // 16384), 16, 32, 32)
    return lambda: F.max_pool2d(x, 2)


def _masked_fill(n):
    x = _t(n)
    mask = gs.from_numpy(RNG.random(n) < 0.5)
    return lambda: x.masked_fill(mask, 0.0)


def _embedding_backward(n):  # n = indices * 64 gradient elements, 1000 rows
    idx = RNG.integers(0, 1000, size=max(1, n // 64))
    grad = _f32(idx.shape[0], 64)
    return lambda: K.embedding_backward(grad, idx, 1000, -1)


def _on_array(kernel, arrays):
    """``make(n)``: ``kernel`` on fresh float32 arrays of ``n`` elements, ``arrays`` of them."""

    def make(n):
        args = [_f32(n) for _ in range(arrays)]
        return lambda: kernel(*args)

    return make


def _on_tensor(method, rows=False, positive=False):
    """``make(n)``: ``method`` on a float32 tensor of ``n`` elements (rows of 64 when
    ``rows``; above 0.5 when ``positive``)."""

    def make(n):
        x = _f32(*_rows(n)) if rows else _f32(n)
        t = gs.from_numpy(np.abs(x) + 0.5 if positive else x)
        return lambda: method(t)

    return make


def _smooth_l1(n):
    a, b = _t(n), _t(n)
    return lambda: F.smooth_l1_loss(a, b, reduction="none")


# (name, module of the threshold, its threshold's name, make(n) -> call)
CASES: list[tuple[str, str, str, Callable[[int], Callable[[], object]]]] = [
    ("accumulate_", "_kernels", "PARALLEL_THRESHOLD", _on_array(K.accumulate_, 2)),
    ("sgd_update_", "_sgd_update", "PARALLEL_THRESHOLD", _sgd),
    ("adam_update_", "_adam_update", "PARALLEL_THRESHOLD", _adam),
    ("sum_to_shape (rows to a row)", "_sum_to_shape", "PARALLEL_THRESHOLD",
     _on_tensor(lambda t: K.sum_to_shape(t.numpy(), (1, 64)), rows=True)),
    ("tanh_backward", "_backward_kernels", "PARALLEL_THRESHOLD", _on_array(B.tanh_backward, 2)),
    ("sin_backward", "_backward_kernels", "TRANSCENDENTAL_THRESHOLD",
     _on_array(B.sin_backward, 2)),
    ("tanh (float32)", "_float32_transcendentals", "TRANSCENDENTAL_THRESHOLD",
     _on_tensor(lambda t: t.tanh())),
    ("gelu", "_activation_kernels", "ACTIVATION_THRESHOLD", _on_tensor(F.gelu)),
    ("lgamma", "_special_kernels", "SPECIAL_THRESHOLD",
     _on_tensor(lambda t: t.lgamma(), positive=True)),
    ("fmod", "_division_kernels", "DIVISION_THRESHOLD", _on_tensor(lambda t: t.fmod(0.7))),
    ("smooth_l1_loss", "_loss_kernels", "LOSS_THRESHOLD", _smooth_l1),
    ("softmax (rows of 64)", "_norm_kernels", "ROW_THRESHOLD",
     _on_tensor(lambda t: F.softmax(t, -1), rows=True)),
    ("layer_norm (rows of 64)", "_norm_kernels", "ROW_THRESHOLD",
     _on_tensor(lambda t: F.layer_norm(t, (64,)), rows=True)),
    ("cumsum (rows of 64)", "_scan_kernels", "SCAN_THRESHOLD",
     _on_tensor(lambda t: t.cumsum(-1), rows=True)),
    ("lstm_cell_forward (H 256)", "_rnn_kernels", "RNN_PARALLEL_THRESHOLD", _lstm_cell),
    ("batch_norm (training)", "_batch_norm_kernels", "PARALLEL_THRESHOLD", _batch_norm),
    ("max_pool2d 2x2", "_window_kernels", "PARALLEL_THRESHOLD", _max_pool),
    ("masked_fill", "_masked_fill_kernels", "PARALLEL_THRESHOLD", _masked_fill),
    ("vector norm", "_vector_norm_kernels", "PARALLEL_THRESHOLD", _on_tensor(lambda t: t.norm())),
    ("embedding_backward (dim 64)", "_index_kernels", "PARALLEL_THRESHOLD",
     _embedding_backward),
]  # fmt: skip


def threshold_of(module: str, const: str) -> int:
    """The threshold constant of a kernel module (tensor-core's, or graph-engine's
    ``_backward_kernels``)."""
    if const == "PARALLEL_THRESHOLD":  # the memory-bound kernels share _kernels.pyx's
        module = "_kernels"
    package = "gradstack_autograd" if module == "_backward_kernels" else "gradstack_tensor"
    return int(getattr(importlib.import_module(f"{package}.{module}"), const))


FACTORS = (0.25, 1, 4, 16)  # sizes: these multiples of the threshold


def _sample(fn) -> float:
    """Seconds per call, over a loop of at least SAMPLE_SECONDS."""
    number, start = 0, time.perf_counter()
    while True:
        fn()
        number += 1
        elapsed = time.perf_counter() - start
        if elapsed >= SAMPLE_SECONDS:
            return elapsed / number


def speedup(fn, rounds: int) -> tuple[float, float]:
    """Median over interleaved rounds of time(1 thread) / time(2 threads), and the median
    one-thread time in seconds."""
    ratios, ones = [], []
    for threads in (1, 2):  # warm up both (page faults, the team's start)
        gs.set_num_threads(threads)
        fn()
    for r in range(rounds):
        times = {}
        for threads in (1, 2) if r % 2 == 0 else (2, 1):
            gs.set_num_threads(threads)
            times[threads] = _sample(fn)
        ratios.append(times[1] / times[2])
        ones.append(times[1])
    gs.set_num_threads(1)
    return statistics.median(ratios), statistics.median(ones)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", help="kernels whose name starts with these")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--md", help="also write the table (markdown) to this file")
    args = parser.parse_args(argv)
    header = ["kernel", "threshold"] + [f"{f:g} x" for f in FACTORS]
    rows = []
    for name, module, const, make in CASES:
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        threshold = threshold_of(module, const)
        cells = []
        for factor in FACTORS:
            n = max(1, int(threshold * factor))
            ratio, one = speedup(make(n), args.rounds)
            cells.append(f"{ratio:.2f} ({one * 1e6:.0f} us)")
        rows.append([name, f"{threshold:,} ({module}.{const})"] + cells)
        print(" | ".join(rows[-1]), flush=True)
    load = os.getloadavg()
    lines = [
        f"speed-up at 2 threads (time at 1 / time at 2; the one-thread time in brackets), "
        f"at multiples of each kernel's threshold; {args.rounds} interleaved rounds, "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}, "
        f"{os.cpu_count()} cores",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * len(FACTORS)) + "|",
    ] + ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(lines))
    if args.md:
        with open(args.md, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
