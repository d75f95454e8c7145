"""``gradstack.nn.init``: in-place parameter initialisation (``gradstack_nn.init``)."""

from gradstack_nn.init import *  # noqa: F403
from gradstack_nn.init import (
    __all__,  # noqa: F401
    _calculate_fan_in_and_fan_out,  # noqa: F401 - torch code calls it
)
