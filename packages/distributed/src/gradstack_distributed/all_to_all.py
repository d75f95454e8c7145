"""``all_to_all`` and ``all_to_all_single``: every rank sends a part to every rank.

Rank i's ``input_tensor_list[j]`` (or the j-th split of ``input`` along the first
dimension) arrives in rank j's ``output_tensor_list[i]`` (the i-th split of ``output``),
with torch's signatures and argument errors.  The data moves in one ``MPI_Ialltoallv``
(bytes, with per-rank counts and displacements); ``all_to_all_single`` hands MPI the
tensors' own memory (contiguous tensors), ``all_to_all`` stages the lists through one
array each way.

Note [all_to_all checks its counts first]
The parts may differ in size from rank to rank, so the 16-number signature of the other
collectives cannot describe them.  Before the data, every rank gathers every rank's
dtype, bytes to send and bytes to receive (one checked ``all_gather_into_tensor`` of
``1 + 2 * world`` int64s); if rank i sends rank j a different number of bytes than rank
j expects from i, or the dtypes differ, every rank raises the same RuntimeError naming
the pair, instead of MPI truncating or hanging.  This exchange blocks even with
``async_op=True``; the data then moves asynchronously.

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    import gradstack_tensor as gt
    import gradstack_distributed as dist     # gradstack.distributed in the full stack
    dist.init_process_group("mpi")
    r = dist.get_rank()
    out = gt.zeros(2)
    dist.all_to_all_single(out, gt.tensor([10.0 * r, 10.0 * r + 1]))
    # rank 0: tensor([ 0., 10.]), rank 1: tensor([ 1., 11.])
"""

from __future__ import annotations

import numpy as np
from gradstack_tensor import Tensor, from_numpy

from . import mpi
from .collectives import (
    _DTYPE_CODES,
    _DTYPE_NAMES,
    _array,
    _signature,
    _skip,
    _submit,
    all_gather_into_tensor,
)
from .process_group import resolve

__all__ = ["all_to_all", "all_to_all_single"]


