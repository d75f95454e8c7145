"""``gradstack.optim``: optimisers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``)
and :mod:`gradstack.optim.lr_scheduler` from gradstack-nn-mini."""

from gradstack_nn.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop

from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
