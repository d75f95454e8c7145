"""``gradstack.autograd.variable``: the deprecated ``Variable`` (it returns Tensors)."""

from gradstack_autograd.variable import *  # noqa: F403
from gradstack_autograd.variable import __all__  # noqa: F401
