"""The gradient reducer behind :class:`DistributedDataParallel`: buckets and their
all-reduces, started from graph-engine's post-accumulate-grad hooks.

Note [Buckets, and why they start during backward]
Gradients are averaged in buckets: flat arrays of ~``bucket_cap_mb`` that hold the
gradients of several parameters of one dtype (torch's defaults: the first bucket is
capped at 1 MiB so that communication starts early, the others at 25 MiB).  A bucket is
all-reduced with ``MPI_Iallreduce`` as soon as the last of its gradients was accumulated
(``Tensor.register_post_accumulate_grad_hook``), so the data moves while backward
computes the gradients of earlier layers.  Buckets hold parameters in the reverse order
of ``parameters()`` at first (backward produces gradients roughly last layer first);
after the first iteration they are rebuilt in the order the gradients really became
ready (rank 0's order, broadcast, so that every rank builds the same buckets).
MPI requires every rank to start the same collectives in the same order, so buckets are
launched strictly in index order: a bucket that is ready early waits for its
predecessors.  Each hook also pokes MPI's progress engine (``MPI_Testall``) for the
buckets in flight, since MPI moves nonblocking data only inside MPI calls.  When the
last bucket was launched, the reducer waits for all of them and writes the averaged
gradients back into ``.grad`` (still inside that last hook: every parameter's gradient
is final by then).  With ``gradient_as_bucket_view=True`` (torch's option) each ``.grad``
*is* a view of its bucket after the first iteration: backward accumulates straight into
the bucket and the averaging divides it in place, which saves the two copies.

Note [Unused parameters]
A parameter that did not take part in the forward pass gets no gradient, so its hook
never fires and its bucket would never complete.  With ``find_unused_parameters=True``
the reducer walks the autograd graph from the forward's outputs (``grad_fn.
next_functions`` down to ``AccumulateGrad.variable``) and marks the parameters it does
not reach as ready when the first hook of the backward fires (their slot holds their
current ``.grad``, or zeros).  A used-map is all-reduced with the buckets: a parameter
unused on every rank keeps its ``.grad`` untouched (None stays None), one used on some
rank gets the average.  Without the flag, a forward after an incomplete reduction raises
torch's error and names the parameters that got no gradient.

Note [Join and the reducer]
Inside ``ddp.join()`` (:mod:`gradstack_distributed.algorithms.join`) a rank that ran out
of inputs calls :meth:`Reducer.match_backward` once per iteration of the others: the same
all-reduces on DDP's communicator, in the same bucket order, with zeros (and a zero
used-map), so that
the ranks still training complete theirs (the used-map it sends is the one its last
backward left, as torch's ``_get_local_used_map``).  The training ranks' gradients are summed over
every rank (the joined ones adding zeros) and divided by the world size, or, with
``divide_by_initial_world_size=False``, by the number of ranks still training: the result
of the forward's "not joined yet" all-reduce (``set_forward_pass_work``), as torch's
reducer does.  The forward's other asynchronous call (whether to sync this backward) is
completed in ``_finalize`` before the buckets are waited for.  A joined rank that never ran
a backward takes the parameters' order for the bucket rebuild
(``push_all_rebuilt_params``), so that its rebuild broadcast pairs with the others'.
"""

from __future__ import annotations

import time
import weakref

import numpy as np
from gradstack_autograd import AccumulateGrad
from gradstack_autograd.graph import increment_version
from gradstack_tensor import Tensor, from_numpy

from . import faults, mpi
from .process_group import liveness_watch

__all__ = ["Reducer", "assign_buckets", "DEFAULT_FIRST_BUCKET_BYTES"]

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def assign_buckets(sizes_bytes, dtypes, order, first_cap: int, cap: int) -> list[list[int]]:
    """Group parameter indices into buckets, torch's way.

    ``order`` lists the indices in the order gradients are expected; per dtype, a bucket is
    closed once it reaches its cap (``first_cap`` for the first bucket of that dtype,
    ``cap`` after); buckets are sorted by the position of their first parameter.

    Examples
    --------
    >>> assign_buckets([4, 4, 4], ["f", "f", "f"], [2, 1, 0], first_cap=4, cap=8)
    [[2], [1, 0]]
    """
    open_buckets: dict = {}
    closed: list[list[int]] = []
    n_closed: dict = {}
    for idx in order:
        key = dtypes[idx]
        bucket = open_buckets.setdefault(key, [[], 0])
        bucket[0].append(idx)
        bucket[1] += sizes_bytes[idx]
        limit = first_cap if n_closed.get(key, 0) == 0 else cap
        if bucket[1] >= limit:
            closed.append(bucket[0])
            n_closed[key] = n_closed.get(key, 0) + 1
            del open_buckets[key]
    closed.extend(b[0] for b in open_buckets.values())
    position = {idx: i for i, idx in enumerate(order)}
    closed.sort(key=lambda b: position[b[0]])
    return closed


