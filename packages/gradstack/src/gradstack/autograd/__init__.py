"""``gradstack.autograd``: torch.autograd's namespace over gradstack's layers.

``backward``, ``grad``, grad modes, ``Function`` (and ``function.FunctionCtx``),
``Variable``, ``gradcheck``/``gradgradcheck``, anomaly detection and ``graph`` come from
``gradstack_autograd`` (graph-engine), forward-mode AD (``forward_ad``) included;
``functional`` from ``gradstack_functional`` (functional-api); ``profiler`` from
``gradstack_profiler``.

Note [Lazy upper layers]
~~~~~~~~~~~~~~~~~~~~~~~~
``functional`` and ``profiler`` are imported on first use (PEP 562), as
submodules of this package: ``gradstack.autograd.functional.jacobian`` and ``import
gradstack.autograd.profiler`` both work, ``import gradstack`` stays fast, and a stack
installed without one of those layers fails only where that layer is used, with an error
naming the distribution to install.
"""

import importlib as _importlib

# isort: off
# Submodules first: importing ``.gradcheck`` binds the module to the name ``gradcheck``,
# which the function of that name must then replace (as in torch.autograd): the functions
# replace the submodule names, on purpose (hence F811 and no-redef).
from . import anomaly_mode, forward_ad, function, grad_mode, gradcheck, graph, variable
from gradstack_autograd import (  # type: ignore[no-redef]  # noqa: F811
    Function,
    GradcheckError,
    Variable,
    backward,
    detect_anomaly,
    enable_grad,
    enforce_grad_layout_policy,
    grad,
    gradcheck,
    gradgradcheck,
    inference_mode,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
    set_multithreading_enabled,
)
from gradstack_autograd.function import InplaceFunction, NestedIOFunction, once_differentiable
# isort: on

_LAZY = ("functional", "profiler")

__all__ = [
    "Variable",
    "Function",
    "NestedIOFunction",
    "InplaceFunction",
    "once_differentiable",
    "backward",
    "grad",
    "grad_mode",
    *grad_mode.__all__,  # no_grad ... is_multithreading_enabled
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "function",
    "graph",
    "anomaly_mode",
    "variable",
    "forward_ad",
    *_LAZY,
]


def __getattr__(name):
    if name in _LAZY:
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
