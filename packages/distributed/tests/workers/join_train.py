"""Worker: DDP's join with uneven inputs, gradstack on MPI (join_cases.py has the runs).

    python -m gradstack_distributed.run -n N join_train.py OUT_DIR

Rank r writes OUT_DIR/gradstack_rank{r}.npz (every case's parameters and buffers) and
OUT_DIR/gradstack_rank{r}.json (the errors of the cases, and the count of torch's tutorial
joinable, a Counter, after rank r counted 5 + r inputs).  ``JOIN_CASES=a,b`` runs only
those cases (for debugging).
"""

import json
import os
import sys
import types
from pathlib import Path

import gradstack_autograd
import gradstack_distributed as dist
import gradstack_nn
import gradstack_tensor
import numpy as np
from gradstack_distributed.algorithms import Join, Joinable, JoinHook
from join_cases import CASES, run_case

OUT = Path(sys.argv[1])
dist.init_process_group("mpi")
rank = dist.get_rank()
lib = types.SimpleNamespace(
    nn=gradstack_nn,
    optim=gradstack_nn.optim,
    float64=gradstack_tensor.float64,
    no_grad=gradstack_autograd.no_grad,
    from_numpy=gradstack_tensor.from_numpy,
    DDP=dist.DistributedDataParallel,
)
arrays, errors = {}, {}
for case in [c for c in CASES if c in os.environ.get("JOIN_CASES", c).split(",")]:
    state, errors[case] = run_case(case, rank, lib)
    arrays.update({f"{case}/{k}": v for k, v in state.items()})
    dist.barrier()


class Counter(Joinable):
    """torch's tutorial joinable: counts, across ranks, the inputs processed."""

    def __init__(self):
        super().__init__()
        self.count = gradstack_tensor.zeros(1)

    def __call__(self):
        Join.notify_join_context(self)
        t = gradstack_tensor.ones(1)
        dist.all_reduce(t)
        self.count += t

    def join_hook(self, **kwargs):
        return CounterJoinHook(self)

    @property
    def join_device(self):
        return gradstack_tensor.device("cpu")

    @property
    def join_process_group(self):
        return dist.group.WORLD


class CounterJoinHook(JoinHook):
    def __init__(self, counter):
        self.counter = counter

    def main_hook(self):
        dist.all_reduce(gradstack_tensor.zeros(1))

    def post_hook(self, is_last_joiner: bool):
        # the largest of the last ranks to join has the full count: give it to every rank
        common = gradstack_tensor.tensor([rank if is_last_joiner else -1])
        dist.all_reduce(common, op=dist.ReduceOp.MAX)
        self.counter.synced = self.counter.count.clone()
        dist.broadcast(self.counter.synced, src=int(common.item()))


counter = Counter()
with Join([counter]):
    for _ in range(5 + rank):
        counter()
errors["counter"] = counter.count.item()
errors["counter_synced"] = counter.synced.item()
np.savez(OUT / f"gradstack_rank{rank}.npz", **arrays)
(OUT / f"gradstack_rank{rank}.json").write_text(json.dumps(errors))
dist.destroy_process_group()
