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
from .mpi import MPIUnavailableError
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
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "__version__",
    "all_gather",
    "all_gather_into_tensor",
    "all_reduce",
    "barrier",
    "broadcast",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
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
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter_tensor",
    "reduce_scatter",
    "scatter",
    "send",
]

from .ddp import DistributedDataParallel  # noqa: E402
from .sampler import DistributedSampler  # noqa: E402

__all__ += ["DistributedDataParallel", "DistributedSampler"]
