"""``DistributedDataParallel``: data-parallel training of an nn-mini module over MPI ranks.

Every rank holds a replica of the module and runs forward and backward on its share of
the batch; DDP keeps the replicas identical: at construction it checks that every rank
has the same parameters (count, shapes, dtypes) and copies rank 0's parameters and
buffers to all; during backward it averages the gradients across ranks, in buckets that
start their all-reduce while backward still runs (see :mod:`.reducer`); before each
forward in training it copies rank 0's buffers to all (``broadcast_buffers``).  After
``loss.backward()`` every rank's ``.grad`` holds the average over ranks, so an optimizer
step gives the same parameters everywhere: the same as one process training on the
global batch (each rank's loss being the mean over its part).

Examples
--------
Run with ``python -m gradstack_distributed.run -n 2 train.py``::

    # in the full stack: gradstack.distributed, gradstack.nn.parallel.DistributedDataParallel
    import gradstack_distributed as dist
    import gradstack_nn as nn
    import gradstack_tensor as gt
    from gradstack_nn import optim

    dist.init_process_group("mpi")
    model = dist.DistributedDataParallel(nn.Linear(10, 1))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = gt.randn(8, 10), gt.randn(8, 1)              # this rank's part of the batch
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()                                    # gradients averaged over ranks
    opt.step()
"""

from __future__ import annotations

import contextlib
import time
import zlib

import numpy as np
from gradstack_autograd import is_grad_enabled
from gradstack_nn import Module
from gradstack_tensor import device as _device
from gradstack_tensor import ones, tensor, zeros

