"""The Tensor methods whose meaning belongs to autograd: ``backward``, hooks, ``retain_grad``.

gradstack_tensor's Tensor delegates these to the object installed here with
``set_autograd_extension`` (tensor-core never imports this package).
"""

from __future__ import annotations

import warnings
import weakref

from gradstack_tensor import Tensor

from . import _grad_mode, _node, _views

__all__: list[str] = []

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead."
)


def _meta(t: Tensor):
    if t._autograd_meta is None:
        t._autograd_meta = _node.AutogradMeta()
    return t._autograd_meta


class AutogradExtension:
    """Implements the autograd half of the Tensor API (installed at import)."""

    @staticmethod
    def backward(tensor, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .graph_api import backward

        if inputs is not None and isinstance(inputs, Tensor):
            inputs = (inputs,)
        backward(
            (tensor,),
            None if gradient is None else (gradient,),
            retain_graph,
            create_graph,
            inputs=inputs,
        )

    @staticmethod
    def register_hook(tensor, hook):
        if not tensor.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if tensor.grad_fn is not None:
            return tensor.grad_fn._register_tensor_hook(tensor.output_nr, hook)
        meta = _meta(tensor)
        if meta.hooks is None:
            meta.hooks = {}
        return _node._add_hook_py(meta.hooks, hook)

    @staticmethod
    def register_post_accumulate_grad_hook(tensor, hook):
        if tensor.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if not tensor.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        meta = _meta(tensor)
        if meta.post_accumulate_hooks is None:
            meta.post_accumulate_hooks = {}
        return _node._add_hook_py(meta.post_accumulate_hooks, hook)

    @staticmethod
    def retain_grad(tensor):
        if not tensor.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if tensor._grad_fn is None:
            # leaves keep their grad anyway; as torch, the stored grad_fn decides, so a view
            # whose grad_fn torch would regenerate (and refuse) is not read (fuzz seed 12
            # #18855)
            return None
        node = tensor.grad_fn
        if node.retained is None:
            node.retained = {}
        node.retained[tensor.output_nr] = weakref.ref(tensor)
        _meta(tensor).retains_grad = True
        return None

    @staticmethod
    def retains_grad(tensor):
        meta = tensor._autograd_meta
        return bool(meta is not None and meta.retains_grad and tensor.grad_fn is not None)

    @staticmethod
    def on_nonleaf_grad_access(tensor):
        if not AutogradExtension.retains_grad(tensor):
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=3)

    @staticmethod
    def on_none_grad_read(tensor):
        # Note [zero_grad() leaves zeros to be made on first read] (_node.pyx)
        return _node.deferred_grad_zeros(tensor)

    @staticmethod
    def on_grad_assigned(tensor):
        _node.end_grad_zeros_deferral(tensor)

    @staticmethod
    def on_grad_fn_read(tensor):
        # Note [A view whose grad_fn torch has not regenerated yet] (_views.pyx)
        _views._grad_fn_read(tensor)

    @staticmethod
    def on_requires_grad_set(tensor):
        # Note [A view follows its base's requires_grad_()] (_views.pyx)
        _views._requires_grad_set(tensor)

    @staticmethod
    def detach_(tensor):
        if tensor._base is not None and tensor._base.requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. (This view's base "
                "requires grad.)"
            )
        tensor._grad_fn = None
        tensor._requires_grad = False
        tensor._output_nr = 0
        return tensor

    @staticmethod
    def is_inference_mode_enabled():
        return _grad_mode.is_inference_mode_enabled()

    @staticmethod
    def is_grad_enabled():
        return _grad_mode.is_grad_enabled()
