"""``gradstack.distributed``: ``torch.distributed`` on MPI, from gradstack-distributed
(``gradstack_distributed``): process groups, collectives, ``DistributedDataParallel``,
``DistributedSampler``, ``algorithms.join`` (``Join``, ``Joinable``, ``JoinHook``);
``python -m gradstack.distributed.run -n N script.py`` launches.

Examples
--------
>>> import gradstack.distributed as dist
>>> dist.is_initialized()
False
"""

from gradstack_distributed import *  # noqa: F403
from gradstack_distributed import __all__ as _all

from . import algorithms  # torch.distributed.algorithms (Join ...), as `import torch` has it

__all__ = sorted(set(_all) - {"__version__"})
del _all
