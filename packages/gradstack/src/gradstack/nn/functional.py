"""``gradstack.nn.functional``: the layers and losses as functions (``gradstack_nn.functional``)."""

from gradstack_nn.functional import *  # noqa: F403
from gradstack_nn.functional import __all__  # noqa: F401
