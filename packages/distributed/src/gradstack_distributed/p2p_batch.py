"""``P2POp`` and ``batch_isend_irecv``: a batch of sends and receives, as torch's.

Every send and receive of gradstack is nonblocking underneath (:func:`isend`,
:func:`irecv`), so a batch simply posts each operation in list order and returns their
:class:`Work` handles: the order of sends and receives between two ranks does not matter
(``[recv_from_1, send_to_1]`` does not deadlock), while several messages between the same
pair in the same direction are matched in order, as torch says.

Examples
--------
Run with ``mpiexec -n 2 python script.py``::

    import gradstack_tensor as gt
    import gradstack_distributed as dist     # gradstack.distributed in the full stack
    dist.init_process_group("mpi")
    r, w = dist.get_rank(), dist.get_world_size()
    got = gt.zeros(2)
    ops = [
        dist.P2POp(dist.irecv, got, (r - 1) % w),
        dist.P2POp(dist.isend, gt.ones(2) * r, (r + 1) % w),
    ]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    # got == tensor([1., 1.]) on rank 0, tensor([0., 0.]) on rank 1
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .collectives import Work, irecv, isend
from .process_group import GroupMember, resolve

__all__ = ["P2POp", "batch_isend_irecv"]


class P2POp:
    """One send or receive of a batch: ``op`` is :func:`isend` or :func:`irecv`, ``peer``
    a global rank (or ``group_peer`` a rank of ``group``)."""

    def __new__(cls, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        if op is not isend and op is not irecv:
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                "``torch.distributed.irecv``."
            )
        if not isinstance(tensor, Tensor):
            raise TypeError(
                "Invalid function argument. Expected parameter `tensor` of type "
                f"gradstack.Tensor but got {type(tensor)} instead."
            )
        return object.__new__(cls)

    def __init__(self, op, tensor, peer=None, group=None, tag: int = 0, group_peer=None):
        self.op = op
        self.tensor = tensor
        self.group = GroupMember.WORLD if group is None else group
        self.tag = tag
        if peer is None and group_peer is None:
            raise ValueError("Either global rank or group rank must be set")
        if peer is not None and group_peer is not None:
            raise ValueError("Can't specify both global and group ranks")
        pg = resolve(self.group)
        if group_peer is not None:
            self.group_peer = int(group_peer)
            self.peer = pg.global_ranks[self.group_peer] if pg is not None else -1
        else:
            self.peer = int(peer)
            self.group_peer = pg.group_rank_of(self.peer, "P2POp") if pg is not None else -1

    def __repr__(self) -> str:
        name = "isend" if self.op is isend else "irecv"
        pg = resolve(self.group)
        me = pg.rank() if pg is not None else -1
        s, d = (me, self.group_peer) if name == "isend" else (self.group_peer, me)
        return (
            f"P2POp({name} group_src={s}, group_dst={d}, {tuple(self.tensor.shape)}, "
            f"{self.tensor.dtype})"
        )


def batch_isend_irecv(p2p_op_list) -> list[Work]:
    """Post every :class:`P2POp` of the list and return their :class:`Work` handles."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError(
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``."
        )
    if not p2p_op_list:
        # torch's error type (its p2p_op_list[0] fails), with words that say why
        raise IndexError("batch_isend_irecv: `p2p_op_list` is empty; give at least one P2POp")
    group = p2p_op_list[0].group
    if not all(group == p.group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            work = isend(p.tensor, group=p.group, tag=p.tag, group_dst=p.group_peer)
        else:
            work = irecv(p.tensor, group=p.group, tag=p.tag, group_src=p.group_peer)
        if work is not None:
            works.append(work)
    return works
