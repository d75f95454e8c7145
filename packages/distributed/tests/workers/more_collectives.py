"""Worker: object collectives, all_to_all(_single), batch_isend_irecv, monitored_barrier.

    python -m gradstack_distributed.run -n N more_collectives.py OUT_DIR

Rank r pickles what it passed and got (and the errors it saw) to OUT_DIR/rank{r}.pkl;
the test checks them against the values torch's semantics give.
"""

import pickle
import sys
import warnings
from datetime import timedelta
from pathlib import Path

import gradstack_distributed as dist
import gradstack_tensor as gt
import numpy as np

OUT = Path(sys.argv[1])
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
facts: dict[str, object] = {}


def record(case: str, fn):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        facts[case] = ["ok", value, [str(w.message) for w in caught]]
    except Exception as exc:  # noqa: BLE001 - the test checks type and words
        facts[case] = [type(exc).__name__, str(exc)]


def obj_of(r: int):
    return {"rank": r, "items": list(range(r + 1)), "text": "x" * (100 * r), "t": (r, None)}


# object collectives ------------------------------------------------------------------
out = [None] * world
dist.all_gather_object(out, obj_of(rank))
facts["all_gather_object"] = out

src = world - 1
objs = [rank, "foo", {1: [2, 3]}, np.arange(3.0) * rank] if rank == src else [None] * 4
mine = objs
dist.broadcast_object_list(objs, src=src)
facts["broadcast_object_list"] = [objs, objs is mine]

gathered = [None] * world if rank == 1 else None
dist.gather_object(obj_of(rank), gathered, dst=1)
facts["gather_object"] = gathered

received = [None]
inputs = [("obj", i, "y" * (50 * i)) for i in range(world)] if rank == 0 else None
dist.scatter_object_list(received, inputs, src=0)
facts["scatter_object_list"] = received

# tensors inside objects travel by value (Note [Tensors inside objects])
from gradstack_nn import Parameter  # noqa: E402

out = [None] * world
payload = {
    "loss": gt.tensor(0.5 + rank),
    "w": gt.ones((2, 3), requires_grad=True) * 1.0,
    "p": Parameter(gt.full((2,), float(rank))),
    "ints": gt.arange(4).reshape(2, 2).t(),
}
payload["w"] = payload["w"].detach().requires_grad_(True)
record("all_gather_object_tensors", lambda: dist.all_gather_object(out, payload))
facts["all_gather_object_tensors_out"] = [
    {
        k: [
            type(v).__name__,
            str(v.dtype),
            v.requires_grad,
            v.is_contiguous(),
            v.detach().numpy().copy(),
        ]
        for k, v in o.items()
    }
    for o in out
]
nonleaf = gt.ones(2, requires_grad=True) * 2
record("error/nonleaf", lambda: dist.all_gather_object([None] * world, nonleaf))

g = dist.new_group([0, world - 1])
out = ["untouched"] * 2
record("group_all_gather_object", lambda: dist.all_gather_object(out, ("g", rank), group=g))
facts["group_all_gather_object_out"] = out
received = [None]
record(
    "group_scatter_object_list",
    lambda: dist.scatter_object_list(
        received, ["a", "b"] if rank == world - 1 else None, src=world - 1, group=g
    ),
)
facts["group_scatter_object_list_out"] = received
record("error/scatter_output", lambda: dist.scatter_object_list([], None, src=0))
record(
    "error/gather_list_off_root",
    lambda: dist.gather_object(1, [None] * world, dst=(rank + 1) % world),
)

# all_to_all ----------------------------------------------------------------------------
for dtype in ["float32", "int64", "float64", "bool"]:
    gdt = getattr(gt, dtype)
    ins = [
        gt.from_numpy(
            np.full(
                (rank + j + 1, 2), (100 * rank + j) % 7 if dtype != "bool" else (rank + j) % 2
            ).astype(dtype)
        )
        for j in range(world)
    ]
    outs = [gt.zeros((i + rank + 1, 2), dtype=gdt) for i in range(world)]
    dist.all_to_all(outs, ins)
    facts[f"all_to_all/{dtype}"] = [o.numpy().copy() for o in outs]

for dtype in ["float32", "int64", "bool"]:  # as in more_collectives_torch.py
    ins = [gt.from_numpy(np.full((2, 3), 100 * rank + j).astype(dtype)) for j in range(world)]
    outs = [gt.zeros((2, 3), dtype=getattr(gt, dtype)) for _ in range(world)]
    dist.all_to_all(outs, ins)
    facts[f"all_to_all_equal/{dtype}"] = [o.numpy().copy() for o in outs]

# all_to_all with non-contiguous tensors (outputs written through their strides)
ins = [gt.from_numpy(np.full((2, 3), 10 * rank + j, np.float32)).t() for j in range(world)]
outs = [gt.zeros((2, 3)).t() for _ in range(world)]
dist.all_to_all(outs, ins)
facts["all_to_all/noncontiguous"] = [[o.is_contiguous(), o.numpy().copy()] for o in outs]

# all_to_all_single, equal splits, sync and async
a = gt.from_numpy(np.arange(world * 2, dtype=np.float64) + 100 * rank)
o = gt.zeros(world * 2, dtype=gt.float64)
dist.all_to_all_single(o, a)
facts["all_to_all_single/equal"] = o.numpy().copy()
o2 = gt.zeros(world * 2, dtype=gt.float64)
work = dist.all_to_all_single(o2, a, async_op=True)
facts["all_to_all_single/async"] = [work.wait(), o2.numpy().copy()]

