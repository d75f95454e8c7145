"""``LazyModuleMixin``: modules whose parameters get their shapes at the first call.

A lazy module starts with :class:`~gradstack_nn.parameter.UninitializedParameter` objects
and a forward pre-hook.  The first call runs ``initialize_parameters(*args)`` (which
materialises the parameters from the input's shape and initialises them), removes the
hook and turns the module into its ``cls_to_become`` (``LazyLinear`` becomes ``Linear``), as
torch does.  Loading a state dict into a lazy module materialises its parameters with the
loaded shapes (``Module.load_state_dict``).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import LazyLinear
>>> layer = LazyLinear(3)
>>> layer
LazyLinear(in_features=0, out_features=3, bias=True)
>>> layer(gt.ones(2, 5)).shape
gradstack.Size([2, 3])
>>> layer
Linear(in_features=5, out_features=3, bias=True)
"""

from __future__ import annotations

from ..parameter import Buffer, is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules whose parameters are inferred from the first input.

    Subclasses define ``initialize_parameters(*args)`` and set ``cls_to_become`` (the class
    the module becomes once its parameters are materialised, or None to stay).
    """

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module still lacks its shape."""
        values = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(v) for v in values)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialise the parameters from the first input (subclasses define it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def _finish_lazy_init(self) -> None:
        if self.has_uninitialized_params():
            return
        # Note [A materialised buffer becomes a plain tensor]
        # torch's UninitializedBuffer becomes a torch.Tensor in place; gradstack's Tensor is
        # a compiled class, which an object cannot become, so the materialised buffer (a
        # Buffer, the marker class) is stored as a plain tensor on its memory here.
        for name, buffer in self._buffers.items():
            if isinstance(buffer, Buffer):
                self._buffers[name] = buffer.detach()
        hook = self.__dict__.pop("_initialize_hook", None)
        if hook is not None:
            hook.remove()
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become


def _infer_parameters(module, args):
    """The forward pre-hook of a lazy module: materialise, then become the plain module."""
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(
            f"module {module._get_name()} has not been fully initialized by its first call"
        )
    module._finish_lazy_init()