class _Bucket:
    def __init__(self, indices, params):
        self.indices = list(indices)
        dtype = params[self.indices[0]].numpy(force=True).dtype
        total = sum(params[i].numel() for i in self.indices)
        self.buffer = np.zeros(total, dtype=dtype)
        self.slots = {}
        offset = 0
        for i in self.indices:
            arr = params[i].numpy(force=True)
            self.slots[i] = self.buffer[offset : offset + arr.size].reshape(arr.shape)
            offset += arr.size
        self.pending = len(self.indices)
        self.request = None
        self.seq = -1  # its all-reduce's number in DDP's ledger


class Reducer:
    """Averages the gradients of ``params`` over the ranks of ``pg`` (see the Notes).

    ``comm`` is the communicator to use (a duplicate of the group's, DDP's own) and
    ``ledger`` numbers the calls on it (Note [No rank left waiting] in ``liveness.py``).
    """

    def __init__(
        self, params, names, pg, comm, ledger, bucket_cap_bytes, find_unused_parameters,
        gradient_as_bucket_view=False,
    ):  # fmt: skip
        self.params = list(params)
        self.as_view = gradient_as_bucket_view
        self.names = list(names)
        self.pg = pg
        self.comm = comm
        self.ledger = ledger
        self.world_size = comm.Get_size()
        # Note [Join and the reducer]: the all-reduce of the forward that said "this rank
        # has not joined" (its result is the number of ranks still training), and whether
        # to divide by the initial world size anyway; the forward's other async calls
        self.join_work = None
        self.static_world_size = True
        self.forward_works: list = []
        self.used_seq = -1
        self.cap = int(bucket_cap_bytes)
        self.first_cap = min(DEFAULT_FIRST_BUCKET_BYTES, self.cap)
        self.find_unused = find_unused_parameters
        self.index_of = {id(p): i for i, p in enumerate(self.params)}
        self.expect_hooks = False  # a synced forward ran; its backward's hooks count
        self.require_finalize = False  # the backward started reducing and did not finish
        self.rebuilt = False
        self.ready_order: list[int] = []
        self.unused: list[int] = []
        self.marked_unused = False
        self.locally_used = np.zeros(len(self.params), dtype=np.int32)
        self.used_request = None
        self._build(list(reversed(range(len(self.params)))))
        me = weakref.ref(self)
        self.handles = [
            p.register_post_accumulate_grad_hook(_hook(me, i)) for i, p in enumerate(self.params)
        ]

    # -- buckets ----------------------------------------------------------------------

    def _build(self, order) -> None:
        arrays = [p.numpy(force=True) for p in self.params]
        groups = assign_buckets(
            [a.nbytes for a in arrays], [a.dtype.str for a in arrays], order,
            self.first_cap, self.cap,
        )  # fmt: skip
        self.buckets = [_Bucket(g, self.params) for g in groups]
        self.bucket_of = {i: b for b in self.buckets for i in b.indices}
        self.ready = np.zeros(len(self.params), dtype=bool)
        self.next_bucket = 0

    def bucket_indices(self) -> list[list[int]]:
        """The parameter indices of each bucket, in launch order."""
        return [list(b.indices) for b in self.buckets]

    def rebuild_if_first(self) -> None:
        """After the first iteration: buckets in rank 0's order of gradient readiness."""
        if self.rebuilt or len(self.ready_order) == 0:
            return
        self.rebuilt = True
        seen = set(self.ready_order)
        order = self.ready_order + [i for i in reversed(range(len(self.params))) if i not in seen]
        order_arr = np.array(order, dtype=np.int64)
        MPI = mpi.load()
        seq = self.ledger.begin()
        request = self.comm.Ibcast([order_arr, MPI.INT64_T], 0)
        self._wait([request], "rebuilding DDP's buckets", [seq])
        self.ledger.end(seq)
        self._build([int(i) for i in order_arr])
        if self.as_view:  # gradients move into the new buckets
            for i, p in enumerate(self.params):
                if p.grad is not None:
                    slot = self.bucket_of[i].slots[i]
                    np.copyto(slot, p.grad.numpy(force=True))
                    p.grad = from_numpy(slot)

    # -- one iteration ----------------------------------------------------------------

    def check_prior_finished(self) -> None:
        if not self.require_finalize:
            return
        missing = [self.names[i] for i in range(len(self.params)) if not self.ready[i]]
        rank = self.pg.rank()
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to "
            "`gradstack.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
            "function outputs participate in calculating loss.\n"
            f"Parameters which did not receive grad for rank {rank}: {', '.join(missing)}"
        )

    def prepare_for_backward(self, outputs) -> None:
        """Called after a synced forward: arm the hooks, find unused parameters."""
        self.expect_hooks = True
        self.ready[:] = False
        self.locally_used[:] = 0
        self.marked_unused = False
        self.next_bucket = 0
        for b in self.buckets:
            b.pending = len(b.indices)
            b.request = None
        self.used_request = None
        self.ready_order = [] if not self.rebuilt else self.ready_order
        self.unused = []
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in reached]

    def on_grad(self, index: int) -> None:
        if not self.expect_hooks:
            return
        self.require_finalize = True
        if not self.marked_unused:
            self.marked_unused = True
            for i in self.unused:
                self._mark_ready(i, used=False)
        self._mark_ready(index, used=True)

    def _mark_ready(self, index: int, used: bool) -> None:
        if self.ready[index]:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function, or a parameter used in several reentrant backward passes; 2) "
                "a backward through the same graph twice (retain_graph=True) in one "
                f"iteration. Parameter: {self.names[index]}"
            )
        self.ready[index] = True
        if not self.rebuilt:
            self.ready_order.append(index)
        bucket = self.bucket_of[index]
        slot = bucket.slots[index]
        grad = self.params[index].grad
        if grad is None:
            slot[...] = 0
        else:
            arr = grad.numpy(force=True)
            if not (self.as_view and _is_view_of(arr, slot)):  # else already in place
                np.copyto(slot, arr)
        if used:
            self.locally_used[index] = 1
        bucket.pending -= 1
        MPI = mpi.load()
        launched = [b.request for b in self.buckets[: self.next_bucket]]
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            b = self.buckets[self.next_bucket]
            b.seq = self.ledger.begin()
            b.request = self.comm.Iallreduce(
                MPI.IN_PLACE, [b.buffer, mpi.datatype_of(b.buffer.dtype)], MPI.SUM
            )
            self.next_bucket += 1
        if launched:
            MPI.Request.Testall(launched)  # progress for the buckets in flight
        if self.next_bucket == len(self.buckets):
            if self.find_unused:
                self.used_seq = self.ledger.begin()
                self.used_request = self.comm.Iallreduce(
                    MPI.IN_PLACE, [self.locally_used, MPI.INT32_T], MPI.MAX
                )
            self._finalize()

    def _wait(self, requests, what: str, seqs, hint: str = "") -> None:
        seconds = self.pg.timeout
        deadline = None if seconds is None else time.monotonic() + seconds
        rank = self.pg.global_ranks[self.pg.rank()]
        faults.wait_for(
            requests,
            deadline,
            lambda: f"DistributedDataParallel: {what} on rank {rank}{hint}",
            seconds,
            liveness_watch(self.ledger, seqs),
        )

    # -- join (Note [Join and the reducer]) -------------------------------------------

    def set_forward_pass_work(self, work, divide_by_initial_world_size: bool) -> None:
        """The forward's "not joined yet" all-reduce (its result: how many ranks train)."""
        self.join_work = work
        self.static_world_size = divide_by_initial_world_size

    def add_forward_work(self, work) -> None:
        """An async call of the forward (DDP's requires-sync all-reduce) to complete."""
        self.forward_works.append(work)

    def finish_forward_works(self) -> None:
        """Complete the async calls of the last forward (at the next forward, if that one
        had no backward)."""
        works, self.forward_works = self.forward_works, []
        if self.join_work is not None:
            works.insert(0, self.join_work)
            self.join_work = None
        for work in works:
            work.wait()

    def divide_factor(self) -> int:
        """What the summed gradients are divided by: the world size, or with join and
        ``divide_by_initial_world_size=False`` the number of ranks still training."""
        work, self.join_work = self.join_work, None
        if work is None:
            return self.world_size
        work.wait()
        if self.static_world_size:
            return self.world_size
        return int(work.result()[0].item())

    def match_backward(self) -> None:
        """A joined rank's side of one backward: every bucket's all-reduce with zeros (and
        the used-map's), in the buckets' order."""
        MPI = mpi.load()
        requests, seqs, keep = [], [], []
        for b in self.buckets:
            zeros = np.zeros_like(b.buffer)
            seqs.append(self.ledger.begin())
            requests.append(
                self.comm.Iallreduce(MPI.IN_PLACE, [zeros, mpi.datatype_of(zeros.dtype)], MPI.SUM)
            )
            keep.append(zeros)
        if self.find_unused:
            # torch's joined rank all-reduces its used-map as its last backward left it (a
            # parameter it used then counts as used, and gets a zero gradient rather than
            # None on the training ranks); the same here, for the same parameters
            used = self.locally_used.copy()
            seqs.append(self.ledger.begin())
            requests.append(self.comm.Iallreduce(MPI.IN_PLACE, [used, MPI.INT32_T], MPI.MAX))
            keep.append(used)
        self._wait(requests, "shadowing the gradient all-reduces of the ranks that train", seqs)
        for seq in seqs:
            self.ledger.end(seq)

    def push_all_rebuilt_params(self) -> None:
        """A joined rank that saw no backward takes the parameters' order for the bucket
        rebuild (as torch's ``_push_all_rebuilt_params``)."""
        if not self.rebuilt and not self.ready_order:
            self.ready_order = list(range(len(self.params)))

    def _finalize(self) -> None:
        w = self.divide_factor()
        self.finish_forward_works()
        requests = [b.request for b in self.buckets]
        seqs = [b.seq for b in self.buckets]
        if self.used_request is not None:
            requests.append(self.used_request)
            seqs.append(self.used_seq)
        hint = " (ranks with uneven inputs? see DistributedDataParallel.join())"
        self._wait(requests, "averaging gradients", seqs, hint)
        for seq in seqs:
            self.ledger.end(seq)
        for b in self.buckets:
            if self.as_view and w > 1:
                np.divide(b.buffer, w, out=b.buffer)  # one pass; the grads are views
            for i in b.indices:
                if self.find_unused and self.locally_used[i] == 0:
                    continue  # unused on every rank: .grad stays as it was
                p, slot = self.params[i], b.slots[i]
                grad = p.grad
                if self.as_view:
                    if grad is None or not _is_view_of(grad.numpy(force=True), slot):
                        p.grad = from_numpy(slot)
                elif grad is None:
                    p.grad = from_numpy(slot / w)
                elif w > 1:  # (with one rank the average is the gradient itself)
                    np.divide(slot, w, out=grad.numpy(force=True))
                elif self.world_size > 1:  # join: one rank left training, the sum is it
                    np.copyto(grad.numpy(force=True), slot)
                if grad is not None and p.grad is grad:
                    # written through numpy: say so, for a gradient zeroed by zero_grad()
                    # that this rank did not use (Note [Zeroed gradients count as None])
                    increment_version(grad)
        self.expect_hooks = False
        self.require_finalize = False

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


def _is_view_of(arr: np.ndarray, slot: np.ndarray) -> bool:
    """Whether ``arr`` is exactly ``slot``'s memory (a gradient living in its bucket)."""
    return (
        arr.ctypes.data == slot.ctypes.data and arr.shape == slot.shape and arr.flags.c_contiguous
    )


def _hook(reducer_ref, index: int):
    def hook(param) -> None:
        reducer = reducer_ref()
        if reducer is not None:
            reducer.on_grad(index)

    return hook


def _find_tensors(obj, found: list) -> None:
    """Every Tensor inside ``obj`` (nested lists, tuples, dicts), as torch's DDP looks."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            found.append(o)
        elif isinstance(o, list | tuple):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())


def _reachable_leaves(outputs) -> set[int]:
    """ids of the leaves whose AccumulateGrad nodes the outputs' graph reaches."""
    tensors: list = []
    _find_tensors(outputs, tensors)
    reached: set[int] = set()
    seen: set[int] = set()
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    for t in tensors:
        if t.grad_fn is None and t.requires_grad:
            reached.add(id(t))  # an output that is itself a parameter
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            reached.add(id(node.variable))
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return reached
