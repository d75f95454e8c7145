"""Faults across ranks: an uncaught exception on one rank ends every rank, waits time out,
and waits hear of ranks that left (Note [No rank left waiting] in ``liveness.py``).

Note [One failing rank must not hang the others]
With MPI, a rank that dies with an exception leaves the other ranks blocked in their next
collective forever.  While a process group is initialised, :func:`install_abort_hook`
replaces ``sys.excepthook`` (and ``threading.excepthook``): the traceback is printed
with a header naming the failing rank, then ``MPI_Abort`` on ``COMM_WORLD`` makes
mpiexec end every rank of the job with a non-zero exit status.  This is what
``python -m mpi4py`` does for scripts; doing it in ``init_process_group`` covers plain
``mpiexec -n N python script.py`` too.

Note [Waiting with a deadline]
MPI's blocking calls cannot be interrupted, so every wait of gradstack.distributed is a
nonblocking operation polled with ``MPI_Testall`` until it completes or the deadline
passes.  MPI moves nonblocking data only inside MPI calls (no progress thread by
default), so the loop polls without sleeping, as ``MPI_Wait`` does; after the first 50
us it yields the CPU between polls (``sched_yield``) so that oversubscribed ranks (more
ranks than cores) let the ranks that still compute run.  Only a wait that lasted over a
second (a late or missing rank) naps between polls, 100 us at most.  A timed-out
collective cannot be cancelled (MPI has no way to withdraw from a collective), so the
group is unusable afterwards: the error says so, and left uncaught it ends every rank
through the abort hook.  A call whose requests complete at the first test returns before
any of the loop; in the loop, once a millisecond (so never in a wait shorter than that),
the wait runs ``progress_hooks`` (Note [Calls progress while any call waits] in
``collectives.py``) and asks its ``watch`` whether a rank it needs left the job, which
raises at once.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable

__all__ = ["DistError", "DistBackendError", "install_abort_hook", "remove_abort_hook", "wait_for"]


class DistError(RuntimeError):
    """An error of gradstack.distributed (torch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """An error from the communication backend, e.g. a timed-out collective."""


_SPIN_SECONDS = 5e-5
_BUSY_SECONDS = 1.0
_NAP_SECONDS = 1e-4
_CHECK_SECONDS = 1e-3

progress_hooks: list[Callable[[], None]] = []
"""Called about once a millisecond by every wait that lasts: collectives.py's starts the
data of asynchronous calls whose checks completed (Note [Calls progress while any call
waits] there)."""


def wait_for(requests, deadline: float | None, describe, seconds=None, watch=None) -> None:
    """Wait until every MPI request in ``requests`` completed.

    Raises :class:`DistBackendError` once ``time.monotonic()`` passes ``deadline`` (None:
    never), or as soon as ``watch.departure(now)`` names a rank that left the job and that
    this wait needs (Note [No rank left waiting] in ``liveness.py``).  ``describe()`` returns
    the words for the error (which call, which rank); ``seconds`` is the timeout the
    deadline comes from, for the message.
    """
    MPI = sys.modules["mpi4py.MPI"]
    if MPI.Request.Testall(requests):
        return
    start = time.monotonic()
    spin_until, busy_until = start + _SPIN_SECONDS, start + _BUSY_SECONDS
    check_at = start + _CHECK_SECONDS  # a wait under a millisecond does none of it
    testall, monotonic, yield_cpu = MPI.Request.Testall, time.monotonic, os.sched_yield
    while not testall(requests):
        now = monotonic()
        if deadline is not None and now > deadline:
            limit = "" if seconds is None else f" (timeout {seconds:g} s)"
            raise DistBackendError(
                f"{describe()}{limit}: no matching call on every rank of the group before the "
                "timeout; a rank is missing, late, or called a different collective.  The "
                "collective cannot be cancelled, so this process group is unusable now "
                "(left uncaught, this error ends every rank)."
            )
        if now >= check_at:
            check_at = now + _CHECK_SECONDS
            for hook in progress_hooks:
                hook()
            problem = None if watch is None else watch.departure(now)
            if problem is not None and not testall(requests):
                raise DistBackendError(
                    f"{describe()}: {problem}.  The call cannot complete, and this process "
                    "group is unusable now (left uncaught, this error ends every rank)."
                )
        if now < spin_until:
            continue
        if now < busy_until:
            yield_cpu()
        else:
            time.sleep(_NAP_SECONDS)


_saved_hooks = None
_REPORT_GRACE_SECONDS = 0.5


def install_abort_hook(rank: int, world_size: int, before_abort=None) -> None:
    """Make an uncaught exception print a header naming this rank, then ``MPI_Abort``.

    ``before_abort(how)`` runs first (the leaving notice, Note [No rank left waiting])."""
    global _saved_hooks
    if _saved_hooks is None:
        _saved_hooks = (sys.excepthook, threading.excepthook)

    def report_and_abort(exc_type, exc, tb, where="") -> None:
        header = (
            f"[gradstack.distributed] rank {rank} of {world_size} failed with an uncaught "
            f"exception{where}; ending every rank of the job (MPI_Abort):"
        )
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        prefixed = "".join(f"[rank {rank}] {line}\n" for line in text.rstrip("\n").split("\n"))
        try:
            sys.stderr.write(f"{header}\n{prefixed}")
            sys.stderr.flush()
            sys.stdout.flush()
            # Note [Let mpiexec forward the report before the abort]: the report sits in
            # the pipe to mpiexec's proxy; MPI_Abort makes mpiexec kill the proxies, and
            # a proxy killed before it read the pipe drops the report (seen once in CI:
            # the job ended, its stderr was empty).  A short pause lets the proxy forward
            # what is written; the job is ending anyway, so the pause costs nothing.
            time.sleep(_REPORT_GRACE_SECONDS)
        finally:
            if before_abort is not None:
                try:
                    before_abort(f"failed with an uncaught {exc_type.__name__}{where} (MPI_Abort)")
                except Exception:  # noqa: BLE001 - nothing may stop the abort
                    pass
            MPI = sys.modules["mpi4py.MPI"]
            if MPI.Is_initialized() and not MPI.Is_finalized():
                code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 1
                MPI.COMM_WORLD.Abort(code or 1)

    def excepthook(exc_type, exc, tb) -> None:
        if issubclass(exc_type, SystemExit):  # sys.exit(...): the interpreter handles it
            _saved_hooks[0](exc_type, exc, tb)
            return
        report_and_abort(exc_type, exc, tb)

    def thread_excepthook(args) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "a thread"
        report_and_abort(args.exc_type, args.exc_value, args.exc_traceback, f" in {name}")

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def remove_abort_hook() -> None:
    """Restore the exception hooks that :func:`install_abort_hook` replaced."""
    global _saved_hooks
    if _saved_hooks is not None:
        sys.excepthook, threading.excepthook = _saved_hooks
        _saved_hooks = None
