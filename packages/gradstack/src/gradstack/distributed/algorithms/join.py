"""``gradstack.distributed.algorithms.join``: where torch keeps the join context manager."""

from gradstack_distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
