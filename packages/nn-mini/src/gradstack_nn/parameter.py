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

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "is_parameter",
    "is_lazy",
]


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


def _materialize(self, shape, device=None, dtype=None) -> None:
    """Give the parameter or buffer ``shape`` (uninitialised values, the ``dtype`` given or
    its own) and make it its ``cls_to_become`` (a Parameter, a Buffer), in place."""
    if dtype is None:
        dtype = self.dtype
    with ag.no_grad():
        self.data = gt.empty(tuple(shape), device=device, dtype=dtype)
    self.__class__ = self.cls_to_become


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (the weight of a ``LazyLinear`` before its
    first call).

    It holds no values; :meth:`materialize` gives it its shape (and dtype) in place, turning
    it into a plain :class:`Parameter`, so optimisers and other holders of the object see
    the materialised parameter.

    >>> import gradstack_tensor as gt
    >>> w = UninitializedParameter()
    >>> w
    <UninitializedParameter>
    >>> w.materialize((2, 3))
    >>> type(w).__name__, tuple(w.shape), w.requires_grad
    ('Parameter', (2, 3), True)
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return super().__new__(cls, gt.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    materialize = _materialize

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (the running statistics of a
    ``LazyBatchNorm1d`` before its first call).

    It holds no values; :meth:`materialize` gives it its shape (and dtype) in place, as
    :meth:`UninitializedParameter.materialize` does, so a state dict being loaded can fill
    the same object.  It is not a :class:`Buffer` (assigning one to a new attribute does
    not register it, as in torch): a lazy module assigns it to a buffer registered as None,
    and stores it as a plain Tensor once every parameter and buffer is materialised (Note
    [A materialised buffer becomes a plain tensor] in ``modules/lazy.py``).

    >>> import gradstack_tensor as gt
    >>> b = UninitializedBuffer()
    >>> b
    <UninitializedBuffer>
    >>> b.materialize((3,))
    >>> tuple(b.shape), b.requires_grad, is_lazy(b)
    ((3,), False, False)
    """

    cls_to_become = Buffer

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = Tensor._make_subclass(cls, gt.empty(0, device=device, dtype=dtype), requires_grad)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass

    materialize = _materialize

    def __repr__(self):
        return "<UninitializedBuffer>"


def is_parameter(obj) -> bool:
    """Whether ``obj`` is a :class:`Parameter`."""
    return isinstance(obj, Parameter)


def is_lazy(obj) -> bool:
    """Whether ``obj`` is a parameter or buffer that has not been materialised yet."""
    return isinstance(obj, UninitializedParameter | UninitializedBuffer)
