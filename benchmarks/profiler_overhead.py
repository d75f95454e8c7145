"""What the profiler costs on the tutorial's loop (a benchmark, not a test).

The loop of the tutorial's "Autograd Profiler" cell, 1000 times ``z = (z / x) * y`` on
2x3 tensors that require grad (2000 ops, each recording a backward node), is timed

- with no profiler (the baseline),
- inside ``profile(enabled=False)`` (goal: no measurable difference: nothing is
  registered),
- inside ``profile()`` (goal: at most 2x the baseline),
- inside ``profile(record_shapes=True)`` and ``profile(profile_memory=True)`` (for
  information: these options do more per op),

and ``prof.key_averages()`` afterwards (building the events and aggregating them happens
there, once, outside the measured loop).  Each sample times the whole ``with`` block
(enter, loop, exit).  The configurations take turns, round after round, in a new
random order each round, so that a slow patch of the machine, or what ran just
before, hits them all alike; the medians and minima and their ratios to the baseline's
are printed::

    python benchmarks/profiler_overhead.py
    python benchmarks/profiler_overhead.py --rounds 101 --steps 1000

Single-threaded: the BLAS/OpenMP thread counts are pinned to 1 before numpy loads.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import gradstack_autograd  # noqa: E402,F401 - the autograd layer
import gradstack_tensor as gt  # noqa: E402
from gradstack_profiler import profile  # noqa: E402


def tutorial_loop(x, y, z, steps):
    for _ in range(steps):
        z = (z / x) * y
    return z


def sample(make_context, x, y, z, steps):
    """Seconds for one ``with make_context(): loop``; returns (seconds, context)."""
    ctx = make_context()
    start = time.perf_counter()
    with ctx:
        tutorial_loop(x, y, z, steps)
    return time.perf_counter() - start, ctx


CONFIGS = {
    "no profiler": contextlib.nullcontext,
    "profile(enabled=False)": lambda: profile(enabled=False),
    "profile()": profile,
    "profile(record_shapes=True)": lambda: profile(record_shapes=True),
    "profile(profile_memory=True)": lambda: profile(profile_memory=True),
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=41, help="samples per configuration")
    parser.add_argument("--steps", type=int, default=1000, help="loop iterations (2 ops each)")
    args = parser.parse_args(argv)

    gt.manual_seed(0)
    x = gt.randn(2, 3, requires_grad=True)
    y = gt.rand(2, 3, requires_grad=True)
    z = gt.ones(2, 3, requires_grad=True)

    for make in CONFIGS.values():  # warm up every path once
        sample(make, x, y, z, args.steps)
    times = {name: [] for name in CONFIGS}
    aggregate = []
    names = list(CONFIGS)
    order = random.Random(0)
    for _ in range(args.rounds):
        order.shuffle(names)  # no configuration always follows the same one
        for name in names:
            gc.collect()
            seconds, ctx = sample(CONFIGS[name], x, y, z, args.steps)
            times[name].append(seconds)
            if name == "profile()":
                start = time.perf_counter()
                ctx.key_averages()
                aggregate.append(time.perf_counter() - start)
            del ctx

    base = statistics.median(times["no profiler"])
    base_min = min(times["no profiler"])
    ops = 2 * args.steps
    print(
        f"tutorial loop: {args.steps} x `z = (z / x) * y` ({ops} ops), "
        f"{args.rounds} rounds, Python {platform.python_version()}, single-threaded"
    )
    print(
        f"{'configuration':<30} {'median':>10} {'min':>10} {'per op':>10} "
        f"{'ratio':>7} {'ratio of mins':>14}"
    )
    for name, samples in times.items():
        med = statistics.median(samples)
        print(
            f"{name:<30} {med * 1e3:>8.3f}ms {min(samples) * 1e3:>8.3f}ms "
            f"{med / ops * 1e6:>8.3f}us {med / base:>7.3f} {min(samples) / base_min:>14.3f}"
        )
    med = statistics.median(aggregate)
    print(
        f"{'key_averages() after profile()':<30} {med * 1e3:>8.3f}ms "
        f"{min(aggregate) * 1e3:>8.3f}ms {med / ops * 1e6:>8.3f}us"
    )
    print(
        "(ratios: to the median, and to the fastest run, of `no profiler`; on a busy machine "
        "the minima are the steadier estimate)"
    )
    for name, goal in (("profile(enabled=False)", "~1"), ("profile()", "<= 2")):
        ratio = statistics.median(times[name]) / base
        print(f"{name + ' / no profiler':<40} = {ratio:.3f}   (goal: {goal})")


if __name__ == "__main__":
    main()
