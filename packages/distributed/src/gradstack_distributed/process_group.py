"""Process groups: ``init_process_group`` on MPI, the world group, ``new_group``.

A :class:`ProcessGroup` wraps an MPI communicator.  ``init_process_group(backend="mpi")``
starts MPI and takes the rank and the world size from it (``mpiexec -n N`` decides them);
the group's communicator is a duplicate of ``MPI_COMM_WORLD``, so gradstack's traffic
never mixes with a program's own mpi4py messages.  ``new_group(ranks)`` splits the world
(every rank calls it, members or not, as torch requires); ranks in calls are global ranks.

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    import gradstack_distributed as dist   # gradstack.distributed in the full stack
    dist.init_process_group(backend="mpi")
    print(dist.get_rank(), "of", dist.get_world_size())
    dist.destroy_process_group()
"""

from __future__ import annotations

import datetime
import time
import warnings

from . import faults, liveness, mpi
from ._malloc import keep_freed_memory

__all__ = [
    "Backend",
    "ProcessGroup",
    "GroupMember",
    "group",
    "default_pg_timeout",
    "is_available",
    "is_mpi_available",
    "is_gloo_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "is_initialized",
    "init_process_group",
    "destroy_process_group",
    "new_group",
    "get_rank",
    "get_world_size",
    "get_backend",
    "get_process_group_ranks",
    "get_group_rank",
    "get_global_rank",
]

default_pg_timeout = datetime.timedelta(minutes=30)
"""torch's default: a blocking call waits up to 30 minutes for the other ranks."""


class Backend(str):
    """The name of a backend; gradstack.distributed has one: ``Backend.MPI == "mpi"``."""

    MPI = "mpi"
    UNDEFINED = "undefined"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        value = name.lower()
        if value != cls.MPI:
            raise ValueError(
                f"gradstack.distributed runs on MPI only: backend must be 'mpi' (or None), "
                f"not {name!r}.  MPI works on CPUs, one machine or many; launch with "
                "`python -m gradstack.distributed.run -n N script.py` or `mpiexec -n N "
                "python script.py`."
            )
        return super().__new__(cls, value)


def _seconds(timeout, what: str) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, int | float) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise TypeError(
            f"{what} must be a datetime.timedelta (or seconds as a number), not "
            f"{type(timeout).__name__}"
        )
    if not seconds > 0:
        raise ValueError(f"{what} must be positive, got {timeout!r}")
    return seconds


class ProcessGroup:
    """A group of ranks and its MPI communicator (torch's ``ProcessGroup``).

    ``rank()`` and ``size()`` are this process's rank in the group and the group's size;
    ``timeout`` (seconds) bounds every blocking call on the group.  ``ledger`` numbers the
    calls made on it (Note [No rank left waiting] in ``liveness.py``) under a key that
    names the group the same way on every rank (``"world"``, ``"group1"`` ...).
    """

    def __init__(self, comm, global_ranks, timeout: float | None, name: str, key: str):
        self.comm = comm
        self.global_ranks = tuple(global_ranks)
        self.timeout = timeout
        self.group_name = name
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self.ledger = liveness.Ledger(key, self.global_ranks)
        self.ddp_count = 0  # DistributedDataParallel modules on this group (their keys)
        # duplicates of the communicator, made now, in the same place on every rank (a Dup
        # is collective: made at the first send, it would hang a rank that never sends):
        # the collectives' checks (Note [Checks and data on communicators of their own] in
        # collectives.py), and send/recv's headers and data
        requests = [comm.Idup(), comm.Idup(), comm.Idup()]
        deadline = None if timeout is None else time.monotonic() + timeout
        faults.wait_for(
            [r for _, r in requests], deadline, lambda: f"{name}: creating its communicators",
            timeout,
        )  # fmt: skip
        self.check_comm = requests[0][0]
        self._p2p = (requests[1][0], requests[2][0])
        self.pending = []  # checked calls whose data has not started (collectives.py)
        self.starting = False  # collectives.py is starting pending calls in order

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return Backend.MPI

    def deadline(self, timeout=None) -> tuple[float | None, float | None]:
        """``(deadline, seconds)``: the ``time.monotonic()`` by which a blocking call must
        end and the timeout it comes from (``timeout`` or the group's; None: no limit)."""
        seconds = _seconds(timeout, "timeout") if timeout is not None else self.timeout
        return (None if seconds is None else time.monotonic() + seconds), seconds

    def p2p_comms(self):
        """Two duplicates of the communicator for send/recv: headers, then data."""
        return self._p2p

    def wait(self, requests, what: str, seqs=None, timeout=None) -> None:
        """Wait for MPI requests of this group with its deadline (``timeout`` overrides),
        raising if a member that the calls ``seqs`` of the ledger need left."""
        deadline, seconds = self.deadline(timeout)
        watch = None if seqs is None else liveness_watch(self.ledger, seqs)
        faults.wait_for(requests, deadline, lambda: f"{what} on rank {self._rank}", seconds, watch)

    def group_rank_of(self, global_rank: int, what: str) -> int:
        try:
            return self.global_ranks.index(global_rank)
        except ValueError:
            raise ValueError(
                f"{what}: global rank {global_rank} is not part of the group (its ranks are "
                f"{list(self.global_ranks)})"
            ) from None

    def free(self) -> None:
        for comm in (self.comm, self.check_comm, *(self._p2p or ())):
            if comm is not None:
                comm.Free()
        self.comm = None
        self.check_comm = None
        self._p2p = None

    def __repr__(self) -> str:
        return (
            f"<ProcessGroup mpi ranks={list(self.global_ranks)} rank={self._rank}"
            f"{' (destroyed)' if self.comm is None else ''}>"
        )


