"""The layers of ``gradstack_nn`` (``gradstack.nn``), one family per module."""

from .activation import (
    GELU,
    Dropout,
    Flatten,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .batchnorm import BatchNorm1d
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .conv import Conv2d
from .data_parallel import DataParallel
from .lazy import LazyModuleMixin
from .linear import Identity, LazyLinear, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import LayerNorm
from .pooling import Fold, MaxPool2d, Unfold
from .sparse import Embedding

__all__ = [
    "Module",
    "Linear",
    "Conv2d",
    "MaxPool2d",
    "Unfold",
    "Fold",
    "LazyLinear",
    "LazyModuleMixin",
    "Identity",
    "Embedding",
    "LayerNorm",
    "BatchNorm1d",
    "ReLU",
    "LeakyReLU",
    "Sigmoid",
    "Tanh",
    "GELU",
    "SiLU",
    "Softmax",
    "LogSoftmax",
    "Dropout",
    "Flatten",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "DataParallel",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
]
