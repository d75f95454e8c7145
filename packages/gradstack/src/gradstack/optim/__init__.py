"""``gradstack.optim``: the optimisers of gradstack-nn-mini (``SGD``, ``Adam``, ``AdamW``
... every name of ``gradstack_nn.optim.__all__``) and :mod:`gradstack.optim.lr_scheduler`."""

from gradstack_nn.optim import *  # noqa: F403
from gradstack_nn.optim import __all__  # noqa: F401

# (this package's own submodule, which re-exports gradstack_nn.optim.lr_scheduler, in place
# of the one the star import bound: ``import gradstack.optim.lr_scheduler`` finds it)
from . import lr_scheduler  # type: ignore[no-redef]
