"""``gradstack.nn``: modules, parameters, losses, ``functional`` and ``init`` from
gradstack-nn-mini (``gradstack_nn``)."""

# Only explicit names from gradstack_nn: its ``functional`` and ``init`` must not take the
# place of this package's own submodules of those names (the ones that
# ``import gradstack.nn.functional`` finds).
from gradstack_nn import (
    Buffer,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    LeakyReLU,
    Linear,
    LogSoftmax,
    Module,
    ModuleList,
    MSELoss,
    NLLLoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)

from . import functional, init, parameter

__all__ = [
    "Module",
    "Parameter",
    "Buffer",
    "Linear",
    "Identity",
    "ReLU",
    "LeakyReLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "Dropout",
    "Flatten",
    "Sequential",
    "ModuleList",
    "MSELoss",
    "L1Loss",
    "NLLLoss",
    "CrossEntropyLoss",
    "functional",
    "init",
    "parameter",
]
