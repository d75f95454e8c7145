"""``Variable``: the deprecated wrapper, kept because old code calls it.

``Variable(t)`` and ``Variable(t, requires_grad)`` return Tensors, as the API page says.

>>> import gradstack_tensor as gt
>>> from gradstack_autograd import Variable
>>> v = Variable(gt.ones(2), requires_grad=True)
>>> type(v).__name__, v.requires_grad
('Tensor', True)
"""

from __future__ import annotations

from gradstack_tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: returns a Tensor sharing ``data``'s storage, a leaf with ``requires_grad``."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            raise TypeError("Variable() needs a Tensor: Variable(tensor, requires_grad=False)")
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
