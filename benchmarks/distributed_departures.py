"""How long the other ranks wait when one rank leaves the job (Note [No rank left waiting]
in gradstack_distributed/liveness.py): for every way of leaving, on 2 and 3 ranks.

    python benchmarks/distributed_departures.py              # every way, 2 and 3 ranks
    python benchmarks/distributed_departures.py --ways exit3 sigkill --nproc 2 --repeat 3

Rank 1 makes three all_reduce calls and leaves; the other ranks wait in their fourth.  For
each run it prints the time from rank 1 leaving (``time.time()`` just before) to the last
survivor's DistBackendError ("error"), and to the end of the whole job as the launcher saw
it ("job ended", which includes mpiexec's own teardown).  Where MPICH's mpiexec kills the
survivors itself (a rank killed by a signal or os._exit), the survivors raise nothing;
the runs marked "no cleanup" pass Hydra's ``-disable-auto-cleanup`` so that the survivors
must find out themselves.  The group timeout is the default 30 minutes throughout.  A
benchmark, not a test: on a loaded machine the figures are the scheduler's.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
WAYS = [
    "end", "exit0", "exit3", "caught", "destroy", "abort", "sigterm", "sigkill", "_exit0",
    "_exit3",
]  # fmt: skip
WORDS = {
    "end": "end of script (no destroy)",
    "exit0": "sys.exit(0)",
    "exit3": "sys.exit(3)",
    "caught": "exception caught, script ends",
    "destroy": "destroy_process_group()",
    "abort": "uncaught exception",
    "sigterm": "SIGTERM",
    "sigkill": "SIGKILL",
    "_exit0": "os._exit(0)",
    "_exit3": "os._exit(3)",
}


def worker(way: str) -> None:
    import gradstack_distributed as dist
    import gradstack_tensor as gt

    dist.init_process_group("mpi")
    rank = dist.get_rank()
    dist.barrier()
    if rank != 1:
        try:
            while True:
                dist.all_reduce(gt.ones(4))
        except dist.DistBackendError:
            print(f"raised {time.time():.6f}", flush=True)
            raise
    for _ in range(3):
        dist.all_reduce(gt.ones(4))
    time.sleep(0.2)
    print(f"leaving {time.time():.6f}", flush=True)
    if way == "exit0":
        sys.exit(0)
    elif way == "exit3":
        sys.exit(3)
    elif way == "caught":
        try:
            raise ValueError("caught")
        except ValueError:
            pass
    elif way == "destroy":
        dist.destroy_process_group()
    elif way == "abort":
        raise ValueError("uncaught on purpose")
    elif way in ("sigterm", "sigkill"):
        os.kill(os.getpid(), signal.SIGTERM if way == "sigterm" else signal.SIGKILL)
        time.sleep(60)
    elif way in ("_exit0", "_exit3"):
        os._exit(int(way[-1]))


def run(way: str, nproc: int, no_cleanup: bool) -> tuple[float | None, float]:
    cmd = [sys.executable, "-m", "gradstack_distributed.run", "-n", str(nproc)]
    if no_cleanup:
        cmd.append("--mpiexec-arg=-disable-auto-cleanup")
    cmd += [__file__, "--worker", way]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    ended = time.time()
    left = re.search(r"leaving ([0-9.]+)", done.stdout)
    if left is None:
        raise RuntimeError(f"{way}: rank 1 did not leave\n{done.stdout}\n{done.stderr}")
    t0 = float(left.group(1))
    raised = [float(t) for t in re.findall(r"raised ([0-9.]+)", done.stdout)]
    error = max(raised) - t0 if len(raised) == nproc - 1 else None
    return error, ended - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--ways", nargs="+", default=WAYS, choices=WAYS)
    p.add_argument("--nproc", nargs="+", type=int, default=[2, 3])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    if args.worker and any(v in os.environ for v in LAUNCHER_VARIABLES):
        worker(args.worker)
        return 0
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; medians of "
          f"{args.repeat} runs; seconds from rank 1 leaving")  # fmt: skip
    print("| way of leaving | ranks | survivors raised after | job ended after |")
    print("|---|---:|---:|---:|")
    plans = [(w, False) for w in args.ways]
    plans += [(w, True) for w in args.ways if w in ("_exit0", "_exit3")]
    for way, no_cleanup in plans:
        for n in args.nproc:
            errors, ends = [], []
            for _ in range(args.repeat):
                error, end = run(way, n, no_cleanup)
                ends.append(end)
                if error is not None:
                    errors.append(error)
            label = WORDS[way] + (" (no cleanup)" if no_cleanup else "")
            raised = (
                f"{statistics.median(errors):.3f} s" if len(errors) == args.repeat else
                "killed by mpiexec" if not errors else f"{len(errors)}/{args.repeat} runs"
            )  # fmt: skip
            print(f"| {label} | {n} | {raised} | {statistics.median(ends):.3f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
