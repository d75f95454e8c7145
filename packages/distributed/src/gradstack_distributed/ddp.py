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

from . import faults, liveness, mpi
from .process_group import liveness_watch, resolve
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
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
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            self.reducer.check_prior_finished()
            self.reducer.rebuild_if_first()
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._broadcast(buffers)
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

    def bucket_indices(self) -> list[list[int]]:
        """Which parameters (indices into the trainable ``module.parameters()``) each
        gradient bucket holds, in the order the buckets are all-reduced."""
        return self.reducer.bucket_indices()
