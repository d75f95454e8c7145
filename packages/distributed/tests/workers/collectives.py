"""Worker: every collective on every dtype, op and shape; saves inputs and outputs.

    python -m gradstack_distributed.run -n N collectives.py OUT_DIR

Rank r writes OUT_DIR/rank{r}.npz (arrays named "<case>/in", "<case>/out" ...) and
OUT_DIR/rank{r}.json (error messages and other facts by case).  The test computes what
each output should be from all ranks' inputs with numpy.
"""

import json
import sys
import warnings
from pathlib import Path

import gradstack_distributed as dist
import gradstack_tensor as gt
import numpy as np

OUT = Path(sys.argv[1])
dist.init_process_group(backend="mpi")
rank, world = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(1000 + rank)
arrays: dict[str, np.ndarray] = {}
facts: dict[str, object] = {}

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(), (5,), (3, 4)]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


def sample(dtype: str, shape) -> np.ndarray:
    """Small values, so sums and products are exact in every dtype (even float16)."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == "uint8":
        return rng.integers(0, 4, size=shape).astype(np.uint8)
    if dtype.startswith("int"):
        return rng.integers(-3, 4, size=shape).astype(dtype)
    return (rng.integers(-6, 7, size=shape) / 2).astype(dtype)


def tensor(a: np.ndarray):
    return gt.from_numpy(np.array(a, copy=True))


def record_error(case: str, fn) -> None:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the test checks type and words
        facts[case] = [type(exc).__name__, str(exc)]
    else:
        facts[case] = None


for dtype in DTYPES:
    for shape in SHAPES:
        key = f"{dtype}/{'x'.join(map(str, shape)) or 'scalar'}"
        # all_reduce, every op (errors recorded where torch raises)
        for op in OPS:
            a = sample(dtype, shape)
            t = tensor(a)
            case = f"all_reduce/{op}/{key}"
            arrays[f"{case}/in"] = a
            record_error(case, lambda t=t, op=op: dist.all_reduce(t, op=getattr(dist.ReduceOp, op)))
            arrays[f"{case}/out"] = t.numpy().copy()
        # async all_reduce
        a = sample(dtype, shape)
        t = tensor(a)
        work = dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True)
        facts[f"async/{key}"] = [work.wait(), work.is_completed(), len(work.result())]
        arrays[f"async/{key}/in"], arrays[f"async/{key}/out"] = a, t.numpy().copy()
        # broadcast from the last rank
        a = sample(dtype, shape)
        t = tensor(a)
        dist.broadcast(t, src=world - 1)
        arrays[f"broadcast/{key}/in"], arrays[f"broadcast/{key}/out"] = a, t.numpy().copy()
        # reduce (SUM) into rank 0
        a = sample(dtype, shape)
        t = tensor(a)
        record_error(f"reduce/{key}", lambda t=t: dist.reduce(t, dst=0))
        arrays[f"reduce/{key}/in"], arrays[f"reduce/{key}/out"] = a, t.numpy().copy()
        # all_gather into a list
        a = sample(dtype, shape)
        outs = [tensor(np.zeros(shape, dtype)) for _ in range(world)]
        dist.all_gather(outs, tensor(a))
        arrays[f"all_gather/{key}/in"] = a
        arrays[f"all_gather/{key}/out"] = np.stack([o.numpy() for o in outs])
        # all_gather_into_tensor, concatenated and stacked
        a = sample(dtype, shape)
        flat = tensor(np.zeros((world * max(1, a.size),), dtype)) if a.ndim else None
        stacked = tensor(np.zeros((world, *shape), dtype))
        dist.all_gather_into_tensor(stacked, tensor(a))
        arrays[f"all_gather_into_tensor/{key}/in"] = a
        arrays[f"all_gather_into_tensor/{key}/out"] = stacked.numpy().copy()
        if shape:
            cat = tensor(np.zeros((world * shape[0], *shape[1:]), dtype))
            dist.all_gather_into_tensor(cat, tensor(a))
            arrays[f"all_gather_into_tensor/{key}/cat"] = cat.numpy().copy()
        # gather to rank 0, scatter from the last rank
        a = sample(dtype, shape)
        outs = [tensor(np.zeros(shape, dtype)) for _ in range(world)] if rank == 0 else None
        dist.gather(tensor(a), outs, dst=0)
        arrays[f"gather/{key}/in"] = a
        if rank == 0:
            arrays[f"gather/{key}/out"] = np.stack([o.numpy() for o in outs])
        parts = np.stack([sample(dtype, shape) for _ in range(world)])
        t = tensor(np.zeros(shape, dtype))
        src = world - 1
        dist.scatter(t, [tensor(p) for p in parts] if rank == src else None, src=src)
        arrays[f"scatter/{key}/in"], arrays[f"scatter/{key}/out"] = parts, t.numpy().copy()
        # send/recv around the ring
        a = sample(dtype, shape)
        t = tensor(np.zeros(shape, dtype))
        if rank % 2 == 0:
            dist.send(tensor(a), dst=(rank + 1) % world)
            facts[f"recv_from/{key}"] = dist.recv(t, src=(rank - 1) % world)
        else:
            facts[f"recv_from/{key}"] = dist.recv(t)
            dist.send(tensor(a), dst=(rank + 1) % world)
        arrays[f"ring/{key}/in"], arrays[f"ring/{key}/out"] = a, t.numpy().copy()

# reduce_scatter_tensor: input of world * 3 elements per rank
for dtype in ["int32", "float32", "float64"]:
    for op in ["SUM", "AVG", "MIN", "MAX", "PRODUCT"]:
        a = sample(dtype, (world * 3,))
        out = tensor(np.zeros(3, dtype))
        dist.reduce_scatter_tensor(out, tensor(a), op=getattr(dist.ReduceOp, op))
        arrays[f"reduce_scatter_tensor/{op}/{dtype}/in"] = a
        arrays[f"reduce_scatter_tensor/{op}/{dtype}/out"] = out.numpy().copy()

# reduce_scatter: a list of world tensors of the output's shape per rank
for dtype in ["float32", "int32"]:
    a = sample(dtype, (world, 2, 3))
    out = tensor(np.zeros((2, 3), dtype))
    dist.reduce_scatter(out, [tensor(a[i]) for i in range(world)])
    arrays[f"reduce_scatter/{dtype}/in"] = a
    arrays[f"reduce_scatter/{dtype}/out"] = out.numpy().copy()
record_error(
    "error/reduce_scatter_list",
    lambda: dist.reduce_scatter(gt.zeros(2), [gt.zeros(2)] * (world + 1)),
)

# errors that every rank sees the same way
noncontig = tensor(np.ones((4, 3), np.float32)).t()
record_error("error/noncontiguous", lambda: dist.all_reduce(noncontig))
record_error("error/shape", lambda: dist.all_reduce(gt.ones(2 + rank)))
record_error(
    "error/dtype", lambda: dist.all_reduce(gt.ones(2, dtype=[gt.float32, gt.float64][rank % 2]))
)
record_error(
    "error/kind",
    lambda: dist.all_reduce(gt.ones(2)) if rank == 0 else dist.broadcast(gt.ones(2), src=0),
)
record_error("error/band_float", lambda: dist.all_reduce(gt.ones(2), op=dist.ReduceOp.BAND))
record_error("error/not_tensor", lambda: dist.all_reduce([1.0, 2.0]))
record_error("error/op", lambda: dist.all_reduce(gt.ones(2), op="sum"))
record_error(
    "error/gather_list_off_root",
    lambda: dist.gather(gt.ones(2), [gt.ones(2)] * world, dst=(rank + 1) % world),
)
record_error("error/send_self", lambda: dist.send(gt.ones(2), dst=rank))
record_error("error/init_twice", lambda: dist.init_process_group("mpi"))
record_error(
    "error/recv_shape",
    lambda: (
        dist.send(gt.ones(3), dst=1)
        if rank == 0
        else dist.recv(gt.zeros(4), src=0)
        if rank == 1
        else None
    ),
)
dist.barrier()

# groups: the first and the last rank
g = dist.new_group([0, world - 1])
t = gt.full((2,), float(rank + 1))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    returned = dist.all_reduce(t, group=g)
facts["group"] = {
    "rank": dist.get_rank(g),
    "size": dist.get_world_size(g),
    "result": t.tolist(),
    "returned": repr(returned),
    "warned": [str(w.message) for w in caught],
}
if g is not dist.GroupMember.NON_GROUP_MEMBER:
    facts["group"]["ranks"] = dist.get_process_group_ranks(g)
    facts["group"]["global_of_1"] = dist.get_global_rank(g, 1)
facts["world"] = [rank, world, dist.get_backend(), dist.is_initialized()]
dist.barrier()
dist.destroy_process_group()
facts["after_destroy"] = dist.is_initialized()
dist.init_process_group("mpi")  # again: MPI stays up
t = gt.ones(1)
dist.all_reduce(t)
facts["reinit"] = t.tolist()
dist.destroy_process_group()

OUT.mkdir(parents=True, exist_ok=True)
np.savez(OUT / f"rank{rank}.npz", **arrays)
(OUT / f"rank{rank}.json").write_text(json.dumps(facts))
