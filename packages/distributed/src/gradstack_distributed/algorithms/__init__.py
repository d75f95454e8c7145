"""``torch.distributed.algorithms`` for gradstack: the generic join context manager.

``Join``, ``Joinable`` and ``JoinHook`` (:mod:`.join`) let ranks with uneven inputs finish
a training loop together: a rank that ran out of inputs shadows the collectives of the
ranks that still train.  ``DistributedDataParallel`` is a ``Joinable``
(``ddp.join()``).  In the full stack: ``gradstack.distributed.algorithms``.

Examples
--------
>>> from gradstack_distributed.algorithms import Join, Joinable, JoinHook
>>> issubclass(Join, object), JoinHook().main_hook() is None
(True, True)
"""

from .join import Join, Joinable, JoinHook

__all__ = ["Join", "Joinable", "JoinHook"]
