"""The launcher: ``python -m gradstack_distributed.run -n 2 script.py [args]`` (in the full
stack ``python -m gradstack.distributed.run``), gradstack's ``torchrun``.

It runs ``mpiexec -n N python script.py args``, with the ``mpiexec`` that belongs to
the MPI library mpi4py loads: the one installed beside this Python (PyPI's ``mpich``
wheel puts it in the environment's ``bin/``), else the first on ``PATH``; ``--mpiexec``
or ``GRADSTACK_MPIEXEC`` names another.  Like torchrun, it sets ``OMP_NUM_THREADS=1`` (and
OpenBLAS's and MKL's) for the ranks unless already set, so that N ranks do not start N x
cores threads.  The exit status is mpiexec's: non-zero when any rank failed.

Examples
--------
::

    python -m gradstack.distributed.run -n 2 examples/digits_ddp.py
    python -m gradstack.distributed.run -n 16 --hostfile hosts.txt train.py --epochs 3
    python -m gradstack.distributed.run -n 4 -m mypackage.train
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["find_mpiexec", "build_command", "main"]

_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def find_mpiexec(explicit: str | None = None) -> str:
    """The mpiexec to run: ``explicit``, ``$GRADSTACK_MPIEXEC``, the one beside this
    Python, or the first on PATH; FileNotFoundError naming what to install otherwise."""
    for candidate in (explicit, os.environ.get("GRADSTACK_MPIEXEC")):
        if candidate:
            found = shutil.which(candidate)
            if found is None:
                raise FileNotFoundError(f"mpiexec {candidate!r} was not found or is not executable")
            return found
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError(
            "no mpiexec found beside this Python or on PATH: `pip install mpich` (PyPI's "
            "MPICH brings one), load your cluster's MPI module, or pass --mpiexec PATH"
        )
    return found


def build_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line for parsed launcher arguments."""
    cmd = [mpiexec, "-n", str(args.nproc)]
    if args.hostfile:
        cmd += ["-f" if _is_hydra(mpiexec) else "--hostfile", args.hostfile]
    cmd += args.mpiexec_args
    cmd.append(sys.executable)
    if args.module:
        cmd += ["-m", args.script]
    else:
        cmd.append(args.script)
    cmd += args.script_args
    return cmd


def _is_hydra(mpiexec: str) -> bool:
    """Whether ``mpiexec`` is MPICH's Hydra (``-f hostfile``) rather than Open MPI's."""
    try:
        out = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return True
    return "Open MPI" not in out and "OpenRTE" not in out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m gradstack.distributed.run",
        description="Run a gradstack script on N MPI ranks (gradstack's torchrun).",
    )
    p.add_argument(
        "-n", "--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int,
        default=1, help="number of ranks (processes) to start (default 1)",
    )  # fmt: skip
    p.add_argument("--hostfile", help="a file listing the machines (mpiexec's hostfile)")
    p.add_argument("--mpiexec", help="the mpiexec to use (default: beside python, else PATH)")
    p.add_argument(
        "--mpiexec-arg", dest="mpiexec_args", action="append", default=[],
        help="an extra argument for mpiexec (repeatable), e.g. --mpiexec-arg=-bind-to",
    )  # fmt: skip
    p.add_argument("-m", "--module", action="store_true", help="run script as a module")
    p.add_argument("script", help="the script (or module, with -m) each rank runs")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.nproc < 1:
        print(f"run: -n must be at least 1, got {args.nproc}", file=sys.stderr)
        return 2
    try:
        mpiexec = find_mpiexec(args.mpiexec)
    except FileNotFoundError as exc:
        print(f"run: {exc}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    for name in _THREAD_VARIABLES:
        env.setdefault(name, "1")
    child = subprocess.Popen(build_command(args, mpiexec), env=env)

    def forward(signum, frame):  # mpiexec passes it on to every rank
        child.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        return child.wait()
    except KeyboardInterrupt:  # the terminal sent SIGINT to mpiexec as well
        return child.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
