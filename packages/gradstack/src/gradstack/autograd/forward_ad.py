"""``gradstack.autograd.forward_ad``: forward-mode AD (``dual_level``, ``make_dual``,
``unpack_dual`` ...) from graph-engine (``gradstack_autograd.forward_ad``)."""

from gradstack_autograd.forward_ad import *  # noqa: F403
from gradstack_autograd.forward_ad import __all__  # noqa: F401
