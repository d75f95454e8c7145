"""Running worker scripts on N MPI ranks from pytest.

Each test module that needs MPI launches its worker once (module-scoped fixtures): the
worker runs every case on every rank and saves what each rank passed and got; the tests
then check those numbers against numpy in this process.  Every launch has a hard time
limit, so a hang fails the test instead of blocking the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

WORKERS = Path(__file__).resolve().parent / "workers"
LAUNCH_TIMEOUT = 120  # seconds; a normal launch here takes 1-10 s


def launch(
    worker: str, nproc: int, *args, timeout: float = LAUNCH_TIMEOUT, env=None, mpiexec_args=()
):
    """Run ``workers/<worker>`` on ``nproc`` ranks through the launcher; returns the
    CompletedProcess (stdout, stderr as text).  ``mpiexec_args`` go to mpiexec."""
    cmd = [
        sys.executable, "-m", "gradstack_distributed.run", "-n", str(nproc),
        *(f"--mpiexec-arg={a}" for a in mpiexec_args), str(WORKERS / worker), *map(str, args),
    ]  # fmt: skip
    # (no PYTHONUNBUFFERED: print would write a line and its newline in two pieces, which
    # the other ranks' output could split; the workers flush where it matters)
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    full_env.update(env or {})
    # a session of its own, so that a hung launch is ended with all its ranks
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(
            f"{worker} on {nproc} ranks did not end within {timeout} s (killed)\n"
            f"--- stdout\n{out[-4000:]}\n--- stderr\n{err[-4000:]}"
        ) from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def launch_ok(worker: str, nproc: int, *args, **kwargs):
    done = launch(worker, nproc, *args, **kwargs)
    assert done.returncode == 0, (
        f"{worker} on {nproc} ranks exited with {done.returncode}\n"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    )
    return done


@pytest.fixture(scope="session")
def mpi_launch():
    return launch


@pytest.fixture(scope="session")
def mpi_launch_ok():
    return launch_ok
