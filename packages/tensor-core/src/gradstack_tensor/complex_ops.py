"""The functions of complex numbers: ``real``, ``imag``, ``view_as_real``,
``view_as_complex``, ``conj``, ``conj_physical``, ``resolve_conj``, ``resolve_neg``,
``is_conj``, ``is_neg``, ``polar`` and ``complex`` (torch's, with torch's errors).

``real`` and ``imag`` of a complex tensor are views, ``view_as_real(z)[..., 0]`` and
``[..., 1]`` as in torch (their ``grad_fn`` is ``SelectBackward0``); of a real tensor,
``real`` is the tensor itself and ``imag`` an error.  ``conj`` is a lazy conjugate view,
and ``imag`` of one a lazy negative view (Note [The conjugate and negative bits] in
``lazy_views.py``).

Examples
--------
>>> import gradstack_tensor as gt
>>> z = gt.tensor([1 + 2j, 3 - 1j])
>>> z.real.tolist(), z.imag.tolist()
([1.0, 3.0], [2.0, -1.0])
>>> view_as_real(z).tolist()
[[1.0, 2.0], [3.0, -1.0]]
>>> gt.complex(gt.tensor([1.0]), gt.tensor([2.0]))
tensor([1.+2.j])
"""

from __future__ import annotations

from ._composite_args import _tensor
from ._dispatch import OPS, dispatch
from ._tensor import Tensor

__all__ = [
    "real",
    "imag",
    "view_as_real",
    "view_as_complex",
    "conj",
    "conj_physical",
    "resolve_conj",
    "resolve_neg",
    "is_conj",
    "is_neg",
    "polar",
    "complex",
]


def _t(x, fname: str, name: str = "input") -> Tensor:
    return _tensor(x, fname, name, position=1)


def real(input) -> Tensor:
    """The real part: a view of a complex tensor, the tensor itself if it is real.

    >>> import gradstack_tensor as gt
    >>> real(gt.tensor([1.5 - 2j])).tolist()
    [1.5]
    """
    x = _t(input, "real")
    if not x.is_complex():
        return x
    if x.is_conj():  # the real part of the memory the conjugate view mirrors
        x = x.conj()
    return dispatch(OPS["view_as_real"], (x,)).select(-1, 0)


def imag(input) -> Tensor:
    """The imaginary part of a complex tensor, a view (an error for a real tensor).

    >>> import gradstack_tensor as gt
    >>> imag(gt.tensor([1.5 - 2j])).tolist()
    [-2.0]
    """
    x = _t(input, "imag")
    if not x.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if x.is_conj():  # minus the imaginary part of the memory it mirrors: torch's neg bit
        part = dispatch(OPS["view_as_real"], (x.conj(),)).select(-1, 1)
        return dispatch(OPS["_neg_view"], (part,))
    return dispatch(OPS["view_as_real"], (x,)).select(-1, 1)


def view_as_real(input) -> Tensor:
    """A complex tensor's view as real numbers: one more dim of 2 (real, imaginary).

    >>> import gradstack_tensor as gt
    >>> view_as_real(gt.tensor(1 + 2j)).tolist()
    [1.0, 2.0]
    """
    return dispatch(OPS["view_as_real"], (_t(input, "view_as_real"),))


def view_as_complex(input) -> Tensor:
    """A float tensor whose last dim holds (real, imaginary) pairs, viewed as complex.

    >>> import gradstack_tensor as gt
    >>> view_as_complex(gt.tensor([[1.0, 2.0]])).tolist()
    [(1+2j)]
    """
    return dispatch(OPS["view_as_complex"], (_t(input, "view_as_complex"),))


def conj(input) -> Tensor:
    """The complex conjugate, a lazy view (the tensor itself if it is real).

    >>> import gradstack_tensor as gt
    >>> conj(gt.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    return _t(input, "conj").conj()


def conj_physical(input) -> Tensor:
    """The complex conjugate, always computed (a copy of a real tensor).

    >>> import gradstack_tensor as gt
    >>> conj_physical(gt.tensor([1 + 2j])).tolist()
    [(1-2j)]
    """
    return dispatch(OPS["conj_physical"], (_t(input, "conj_physical"),))


def resolve_conj(input) -> Tensor:
    """A copy with the conjugate bit resolved, or the tensor itself without one.

    >>> import gradstack_tensor as gt
    >>> resolve_conj(gt.tensor([1j]).conj()).is_conj()
    False
    """
    return _t(input, "resolve_conj").resolve_conj()


def resolve_neg(input) -> Tensor:
    """A copy with the negative bit resolved, or the tensor itself without one.

    >>> import gradstack_tensor as gt
    >>> resolve_neg(gt.tensor([1 + 2j]).conj().imag).tolist()
    [-2.0]
    """
    return _t(input, "resolve_neg").resolve_neg()


def is_conj(input) -> bool:
    """Whether ``input`` is a lazy conjugate view (Note [The conjugate and negative bits]).

    >>> import gradstack_tensor as gt
    >>> is_conj(gt.tensor([1j]).conj()), is_conj(gt.tensor([1j]))
    (True, False)
    """
    return _t(input, "is_conj").is_conj()


def is_neg(input) -> bool:
    """Whether ``input`` is a lazy negative view (``imag`` of a conjugate view).

    >>> import gradstack_tensor as gt
    >>> is_neg(gt.tensor([1j]).conj().imag), is_neg(gt.tensor([1.0]))
    (True, False)
    """
    return _t(input, "is_neg").is_neg()


def polar(abs, angle, *, out=None) -> Tensor:  # noqa: A002 - torch's argument names
    """The complex numbers of magnitude ``abs`` and argument ``angle``.

    >>> import gradstack_tensor as gt
    >>> polar(gt.tensor([2.0]), gt.tensor([0.0])).tolist()
    [(2+0j)]
    """
    return _out(dispatch(OPS["polar"], (abs, angle)), out, "polar")


def complex(real, imag, *, out=None) -> Tensor:  # noqa: A001 - torch's name
    """The complex numbers ``real + imag * 1j`` of two float tensors of one dtype.

    >>> import gradstack_tensor as gt
    >>> gt.complex(gt.tensor([1.0]), gt.tensor([-1.0])).tolist()
    [(1-1j)]
    """
    return _out(dispatch(OPS["complex"], (real, imag)), out, "complex")


def _out(result, out, name):
    if out is None:
        return result
    from ._out import write_out

    return write_out(name, result, out, rule="same")
