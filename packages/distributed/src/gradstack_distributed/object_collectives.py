"""Collectives on picklable Python objects, with torch's signatures and semantics.

``all_gather_object``, ``broadcast_object_list``, ``gather_object`` and
``scatter_object_list`` pickle each object into a ``uint8`` tensor and move it with the
tensor collectives of :mod:`.collectives` (so that every call is checked against the
other ranks' and ends with ``DistBackendError`` rather than hanging when a rank left):
first the sizes (``int64``), then the bytes, padded to the largest size where one MPI
call carries several objects.  Results are written into the caller's list, in place,
as torch does; non-members of ``group`` get torch's warning and nothing changes.

Note [Objects are unpickled on every receiving rank]
As in torch, the received bytes go through ``pickle.loads``: only use these calls with
ranks you trust (unpickling runs arbitrary code).  The source rank of
``broadcast_object_list`` keeps its own list untouched (torch does not round-trip it).

Note [Tensors inside objects]
gradstack tensors refuse plain pickling (``Tensor.__reduce_ex__`` raises, so that
``pickle.load`` of a file never runs code in their name), but programs gather metrics and
state dicts that hold tensors, and torch pickles its tensors here.  So these calls pickle
with a Pickler whose ``reducer_override`` sends a tensor by value: a copy of its numpy
values in their memory order (numpy's ``order="K"``: a transposed tensor arrives
transposed, with torch's strides; a slice's gaps are not kept, where torch sends the
whole storage), ``requires_grad``, and whether it is a ``Parameter``.  As torch, a non-leaf
tensor that requires grad is refused (autograd does not cross processes).

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    import gradstack_distributed as dist     # gradstack.distributed in the full stack
    dist.init_process_group("mpi")
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, {"rank": dist.get_rank()})
    # out == [{'rank': 0}, {'rank': 1}] on both ranks
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np
from gradstack_nn import Parameter
from gradstack_tensor import Tensor, from_numpy

from .collectives import _skip, all_gather, broadcast, gather, scatter
from .process_group import resolve

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list"]


class _Pickler(pickle.Pickler):
    """pickle's Pickler, with gradstack tensors by value (Note [Tensors inside objects])."""

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        if obj.requires_grad and not obj.is_leaf:
            raise RuntimeError(
                "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                "autograd does not support crossing process boundaries.  If you just want to "
                "transfer the data, call detach() on the tensor before serializing (e.g., "
                "putting it on the queue)."
            )
        values = np.array(obj.numpy(force=True), copy=True)
        return _rebuild_tensor, (values, bool(obj.requires_grad), isinstance(obj, Parameter))


def _rebuild_tensor(values: np.ndarray, requires_grad: bool, parameter: bool):
    if parameter:
        return Parameter(from_numpy(values), requires_grad=requires_grad)
    return from_numpy(values).requires_grad_(requires_grad)


def _to_bytes(obj: Any) -> np.ndarray:
    buffer = io.BytesIO()
    _Pickler(buffer).dump(obj)
    return np.frombuffer(buffer.getbuffer(), dtype=np.uint8).copy()


def _from_bytes(a: np.ndarray, size: int) -> Any:
    return pickle.loads(a[:size].tobytes())


def _padded(a: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=np.uint8)
    out[: a.size] = a
    return out


def _root_of(pg, rank, group_rank, fn: str) -> int:
    if rank is not None and group_rank is not None:
        raise ValueError(f"{fn}: give either the global rank or the group rank, not both")
    if group_rank is not None:
        return int(group_rank)
    return pg.group_rank_of(int(0 if rank is None else rank), fn)


def _sizes_of_all(pg, group, size: int) -> np.ndarray:
    """Every rank's ``size`` (int64), gathered on every rank."""
    sizes = [from_numpy(np.zeros(1, dtype=np.int64)) for _ in range(pg.size())]
    all_gather(sizes, from_numpy(np.array([size], dtype=np.int64)), group=group)
    return np.array([int(s.numpy()[0]) for s in sizes], dtype=np.int64)


