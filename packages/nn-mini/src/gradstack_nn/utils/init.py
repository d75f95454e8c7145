"""``skip_init``: a module made without initialising its parameters and buffers
(``torch.nn.utils.skip_init``).

The module is built on the meta device (shapes and dtypes, no data, so its initialisers
draw nothing) and then given uninitialised storage on the requested device
(``Module.to_empty``), as torch's.

Examples
--------
>>> from gradstack_nn import Linear
>>> m = skip_init(Linear, 5, 1)
>>> tuple(m.weight.shape), m.weight.device.type
((1, 5), 'cpu')
"""

from __future__ import annotations

import inspect

from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers uninitialised (as
    if made by ``empty``); the class must take a ``device`` argument and pass it to the
    tensors it makes, and do no computation on them but initialisation."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
