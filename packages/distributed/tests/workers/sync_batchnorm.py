"""Worker: SyncBatchNorm on N ranks against one process's BatchNorm of the whole batch.

    python -m gradstack_distributed.run -n N sync_batchnorm.py OUT_DIR

Each rank normalises its slice of one global batch (the same on every rank) with a
SyncBatchNorm, backpropagates ``sum(out * w)`` over its slice, and saves its output slice,
input gradient, weight/bias gradients and running statistics; rank 0 also saves a plain
BatchNorm's on the whole batch, in one process.
"""

import sys
from pathlib import Path

import gradstack_distributed as dist
import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np

OUT = Path(sys.argv[1])
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
arrays = {}
rng = np.random.default_rng(7)
for case, shape in (
    ("2d", (6 * world, 3)),
    ("4d", (2 * world, 3, 4, 5)),
    ("3d", (3 * world, 2, 7)),
):
    x = rng.standard_normal(shape) * 3 + 1
    w = rng.standard_normal(shape)
    rows = slice(rank * shape[0] // world, (rank + 1) * shape[0] // world)
    for momentum in (0.1, None):
        key = f"{case}/{momentum}"
        bn = nn.SyncBatchNorm(shape[1], momentum=momentum).double()
        bn.weight.data = gt.tensor(np.linspace(0.5, 1.5, shape[1]))
        bn.bias.data = gt.tensor(np.linspace(-1, 1, shape[1]))
        xs = gt.tensor(x[rows], requires_grad=True)
        for _ in range(2):  # two steps: the running statistics move twice
            out = bn(xs)
        (out * gt.tensor(w[rows])).sum().backward()
        arrays[f"{key}/out"] = out.detach().numpy()
        arrays[f"{key}/grad"] = xs.grad.numpy()
        arrays[f"{key}/weight_grad"] = bn.weight.grad.numpy()
        arrays[f"{key}/bias_grad"] = bn.bias.grad.numpy()
        arrays[f"{key}/running_mean"] = bn.running_mean.numpy()
        arrays[f"{key}/running_var"] = bn.running_var.numpy()
        if rank == 0:
            ref = (
                nn.BatchNorm1d(shape[1], momentum=momentum).double()
                if len(shape) < 4
                else (nn.BatchNorm2d(shape[1], momentum=momentum).double())
            )
            ref.weight.data = gt.tensor(np.linspace(0.5, 1.5, shape[1]))
            ref.bias.data = gt.tensor(np.linspace(-1, 1, shape[1]))
            xa = gt.tensor(x, requires_grad=True)
            for _ in range(2):
                ref_out = ref(xa)
            (ref_out * gt.tensor(w)).sum().backward()
            arrays[f"{key}/ref_out"] = ref_out.detach().numpy()
            arrays[f"{key}/ref_grad"] = xa.grad.numpy()
            arrays[f"{key}/ref_weight_grad"] = ref.weight.grad.numpy()
            arrays[f"{key}/ref_bias_grad"] = ref.bias.grad.numpy()
            arrays[f"{key}/ref_running_mean"] = ref.running_mean.numpy()
            arrays[f"{key}/ref_running_var"] = ref.running_var.numpy()
np.savez(OUT / f"rank{rank}.npz", **arrays)
dist.destroy_process_group()
