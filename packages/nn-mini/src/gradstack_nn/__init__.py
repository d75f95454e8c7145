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

from . import (
    attention,
    distributions,
    functional,
    init,
    modules,
    optim,
    serialization,
    utils,
    zeroed_grads,
)  # fmt: skip
from .__about__ import __version__

# each family's layers (one star import a module of modules/, which type checkers follow;
# ``from .modules import *`` they do not, inside this package's import cycle)
from .modules.activation import *  # noqa: F403
from .modules.adaptive import *  # noqa: F403
from .modules.attention import *  # noqa: F403
from .modules.batchnorm import *  # noqa: F403
from .modules.channelshuffle import *  # noqa: F403
from .modules.container import *  # noqa: F403
from .modules.conv import *  # noqa: F403
from .modules.data_parallel import *  # noqa: F403
from .modules.distance import *  # noqa: F403
from .modules.dropout import *  # noqa: F403
from .modules.flatten import *  # noqa: F403
from .modules.fold import *  # noqa: F403
from .modules.instancenorm import *  # noqa: F403
from .modules.lazy import *  # noqa: F403
from .modules.linear import *  # noqa: F403
from .modules.linear_cross_entropy import *  # noqa: F403
from .modules.linear_cross_entropy_options import *  # noqa: F403
from .modules.loss import *  # noqa: F403
from .modules.module import *  # noqa: F403
from .modules.normalization import *  # noqa: F403
from .modules.padding import *  # noqa: F403
from .modules.pixelshuffle import *  # noqa: F403
from .modules.pooling import *  # noqa: F403
from .modules.rnn import *  # noqa: F403
from .modules.sparse import *  # noqa: F403
from .modules.sync_batchnorm import *  # noqa: F403
from .modules.transformer import *  # noqa: F403
from .modules.upsampling import *  # noqa: F403
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .serialization import load, save

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "distributions",
    "functional",
    "init",
    "optim",
    "utils",
    "serialization",
    "save",
    "load",
    "__version__",
]
# every layer of the families in ``modules/`` (its ``__all__``)
__all__ += modules.__all__
