"""``torch.distributions.utils``: the helpers the distributions share (broadcasting their
parameters, probabilities and logits, lazily computed attributes, triangular packing).

Examples
--------
>>> import gradstack_tensor as gt
>>> loc, scale = broadcast_all(gt.tensor([0.0, 1.0]), 2.0)
>>> scale.tolist()
[2.0, 2.0]
>>> probs_to_logits(gt.tensor([0.5]), is_binary=True).tolist()
[0.0]
"""

from __future__ import annotations

from functools import update_wrapper
from typing import Any

import gradstack_tensor as gt
from gradstack_autograd import enable_grad
from gradstack_tensor import Size, Tensor

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

# torch.types._Number: what a distribution takes for a parameter besides a tensor
_Number = (int, float, bool)


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers together.

    Numbers become tensors of the first tensor's dtype (or of the default dtype when all
    the values are numbers), then everything is broadcast as ``broadcast_tensors`` does.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [t.shape for t in broadcast_all(gt.zeros(2, 1), gt.zeros(3), 1.0)]
    [gradstack.Size([2, 3]), gradstack.Size([2, 3]), gradstack.Size([2, 3])]
    """
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        dtype = gt.get_default_dtype()
        for v in values:
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
        values = tuple(v if isinstance(v, Tensor) else gt.tensor(v, dtype=dtype) for v in values)
    return tuple(gt.broadcast_tensors(*values))


def _standard_normal(shape, dtype, device=None) -> Tensor:
    """Standard normal draws of ``shape`` (``empty(shape).normal_()``, as torch)."""
    return gt.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value, dim: int):
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    required_shape = tuple(value.shape[:-dim]) + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: ``sigmoid`` (binary) or ``softmax`` over the last dim.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> logits_to_probs(gt.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities into ``[eps, 1 - eps]`` (``eps`` of their dtype).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> clamp_probs(gt.tensor([0.0, 0.5, 1.0], dtype=gt.float64)).tolist()
    [2.220446049250313e-16, 0.5, 0.9999999999999998]
    """
    eps = gt.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first): log-odds when binary, else ``log``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> round(probs_to_logits(gt.tensor([0.25]), is_binary=True).item(), 4)
    -1.0986
    """
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """An attribute computed (with grad enabled) on first access, then stored on the
    instance: ``Bernoulli(probs=p).logits`` is computed from ``p`` only when read.

    Examples
    --------
    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         print("computing")
    ...         return 3
    >>> a = A()
    >>> a.x
    computing
    3
    >>> a.x
    3
    """

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy property looks like on the class: a ``property`` for documentation
    tools, a ``lazy_property`` for ``Distribution``'s argument validation."""

    def __init__(self, wrapped) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int) -> Tensor:
    arange = gt.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries of (a batch of) ``D x D`` matrices, in row order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> tril_matrix_to_vec(gt.tensor([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [1.0, 3.0, 4.0]
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a (batch of) lower-triangular matrix.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> vec_to_tril_matrix(gt.tensor([1.0, 3.0, 4.0])).tolist()
    [[1.0, 0.0], [3.0, 4.0]]
    """
    # the positive root of D**2 + (1 + 2 * diag) * D - |diag| * (diag + 1) - 2 * len = 0
    n = (
        -(1 + 2 * diag)
        + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5
    ) / 2
    eps = gt.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(Size(tuple(vec.shape[:-1]) + (n, n)))
    mat[..., _tril_mask(n, diag)] = vec
    return mat
