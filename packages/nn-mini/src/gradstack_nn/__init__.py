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

from . import functional, init, optim, serialization
from .__about__ import __version__
from .modules import (
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
    ReLU,
    Sequential,
    Sigmoid,
    Softmax,
    Tanh,
)
from .parameter import Buffer, Parameter
from .serialization import load, save

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
    "optim",
    "serialization",
    "save",
    "load",
    "__version__",
]