def _check_list(lst, arg: str) -> list:
    if not isinstance(lst, list) or not all(isinstance(t, Tensor) for t in lst):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{arg}` of type "
            f"List[gradstack.Tensor] but got {type(lst)} instead."
        )
    return lst


def _same_dtype(tensors) -> None:
    dtypes = [t.dtype for t in tensors]
    for d in dtypes[1:]:
        if d != dtypes[0]:
            raise ValueError(
                f"Invalid usage of tensors with different dtypesFound {dtypes[0]} and  {d}"
            )


def _check_counts(pg, group, dtype: np.dtype, send: np.ndarray, recv: np.ndarray, fn: str):
    """Note [all_to_all checks its counts first]."""
    w = pg.size()
    mine = np.concatenate([[_DTYPE_CODES.get(dtype, 99)], send, recv]).astype(np.int64)
    table = from_numpy(np.zeros((w, 1 + 2 * w), dtype=np.int64))
    all_gather_into_tensor(table, from_numpy(mine), group=group)
    t = table.numpy()
    codes, sends, recvs = t[:, 0], t[:, 1 : 1 + w], t[:, 1 + w :]
    if not (codes == codes[0]).all():
        names = {c: n for n, c in ((_DTYPE_NAMES[d], c) for d, c in _DTYPE_CODES.items())}
        which = ", ".join(f"rank {i}: {names.get(int(c), '?')}" for i, c in enumerate(codes))
        raise RuntimeError(f"{fn}: the ranks of the group pass different dtypes ({which})")
    bad = [(i, j) for i in range(w) for j in range(w) if sends[i, j] != recvs[j, i]]
    if bad:
        i, j = bad[0]
        raise RuntimeError(
            f"{fn}: rank {i} sends {sends[i, j]} bytes to rank {j}, which expects "
            f"{recvs[j, i]} bytes from it (group ranks; {len(bad)} such pairs).  The split "
            "sizes (or tensor sizes) must agree between every sender and receiver."
        )


def _offsets(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def _alltoallv(pg, fn, send: np.ndarray, sc, recv: np.ndarray, rc, finish, outputs, async_op):
    MPI = mpi.load()
    send_b, recv_b = send.reshape(-1).view(np.uint8), recv.reshape(-1).view(np.uint8)
    sc, rc = [int(c) for c in sc], [int(c) for c in rc]
    sd, rd = [int(d) for d in _offsets(np.array(sc))], [int(d) for d in _offsets(np.array(rc))]

    def start():
        request = pg.comm.Ialltoallv([send_b, (sc, sd), MPI.BYTE], [recv_b, (rc, rd), MPI.BYTE])
        return [request], finish, (send_b, recv_b)

    return _submit(pg, fn, _signature("all_to_all", None), start, outputs, async_op, None)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op: bool = False):
    """Send ``input_tensor_list[j]`` to rank j; receive rank i's part in
    ``output_tensor_list[i]`` (group ranks).  Both lists hold one tensor per rank; the
    tensors may differ in size, as long as every receiver's tensor matches its sender's."""
    pg = resolve(group)
    if pg is None:
        return _skip("all_to_all")
    fn = "all_to_all"
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    _same_dtype([*output_tensor_list, *input_tensor_list])
    w = pg.size()
    for arg, lst in (
        ("output_tensor_list", output_tensor_list),
        ("input_tensor_list", input_tensor_list),
    ):
        if len(lst) != w:
            raise ValueError(
                f"{fn}: `{arg}` must hold {w} tensors (the group's size), not {len(lst)}"
            )
    ins = [np.ascontiguousarray(t.numpy(force=True)) for t in input_tensor_list]
    outs = [
        _array(t, f"output_tensor_list[{i}]", fn, contiguous=False, writeable=True)
        for i, t in enumerate(output_tensor_list)
    ]
    dtype = ins[0].dtype if ins else np.dtype(np.float32)
    sc = np.array([a.nbytes for a in ins], dtype=np.int64)
    rc = np.array([a.nbytes for a in outs], dtype=np.int64)
    _check_counts(pg, group, dtype, sc, rc, fn)
    send = (
        np.concatenate([a.reshape(-1).view(np.uint8) for a in ins])
        if ins
        else np.zeros(0, np.uint8)
    )
    recv = np.empty(int(rc.sum()), dtype=np.uint8)

    def finish():
        offset = 0
        for out, n in zip(outs, rc):
            part = recv[offset : offset + int(n)].view(out.dtype).reshape(out.shape)
            out[...] = part
            offset += int(n)

    return _alltoallv(pg, fn, send, sc, recv, rc, finish, output_tensor_list, async_op)


def _splits(sizes, t: np.ndarray, w: int) -> np.ndarray:
    if t.ndim == 0:
        raise RuntimeError("all_to_all_single: tensors must have at least one dimension")
    if sizes is None or len(sizes) == 0:
        if t.shape[0] % w != 0:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return np.full(w, t.shape[0] // w, dtype=np.int64)
    if len(sizes) != w:
        raise RuntimeError("Number of tensor splits not equal to group size")
    sizes = np.array([int(s) for s in sizes], dtype=np.int64)
    if sizes.sum() != t.shape[0] or (sizes < 0).any():
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return sizes


def all_to_all_single(
    output,
    input,
    output_split_sizes=None,
    input_split_sizes=None,
    group=None,
    async_op: bool = False,
):
    """Split ``input`` along its first dimension (``input_split_sizes``, default equal
    parts), send part j to rank j, and concatenate the parts received from ranks 0, 1 ...
    into ``output`` (split by ``output_split_sizes``)."""
    pg = resolve(group)
    if pg is None:
        return _skip("all_to_all_single")
    fn = "all_to_all_single"
    for arg, t in (("output", output), ("input", input)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"Invalid function argument. Expected parameter `{arg}` of type "
                f"gradstack.Tensor but got {type(t)} instead."
            )
    _same_dtype([output, input])
    a = _array(input, "input", fn)
    out = _array(output, "output", fn, writeable=True)
    w = pg.size()
    sc = _splits(input_split_sizes, a, w) * _row_bytes(a)
    rc = _splits(output_split_sizes, out, w) * _row_bytes(out)
    _check_counts(pg, group, a.dtype, sc, rc, fn)
    if np.shares_memory(a, out):  # MPI must not read and write one buffer: send a copy
        a = a.copy()
    return _alltoallv(pg, fn, a, sc, out, rc, None, [output], async_op)


def _row_bytes(a: np.ndarray) -> int:
    return int(np.prod(a.shape[1:], dtype=np.int64)) * a.itemsize
