"""gradstack: define-by-run automatic differentiation with PyTorch's interface.

This package is the facade of the gradstack stack: it adds no behaviour, it re-exports the
layers arranged as ``torch`` arranges them, so that ``import gradstack as torch`` runs code
written for PyTorch's autograd (on the CPU):

- tensors, dtypes and ops from ``gradstack_tensor`` (``gradstack.tensor``, ``zeros``,
  ``sin``, ``float32`` with torch's aliases ``float``, ``double``, ``half``, ``long``,
  ``int``, ``bool`` ...), ``Tensor``, ``Size``, ``device``, ``manual_seed``;
- grad modes and :mod:`gradstack.autograd` from ``gradstack_autograd``, with
  ``autograd.functional`` (``gradstack_functional``), ``autograd.profiler``
  (``gradstack_profiler``), ``autograd.graph`` and ``autograd.forward_ad``;
- :mod:`gradstack.nn`, :mod:`gradstack.optim` (with ``optim.lr_scheduler``),
  :mod:`gradstack.utils.data`, ``save`` and ``load`` from ``gradstack_nn``;
- :mod:`gradstack.func` (torch.func's transforms: ``vmap``, ``grad``, ``jacrev`` ...) from
  ``gradstack_functional.func``;
- :mod:`gradstack.cuda` and :mod:`gradstack.accelerator`, whose ``is_available()`` is
  always False, and :mod:`gradstack.backends` with the flags scripts set.

Examples
--------
>>> import math
>>> import gradstack as torch
>>> a = torch.linspace(0., 2. * math.pi, steps=25, requires_grad=True)
>>> b = torch.sin(a)
>>> b.grad_fn.name()
'SinBackward0'
>>> (2 * b + 1).sum().backward()
>>> torch.allclose(a.grad, 2 * torch.cos(a.detach()), atol=1e-6)
True
"""

# Note [The facade only re-exports]
# Every name below is defined in one of the layer packages; this file decides only where
# it appears.  Star imports bring in the layers' __all__ (which shadow the builtins
# ``float``, ``int`` and ``bool`` here, exactly as torch's namespace does), so nothing in
# this module may use those builtins after the imports.
import importlib as _importlib
import sys as _sys

import gradstack_autograd as _gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as _gradstack_tensor
from gradstack_autograd import (
    enable_grad,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from gradstack_autograd.anomaly_mode import is_anomaly_check_nan_enabled
from gradstack_tensor import *  # noqa: F403
from gradstack_tensor.grad_scaler import GradScaler  # torch.GradScaler is torch.amp's
from gradstack_tensor.kernels import get_num_threads, set_num_threads
from gradstack_tensor.random import get_rng_state, set_rng_state

from . import (
    accelerator,
    autograd,
    backends,
    cuda,
    distributions,
    nn,
    optim,
    random,
    testing,
    utils,
)
from .__about__ import __version__
from ._lobpcg import lobpcg
from ._nn_functions import *  # noqa: F403
from ._nn_functions import __all__ as _nn_functions_all
from ._runtime import *  # noqa: F403
from ._runtime import __all__ as _runtime_all
from .serialization import load, save

_NAMES = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "GradScaler",
    "get_num_threads",
    "set_num_threads",
    "get_rng_state",
    "set_rng_state",
    "accelerator",
    "autograd",
    "backends",
    "cuda",
    "distributions",
    "func",
    "nn",
    "optim",
    "profiler",
    "random",
    "testing",
    "utils",
    "vmap",
    "save",
    "load",
    "lobpcg",
    "__version__",
]
__all__ = sorted(
    set(_gradstack_tensor.__all__) - {"__version__"}
    | set(_NAMES)
    | set(_nn_functions_all)
    | set(_runtime_all)
)
del _NAMES, _nn_functions_all, _runtime_all

# Note [Submodules that are tensor-core's own]
# torch.linalg, torch.special and torch.fft are importable modules (``import torch.fft``,
# ``from torch.linalg import norm``); here they are tensor-core's modules, registered under
# the facade's names too, so that every spelling gives the one module object
# (``gradstack.fft is gradstack_tensor.fft``).
for _name in ("amp", "fft", "linalg", "special"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(_gradstack_tensor, _name)
del _name

# ``func`` (functional-api) is imported on first use, as ``autograd.functional`` is (Note
# [Lazy upper layers] in ``gradstack.autograd``): ``import gradstack`` stays light.
_LAZY = ("func", "profiler")


def __getattr__(name):
    if name in _LAZY:
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name == "vmap":  # torch.vmap is torch.func.vmap
        vmap = __getattr__("func").vmap
        globals()["vmap"] = vmap
        return vmap
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"vmap"})
