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
there, once, outside the measured loop).  Where torch is installed, the same loop on torch
tensors runs with no profiler and inside ``torch.autograd.profiler.profile()``, in the same
rounds: the issue's goal is a per-op recording cost at most torch's.  The per-op cost is
measured on the loop alone (``added/op``: the loop inside the profile minus the loop
without one), since torch's exit processes its trace (whole-block figures are printed
too).  Each sample times the whole ``with`` block
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
    """One ``with make_context(): loop``: (seconds of the block, of the loop alone, context)."""
    ctx = make_context()
    start = time.perf_counter()
    with ctx:
        inner = time.perf_counter()
        tutorial_loop(x, y, z, steps)
        loop = time.perf_counter() - inner
    return time.perf_counter() - start, loop, ctx


CONFIGS = {
    "no profiler": contextlib.nullcontext,
    "profile(enabled=False)": lambda: profile(enabled=False),
    "profile()": profile,
    "profile(record_shapes=True)": lambda: profile(record_shapes=True),
    "profile(profile_memory=True)": lambda: profile(profile_memory=True),
}
BASE = {name: "no profiler" for name in CONFIGS}


def torch_peer():
    """torch's configurations and tensors, or ({}, None) when torch is not installed."""
    try:
        import torch
    except ImportError:
        return {}, None
    torch.set_num_threads(1)
    torch.manual_seed(0)
    tensors = (
        torch.randn(2, 3, requires_grad=True),
        torch.rand(2, 3, requires_grad=True),
        torch.ones(2, 3, requires_grad=True),
    )
    configs = {
        "torch: no profiler": contextlib.nullcontext,
        "torch: profile()": torch.autograd.profiler.profile,
    }
    return configs, tensors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=41, help="samples per configuration")
    parser.add_argument("--steps", type=int, default=1000, help="loop iterations (2 ops each)")
    args = parser.parse_args(argv)

    gt.manual_seed(0)
    x = gt.randn(2, 3, requires_grad=True)
    y = gt.rand(2, 3, requires_grad=True)
    z = gt.ones(2, 3, requires_grad=True)

    configs = dict(CONFIGS)
    inputs = {name: (x, y, z) for name in configs}
    base_of = dict(BASE)
    peer, peer_tensors = torch_peer()
    for name, make in peer.items():
        configs[name], inputs[name], base_of[name] = make, peer_tensors, "torch: no profiler"
    for name, make in configs.items():  # warm up every path once
        sample(make, *inputs[name], args.steps)
    times = {name: [] for name in configs}
    loops = {name: [] for name in configs}
    aggregate = []
    names = list(configs)
    order = random.Random(0)
    for _ in range(args.rounds):
        order.shuffle(names)  # no configuration always follows the same one
        for name in names:
            gc.collect()
            seconds, loop, ctx = sample(configs[name], *inputs[name], args.steps)
            times[name].append(seconds)
            loops[name].append(loop)
            if name == "profile()":
                start = time.perf_counter()
                ctx.key_averages()
                aggregate.append(time.perf_counter() - start)
            del ctx

    ops = 2 * args.steps
    print(
        f"tutorial loop: {args.steps} x `z = (z / x) * y` ({ops} ops), "
        f"{args.rounds} rounds, Python {platform.python_version()}, single-threaded"
    )
    print(
        f"{'configuration':<30} {'median':>10} {'min':>10} {'per op':>10} "
        f"{'ratio':>7} {'ratio of mins':>14} {'added/op':>10}"
    )
    added = {}
    for name, samples in times.items():
        med = statistics.median(samples)
        base = statistics.median(times[base_of[name]])
        base_min = min(times[base_of[name]])
        loop_base = statistics.median(loops[base_of[name]])
        added[name] = (statistics.median(loops[name]) - loop_base) / ops
        print(
            f"{name:<30} {med * 1e3:>8.3f}ms {min(samples) * 1e3:>8.3f}ms "
            f"{med / ops * 1e6:>8.3f}us {med / base:>7.3f} {min(samples) / base_min:>14.3f} "
            f"{added[name] * 1e6:>8.3f}us"
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
    base = statistics.median(times["no profiler"])
    for name, goal in (("profile(enabled=False)", "~1"), ("profile()", "<= 2")):
        ratio = statistics.median(times[name]) / base
        print(f"{name + ' / no profiler':<40} = {ratio:.3f}   (goal: {goal})")
    if peer:
        print(
            f"recording cost per op (loop alone): gradstack {added['profile()'] * 1e6:.3f} us, "
            f"torch {added['torch: profile()'] * 1e6:.3f} us   (goal: gradstack <= torch)"
        )


if __name__ == "__main__":
    main()
