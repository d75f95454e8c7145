"""Run every example (``hatch run examples:all``): each in its own process, as many at once
as there are CPUs; exit 1 if any of them fails.

    python examples/run_all.py              # all of them
    python examples/run_all.py digits       # only those whose name contains "digits"
    python examples/run_all.py --jobs 1     # one after another, output as it comes

Outputs (plots, graph pictures) go to ``examples/out/``.  matplotlib draws with its Agg
backend, so no display is needed.

Note [Examples side by side]
Each example runs on one core (numpy's BLAS is pinned to one thread), so on a 2-core
machine two at a time take about half as long.  Examples that start processes of their own
(``digits_ddp.py``: two MPI ranks) run afterwards, alone.  A line says when each starts; its output
is printed in one block when it ends (interleaved lines of two programs would be
unreadable), followed by its status and time.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = ["tutorial.py", "tiny_model.py", "digits.py", "breast_cancer.py", "digits_ddp.py"]
# examples that start several processes of their own (MPI ranks): they run last, alone
ALONE = {"digits_ddp.py"}
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_PRINT = threading.Lock()


def _say(text: str) -> None:
    """Print whole, even while another thread prints."""
    with _PRINT:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _parse(argv: list[str]) -> tuple[list[str], int]:
    jobs, names, args = _cpus(), [], iter(argv)
    for arg in args:
        if arg == "--jobs":
            jobs = max(1, int(next(args, "1")))
        elif arg.startswith("--jobs="):
            jobs = max(1, int(arg.split("=", 1)[1]))
        else:
            names.append(arg)
    return names, jobs


def main(argv: list[str]) -> int:
    names, jobs = _parse(argv)
    selected = [e for e in EXAMPLES if not names or any(a in e for a in names)]
    if not selected:
        print(f"run_all: no example matches {names}; examples: {', '.join(EXAMPLES)}")
        return 2
    jobs = min(jobs, len(selected))
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    if jobs > 1:  # Note [Examples side by side]
        env.update(dict.fromkeys(ONE_THREAD, "1"))

    def run(name: str) -> tuple[str, int, float, str]:
        _say(f"run_all: examples/{name} started")
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(HERE / name)],
            env=env,
            cwd=HERE,
            stdout=subprocess.PIPE if jobs > 1 else None,
            stderr=subprocess.STDOUT if jobs > 1 else None,
            text=True,
        )
        return name, result.returncode, time.perf_counter() - start, result.stdout or ""

    failed = []
    shared = [name for name in selected if name not in ALONE]
    alone = [name for name in selected if name in ALONE]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run, name) for name in shared]
        # lazily: the ALONE ones are submitted one by one once the others have finished
        later = (pool.submit(run, name) for name in alone)
        for future in itertools.chain(as_completed(futures), later):
            name, code, elapsed, output = future.result()
            if jobs > 1:
                _say(f"\n=== examples/{name} " + "=" * max(0, 60 - len(name)) + "\n" + output)
            status = "ok" if code == 0 else f"FAILED (exit code {code})"
            _say(f"--- examples/{name}: {status} in {elapsed:.1f} s")
            if code != 0:
                failed.append(name)
    print(
        f"\n{len(selected) - len(failed)} of {len(selected)} examples passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
