"""``DataParallel`` on a machine without GPUs: a pass-through to the wrapped module."""

from __future__ import annotations

from .module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """torch's ``nn.DataParallel`` as it behaves on a machine without GPUs: it keeps the
    module (as the child ``module``, so ``state_dict`` keys start with ``"module."``), has
    no devices (``device_ids == []``) and calls the module on the inputs unchanged.

    gradstack computes on the CPU only, so this is always the case.  For training over
    several processes, see ``DistributedDataParallel`` (gradstack-distributed).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Linear
    >>> model = DataParallel(Linear(2, 3))
    >>> model(gt.ones(4, 2)).shape, model.device_ids
    (gradstack.Size([4, 3]), [])
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel expects a Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
