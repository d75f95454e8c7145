"""``Parameter``: a tensor that a :class:`Module` registers as one of its learnable weights.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.zeros(2))
>>> w.requires_grad, w.is_leaf
(True, True)
>>> print(w)
Parameter containing:
tensor([0., 0.], requires_grad=True)
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_parameter"]


class Parameter(Tensor):
    """A Tensor subclass marking a module's learnable weight.

    Assigning a ``Parameter`` to a :class:`Module` attribute registers it: it then shows
    in :meth:`Module.parameters`, :meth:`Module.state_dict` and the optimisers.  It shares
    ``data``'s storage (and version counter) and requires grad by default.

    Parameters
    ----------
    data : Tensor, optional
        The initial values (an empty float tensor when omitted).
    requires_grad : bool, default True
        Whether the parameter requires gradient.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = gt.empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data): data must be a Tensor, not {type(data).__name__}; "
                "wrap numbers or arrays with gradstack.tensor(...) first"
            )
        # Note [Parameter shares storage]
        # As torch's ``Parameter(t)``: no copy, so ``Parameter(t)`` and ``t`` alias.  The new
        # tensor is always a leaf, whatever ``data``'s history.
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        # Tensor.__init__ would rebuild the storage from ``data``: __new__ did the work.
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """Marks a tensor assigned to a :class:`Module` attribute as a buffer (torch.nn.Buffer).

    ``module.x = Buffer(t)`` is ``module.register_buffer("x", t)``; ``persistent=False``
    keeps it out of the state dict.  The module stores ``t`` itself, as a plain Tensor.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = gt.empty(0)
        t = Tensor._make_subclass(cls, data, False)
        t.persistent = persistent
        return t

    def __init__(self, data=None, *, persistent=True):
        pass


def is_parameter(obj) -> bool:
    """Whether ``obj`` is a :class:`Parameter`."""
    return isinstance(obj, Parameter)
