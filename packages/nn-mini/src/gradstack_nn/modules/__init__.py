"""The layers of ``gradstack_nn`` (``gradstack.nn``), one family per module."""

from .activation import Dropout, Flatten, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleList, Sequential
from .linear import Identity, Linear
from .loss import CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module

__all__ = [
    "Module",
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
]