class _NonGroupMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


_NON_GROUP_MEMBER = _NonGroupMember()
_world: ProcessGroup | None = None
_groups: list[ProcessGroup] = []
_new_groups = [0]  # new_group calls since init (every rank counts them: the groups' keys)


class _CallWatch:
    """What a wait on calls ``seqs`` of a ledger asks: did a member they need leave?"""

    __slots__ = ("ledger", "seqs")

    def __init__(self, ledger, seqs):
        self.ledger, self.seqs = ledger, seqs

    def departure(self, now: float) -> str | None:
        return liveness.collective_problem(self.ledger, self.seqs, now)


def liveness_watch(ledger, seqs) -> _CallWatch:
    """The watch of a wait on the calls ``seqs`` of ``ledger`` (for ``faults.wait_for``)."""
    return _CallWatch(ledger, seqs)


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802 - torch's name
        return _world


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD`` (the default group, or None before init) and the sentinel
    ``GroupMember.NON_GROUP_MEMBER`` that ``new_group`` returns to non-members."""

    NON_GROUP_MEMBER = _NON_GROUP_MEMBER


class group(metaclass=_WorldMeta):  # noqa: N801 - torch's name
    """``group.WORLD``: the default process group."""


def is_available() -> bool:
    """Whether gradstack.distributed can run here: mpi4py and an MPI library load."""
    try:
        mpi.load()
    except mpi.MPIUnavailableError:
        return False
    return True


def is_mpi_available() -> bool:
    """Same as :func:`is_available` (the MPI backend is the only one)."""
    return is_available()


def is_gloo_available() -> bool:
    """False: gradstack's only backend is MPI (no Gloo)."""
    return False