def all_gather_object(object_list, obj, group=None):
    """Gather ``obj`` of every rank into ``object_list`` (``object_list[i]`` is rank i's
    object, group ranks) on every rank; ``object_list`` must hold the group's size."""
    pg = resolve(group)
    if pg is None:
        return _skip("all_gather_object")
    data = _to_bytes(obj)
    sizes = _sizes_of_all(pg, group, data.size)
    longest = int(sizes.max())
    outs = [from_numpy(np.zeros(longest, dtype=np.uint8)) for _ in range(pg.size())]
    all_gather(outs, from_numpy(_padded(data, longest)), group=group)
    for i, out in enumerate(outs):
        object_list[i] = _from_bytes(out.numpy(), int(sizes[i]))
    return None


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace ``object_list``'s objects on every rank by those of rank ``src`` (global
    rank; default 0).  Every rank passes a list of the same length."""
    pg = resolve(group)
    if pg is None:
        return _skip("broadcast_object_list")
    root = _root_of(pg, src, group_src, "broadcast_object_list")
    n = len(object_list)
    if pg.rank() == root:
        parts = [_to_bytes(obj) for obj in object_list]
        sizes = np.array([p.size for p in parts], dtype=np.int64)
    else:
        sizes = np.zeros(n, dtype=np.int64)
    sizes_t = from_numpy(sizes)
    broadcast(sizes_t, group_src=root, group=group)
    sizes = sizes_t.numpy()
    if pg.rank() == root:
        data = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
    else:
        data = np.zeros(int(sizes.sum()), dtype=np.uint8)
    data_t = from_numpy(data)
    broadcast(data_t, group_src=root, group=group)
    if pg.rank() != root:
        received, offset = data_t.numpy(), 0
        for i, size in enumerate(sizes):
            object_list[i] = _from_bytes(received[offset : offset + int(size)], int(size))
            offset += int(size)
    return None


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather every rank's ``obj`` into ``object_gather_list`` on rank ``dst`` (global
    rank; default 0), which must hold the group's size; the others pass None."""
    pg = resolve(group)
    if pg is None:
        return _skip("gather_object")
    root = _root_of(pg, dst, group_dst, "gather_object")
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    elif object_gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    data = _to_bytes(obj)
    sizes = _sizes_of_all(pg, group, data.size)
    longest = int(sizes.max())
    outs = None
    if pg.rank() == root:
        outs = [from_numpy(np.zeros(longest, dtype=np.uint8)) for _ in range(pg.size())]
    gather(from_numpy(_padded(data, longest)), outs, group_dst=root, group=group)
    if outs is not None:
        for i, out in enumerate(outs):
            object_gather_list[i] = _from_bytes(out.numpy(), int(sizes[i]))
    return None


def scatter_object_list(
    scatter_object_output_list,
    scatter_object_input_list=None,
    src=None,
    group=None,
    group_src=None,
):
    """Give rank i ``scatter_object_input_list[i]`` of rank ``src`` (global rank; default
    0), in ``scatter_object_output_list[0]`` (a list of at least one element)."""
    pg = resolve(group)
    if pg is None:
        return _skip("scatter_object_list")
    root = _root_of(pg, src, group_src, "scatter_object_list")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError(
            "Expected argument scatter_object_output_list to be a list of size at least 1."
        )
    longest = np.zeros(1, dtype=np.int64)
    parts: list[np.ndarray] = []
    if pg.rank() == root:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        parts = [_to_bytes(obj) for obj in scatter_object_input_list]
        if len(parts) != pg.size():
            raise ValueError(
                f"scatter_object_list: scatter_object_input_list must hold {pg.size()} objects "
                f"(the group's size), not {len(parts)}"
            )
        longest[0] = max(p.size for p in parts)
    longest_t = from_numpy(longest)
    broadcast(longest_t, group_src=root, group=group)
    n = int(longest_t.numpy()[0])
    inputs = None
    if pg.rank() == root:
        inputs = [from_numpy(_padded(p, n)) for p in parts]
        counts = [from_numpy(np.array([p.size], dtype=np.int64)) for p in parts]
    out = from_numpy(np.zeros(n, dtype=np.uint8))
    size = from_numpy(np.zeros(1, dtype=np.int64))
    scatter(out, inputs, group_src=root, group=group)
    scatter(size, counts if pg.rank() == root else None, group_src=root, group=group)
    scatter_object_output_list[0] = _from_bytes(out.numpy(), int(size.numpy()[0]))
    return None
