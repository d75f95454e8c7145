"""The legacy ``nn.utils.weight_norm`` and ``remove_weight_norm`` (deprecated in torch in
favour of :func:`gradstack_nn.utils.parametrizations.weight_norm`, with torch's
FutureWarning): the parameters ``<name>_g`` and ``<name>_v``, and a forward pre-hook that
sets ``module.<name> = _weight_norm(v, g, dim)`` before each forward.

Examples
--------
>>> import warnings
>>> import gradstack_nn as nn
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     m = weight_norm(nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'weight_g', 'weight_v']
>>> sorted(n for n, _ in remove_weight_norm(m).named_parameters())
['bias', 'weight']
"""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
from gradstack_tensor.composites import _weight_norm

from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of :func:`weight_norm`."""

    def __init__(self, name: str, dim: int):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn(
            "`torch.nn.utils.weight_norm` is deprecated in favor of "
            "`torch.nn.utils.parametrizations.weight_norm`.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(gt.norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Weight normalisation by a forward pre-hook (the legacy form)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo :func:`weight_norm`: one parameter ``<name>`` again, holding the normalised
    weight."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
