"""``gradstack.optim``: optimisers (``Optimizer``, ``SGD``) from gradstack-nn-mini."""

from gradstack_nn.optim import SGD, Optimizer

__all__ = ["Optimizer", "SGD"]
