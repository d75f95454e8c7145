"""gradstack_distributed: ``torch.distributed`` for gradstack, on MPI.

Process groups (``init_process_group(backend="mpi")``: the rank and world size come from
MPI's launcher), collectives on gradstack tensors that hand MPI the tensors' own memory,
``DistributedDataParallel`` (bucketed gradient averaging that overlaps backward),
``DistributedSampler``, and a launcher (``python -m gradstack_distributed.run -n 2
script.py``).  In the full stack: ``gradstack.distributed``,
``gradstack.nn.parallel.DistributedDataParallel`` and
``gradstack.utils.data.distributed.DistributedSampler``.

Importing this package does not start MPI; ``init_process_group`` does.

Examples
--------
>>> import gradstack_distributed as dist
>>> dist.is_initialized(), dist.ReduceOp.SUM
(False, <RedOpType.SUM: 0>)
"""

from .__about__ import __version__
from .all_to_all import all_to_all, all_to_all_single
from .collectives import (
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .faults import DistBackendError, DistError
from .monitored_barrier import monitored_barrier
from .mpi import MPIUnavailableError
from .object_collectives import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .p2p_batch import P2POp, batch_isend_irecv
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
)
from .reduce_op import ReduceOp

__all__ = [
    "Backend",
    "DistBackendError",
    "DistError",
    "GroupMember",
    "MPIUnavailableError",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "__version__",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_gloo_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "reduce_scatter",
    "scatter",
    "scatter_object_list",
    "send",
]

# (sync_batch_norm fills nn-mini's SyncBatchNorm slot when imported)
from . import sync_batch_norm as _sync_batch_norm  # noqa: E402,F401
from .ddp import DistributedDataParallel  # noqa: E402
from .sampler import DistributedSampler  # noqa: E402

__all__ += ["DistributedDataParallel", "DistributedSampler"]
