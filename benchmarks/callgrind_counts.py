"""Instruction counts of the hot paths by callgrind: repeatable on a loaded machine.

Wall-clock times on the shared two-core machines move by 10-30% with the load; the number of
instructions a workload executes does not.  This script counts them with valgrind's
callgrind for one or more builds of gradstack (each its own Python), so that a change that
only moves code (issue 32's splits, the op table, the import-circle fix) can be shown to
leave the hot paths as they were.

Workloads (the ones of ``tools/compare.py``, torch-shaped code run under ``import
gradstack as torch``):

* ``tiny_ops``: the tutorial's profiler loop, 1000 x ``w = (w / x) * y`` on (2, 3) float32
  tensors that require grad, then ``w.sum().backward()``;
* ``tinymodel_step``: the tutorial's TinyModel (``Linear(1000, 100)``, ReLU,
  ``Linear(100, 10)``), batch 16, one SGD step (``zero_grad``, forward, squared-error loss,
  backward, ``step``).

Note [Counting a workload's instructions]
A process that imports gradstack executes ~10^9 instructions before the workload runs, and
callgrind cannot be switched on from Python.  Each workload is therefore run twice per
build: once ``warm`` times (imports, first calls, caches), once ``warm + n`` times; the
difference divided by ``n`` is what one run of the workload costs, free of the start-up.
BLAS is pinned to one thread (the counts of a threaded GEMM depend on the scheduling).

Usage::

    python benchmarks/callgrind_counts.py --python after=$(hatch env find)/bin/python \\
        --python before=/path/to/other/env/bin/python

Prints a table (instructions per run, and after/before for each build after the first).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

WORKLOADS = {
    "tiny_ops": """
import numpy as np
import gradstack as torch
r = np.random.default_rng(2)
xa = r.uniform(0.5, 1.5, (2, 3)).astype(np.float32)
ya = (xa * r.uniform(0.999, 1.001, (2, 3))).astype(np.float32)
def run():
    x = torch.tensor(xa, requires_grad=True)
    y = torch.tensor(ya, requires_grad=True)
    w = torch.ones(2, 3, requires_grad=True)
    for _ in range(1000):
        w = (w / x) * y
    w.sum().backward()
""",
    "tinymodel_step": """
import numpy as np
import gradstack as torch
r = np.random.default_rng(0)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1000, 100), torch.nn.ReLU(),
                            torch.nn.Linear(100, 10))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.tensor(r.standard_normal((16, 1000)).astype(np.float32))
ideal = torch.tensor(r.standard_normal((16, 10)).astype(np.float32))
def run():
    opt.zero_grad()
    loss = (ideal - model(x)).pow(2).sum()
    loss.backward()
    opt.step()
""",
}

_TOTALS = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.M)


def count(python: str, workload: str, runs: int) -> int:
    """Instructions executed by ``python`` running ``workload``'s ``run()`` ``runs`` times."""
    code = WORKLOADS[workload] + f"\nfor _ in range({runs}):\n    run()\n"
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        GRADSTACK_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c", code],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with open(out, "rb") as f:
            m = _TOTALS.search(f.read())
    if m is None:
        raise RuntimeError(f"no instruction total in callgrind's output for {python}")
    return int(m.group(1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--python",
        action="append",
        required=True,
        metavar="LABEL=PYTHON",
        help="a build to count (repeat: the first is the reference)",
    )
    parser.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    parser.add_argument("--warm", type=int, default=3, help="runs before the counted ones")
    parser.add_argument("-n", type=int, default=5, help="runs counted")
    args = parser.parse_args(argv)
    builds = [p.split("=", 1) for p in args.python]
    if any(len(b) != 2 for b in builds):
        parser.error("--python takes LABEL=PYTHON")
    print(f"| workload | {' | '.join(label for label, _ in builds)} |")
    print(f"|---|{'---:|' * len(builds)}")
    for workload in args.only:
        cells = []
        first = None
        for _, python in builds:
            per_run = (
                count(python, workload, args.warm + args.n) - count(python, workload, args.warm)
            ) / args.n
            cell = f"{per_run:,.0f}"
            if first is None:
                first = per_run
            else:
                cell += f" ({per_run / first - 1:+.2%})"
            cells.append(cell)
        print(f"| {workload} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
