"""Minor page faults per DDP step after warm-up (Note [Freed memory stays in the process]).

Rank 0 prints ``faults-per-step N`` (the median over 10 steps of an MLP 784-512-512-10,
batch 256, after 5 warm-up steps) and ``kept True|False`` (whether malloc was tuned).
"""

from __future__ import annotations

import resource
import statistics

import gradstack_distributed as dist
import gradstack_nn as nn
import gradstack_nn.functional as F
import gradstack_tensor as gt
from gradstack_distributed import _malloc

dist.init_process_group("mpi")
gt.manual_seed(dist.get_rank())
model = nn.Sequential(
    nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
)
ddp = dist.DistributedDataParallel(model)
opt = nn.optim.SGD(ddp.parameters(), lr=0.01)
x, y = gt.randn(256, 784), gt.randn(256, 10)
counts = []
for step in range(15):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    F.mse_loss(ddp(x), y).backward()
    opt.step()
    opt.zero_grad()
    if step >= 5:
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
if dist.get_rank() == 0:
    kept = _malloc.keep_freed_memory()  # idempotent: says whether the tuning applies here
    print(f"faults-per-step {statistics.median(counts)}", flush=True)
    print(f"kept {kept}", flush=True)
dist.destroy_process_group()
