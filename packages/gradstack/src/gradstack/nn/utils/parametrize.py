"""``gradstack.nn.utils.parametrize``: ``register_parametrization``,
``remove_parametrizations``, ``is_parametrized``, ``cached`` ...
(``gradstack_nn.utils.parametrize``)."""

from gradstack_nn.utils.parametrize import (
    ParametrizationList,
    cached,
    is_parametrized,
    register_parametrization,
    remove_parametrizations,
    transfer_parametrizations_and_params,
    type_before_parametrizations,
)

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]
