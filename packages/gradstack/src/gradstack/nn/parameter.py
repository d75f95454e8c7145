"""``gradstack.nn.parameter``: ``Parameter`` and ``Buffer``."""

from gradstack_nn.parameter import *  # noqa: F403
from gradstack_nn.parameter import __all__  # noqa: F401
