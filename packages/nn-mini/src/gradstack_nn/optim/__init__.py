"""``gradstack_nn.optim`` (``gradstack.optim``): optimisers with torch's interface.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Linear
>>> from gradstack_nn.optim import SGD
>>> model = Linear(3, 1)
>>> opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
>>> loss = model(gt.ones(4, 3)).pow(2).sum()
>>> loss.backward()
>>> opt.step()
>>> opt.zero_grad()
>>> model.weight.grad.abs().sum().item()
0.0
"""

from . import (
    adagrad,
    adam,
    adam_variants,
    asgd,
    lbfgs,
    lr_scheduler,
    optimizer,
    rmsprop,
    rprop,
    sgd,
)
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adam_variants import Adadelta, Adamax, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adamax",
    "NAdam",
    "RAdam",
    "Adadelta",
    "Adagrad",
    "LBFGS",
    "Rprop",
    "ASGD",
    "lr_scheduler",
    "optimizer",
    "sgd",
    "adam",
    "rmsprop",
    "adagrad",
    "lbfgs",
    "rprop",
    "asgd",
]
