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

from . import distributions, functional, init, optim, serialization, utils, zeroed_grads
from .__about__ import __version__
from .modules import activation as _activation
from .modules import attention as _attention
from .modules import batchnorm as _batchnorm
from .modules import container as _container
from .modules import conv as _conv
from .modules import data_parallel as _data_parallel
from .modules import distance as _distance
from .modules import extra_layers as _extra_layers
from .modules import lazy as _lazy
from .modules import linear as _linear
from .modules import loss as _loss
from .modules import module as _module
from .modules import normalization as _normalization
from .modules import padding as _padding
from .modules import pooling as _pooling
from .modules import rnn as _rnn
from .modules import sparse as _sparse
from .modules import spatial as _spatial
from .modules import transformer_decoder as _transformer_decoder
from .modules import upsampling as _upsampling
from .modules.activation import *  # noqa: F403
from .modules.attention import *  # noqa: F403
from .modules.batchnorm import *  # noqa: F403
from .modules.container import *  # noqa: F403
from .modules.conv import *  # noqa: F403
from .modules.data_parallel import *  # noqa: F403
from .modules.distance import *  # noqa: F403
from .modules.extra_layers import *  # noqa: F403
from .modules.lazy import *  # noqa: F403
from .modules.linear import *  # noqa: F403
from .modules.loss import *  # noqa: F403
from .modules.module import *  # noqa: F403
from .modules.normalization import *  # noqa: F403
from .modules.padding import *  # noqa: F403
from .modules.pooling import *  # noqa: F403
from .modules.rnn import *  # noqa: F403
from .modules.sparse import *  # noqa: F403
from .modules.spatial import *  # noqa: F403
from .modules.transformer_decoder import *  # noqa: F403
from .modules.upsampling import *  # noqa: F403
from .parameter import Buffer, Parameter, UninitializedParameter
from .serialization import load, save

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
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
__all__ += _module.__all__
__all__ += _linear.__all__
__all__ += _conv.__all__
__all__ += _pooling.__all__
__all__ += _padding.__all__
__all__ += _lazy.__all__
__all__ += _sparse.__all__
__all__ += _normalization.__all__
__all__ += _batchnorm.__all__
__all__ += _activation.__all__
__all__ += _distance.__all__
__all__ += _container.__all__
__all__ += _data_parallel.__all__
__all__ += _loss.__all__
__all__ += _rnn.__all__
__all__ += _attention.__all__
__all__ += _upsampling.__all__
__all__ += _transformer_decoder.__all__
__all__ += _extra_layers.__all__
__all__ += _spatial.__all__
