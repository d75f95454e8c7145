"""``gradstack.optim``: optimisers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``)
and :mod:`gradstack.optim.lr_scheduler` from gradstack-nn-mini."""

from gradstack_nn.optim import (
    ASGD,
    LBFGS,
    SGD,
    Adadelta,
    Adagrad,
    Adam,
    Adamax,
    AdamW,
    NAdam,
    Optimizer,
    RAdam,
    RMSprop,
    Rprop,
)

from . import lr_scheduler

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adamax",
    "NAdam",
    "RAdam",
    "Adadelta",
    "LBFGS",
    "Rprop",
    "ASGD",
    "lr_scheduler",
]
