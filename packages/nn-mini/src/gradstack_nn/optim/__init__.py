"""``gradstack_nn.optim`` (``gradstack.optim``): optimisers with torch's interface, one a
module (``sgd.py``, ``adam.py``, ``adamw.py`` ... as torch's ``torch/optim/``), on the base
class of ``optimizer.py``, and the schedules of :mod:`.lr_scheduler`.

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
    adadelta,
    adafactor,
    adagrad,
    adam,
    adamax,
    adamw,
    asgd,
    lbfgs,
    lr_scheduler,
    muon,
    nadam,
    optimizer,
    radam,
    rmsprop,
    rprop,
    sgd,
    swap_in,
)
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .swap_in import swap_in_optimizer_params_and_state

# torch.optim's names: the optimisers and lr_scheduler (the facade's gradstack.optim is
# this list; the modules above are importable as attributes, as torch's)
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
    "Adafactor",
    "Muon",
    "lr_scheduler",
    "swap_in_optimizer_params_and_state",
]
