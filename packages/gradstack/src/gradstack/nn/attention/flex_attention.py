"""``gradstack.nn.attention.flex_attention`` (``gradstack_nn.attention.flex_attention``)."""

from gradstack_nn.attention.flex_attention import *  # noqa: F403
from gradstack_nn.attention.flex_attention import __all__  # noqa: F401
