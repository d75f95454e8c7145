"""graph-engine's speed goals, side by side in one process: gradstack vs PyTorch vs numpy.

Run: ``hatch run python benchmarks/graph_engine_vs_peers.py`` (PyTorch is in the dev env;
without it its columns are skipped).  One thread for every library; each workload runs in
interleaved rounds (gradstack, torch, numpy, gradstack, ...) and the medians are printed
with the gradstack/torch ratio:

- the tutorial's profiler loop: 2x3 tensors x, y, z requiring grad, 1000 times
  ``z = (z / x) * y``, then ``z.sum().backward()`` (goal: at most 0.4x PyTorch's time);
- a 20,000-op chain alternating ``* 1.0001`` and ``+ 0.0001`` on a 4-element tensor,
  forward and backward (goal: at most 0.3x), and the same with 1,000,000 ops.

The numpy column does the same arithmetic by hand (the forward pass, then the backward
pass written out): the floor that no framework can beat.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics  # noqa: E402
import time  # noqa: E402

import gradstack_autograd  # noqa: E402, F401 - registers the autograd layer
import gradstack_tensor as gt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:
    torch = None
    print("PyTorch is not installed: its column is skipped (pip install torch==2.13.0)")


def tutorial_loop(lib):
    def run():
        x = lib.randn(2, 3, requires_grad=True)
        y = lib.rand(2, 3, requires_grad=True)
        z = lib.ones(2, 3, requires_grad=True)
        for _ in range(1000):
            z = (z / x) * y
        z.sum().backward()

    return run


def tutorial_loop_numpy():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3), dtype=np.float32)
    y = rng.random((2, 3), dtype=np.float32)
    z = np.ones((2, 3), np.float32)
    with np.errstate(all="ignore"):  # the loop overflows to inf, in every framework
        inputs = []
        for _ in range(1000):
            inputs.append(z)
            z = (z / x) * y
        g = np.ones_like(z)
        gx, gy = np.zeros_like(x), np.zeros_like(y)
        for zi in reversed(inputs):
            q = zi / x
            gy += g * q
            gq = g * y
            gx += -gq * zi / (x * x)
            g = gq / x


def chain(lib, n):
    def run():
        x = lib.ones(4, requires_grad=True)
        z = x
        for _ in range(n // 2):
            z = z * 1.0001
            z = z + 0.0001
        z.sum().backward()

    return run


def chain_numpy(n):
    def run():
        z = np.ones(4, np.float32)
        for _ in range(n // 2):
            z = z * 1.0001
            z = z + 0.0001
        g = np.ones(4, np.float32)
        for _ in range(n // 2):
            g = g * 1.0001

    return run


def medians(runs: dict, rounds: int) -> dict:
    """Median wall time (ms) of each callable, the callables interleaved round by round."""
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def workloads():
    yield (
        "tutorial loop (2000 ops + backward)",
        21,
        {
            "gradstack": tutorial_loop(gt),
            "torch": torch and tutorial_loop(torch),
            "numpy": tutorial_loop_numpy,
        },
    )
    yield (
        "20,000-op chain",
        11,
        {
            "gradstack": chain(gt, 20_000),
            "torch": torch and chain(torch, 20_000),
            "numpy": chain_numpy(20_000),
        },
    )
    yield (
        "1,000,000-op chain",
        3,
        {"gradstack": chain(gt, 1_000_000), "torch": torch and chain(torch, 1_000_000)},
    )


def main():
    for name, rounds, runs in workloads():
        runs = {k: v for k, v in runs.items() if v}
        m = medians(runs, rounds)
        line = f"{name}: " + ", ".join(f"{k} {v:.1f} ms" for k, v in m.items())
        if "torch" in m:
            line += f"; gradstack/torch = {m['gradstack'] / m['torch']:.2f}"
        print(line)


if __name__ == "__main__":
    main()
