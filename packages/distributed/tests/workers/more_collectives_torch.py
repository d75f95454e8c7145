"""Worker: the value cases of more_collectives.py on torch's own gloo, for comparison.

    python more_collectives_torch.py RANK WORLD STORE_FILE OUT_DIR

Started once per rank by the test (no MPI); writes OUT_DIR/rank{r}.pkl with the same keys
as more_collectives.py for the cases it shares.
"""

import pickle
import sys
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

rank, world = int(sys.argv[1]), int(sys.argv[2])
OUT = Path(sys.argv[4])
dist.init_process_group("gloo", init_method=f"file://{sys.argv[3]}", rank=rank, world_size=world)
facts: dict[str, object] = {}


def obj_of(r: int):
    return {"rank": r, "items": list(range(r + 1)), "text": "x" * (100 * r), "t": (r, None)}


out = [None] * world
dist.all_gather_object(out, obj_of(rank))
facts["all_gather_object"] = out
src = world - 1
objs = [rank, "foo", {1: [2, 3]}, np.arange(3.0) * rank] if rank == src else [None] * 4
dist.broadcast_object_list(objs, src=src)
facts["broadcast_object_list"] = objs
gathered = [None] * world if rank == 1 else None
dist.gather_object(obj_of(rank), gathered, dst=1)
facts["gather_object"] = gathered
received = [None]
inputs = [("obj", i, "y" * (50 * i)) for i in range(world)] if rank == 0 else None
dist.scatter_object_list(received, inputs, src=0)
facts["scatter_object_list"] = received

# gloo's all_to_all wants tensors of one size (NCCL's does not: more_collectives.py
# checks parts of different sizes against exact values)
for dtype in ["float32", "int64", "bool"]:
    ins = [torch.from_numpy(np.full((2, 3), 100 * rank + j).astype(dtype)) for j in range(world)]
    outs = [torch.zeros((2, 3), dtype=getattr(torch, dtype)) for _ in range(world)]
    dist.all_to_all(outs, ins)
    facts[f"all_to_all_equal/{dtype}"] = [o.numpy().copy() for o in outs]

a = torch.from_numpy(np.arange(world * 2, dtype=np.float64) + 100 * rank)
o = torch.zeros(world * 2, dtype=torch.float64)
dist.all_to_all_single(o, a)
facts["all_to_all_single/equal"] = o.numpy().copy()
in_split = [(rank + j) % 3 for j in range(world)]
out_split = [(i + rank) % 3 for i in range(world)]
rows = [
    np.full((n, 3), 1000 * rank + 10 * j, dtype=np.int32) + np.arange(3, dtype=np.int32)
    for j, n in enumerate(in_split)
]
o = torch.zeros((sum(out_split), 3), dtype=torch.int32)
dist.all_to_all_single(
    o, torch.from_numpy(np.concatenate(rows)), output_split_sizes=out_split,
    input_split_sizes=in_split,
)  # fmt: skip
facts["all_to_all_single/uneven"] = o.numpy().copy()

nxt, prv = (rank + 1) % world, (rank - 1) % world
x, y = torch.zeros(3), torch.zeros(3)
ops = [
    dist.P2POp(dist.irecv, x, prv),
    dist.P2POp(dist.irecv, y, prv),
    dist.P2POp(dist.isend, torch.full((3,), float(rank)), nxt),
    dist.P2POp(dist.isend, torch.full((3,), 10.0 + rank), nxt),
]
works = dist.batch_isend_irecv(ops)
facts["batch"] = [[w.wait() for w in works], x.tolist(), y.tolist(), len(works)]
dist.barrier()
dist.destroy_process_group()
OUT.mkdir(parents=True, exist_ok=True)
(OUT / f"rank{rank}.pkl").write_bytes(pickle.dumps(facts))
