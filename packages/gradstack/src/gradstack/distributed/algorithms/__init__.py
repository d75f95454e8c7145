"""``gradstack.distributed.algorithms``: ``Join``, ``Joinable``, ``JoinHook`` (torch's
``torch.distributed.algorithms``), from gradstack-distributed.

Examples
--------
>>> from gradstack.distributed.algorithms import Join, Joinable, JoinHook
>>> import gradstack.nn.parallel
>>> issubclass(gradstack.nn.parallel.DistributedDataParallel, Joinable)
True
"""

from gradstack_distributed.algorithms import Join, Joinable, JoinHook

from . import join

__all__ = ["Join", "Joinable", "JoinHook", "join"]
