"""``gradstack.nn.utils.parametrize``: ``register_parametrization``,
``remove_parametrizations``, ``is_parametrized``, ``cached`` ...
(``gradstack_nn.utils.parametrize``)."""

# the implementation's public names, as it lists them (one list to keep)
from gradstack_nn.utils.parametrize import *  # noqa: F403
from gradstack_nn.utils.parametrize import __all__  # noqa: F401
