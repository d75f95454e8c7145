"""``gradstack.optim.lr_scheduler``: learning-rate schedules (``gradstack_nn.optim.lr_scheduler``)."""

from gradstack_nn.optim.lr_scheduler import *  # noqa: F403
from gradstack_nn.optim.lr_scheduler import LRScheduler, _LRScheduler  # noqa: F401
from gradstack_nn.optim.lr_scheduler import __all__  # noqa: F401
