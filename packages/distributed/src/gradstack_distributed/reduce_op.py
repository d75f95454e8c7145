"""``ReduceOp``: the reductions of ``all_reduce`` and ``reduce_scatter_tensor``, as torch
names and numbers them (``dist.ReduceOp.SUM`` is ``RedOpType.SUM``, value 0).

Examples
--------
>>> from gradstack_distributed import ReduceOp
>>> ReduceOp.SUM, int(ReduceOp.AVG), ReduceOp.MAX is ReduceOp.RedOpType.MAX
(<RedOpType.SUM: 0>, 1, True)
"""

from __future__ import annotations

import enum

__all__ = ["ReduceOp", "RedOpType"]


class RedOpType(enum.IntEnum):
    """torch's ``ReduceOp.RedOpType`` (same members, same values)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ReduceOp:
    """The reduction operations (``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``,
    and the bitwise ``BAND``, ``BOR``, ``BXOR`` for integer and bool tensors).

    ``AVG`` is a sum divided by the group's size after the reduction (MPI has no average);
    on integer tensors the quotient is truncated toward zero, as NCCL does.
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR

    def __init__(self, op):
        raise TypeError(
            "ReduceOp is not instantiated: use its members, e.g. ReduceOp.SUM "
            "(premultiplied sums are not supported)"
        )


def as_red_op(op) -> RedOpType:
    """Validate ``op`` (a ``ReduceOp`` member) and return it as a ``RedOpType``."""
    if isinstance(op, RedOpType):
        return op
    raise TypeError(
        f"op must be a member of gradstack.distributed.ReduceOp (e.g. ReduceOp.SUM), not {op!r}"
    )
