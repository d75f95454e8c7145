"""gradstack_autograd: reverse-mode automatic differentiation for gradstack_tensor.

Importing this package registers the autograd layer on tensor-core's dispatch point: from
then on, ops on tensors that require grad record a graph of backward nodes, and
``Tensor.backward()`` / :func:`grad` run it.

Examples
--------
>>> import math
>>> import gradstack_tensor as gt
>>> import gradstack_autograd as ag
>>> a = gt.linspace(0., 2. * math.pi, steps=5, requires_grad=True)
>>> out = (2 * gt.sin(a) + 1).sum()
>>> out.grad_fn.name()
'SumBackward0'
>>> out.backward()
>>> [round(v, 4) + 0.0 for v in a.grad.tolist()]  # + 0.0 folds -0.0
[2.0, 0.0, -2.0, 0.0, 2.0]
"""

from gradstack_tensor import register_layer as _register_layer
from gradstack_tensor.extension import set_autograd_extension as _set_autograd_extension

from . import (  # noqa: F401 - public submodules, as in torch.autograd; the table binds itself
    _layer,
    derivatives,  # the derivative table: each op's VJP, JVP and batching rule, by family
    forward_ad,  # torch.autograd.forward_ad
    function,
    grad_mode,
    graph,
)
from .__about__ import __version__
from ._node import AccumulateGrad, Node
from ._tensor_ext import AutogradExtension as _AutogradExtension
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph_api import backward, grad
from .variable import Variable

_LAYER = _layer.AutogradLayer(100)
_register_layer(_LAYER)
_set_autograd_extension(_AutogradExtension())

__all__ = [
    "backward",
    "grad",
    *grad_mode.__all__,  # no_grad ... is_multithreading_enabled
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "Variable",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "Node",
    "AccumulateGrad",
    "function",
    "graph",
    "forward_ad",
    "__version__",
]
