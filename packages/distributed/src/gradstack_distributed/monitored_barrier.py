"""``monitored_barrier``: a barrier that names the ranks that did not arrive, as torch's.

As gloo's: every rank but group rank 0 sends rank 0 a one-byte message and waits for its
answer; rank 0 receives from every rank within ``timeout`` and answers them all.  A rank
that did not arrive in time makes rank 0 raise ``DistBackendError`` (a RuntimeError) with
torch's words, "[Rank 0]: Rank 2 failed to pass monitoredBarrier in 2000 ms" (with
``wait_all_ranks=True``: every missing rank, "Ranks 1, 2 failed ..."); a rank that gets no
answer in time raises "Rank 1 timed out in monitoredBarrier after 2000 ms".

Note [monitored_barrier's messages have a tag of their own]
The messages travel on the group's point-to-point communicators with tag ``MPI_TAG_UB``
(the largest tag MPI allows), so that they never match a user's ``recv`` with the usual
tags; a program that itself sends with tag ``MPI_TAG_UB`` must not have such messages in
flight during a monitored barrier.  A monitored barrier that timed out may leave such
messages unreceived (a rank's message to an absent rank 0), as gloo's does: before the
next one, rank 0 must receive them (``recv(t, src=i, tag=MPI_TAG_UB)`` of a one-byte
uint8 tensor) or the next barrier pairs them up wrongly.

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    from datetime import timedelta
    import gradstack_distributed as dist     # gradstack.distributed in the full stack
    dist.init_process_group("mpi")
    dist.monitored_barrier(timeout=timedelta(seconds=10))
"""

from __future__ import annotations

import time
import warnings
from datetime import timedelta

import numpy as np
from gradstack_tensor import from_numpy

from . import mpi
from .collectives import Work, _skip, irecv, isend
from .faults import DistBackendError
from .process_group import resolve

__all__ = ["monitored_barrier"]


def _timeout_seconds(pg, timeout) -> float | None:
    if timeout is None:
        return pg.timeout
    if isinstance(timeout, float):
        warnings.warn(
            "Please specify timeout arg as a timedelta. "
            f"Converting current value of {timeout} assuming it represents seconds",
            stacklevel=3,
        )
        timeout = timedelta(seconds=timeout)
    if not isinstance(timeout, timedelta):
        raise TypeError(
            f"Expected timeout argument to be of type datetime.timedelta, got {timeout}"
        )
    return timeout.total_seconds()


def monitored_barrier(group=None, timeout=None, wait_all_ranks: bool = False):
    """Wait until every rank of ``group`` arrived, or raise naming the ranks that did not
    within ``timeout`` (a ``datetime.timedelta``; default the group's timeout)."""
    pg = resolve(group)
    if pg is None:
        return _skip("monitored_barrier")
    seconds = _timeout_seconds(pg, timeout)
    deadline = None if seconds is None else time.monotonic() + seconds
    ms = "inf" if seconds is None else int(round(seconds * 1000))
    tag = mpi.load().COMM_WORLD.Get_attr(mpi.load().TAG_UB)
    rank, size = pg.rank(), pg.size()

    def left() -> float | None:
        return None if deadline is None else max(deadline - time.monotonic(), 1e-3)

    if rank != 0:
        try:
            _post(isend, 0, group, tag).wait(left())
            _post(irecv, 0, group, tag).wait(left())
        except DistBackendError as exc:
            raise DistBackendError(
                f"Rank {rank} timed out in monitoredBarrier after {ms} ms."
            ) from exc
        return None
    works = {i: _post(irecv, i, group, tag) for i in range(1, size)}
    failed: list[int] = []
    cause = None
    for i, work in works.items():  # one deadline for all, so every receive ends
        try:
            work.wait(left())
        except DistBackendError as exc:
            failed.append(i)
            cause = cause or exc
    if failed:
        who = f"Ranks {', '.join(map(str, failed))}" if wait_all_ranks else f"Rank {failed[0]}"
        raise DistBackendError(
            f"[Rank 0]: {who} failed to pass monitoredBarrier in {ms} ms"
        ) from cause
    for work in [_post(isend, i, group, tag) for i in range(1, size)]:
        work.wait(left())
    return None


def _post(op, peer: int, group, tag: int) -> Work:
    """A one-byte ``isend`` to, or ``irecv`` from, group rank ``peer``."""
    if op is isend:
        work = isend(from_numpy(np.ones(1, np.uint8)), group=group, tag=tag, group_dst=peer)
    else:
        work = irecv(from_numpy(np.zeros(1, np.uint8)), group=group, tag=tag, group_src=peer)
    assert work is not None  # the caller is a member of the group
    return work
