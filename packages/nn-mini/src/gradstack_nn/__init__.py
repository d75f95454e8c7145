"""gradstack_nn: neural-network building blocks on gradstack (``gradstack.nn``).

``Module`` (with attribute registration of parameters, buffers and sub-modules),
``Parameter``, layers (``Linear``, ``ReLU``, ``Sequential`` ...), losses (``MSELoss``,
``CrossEntropyLoss`` ...), :mod:`.functional`, :mod:`.init`, :mod:`.optim` (``SGD``) and a
safe :func:`save`/:func:`load` whose files cannot execute code when loaded.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_nn as nn
>>> from gradstack_nn import optim
>>> _ = gt.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))
>>> opt = optim.SGD(model.parameters(), lr=0.05)
>>> x = gt.randn(64, 2); y = (x[:, :1] * 2 - x[:, 1:])
>>> first = None
>>> for _ in range(200):
...     opt.zero_grad()
...     loss = nn.functional.mse_loss(model(x), y)
...     loss.backward()
...     opt.step()
...     first = first if first is not None else loss.item()
>>> loss.item() < first / 10
True
"""

import gradstack_autograd as _ag  # noqa: F401 - registers the autograd layer

from . import functional, init, optim, serialization, utils, zeroed_grads
from .__about__ import __version__
from .modules import (
    GELU,
    BatchNorm1d,
    BCELoss,
    BCEWithLogitsLoss,
    Conv2d,
    CrossEntropyLoss,
    DataParallel,
    Dropout,
    Embedding,
    Flatten,
    Fold,
    HuberLoss,
    Identity,
    L1Loss,
    LayerNorm,
    LazyLinear,
    LeakyReLU,
    Linear,
    LogSoftmax,
    MaxPool2d,
    Module,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ParameterList,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    SmoothL1Loss,
    Softmax,
    Tanh,
    Unfold,
)
from .parameter import Buffer, Parameter, UninitializedParameter
from .serialization import load, save

__all__ = [
    "Module",
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "Linear",
    "Conv2d",
    "MaxPool2d",
    "Unfold",
    "Fold",
    "LazyLinear",
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
    "functional",
    "init",
    "optim",
    "utils",
    "serialization",
    "save",
    "load",
    "__version__",
]
