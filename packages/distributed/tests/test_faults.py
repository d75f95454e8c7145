"""A failing or missing rank ends the whole job with a message naming the rank.

Each case launches workers/faults.py on 2 ranks; the launch's own time limit (120 s)
turns a hang into a failure.  The sleeping rank would print "rank 1 woke" after 60 s:
its absence shows that MPI_Abort ended it.
"""

from __future__ import annotations

import pytest


def test_exception_on_one_rank_ends_every_rank(mpi_launch):
    done = mpi_launch("faults.py", 2, "exception")
    assert done.returncode != 0
    assert "rank 0 ready" in done.stdout and "rank 1 ready" in done.stdout
    assert (
        "[gradstack.distributed] rank 1 of 2 failed with an uncaught exception; ending every "
        "rank of the job (MPI_Abort):" in done.stderr
    )
    assert "[rank 1] ValueError: boom on purpose" in done.stderr
    assert "rank 0 went on" not in done.stdout


@pytest.mark.parametrize("mode", ["group_timeout", "call_timeout", "wait_timeout"])
def test_a_missing_rank_times_out_and_ends_the_job(mpi_launch, mode):
    done = mpi_launch("faults.py", 2, mode)
    assert done.returncode != 0
    what = "all_reduce"
    assert (
        f"caught DistBackendError: {what} on rank 0 (timeout 1 s): no matching call on every "
        "rank of the group before the timeout" in done.stdout
    )
    assert "[gradstack.distributed] rank 0 of 2 failed" in done.stderr
    assert "rank 1 woke" not in done.stdout  # the abort ended the sleeping rank
    assert "rank 0 went on" not in done.stdout
