"""Collectives and point-to-point calls on gradstack tensors, with torch's signatures.

Each call hands MPI the tensor's own memory (the numpy array behind it, through
``Tensor.numpy(force=True)``, which shares storage): ``all_reduce``, ``broadcast``,
``reduce``, ``all_gather_into_tensor``, ``reduce_scatter_tensor``, ``send``/``recv``
and the receiving side of ``scatter`` copy nothing.  The list forms (``all_gather``,
``gather``, ``scatter``'s list) go through one contiguous staging array, since MPI
wants one buffer and the list's tensors lie anywhere.  Tensors handed to MPI must be
contiguous (a clear RuntimeError otherwise).  As in torch, in-place results do not bump
the tensor's version counter.

Note [Every collective checks its peers]
Before its data moves, each collective exchanges a 16-number signature with the other
ranks of the group (which call, op, root, dtype, shape).  If any rank differs, every
rank raises the same RuntimeError listing what each rank passed, instead of a hang or
silently wrong numbers (MPI would reduce a float32 buffer against a float64 one byte by
byte).  It costs one small allgather per call (microseconds in shared memory); DDP's
gradient buckets skip it, since DDP checks the model's parameters once at construction.
The exchange is nonblocking too: ``async_op=True`` returns a :class:`Work` at once, and
its data starts once the signatures agree (at the latest in ``wait()``).

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    import gradstack_tensor as gt
    import gradstack_distributed as dist     # gradstack.distributed in the full stack
    dist.init_process_group("mpi")
    t = gt.tensor([1.0, 2.0]) * (dist.get_rank() + 1)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)     # tensor([3., 6.]) on both ranks
    work = dist.all_reduce(t, async_op=True)     # ... compute here ...
    work.wait()
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from gradstack_tensor import Tensor

from . import faults, liveness, mpi
from .process_group import ProcessGroup, resolve
from .reduce_op import RedOpType, as_red_op

__all__ = [
    "Work",
    "barrier",
    "all_reduce",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "reduce_scatter",
    "gather",
    "scatter",
    "send",
    "recv",
    "isend",
    "irecv",
]


# ---------------------------------------------------------------------------------------
# Work handles


class Work:
    """The handle of an asynchronous call (``async_op=True``), as torch's ``Work``.

    ``wait()`` blocks until the data arrived (and the result is final: an ``AVG`` is
    divided, gathered lists are filled); ``is_completed()`` asks without blocking.  A call
    that cannot complete because a rank it needs left the job (Note [No rank left waiting]
    in ``liveness.py``) raises :class:`DistBackendError` from ``wait()``; ``is_completed()``
    is then True, ``is_success()`` False and ``exception()`` the error.
    """

    def __init__(self, pg: ProcessGroup, what: str, requests, finish=None, outputs=()):
        self._pg = pg
        self._what = what
        self._requests = list(requests)
        self._finish = finish
        self._outputs = list(outputs)
        self._done = False
        self._error: BaseException | None = None
        self._keep = None  # buffers MPI reads or writes until completion

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
            self._keep = None

    def _describe(self) -> str:
        return f"{self._what} on rank {_global_rank()}"

    def departure(self, now: float) -> str | None:
        """Why this call cannot complete because a rank left, or None (see liveness.py)."""
        return None

    def _failed(self, exc: BaseException) -> None:
        """A wait raised (a timeout, a rank that left): the call ends with that error."""
        self._error, self._done = exc, True

    def wait(self, timeout=None) -> bool:
        """Block until done; ``timeout`` (timedelta or seconds, default the group's)
        raises :class:`DistBackendError` when it passes.  Returns True."""
        if self._error is not None:
            raise self._error
        if not self._done:
            deadline, seconds = self._pg.deadline(timeout)
            try:
                faults.wait_for(self._requests, deadline, self._describe, seconds, self)
            except faults.DistBackendError as exc:
                self._failed(exc)
                raise
            self._complete()
        return True

    def _departed(self) -> bool:
        """Without blocking: whether a rank this call needs left (then it fails)."""
        problem = self.departure(time.monotonic())
        if problem is None:
            return False
        self._failed(faults.DistBackendError(f"{self._describe()}: {problem}"))
        return True

    def is_completed(self) -> bool:
        if not self._done and mpi.load().Request.Testall(self._requests):
            self._complete()
        elif not self._done:
            self._departed()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def result(self) -> list:
        """The output tensors of the call."""
        return list(self._outputs)

    def __repr__(self) -> str:
        return f"<Work {self._what} {'completed' if self._done else 'pending'}>"


def _global_rank() -> int:
    from .process_group import GroupMember

    w = GroupMember.WORLD
    return -1 if w is None else w.rank()


def _finish_blocking(work: Work, async_op: bool, timeout):
    if async_op:
        return work
    work.wait(timeout)
    return None


_groups_waiting: set = set()  # groups with checked calls whose data has not started


class _Checked(Work):
    """A collective in two steps (Note [Every collective checks its peers]): the ranks'
    signatures are exchanged first; the data moves once they agree.

    ``start()`` posts the data operation and returns ``(requests, finish, keep)``.
    Note [Calls start their data in the order they were made]: MPI wants every rank to
    start collectives on a communicator in the same order, and ranks may wait on their
    handles in different orders, so starting one call first starts every earlier call of
    the group that is still waiting for its check (``pg.pending``, in call order).

    Note [Checks and data on communicators of their own]
    MPI matches collectives on a communicator by the order in which each rank starts them.
    A check starts when the call is made; its data starts when the check completed, which
    depends on when each rank waits: a rank that makes two asynchronous calls starts
    check, check, data, data, a rank that makes the same two calls blocking starts check,
    data, check, data.  On one communicator that pairs one rank's check with another's
    data (MPICH aborts on the size mismatch).  So the checks go over a duplicate of the
    group's communicator (``pg.check_comm``) and the data over ``pg.comm``: on each, every
    rank starts in call order.

    Note [Calls progress while any call waits]
    An asynchronous call's data starts once its check completed, and the check needs the
    other ranks.  So that one rank's pending call never waits for this rank to wait on it
    (rank A blocked in a call on another communicator, DDP's say, while rank B waits for
    A's pending all_reduce: a deadlock), every wait that lasts starts, about once a
    millisecond, the data of the pending calls of every group whose checks completed, in
    order (``_progress_pending``, a ``faults.progress_hooks`` entry), as torch's
    backends progress asynchronous work in the background.
    """

    def __init__(self, pg: ProcessGroup, what: str, sig: np.ndarray, start, outputs=()):
        super().__init__(pg, what, [], None, outputs)
        MPI = mpi.load()
        self._start = start
        self._sig = sig
        self._table = np.empty((pg.size(), _SIG_LEN), dtype=np.int64)
        check = pg.check_comm.Iallgather([sig, MPI.INT64_T], [self._table, MPI.INT64_T])
        self._requests = [check]
        self._started = False
        ledger = pg.ledger  # ledger.begin(), inline: this is every collective's path
        self._seq = seq = ledger.started
        ledger.started = seq + 1
        ledger.open.add(seq)
        pg.pending.append(self)
        _groups_waiting.add(pg)

    def departure(self, now: float) -> str | None:
        return liveness.collective_problem(self._pg.ledger, (self._seq,), now)

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()
            self._keep = None
            self._pg.ledger.open.discard(self._seq)  # ledger.end(seq)

    def _start_in_order(self, deadline, seconds) -> None:
        pg = self._pg
        queue = pg.pending
        pg.starting = True
        try:
            while not self._started and queue:
                queue[0]._start_data(deadline, seconds)
                queue.pop(0)
        finally:
            pg.starting = False
        if self._error is not None:
            raise self._error

    def _start_data(self, deadline, seconds) -> None:
        try:
            faults.wait_for(self._requests, deadline, self._describe, seconds, self)
        except faults.DistBackendError as exc:
            self._failed(exc)
            raise
        self._started = True
        table = self._table
        if not (table == table[0]).all():
            lines = "; ".join(_explain(row, r) for r, row in enumerate(table))
            self._error = RuntimeError(
                f"{self._what}: the ranks of the group disagree: {lines}.  Every rank must "
                "make the same call with tensors of the same shape and dtype (and the same "
                "op and root)."
            )
            self._requests, self._done = [], True
            self._pg.ledger.end(self._seq)
            return
        self._requests, self._finish, self._keep = self._start()

    def wait(self, timeout=None) -> bool:
        if self._error is not None:
            raise self._error
        if not self._started:
            deadline, seconds = self._pg.deadline(timeout)
            self._start_in_order(deadline, seconds)
            if not self._done:
                try:
                    faults.wait_for(self._requests, deadline, self._describe, seconds, self)
                except faults.DistBackendError as exc:
                    self._failed(exc)
                    raise
                self._complete()
            return True
        return super().wait(timeout)

    def is_completed(self) -> bool:
        if not self._started and not self._done:
            if not mpi.load().Request.Testall(self._requests):
                self._departed()
                return self._done
            self._start_in_order(None, None)
        return super().is_completed()

    def is_success(self) -> bool:
        return self.is_completed() and self._error is None


def _progress_pending() -> None:
    """Start the data of pending calls whose checks completed, group by group, in order
    (Note [Calls progress while any call waits])."""
    if not _groups_waiting:
        return
    testall = mpi.load().Request.Testall
    for pg in list(_groups_waiting):
        queue = pg.pending
        if pg.starting or pg.comm is None:
            if pg.comm is None:
                _groups_waiting.discard(pg)
            continue
        pg.starting = True
        try:
            while queue and testall(queue[0]._requests):
                queue[0]._start_data(None, None)
                queue.pop(0)
        finally:
            pg.starting = False
        if not queue:
            _groups_waiting.discard(pg)


faults.progress_hooks.append(_progress_pending)


def _submit(pg, what, sig, start, outputs, async_op, timeout):
    return _finish_blocking(_Checked(pg, what, sig, start, outputs), async_op, timeout)


# ---------------------------------------------------------------------------------------
# Arguments


def _array(t, arg: str, fn: str, *, contiguous: bool = True, writeable: bool = False):
    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{arg}` of type gradstack.Tensor "
            f"but got {type(t)} instead."
        )
    if contiguous and not t.is_contiguous():
        raise RuntimeError(
            f"{fn}: `{arg}` is not contiguous (shape {tuple(t.shape)}, strides {t.stride()}); "
            "MPI sends and receives a tensor's memory as it lies.  Pass "
            f"`{arg}.contiguous()` (for an output: a contiguous tensor, then copy it back)."
        )
    a = t.numpy(force=True)
    if writeable and not a.flags.writeable:
        raise RuntimeError(f"{fn}: `{arg}` is read-only (its numpy storage is not writeable)")
    return a


def _tensor_list(lst, arg: str, fn: str, like: np.ndarray, n: int):
    if not isinstance(lst, list | tuple) or not all(isinstance(t, Tensor) for t in lst):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{arg}` of type "
            f"List[gradstack.Tensor] but got {type(lst)} instead."
        )
    if len(lst) != n:
        raise ValueError(f"{fn}: `{arg}` must hold {n} tensors (the group's size), not {len(lst)}")
    arrays = [t.numpy(force=True) for t in lst]
    for i, a in enumerate(arrays):
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(
                f"{fn}: `{arg}[{i}]` is {_describe_array(a)} but the tensor is "
                f"{_describe_array(like)}; every tensor must have the same shape and dtype"
            )
    return arrays


def _describe_array(a: np.ndarray) -> str:
    return f"{_DTYPE_NAMES.get(a.dtype, str(a.dtype))} of shape {tuple(a.shape)}"


def _buf(a: np.ndarray):
    """The mpi4py buffer spec of a contiguous array: [data, datatype] (mpi4py derives
    the counts, per rank for the gathers and scatters, from the buffer's size)."""
    return [a, mpi.datatype_of(a.dtype)]


def _root(pg: ProcessGroup, rank, group_rank, arg: str, fn: str) -> int:
    if rank is not None and group_rank is not None:
        raise ValueError(f"{fn}: give either `{arg}` or `group_{arg}`, not both")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{fn}: group_{arg}={group_rank} is not a rank of {pg!r}")
        return group_rank
    if rank is None:
        rank = 0
    return pg.group_rank_of(int(rank), fn)


def _skip(fn: str):
    warnings.warn(
        f"Running {fn} on global rank {_global_rank()} which does not belong to the given group.",
        stacklevel=3,
    )


# ---------------------------------------------------------------------------------------
# Reductions


_BOOL_OPS = {
    RedOpType.SUM: "LOR",
    RedOpType.MAX: "LOR",
    RedOpType.BOR: "LOR",
    RedOpType.PRODUCT: "LAND",
    RedOpType.MIN: "LAND",
    RedOpType.BAND: "LAND",
    RedOpType.BXOR: "LXOR",
}
_NUMBER_OPS = {
    RedOpType.SUM: "SUM",
    RedOpType.AVG: "SUM",  # then divided by the group's size
    RedOpType.PRODUCT: "PROD",
    RedOpType.MIN: "MIN",
    RedOpType.MAX: "MAX",
    RedOpType.BAND: "BAND",
    RedOpType.BOR: "BOR",
    RedOpType.BXOR: "BXOR",
}


def _mpi_op(op: RedOpType, dtype: np.dtype):
    MPI = mpi.load()
    if dtype == np.bool_:
        if op == RedOpType.AVG:
            raise RuntimeError("Cannot use ReduceOp.AVG with boolean inputs")
        return getattr(MPI, _BOOL_OPS[op])
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind == "f":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    return getattr(MPI, _NUMBER_OPS[op])


def _averager(a: np.ndarray, n: int):
    """Divide ``a`` in place by ``n`` (floats) or truncate toward zero (integers)."""

    def finish():
        if a.dtype.kind == "f":
            np.divide(a, n, out=a)
            return
        negative_inexact = (a < 0) & (a % n != 0)  # floor division rounds these down
        np.floor_divide(a, n, out=a)
        a[negative_inexact] += 1

    return finish


# ---------------------------------------------------------------------------------------
# Signatures (Note [Every collective checks its peers])

_KINDS = [
    "barrier",
    "all_reduce",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all",
]
_DTYPES = [
    np.bool_,
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.float16,
    np.float32,
    np.float64,
]
_DTYPE_CODES = {np.dtype(d): i for i, d in enumerate(_DTYPES)}
_DTYPE_NAMES = {
    np.dtype(d): f"gradstack.{n}"
    for d, n in zip(
        _DTYPES,
        ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"],
    )
}
_SIG_LEN = 16
_MAX_DIMS = _SIG_LEN - 7


def _signature(kind: str, a: np.ndarray | None, op=-1, root=-1, extra=-1) -> np.ndarray:
    sig = np.full(_SIG_LEN, -2, dtype=np.int64)
    sig[0] = _KINDS.index(kind)
    sig[1], sig[2], sig[6] = int(op), root, extra
    if a is not None:
        sig[3] = _DTYPE_CODES.get(a.dtype, 99)
        sig[4], sig[5] = a.size, a.ndim
        dims = a.shape if a.ndim <= _MAX_DIMS else (*a.shape[: _MAX_DIMS - 1], hash(a.shape))
        sig[7 : 7 + len(dims)] = dims
    return sig


def _explain(row: np.ndarray, rank: int) -> str:
    kind = _KINDS[row[0]] if 0 <= row[0] < len(_KINDS) else f"call #{row[0]}"
    words = [f"rank {rank} called {kind}"]
    if row[3] >= 0:
        dtype = _DTYPE_NAMES[np.dtype(_DTYPES[row[3]])] if row[3] < len(_DTYPES) else "?"
        ndim = int(row[5])
        shape = tuple(int(x) for x in row[7 : 7 + ndim]) if ndim <= _MAX_DIMS else "(> 9 dims)"
        words.append(f"with {dtype} of shape {shape}")
    if row[1] >= 0:
        words.append(f"op {RedOpType(int(row[1])).name}")
    if row[2] >= 0:
        words.append(f"root (group rank) {int(row[2])}")
    if row[6] >= 0:
        words.append(f"output of {int(row[6])} elements")
    return " ".join(words)


# ---------------------------------------------------------------------------------------
# The calls


def barrier(group=None, async_op: bool = False, device_ids=None, *, timeout=None):
    """Wait until every rank of the group reached the barrier."""
    pg = resolve(group)
    if pg is None:
        return _skip("barrier")
    sig = _signature("barrier", None)  # the signature exchange is the barrier
    return _submit(pg, "barrier", sig, lambda: ([], None, None), [], async_op, timeout)


def all_reduce(tensor, op=RedOpType.SUM, group=None, async_op: bool = False, *, timeout=None):
    """Reduce ``tensor`` across the group, in place on every rank (torch's semantics).

    Parameters
    ----------
    tensor : Tensor
        Contiguous; same shape and dtype on every rank.  Overwritten by the result.
    op : ReduceOp
        ``SUM`` (default), ``AVG``, ``PRODUCT``, ``MIN``, ``MAX`` (and ``BAND``, ``BOR``,
        ``BXOR`` for integers and bools).
    async_op : bool
        Return a :class:`Work` instead of waiting.
    timeout : datetime.timedelta or float, optional
        gradstack's addition: overrides the group's timeout for this call.
    """
    op = as_red_op(op)
    pg = resolve(group)
    if pg is None:
        return _skip("all_reduce")
    a = _array(tensor, "tensor", "all_reduce", writeable=True)
    mpi_op = _mpi_op(op, a.dtype)

    def start():
        request = pg.comm.Iallreduce(mpi.load().IN_PLACE, _buf(a), mpi_op)
        return [request], (_averager(a, pg.size()) if op == RedOpType.AVG else None), a

    sig = _signature("all_reduce", a, op)
    return _submit(pg, "all_reduce", sig, start, [tensor], async_op, timeout)


def reduce(
    tensor, dst=None, op=RedOpType.SUM, group=None, async_op=False, group_dst=None, *, timeout=None
):
    """Reduce ``tensor`` across the group into ``tensor`` on rank ``dst`` (global rank);
    the other ranks' tensors are left as they were."""
    op = as_red_op(op)
    pg = resolve(group)
    if pg is None:
        return _skip("reduce")
    root = _root(pg, dst, group_dst, "dst", "reduce")
    a = _array(tensor, "tensor", "reduce", writeable=True)
    mpi_op = _mpi_op(op, a.dtype)

    def start():
        if pg.rank() == root:
            request = pg.comm.Ireduce(mpi.load().IN_PLACE, _buf(a), mpi_op, root)
            return [request], (_averager(a, pg.size()) if op == RedOpType.AVG else None), a
        return [pg.comm.Ireduce(_buf(a), None, mpi_op, root)], None, a

    sig = _signature("reduce", a, op, root)
    return _submit(pg, "reduce", sig, start, [tensor], async_op, timeout)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None, *, timeout=None):
    """Copy ``tensor`` of rank ``src`` (a global rank) into ``tensor`` on every rank."""
    pg = resolve(group)
    if pg is None:
        return _skip("broadcast")
    if src is None and group_src is None:
        raise ValueError("broadcast: give the source rank, `src` (global) or `group_src`")
    root = _root(pg, src, group_src, "src", "broadcast")
    a = _array(tensor, "tensor", "broadcast", writeable=True)
    sig = _signature("broadcast", a, root=root)
    start = lambda: ([pg.comm.Ibcast(_buf(a), root)], None, a)  # noqa: E731
    return _submit(pg, "broadcast", sig, start, [tensor], async_op, timeout)


def all_gather(tensor_list, tensor, group=None, async_op=False, *, timeout=None):
    """Fill ``tensor_list[i]`` with rank i's ``tensor`` on every rank (group ranks)."""
    pg = resolve(group)
    if pg is None:
        return _skip("all_gather")
    a = _array(tensor, "tensor", "all_gather")
    outs = _tensor_list(tensor_list, "tensor_list", "all_gather", a, pg.size())

    def start():
        staging = np.empty((pg.size(), *a.shape), dtype=a.dtype)

        def finish():
            for out, part in zip(outs, staging):
                out[...] = part

        return [pg.comm.Iallgather(_buf(a), _buf(staging))], finish, (a, staging)

    sig = _signature("all_gather", a)
    return _submit(pg, "all_gather", sig, start, tensor_list, async_op, timeout)


def all_gather_into_tensor(
    output_tensor, input_tensor, group=None, async_op=False, *, timeout=None
):
    """Gather every rank's ``input_tensor`` into ``output_tensor``, concatenated along the
    first dimension (shape ``(world * n, ...)``) or stacked (``(world, n, ...)``)."""
    pg = resolve(group)
    if pg is None:
        return _skip("all_gather_into_tensor")
    fn = "all_gather_into_tensor"
    a = _array(input_tensor, "input_tensor", fn)
    out = _array(output_tensor, "output_tensor", fn, writeable=True)
    if out.dtype != a.dtype or out.size != a.size * pg.size():
        raise ValueError(
            f"{fn}: output_tensor must have the input's dtype and world_size ({pg.size()}) "
            f"times its elements: input is {_describe_array(a)}, output is {_describe_array(out)}"
        )
    sig = _signature(fn, a, extra=out.size)
    start = lambda: ([pg.comm.Iallgather(_buf(a), _buf(out))], None, (a, out))  # noqa: E731
    return _submit(pg, fn, sig, start, [output_tensor], async_op, timeout)


def reduce_scatter_tensor(
    output, input, op=RedOpType.SUM, group=None, async_op=False, *, timeout=None
):
    """Reduce ``input`` across ranks and give rank i the i-th of ``world`` equal chunks
    (along the first dimension) in ``output``."""
    op = as_red_op(op)
    pg = resolve(group)
    if pg is None:
        return _skip("reduce_scatter_tensor")
    fn = "reduce_scatter_tensor"
    a = _array(input, "input", fn)
    out = _array(output, "output", fn, writeable=True)
    if out.dtype != a.dtype or a.size != out.size * pg.size():
        raise ValueError(
            f"{fn}: input must have the output's dtype and world_size ({pg.size()}) times "
            f"its elements: input is {_describe_array(a)}, output is {_describe_array(out)}"
        )
    mpi_op = _mpi_op(op, a.dtype)

    def start():
        request = pg.comm.Ireduce_scatter_block(_buf(a), _buf(out), mpi_op)
        return [request], (_averager(out, pg.size()) if op == RedOpType.AVG else None), (a, out)

    sig = _signature(fn, a, op, extra=out.size)
    return _submit(pg, fn, sig, start, [output], async_op, timeout)


def reduce_scatter(
    output, input_list, op=RedOpType.SUM, group=None, async_op=False, *, timeout=None
):
    """Reduce the i-th tensor of every rank's ``input_list`` into rank i's ``output``
    (torch's list form of :func:`reduce_scatter_tensor`: the list, one tensor of
    ``output``'s shape and dtype per rank, is concatenated and reduced by it)."""
    pg = resolve(group)
    if pg is None:
        return _skip("reduce_scatter")
    import gradstack_tensor as gt

    fn = "reduce_scatter"
    if not isinstance(input_list, list | tuple) or len(input_list) != pg.size():
        size = len(input_list) if isinstance(input_list, list | tuple) else type(input_list)
        raise ValueError(
            f"{fn}: input_list must hold one tensor per rank of the group ({pg.size()}), got {size}"
        )
    _array(output, "output", fn, writeable=True)
    for i, t in enumerate(input_list):
        _array(t, f"input_list[{i}]", fn)
        if tuple(t.shape) != tuple(output.shape) or t.dtype != output.dtype:
            raise ValueError(
                f"{fn}: input_list[{i}] must have the output's shape {tuple(output.shape)} "
                f"and dtype {output.dtype}, got {tuple(t.shape)} and {t.dtype}"
            )
    flat = gt.cat([t.reshape(-1) for t in input_list])
    return reduce_scatter_tensor(output, flat, op, group, async_op, timeout=timeout)


def gather(
    tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None, *, timeout=None
):
    """Gather every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (global rank;
    default 0).  Only ``dst`` passes a list; the others pass None."""
    pg = resolve(group)
    if pg is None:
        return _skip("gather")
    root = _root(pg, dst, group_dst, "dst", "gather")
    a = _array(tensor, "tensor", "gather")
    if pg.rank() == root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        outs = _tensor_list(gather_list, "gather_list", "gather", a, pg.size())
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")

    def start():
        if pg.rank() != root:
            return [pg.comm.Igather(_buf(a), None, root)], None, a
        staging = np.empty((pg.size(), *a.shape), dtype=a.dtype)

        def finish():
            for out, part in zip(outs, staging):
                out[...] = part

        return [pg.comm.Igather(_buf(a), _buf(staging), root)], finish, (a, staging)

    sig = _signature("gather", a, root=root)
    outputs = gather_list if pg.rank() == root else []
    return _submit(pg, "gather", sig, start, outputs, async_op, timeout)


def scatter(
    tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None, *, timeout=None
):
    """Give rank i ``scatter_list[i]`` of rank ``src`` (global rank; default 0), in
    ``tensor``.  Only ``src`` passes a list; the others pass None."""
    pg = resolve(group)
    if pg is None:
        return _skip("scatter")
    root = _root(pg, src, group_src, "src", "scatter")
    a = _array(tensor, "tensor", "scatter", writeable=True)
    staging = None
    if pg.rank() == root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        ins = _tensor_list(scatter_list, "scatter_list", "scatter", a, pg.size())
        staging = np.stack(ins) if ins else np.empty((0, *a.shape), a.dtype)
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")

    def start():
        send = _buf(staging) if staging is not None else None
        return [pg.comm.Iscatter(send, _buf(a), root)], None, (a, staging)

    sig = _signature("scatter", a, root=root)
    return _submit(pg, "scatter", sig, start, [tensor], async_op, timeout)


# ---------------------------------------------------------------------------------------
# Point to point: a header (sender, dtype, shape) on one communicator, then the data on
# another, so that a receiver with the wrong tensor raises instead of truncating.


def _header(pg: ProcessGroup, a: np.ndarray) -> np.ndarray:
    h = _signature("barrier", a)  # kind unused; dtype, numel, shape as in signatures
    h[0] = pg.rank()
    return h


def _p2p_peer(pg: ProcessGroup, rank, group_rank, arg: str, fn: str) -> int:
    if rank is None and group_rank is None:
        raise ValueError(f"{fn}: give the peer rank, `{arg}` (global) or `group_{arg}`")
    peer = _root(pg, rank, group_rank, arg, fn)
    if peer == pg.rank():
        raise ValueError(
            f"Invalid {'destination' if arg == 'dst' else 'source'} rank: should not be the "
            "same as rank of the current process."
        )
    return peer


def _check_tag(tag) -> int:
    tag = int(tag)
    upper = mpi.load().COMM_WORLD.Get_attr(mpi.load().TAG_UB)
    if not 0 <= tag <= upper:
        raise ValueError(f"tag must be in 0..{upper} (MPI_TAG_UB), got {tag}")
    return tag


def isend(tensor, dst=None, group=None, tag: int = 0, group_dst=None) -> Work | None:
    """Send ``tensor`` to rank ``dst`` (global) without waiting; returns a :class:`Work`."""
    pg = resolve(group)
    if pg is None:
        return _skip("isend")
    peer = _p2p_peer(pg, dst, group_dst, "dst", "send")
    a = _array(tensor, "tensor", "send")
    tag = _check_tag(tag)
    head_comm, data_comm = pg.p2p_comms()
    header = _header(pg, a)
    MPI = mpi.load()
    requests = [
        head_comm.Isend([header, MPI.INT64_T], peer, tag),
        data_comm.Isend(_buf(a), peer, tag),
    ]
    work = _SendWork(pg, "send", requests, None, [tensor])
    work._keep = (header, a)
    work._peer = pg.global_ranks[peer]
    sent = pg.ledger.sent
    sent[work._peer] = sent.get(work._peer, 0) + 1
    return work


class _SendWork(Work):
    _peer = -1

    def departure(self, now: float) -> str | None:
        return liveness.peer_problem(
            self._pg.ledger, self._peer, _global_rank(), now, receiving=False
        )


def send(tensor, dst=None, group=None, tag: int = 0, group_dst=None, *, timeout=None) -> None:
    """Send ``tensor`` to rank ``dst`` (global rank) and wait until it left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait(timeout)


class _RecvWork(Work):
    """A receive in two steps: the header says who sent what; then the data."""

    def __init__(self, pg, a, tensor, source, tag):
        MPI = mpi.load()
        self._header = np.empty(_SIG_LEN, dtype=np.int64)
        head_comm, self._data_comm = pg.p2p_comms()
        any_source = MPI.ANY_SOURCE if source is None else source
        request = head_comm.Irecv([self._header, MPI.INT64_T], any_source, tag)
        super().__init__(pg, "recv", [request], None, [tensor])
        self._a, self._tag, self._stage = a, tag, 0
        self._source = None
        self._peer = None if source is None else pg.global_ranks[source]

    def departure(self, now: float) -> str | None:
        return liveness.peer_problem(
            self._pg.ledger, self._peer, _global_rank(), now, receiving=True,
            counted=self._stage == 0,
        )  # fmt: skip

    def _failed(self, exc: BaseException) -> None:
        super()._failed(exc)
        if self._stage == 0:  # withdraw the receive of the header (MPI can cancel a receive)
            for request in self._requests:
                request.Cancel()
            mpi.load().Request.Waitall(self._requests)

    def _advance(self) -> None:
        """After the header arrived: check it, then post the receive of the data."""
        h = self._header
        self._source = int(h[0])
        self._peer = self._pg.global_ranks[self._source]
        received = self._pg.ledger.received
        received[self._peer] = received.get(self._peer, 0) + 1
        theirs = h.copy()
        theirs[0] = 0
        mine = _header(self._pg, self._a)
        mine[0] = 0
        self._stage = 1
        if not (theirs == mine).all():
            # drain the data message (so MPI's queues stay matched), then raise
            size = int(h[4]) * np.dtype(_DTYPES[h[3]]).itemsize if 0 <= h[3] < len(_DTYPES) else 0
            sink = np.empty(max(size, 1), dtype=np.uint8)
            MPI = mpi.load()
            self._requests = [self._data_comm.Irecv([sink, MPI.BYTE], self._source, self._tag)]
            super().wait()
            sent = _explain(np.concatenate([[0], h[1:]]), self._source).split(" with ", 1)[-1]
            raise RuntimeError(
                f"recv on rank {_global_rank()}: rank {self._pg.global_ranks[self._source]} "
                f"sent {sent}, but the receiving tensor is {_describe_array(self._a)}; "
                "the receiver must pass a tensor of the sender's shape and dtype"
            )
        self._requests = [self._data_comm.Irecv(_buf(self._a), self._source, self._tag)]

    def wait(self, timeout=None) -> bool:
        if self._stage == 0:
            super().wait(timeout)
            self._done = False
            self._advance()
        return super().wait(timeout)

    def is_completed(self) -> bool:
        if self._stage == 0 and not self._done:
            if not mpi.load().Request.Testall(self._requests):
                self._departed()
                return self._done
            self._advance()
        return super().is_completed()

    def source_rank(self) -> int:
        """The global rank that sent the data (known once the header arrived)."""
        if self._source is None:
            self.wait()
        return self._pg.global_ranks[self._source]


def irecv(tensor, src=None, group=None, tag: int = 0, group_src=None) -> Work | None:
    """Receive into ``tensor`` from rank ``src`` (global; None: any rank) without
    waiting; returns a :class:`Work` whose ``source_rank()`` names the sender."""
    pg = resolve(group)
    if pg is None:
        return _skip("irecv")
    source = None
    if src is not None or group_src is not None:
        source = _p2p_peer(pg, src, group_src, "src", "recv")
    a = _array(tensor, "tensor", "recv", writeable=True)
    return _RecvWork(pg, a, tensor, source, _check_tag(tag))


def recv(tensor, src=None, group=None, tag: int = 0, group_src=None, *, timeout=None) -> int:
    """Receive into ``tensor`` from rank ``src`` (global; None: any); returns the sender's
    global rank (-1 for a non-member, as torch)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait(timeout)
    return work.source_rank()
