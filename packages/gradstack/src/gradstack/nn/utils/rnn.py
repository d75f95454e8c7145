"""``gradstack.nn.utils.rnn``: packed sequences (``gradstack_nn.utils.rnn``)."""

# the implementation's public names, as it lists them (one list to keep)
from gradstack_nn.utils.rnn import *  # noqa: F403
from gradstack_nn.utils.rnn import __all__  # noqa: F401