same = gt.from_numpy(np.arange(world * 2, dtype=np.float64) + 100 * rank)
dist.all_to_all_single(same, same)  # output and input one tensor
facts["all_to_all_single/inplace"] = same.numpy().copy()

# uneven splits: rank r sends rank j (r + j) % 3 rows of 3 (values 1000 r + 10 j + k)
in_split = [(rank + j) % 3 for j in range(world)]
out_split = [(i + rank) % 3 for i in range(world)]
rows = [
    np.full((n, 3), 1000 * rank + 10 * j, dtype=np.int32) + np.arange(3, dtype=np.int32)
    for j, n in enumerate(in_split)
]
inp = gt.from_numpy(np.concatenate(rows))
o = gt.zeros((sum(out_split), 3), dtype=gt.int32)
dist.all_to_all_single(o, inp, output_split_sizes=out_split, input_split_sizes=in_split)
facts["all_to_all_single/uneven"] = o.numpy().copy()

record("error/a2a_divide", lambda: dist.all_to_all_single(gt.zeros(world + 1), gt.zeros(world + 1)))
record(
    "error/a2a_nsplits",
    lambda: dist.all_to_all_single(
        gt.zeros(world), gt.zeros(world), input_split_sizes=[1] * (world + 1)
    ),
)
record(
    "error/a2a_sum",
    lambda: dist.all_to_all_single(gt.zeros(world), gt.zeros(world), input_split_sizes=[2] * world),
)
record(
    "error/a2a_dtype",
    lambda: dist.all_to_all_single(gt.zeros(world), gt.zeros(world, dtype=gt.float64)),
)
record(
    "error/a2a_mismatch",
    lambda: dist.all_to_all_single(
        gt.zeros(world + 1), gt.zeros(world), output_split_sizes=[2] + [1] * (world - 1)
    ),
)
record(
    "error/a2a_list_len",
    lambda: dist.all_to_all([gt.zeros(1)] * (world + 1), [gt.zeros(1)] * world),
)
record(
    "after_errors",
    lambda: (dist.all_to_all_single(o, inp, out_split, in_split), o.numpy().sum())[1],
)

# batch_isend_irecv -------------------------------------------------------------------
nxt, prv = (rank + 1) % world, (rank - 1) % world
x, y = gt.zeros(3), gt.zeros(3)
ops = [
    dist.P2POp(dist.irecv, x, prv),
    dist.P2POp(dist.irecv, y, prv),
    dist.P2POp(dist.isend, gt.full((3,), float(rank)), nxt),
    dist.P2POp(dist.isend, gt.full((3,), 10.0 + rank), nxt),
]
works = dist.batch_isend_irecv(ops)
facts["batch"] = [[w.wait() for w in works], x.tolist(), y.tolist(), len(works)]
z = gt.zeros(2, dtype=gt.int64)
works = dist.batch_isend_irecv(
    [
        dist.P2POp(dist.isend, gt.tensor([rank, 7 * rank]), group_peer=nxt, tag=5),
        dist.P2POp(dist.irecv, z, group_peer=prv, tag=5),
    ]
)
for w in works:
    w.wait()
facts["batch_tag"] = z.tolist()
facts["p2pop_repr"] = repr(ops[0])
record("error/p2p_op", lambda: dist.P2POp(dist.all_reduce, gt.zeros(1), nxt))
record("error/p2p_tensor", lambda: dist.P2POp(dist.isend, [1.0], nxt))
record("error/p2p_list", lambda: dist.batch_isend_irecv([1, 2]))
record("error/p2p_empty", lambda: dist.batch_isend_irecv([]))
record(
    "error/p2p_groups",
    lambda: (
        dist.batch_isend_irecv(
            [
                dist.P2POp(dist.isend, gt.zeros(1), 0, group=g),
                dist.P2POp(dist.isend, gt.zeros(1), 0),
            ]
        )
        if g is not dist.GroupMember.NON_GROUP_MEMBER
        else None
    ),
)

# monitored_barrier -------------------------------------------------------------------
record("monitored", lambda: dist.monitored_barrier(timeout=timedelta(seconds=60)))
record(
    "monitored_all",
    lambda: dist.monitored_barrier(timeout=timedelta(seconds=60), wait_all_ranks=True),
)
record("monitored_float", lambda: dist.monitored_barrier(timeout=60.0))
record("error/monitored_type", lambda: dist.monitored_barrier(timeout=5))
record("monitored_group", lambda: dist.monitored_barrier(group=g))
# the other ranks stay away: rank 0 names them
if rank == 0:
    record("monitored_missing", lambda: dist.monitored_barrier(timeout=timedelta(seconds=0.5)))
    record(
        "monitored_missing_all",
        lambda: dist.monitored_barrier(timeout=timedelta(seconds=0.5), wait_all_ranks=True),
    )
dist.barrier()
# rank 0 stays away: the others time out waiting for its answer (then rank 0 drains
# their messages, which carry tag MPI_TAG_UB)
if rank != 0:
    record("monitored_no_root", lambda: dist.monitored_barrier(timeout=timedelta(seconds=0.5)))
else:
    from mpi4py import MPI

    for i in range(1, world):
        dist.recv(gt.zeros(1, dtype=gt.uint8), src=i, tag=MPI.COMM_WORLD.Get_attr(MPI.TAG_UB))
dist.barrier()
record("monitored_after", lambda: dist.monitored_barrier(timeout=timedelta(seconds=60)))
dist.barrier()
dist.destroy_process_group()

OUT.mkdir(parents=True, exist_ok=True)
(OUT / f"rank{rank}.pkl").write_bytes(pickle.dumps(facts))