from . import faults, liveness, mpi
from .algorithms.join import Join, Joinable, JoinHook
from .collectives import all_reduce
from .process_group import liveness_watch, resolve
from .reduce_op import ReduceOp
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module, Joinable):
    """torch's ``DistributedDataParallel`` for gradstack modules on MPI (CPU only).

    Parameters
    ----------
    module : gradstack_nn.Module
        The replica of this rank; its parameters and buffers are overwritten with rank 0's.
    device_ids, output_device : None
        CPU modules take None (as in torch); anything else raises ValueError.
    dim : int
        Accepted for torch compatibility (only 0).
    broadcast_buffers : bool
        Copy rank 0's buffers to every rank before each synced forward (default True).
    process_group : ProcessGroup, optional
        The group to average over (default: the world).
    bucket_cap_mb : float, optional
        Bucket size in MiB (default 25, as torch; the first bucket is capped at 1 MiB).
    find_unused_parameters : bool
        Walk the graph after each forward to find parameters that will get no gradient
        (see Note [Unused parameters] in :mod:`.reducer`).
    gradient_as_bucket_view : bool
        Make each ``.grad`` a view of its gradient bucket after the first iteration, so
        that no gradient is copied (as in torch; ``zero_grad(set_to_none=True)`` undoes it
        for an iteration).  Default False: ``.grad`` tensors of their own.

    Attributes
    ----------
    module : Module
        The wrapped module (``state_dict`` keys start with ``module.``, as in torch).
    """

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
    ):
        super().__init__()
        Joinable.__init__(self)
        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel wraps a gradstack nn Module, not {type(module).__name__}"
            )
        if device_ids is not None or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules; gradstack runs on CPUs, so "
                f"leave them None (got device_ids={device_ids!r}, "
                f"output_device={output_device!r})"
            )
        if dim != 0:
            raise ValueError(f"DistributedDataParallel splits nothing; dim must be 0, got {dim}")
        if static_graph:
            raise ValueError(
                "static_graph=True is not supported by gradstack's DistributedDataParallel "
                "(find_unused_parameters covers graphs that change); leave it False"
            )
        if bucket_cap_mb is not None and not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be positive, got {bucket_cap_mb!r}")
        pg = resolve(process_group)
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not in process_group")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024**2)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.process_group = pg
        self._divide_by_initial_world_size = True
        # DDP's own traffic (see Note [Buckets ...] in reducer), its calls numbered by a
        # ledger of its own (Note [No rank left waiting] in liveness.py)
        seq = pg.ledger.begin()
        comm, request = pg.comm.Idup()
        pg.wait([request], "DistributedDataParallel: duplicating the communicator", (seq,))
        pg.ledger.end(seq)
        self._comm = comm
        self._ledger = liveness.Ledger(f"{pg.ledger.key}/ddp{pg.ddp_count}", pg.global_ranks)
        pg.ddp_count += 1
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        self._verify_same_model(named)
        self._broadcast([p for _, p in module.named_parameters()] + list(module.buffers()))
        self.reducer = Reducer(
            [p for _, p in named],
            [n for n, _ in named],
            pg,
            self._comm,
            self._ledger,
            self.bucket_bytes_cap,
            find_unused_parameters,
            gradient_as_bucket_view,
        )
        self.gradient_as_bucket_view = gradient_as_bucket_view

    # -- construction -------------------------------------------------------------------

    def _wait(self, requests, what: str) -> None:
        """Wait for calls on DDP's communicator (each counts as one call in its ledger)."""
        pg = self.process_group
        seqs = [self._ledger.begin() for _ in requests]
        seconds = pg.timeout
        deadline = None if seconds is None else time.monotonic() + seconds
        rank = pg.global_ranks[pg.rank()]
        faults.wait_for(
            requests,
            deadline,
            lambda: f"DistributedDataParallel: {what} on rank {rank}",
            seconds,
            liveness_watch(self._ledger, seqs),
        )
        for seq in seqs:
            self._ledger.end(seq)

    def _verify_same_model(self, named) -> None:
        """RuntimeError on every rank unless all ranks have the same parameters."""
        described = [(n, tuple(p.shape), str(p.dtype)) for n, p in named]
        digest = zlib.crc32(repr([(s, d) for _, s, d in described]).encode())
        mine = np.array([len(described), digest], dtype=np.int64)
        table = np.empty((self._comm.Get_size(), 2), dtype=np.int64)
        MPI = mpi.load()
        self._wait(
            [self._comm.Iallgather([mine, MPI.INT64_T], [table, MPI.INT64_T])],
            "checking the model",
        )
        if (table == table[0]).all():
            return
        everyone = self._comm.allgather(described)  # all ranks got here: same table
        for r, theirs in enumerate(everyone):
            if len(theirs) != len(everyone[0]):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {r} has "
                    f"{len(theirs)} params, while rank 0 has inconsistent "
                    f"{len(everyone[0])} params."
                )
        for r, theirs in enumerate(everyone):
            for (n0, s0, d0), (n, s, d) in zip(everyone[0], theirs):
                if (s, d) != (s0, d0):
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but Rank {r} has parameter "
                        f"{n} of shape {list(s)} and dtype {d}, while rank 0 has {n0} of shape "
                        f"{list(s0)} and dtype {d0}."
                    )

    def _broadcast(self, tensors, root: int = 0) -> None:
        """Copy the values of ``tensors`` (parameters, buffers) of group rank ``root`` to
        every rank."""
        arrays = [t.numpy(force=True) for t in tensors]
        staged = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
        requests = [self._comm.Ibcast([s, mpi.datatype_of(s.dtype)], root) for s in staged]
        self._wait(requests, f"broadcasting rank {root}'s parameters and buffers")
        for a, s in zip(arrays, staged):
            if s is not a:
                a[...] = s

    # -- training -----------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        grad_enabled = is_grad_enabled()
        sync = grad_enabled and self.require_backward_grad_sync
        if sync:
            self.reducer.check_prior_finished()
        self.reducer.finish_forward_works()  # of a forward that had no backward
        # Note [DDP's forward under join]: the calls below pair with _DDPJoinHook's
        work = Join.notify_join_context(self)
        if work is not None:
            self.reducer.set_forward_pass_work(work, self._divide_by_initial_world_size)
        if grad_enabled:
            self.reducer.rebuild_if_first()
        if self._will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        output = self.module(*inputs, **kwargs)
        if sync:
            self.require_forward_param_sync = True
            self.reducer.prepare_for_backward(output if self.find_unused_parameters else None)
        else:
            self.require_forward_param_sync = False
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward accumulates gradients locally without communicating; the first
        synced backward after it averages the accumulated gradients.

        Examples
        --------
        ::

            with ddp.no_sync():
                for x, y in micro_batches[:-1]:
                    loss_fn(ddp(x), y).backward()     # local accumulation only
            loss_fn(ddp(micro_batches[-1][0]), micro_batches[-1][1]).backward()  # averaged
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # -- join (torch's uneven-inputs support) -------------------------------------------

    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ) -> Join:
        """A context manager for training with uneven inputs across ranks (torch's).

        Inside it, a rank that ran out of inputs shadows the forward's and backward's
        collectives of the ranks that still train (zeros for its gradients), so that none
        hangs; once every rank ran out, the model of the last rank to join (the largest
        such rank) is copied to every rank.  See :mod:`gradstack_distributed.algorithms.join`.

        Parameters
        ----------
        divide_by_initial_world_size : bool
            True (default): gradients are always divided by the world size DDP started
            with, so that every input weighs the same.  False: by the number of ranks
            still training, as if the world had shrunk.
        enable : bool
            False turns uneven-input detection off.
        throw_on_early_termination : bool
            Raise RuntimeError on every rank as soon as one rank ran out of inputs, instead
            of continuing with fewer ranks.

        Examples
        --------
        ::

            with ddp.join():
                for x, y in batches_of_this_rank:      # ranks have different numbers
                    opt.zero_grad()
                    loss_fn(ddp(x), y).backward()
                    opt.step()
        """
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs) -> JoinHook:
        """DDP's :class:`JoinHook`: shadows one iteration's collectives on a joined rank;
        ``divide_by_initial_world_size`` (default True) is read from ``kwargs``."""
        divide_by_initial_world_size = kwargs.get("divide_by_initial_world_size", True)
        return _DDPJoinHook(self, divide_by_initial_world_size=divide_by_initial_world_size)

    @property
    def join_device(self):
        return _device("cpu")

    @property
    def join_process_group(self):
        return self.process_group

    def _will_sync_module_buffers(self) -> bool:
        return (
            self.require_forward_param_sync
            and self.broadcast_buffers
            and next(iter(self.module.buffers()), None) is not None
        )

    def _find_common_rank(self, input_rank: int, rank_cond: bool) -> int:
        """The largest group rank among those with ``rank_cond`` (all-reduce MAX)."""
        rank_to_use = tensor([input_rank if rank_cond else -1])
        all_reduce(rank_to_use, op=ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError(
                "BUG! Expected rank_cond to be true for at least one process. This "
                "indicates a bug in gradstack, please report an issue."
            )
        return int(rank_to_use.item())

    def _sync_buffers(self) -> None:
        """Copy the buffers of rank 0, or under join of the largest rank still training
        (rank 0 may have joined and hold stale buffers), to every rank."""
        if self._join_config.enable:
            root = self._find_common_rank(self.process_group.rank(), True)
        else:
            root = 0
        self._broadcast(list(self.module.buffers()), root)

    def _check_and_sync_module_buffers(self) -> None:
        """A joined rank's side of :meth:`_sync_buffers`."""
        if self._will_sync_module_buffers():
            root = self._find_common_rank(self.process_group.rank(), False)
            self._broadcast(list(self.module.buffers()), root)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank: bool):
        """An all-reduce telling joined ranks whether this iteration's backward syncs;
        a joined rank waits for it and returns the answer."""
        if not is_joined_rank and self.require_backward_grad_sync:
            requires_sync_tensor = ones(1)
        else:
            requires_sync_tensor = zeros(1)
        work = all_reduce(requires_sync_tensor, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return requires_sync_tensor.item() != 0
        self.reducer.add_forward_work(work)
        return None

    def _sync_final_model(self, is_last_joiner: bool) -> None:
        """After join: the model of the largest last joiner, copied to every rank."""
        self._authoritative_rank = self._find_common_rank(self.process_group.rank(), is_last_joiner)
        tensors = list(self.module.parameters())
        if self.broadcast_buffers:
            tensors += list(self.module.buffers())
        self._broadcast(tensors, self._authoritative_rank)

    def bucket_indices(self) -> list[list[int]]:
        """Which parameters (indices into the trainable ``module.parameters()``) each
        gradient bucket holds, in the order the buckets are all-reduced."""
        return self.reducer.bucket_indices()


class _DDPJoinHook(JoinHook):
    """What a joined rank does for DDP (torch's ``_DDPJoinHook``).

    Note [DDP's forward under join]
    Per iteration a training rank's forward makes, after ``Join.notify_join_context``: the
    bucket rebuild's broadcast (once, after the first iteration), the buffers' source rank
    (all-reduce MAX) and broadcast when buffers are synced, and an all-reduce saying
    whether the backward syncs; its backward all-reduces the buckets.  ``main_hook`` makes
    the same calls in the same order with neutral values, and skips the buckets when no
    training rank syncs (``no_sync``).  ``post_hook`` copies the model of the largest of
    the last ranks to join to every rank.
    """

    def __init__(self, ddp: DistributedDataParallel, divide_by_initial_world_size: bool):
        if not isinstance(ddp, DistributedDataParallel):
            raise AssertionError(
                "DDP join hook requires passing in a DistributedDataParallel "
                f"instance as the state, got {type(ddp).__name__}"
            )
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp.reducer.rebuild_if_first()  # buckets are rebuilt once in a training run
        ddp._check_and_sync_module_buffers()
        should_sync_backwards = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        # forward parameter sync is off in the next iteration if this one skips gradient sync
        ddp.require_forward_param_sync = should_sync_backwards
        if not should_sync_backwards:
            return
        ddp.reducer.match_backward()
        ddp.reducer.push_all_rebuilt_params()

    def post_hook(self, is_last_joiner: bool) -> None:
        self.ddp._sync_final_model(is_last_joiner)