def is_nccl_available() -> bool:
    """False: NCCL is CUDA's, and gradstack computes on the CPU."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by torchelastic (``torchrun``), as torch decides:
    the ``TORCHELASTIC_RUN_ID`` environment variable is set."""
    import os

    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether the default process group was initialised (and not destroyed)."""
    return _world is not None


def _not_initialized() -> ValueError:
    return ValueError(
        "Default process group has not been initialized, please make sure to call "
        "init_process_group."
    )


def world() -> ProcessGroup:
    """The default group; ValueError (torch's words) before ``init_process_group``."""
    if _world is None:
        raise _not_initialized()
    return _world


def resolve(group_arg) -> ProcessGroup | None:
    """The group a call runs on: None for a non-member (the call is then skipped)."""
    if group_arg is None:
        return world()
    if group_arg is _NON_GROUP_MEMBER:
        world()
        return None
    if not isinstance(group_arg, ProcessGroup):
        raise TypeError(
            f"group must be a ProcessGroup (from new_group) or None, not {type(group_arg).__name__}"
        )
    if group_arg.comm is None:
        raise ValueError(f"{group_arg!r} was destroyed by destroy_process_group")
    return group_arg


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Start MPI and create the default process group (collective over all ranks).

    Parameters
    ----------
    backend : str or None
        ``"mpi"`` or None (the same).  Any other backend raises ValueError.
    init_method, store : ignored
        MPI's launcher (mpiexec, srun) already connects the ranks.
    timeout : datetime.timedelta or float, optional
        The longest any blocking call on this group waits for the other ranks (default 30
        minutes, as torch); past it the call raises :class:`DistBackendError`.
    world_size, rank : int, optional
        MPI decides both; if given they must agree with MPI's (ValueError otherwise).

    Examples
    --------
    >>> import gradstack_distributed as dist
    >>> dist.is_initialized()
    False
    """
    global _world
    if _world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    Backend(Backend.MPI if backend is None else backend)  # validates
    seconds = _seconds(timeout, "timeout") if timeout is not None else None
    if seconds is None:
        seconds = default_pg_timeout.total_seconds()
    if store is not None:
        warnings.warn("init_process_group: store is ignored by the MPI backend", stacklevel=2)
    MPI = mpi.start()
    keep_freed_memory()  # Note [Freed memory stays in the process]
    comm_world = MPI.COMM_WORLD
    size, me = comm_world.Get_size(), comm_world.Get_rank()
    for name, given, actual in (("world_size", world_size, size), ("rank", rank, me)):
        if given is not None and given != -1 and given != actual:
            raise ValueError(
                f"init_process_group: {name}={given} disagrees with MPI, which started this "
                f"process as rank {me} of {size}; with MPI the launcher decides both "
                f"(`mpiexec -n N`), so leave them out"
            )
    # from here on an uncaught exception (a timeout below included) ends every rank
    faults.install_abort_hook(me, size, before_abort=liveness.leave)
    comm, request = comm_world.Idup()
    deadline = time.monotonic() + seconds
    faults.wait_for(
        [request], deadline, lambda: f"init_process_group on rank {me} of {size}", seconds
    )
    liveness.reset()
    _new_groups[0] = 0
    pg = ProcessGroup(comm, range(size), seconds, group_name or "default_pg", "world")
    # Note [No rank left waiting]: every rank connects to rank 0's liveness hub
    liveness.start(comm, lambda requests, what: pg.wait(requests, what))
    _world = pg


def destroy_process_group(group=None) -> None:
    """Destroy ``group``, or every group and the default one when None.

    MPI itself stays up (it cannot restart in a process), so ``init_process_group`` may be
    called again; it is finalised when the interpreter exits.
    """
    global _world
    if group is None:
        if _world is None:
            raise _not_initialized()
        for pg in _groups:
            if pg.comm is not None:
                pg.free()
        _groups.clear()
        _world.free()
        _world = None
        faults.remove_abort_hook()
        liveness.leave("called destroy_process_group()")
        return
    if group is _NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    if pg is _world:
        destroy_process_group(None)
        return
    pg.free()
    if pg in _groups:
        _groups.remove(pg)


def new_group(
    ranks=None,
    timeout=None,
    backend=None,
    pg_options=None,
    use_local_synchronization: bool = False,
    group_desc: str | None = None,
):
    """A group of the given global ranks (every rank of the world must call this).

    Ranks are sorted (as torch does); the group's rank of a process is its position in
    that order.  A process outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``.
    """
    pg_world = world()
    if backend is not None:
        Backend(backend)
    if use_local_synchronization:
        raise ValueError(
            "new_group(use_local_synchronization=True) is not available with MPI: creating "
            "a communicator is collective over the whole world"
        )
    size = pg_world.size()
    if ranks is None:
        members = list(range(size))
    else:
        members = sorted({int(r) for r in ranks})
        bad = [r for r in members if not 0 <= r < size]
        if bad:
            raise ValueError(
                f"new_group: ranks {bad} are outside the world of {size} ranks (0..{size - 1})"
            )
    MPI = mpi.load()
    me = pg_world.rank()
    color = 0 if me in members else MPI.UNDEFINED
    seconds = _seconds(timeout, "timeout") if timeout is not None else pg_world.timeout
    _new_groups[0] += 1
    key = f"group{_new_groups[0]}"
    # agree first (with a deadline, and hearing of ranks that left) that everybody reached
    # new_group, then split
    seq = pg_world.ledger.begin()
    pg_world.wait([pg_world.comm.Ibarrier()], "new_group", (seq,), seconds)
    pg_world.ledger.end(seq)
    comm = pg_world.comm.Split(color, me)
    if comm == MPI.COMM_NULL:
        return _NON_GROUP_MEMBER
    pg = ProcessGroup(comm, members, seconds, group_desc or f"group_{len(_groups) + 1}", key)
    _groups.append(pg)
    return pg


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world), or -1 if not a member."""
    pg = resolve(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    """The number of ranks in ``group`` (default: the world), or -1 for a non-member."""
    pg = resolve(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    """The backend of ``group``: always ``"mpi"``."""
    resolve(group)
    return Backend(Backend.MPI)


def get_process_group_ranks(group) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("get_process_group_ranks: this rank is not a member of the group")
    return list(pg.global_ranks)


def get_group_rank(group, global_rank: int) -> int:
    """The group rank of ``global_rank`` in ``group`` (ValueError if it is not a member)."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("get_group_rank: this rank is not a member of the group")
    return pg.group_rank_of(global_rank, "get_group_rank")


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of the member with rank ``group_rank`` in ``group``."""
    pg = resolve(group)
    if pg is None:
        raise ValueError("get_global_rank: this rank is not a member of the group")
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg!r}")
    return pg.global_ranks[group_rank]
