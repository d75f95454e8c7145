"""``gradstack.optim.lr_scheduler``: learning-rate schedules (from gradstack_nn)."""

from gradstack_nn.optim.lr_scheduler import *  # noqa: F403
from gradstack_nn.optim.lr_scheduler import (  # noqa: F401
    LRScheduler,
    __all__,
    _LRScheduler,
)
