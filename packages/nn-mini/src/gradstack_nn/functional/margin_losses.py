"""The margin and embedding losses as functions, composed of gradstack ops as torch's C++
(``aten/src/ATen/native/Loss.cpp``) and Python compose them: ``margin_ranking_loss``,
``hinge_embedding_loss``, ``cosine_embedding_loss``, ``soft_margin_loss``,
``multilabel_soft_margin_loss``, ``multi_margin_loss``, ``multilabel_margin_loss``,
``triplet_margin_loss`` and ``triplet_margin_with_distance_loss``.

Their nodes are those of the parts (torch's kernels for ``soft_margin_loss``,
``multi_margin_loss`` and ``multilabel_margin_loss`` record one node of their own), and
every one differentiates to any order, also where torch's double backward is not
implemented (``multi_margin_loss``, ``multilabel_margin_loss``).

Examples
--------
>>> import gradstack_tensor as gt
>>> x1, x2 = gt.tensor([1.0, 2.0, 3.0]), gt.tensor([2.0, 2.0, 1.0])
>>> margin_ranking_loss(x1, x2, gt.tensor([1.0, 1.0, -1.0]), margin=0.5).item()
1.5
>>> round(soft_margin_loss(gt.tensor([0.0, 2.0]), gt.tensor([1.0, -1.0])).item(), 4)
1.41
"""

from __future__ import annotations

from collections.abc import Callable

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function

from ._utils import _not_differentiable, _type_name
from .activation import logsigmoid
from .distance import pairwise_distance
from .losses import _check_reduction, _checked_reduction, _reduce

__all__ = [
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "soft_margin_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]


# torch's ``EPSILON`` of cosine_embedding_loss, added to each squared norm
_COSINE_EPS = 1e-12


# -------------------------------------------------------------------------------------
# helpers


def _sizes(t: Tensor) -> str:
    """A shape as torch's C++ prints ``sizes()``: ``[3, 4]``."""
    return str(list(t.shape))


def _check_long(target: Tensor) -> None:
    if target.dtype != gt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target)}")


def _check_vector_or_matrix(input: Tensor) -> None:
    """torch's shape check of the multi-class margin losses: ``(C)`` or ``(N, C)`` with
    ``C > 0``, or a 0-d input (one class)."""
    ndim = input.dim()
    if not (
        (ndim == 2 and input.shape[1] != 0) or (ndim == 1 and input.shape[0] != 0) or ndim == 0
    ):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{_sizes(input)}"
        )


def _positive_part(z: Tensor) -> Tensor:
    """``max(z, 0)`` whose gradient is 0 at ``z == 0``.

    Note [Hinge kernels are strict at the margin]
    torch's ``multi_margin_loss`` and ``multilabel_margin_loss`` kernels count a term when
    ``z > 0``, so a term exactly at the margin gets no gradient, whereas ``clamp_min``'s
    derivative (used by the composite losses, as torch's composites use it) is 1 there.
    """
    return gt.where(z > 0, z, 0.0)


# -------------------------------------------------------------------------------------
# pairwise margins


@autocast_function("margin_ranking_loss")
def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``, reduced: ``target`` (1 or -1)
    says which input should rank higher.

    The three tensors broadcast and must have the same number of dimensions.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> margin_ranking_loss(
    ...     gt.tensor([0.5, 2.0]), gt.tensor([1.0, 1.0]), gt.tensor([1.0, -1.0]),
    ...     reduction="none").tolist()
    [0.5, 1.0]
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _reduce(gt.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


@autocast_function("hinge_embedding_loss")
def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``,
    reduced (``input`` is usually a distance).

    As torch, a target of any other value takes both terms.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> hinge_embedding_loss(
    ...     gt.tensor([0.3, 0.4, 2.0]), gt.tensor([1.0, -1.0, -1.0]), reduction="none"
    ... ).tolist()
    [0.30000001192092896, 0.6000000238418579, 0.0]
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    margin_clamp = gt.clamp_min(margin - input, 0)
    output = gt.where(target != 1, margin_clamp, 0.0) + gt.where(target != -1, input, 0.0)
    return _reduce(output, reduction)


@autocast_function("soft_margin_loss")
def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The two-class logistic loss ``log(1 + exp(-target * input))``, reduced.

    ``target`` (1 or -1) broadcasts to the input's shape and is not differentiable (as
    torch's kernel).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> loss = soft_margin_loss(gt.tensor([0.0, 3.0]), gt.tensor([1.0, 1.0]), reduction="sum")
    >>> round(loss.item(), 4)
    0.7417
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _not_differentiable("soft_margin_loss", "target", target)
    shape = gt.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    if tuple(shape) != tuple(input.shape):
        raise RuntimeError(
            f"output with shape {_sizes(input)} doesn't match the broadcast shape {list(shape)}"
        )
    return _reduce((-input * target).exp().log1p(), reduction)


@autocast_function("cosine_embedding_loss")
def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``1 - cos(input1, input2)`` where ``target == 1``, ``max(0, cos - margin)`` where
    ``target == -1``, reduced; the cosine is taken along the last dim of ``(N, D)`` inputs
    with an ``(N)`` target, or of ``(D)`` inputs with a 0-d target.

    As torch, each squared norm gets ``1e-12`` added before the square root.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> a, b = gt.tensor([[1.0, 0.0], [1.0, 1.0]]), gt.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> [round(v, 4) for v in cosine_embedding_loss(
    ...     a, b, gt.tensor([1.0, -1.0]), margin=0.5, reduction="none").tolist()]
    [1.0, 0.5]
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with "
            f"sizes {_sizes(input1)} and {_sizes(input2)}."
        )
    prod_sum = (input1 * input2).sum(dim)
    mag_square1 = (input1 * input1).sum(dim) + _COSINE_EPS
    mag_square2 = (input2 * input2).sum(dim) + _COSINE_EPS
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    pos = 1 - cos
    neg = gt.clamp_min(cos - margin, 0)
    output = gt.where(target == 1, pos, 0.0) + gt.where(target == -1, neg, 0.0)
    return _reduce(output, reduction)


# -------------------------------------------------------------------------------------
# multi-label and multi-class margins


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The one-versus-all logistic loss of multi-label targets (0 or 1 per class, the last
    dim): ``-(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))``, times
    ``weight``, averaged over the classes, then reduced over the samples.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> loss = multilabel_soft_margin_loss(gt.tensor([[0.0, 0.0]]), gt.tensor([[1.0, 0.0]]))
    >>> round(loss.item(), 4)
    0.6931
    """
    if size_average is not None or reduce is not None:
        reduction = _checked_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    if input.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    # (torch checks the reduction last)
    _check_reduction(reduction, " is not valid")
    return _reduce(loss, reduction)


def _check_multi_margin_shapes(input: Tensor, target: Tensor, weight: Tensor | None) -> None:
    """torch's ``multi_margin_loss_shape_check``, its dtype and range checks."""
    _check_vector_or_matrix(input)
    nframe = input.shape[0] if input.dim() == 2 else 1
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{_sizes(target)}. Input has shape {_sizes(input)}."
        )
    n_classes = input.shape[-1] if input.dim() else 1
    if weight is not None and (weight.dim() > 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"inconsistent weight size, expected {n_classes} but got {_sizes(weight)}"
        )
    _check_long(target)
    indices = target.numpy()
    if indices.size and (indices.min() < 0 or indices.max() >= n_classes):
        raise RuntimeError("target out of range")


@autocast_function("multi_margin_loss")
def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-class hinge loss: for each sample, ``sum over i != y of
    max(0, margin - input[y] + input[i]) ** p`` (``p`` 1 or 2) times ``weight[y]``, over
    the number of classes ``C``; ``input`` is ``(N, C)`` or ``(C)``, ``target`` holds
    class indices (int64).

    A term exactly at the margin gets no gradient (Note [Hinge kernels are strict at the
    margin]); ``weight`` is not differentiable, as torch's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(multi_margin_loss(x, gt.tensor([3])).item(), 4)
    0.325
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _not_differentiable("multi_margin_loss", "weight", weight)
    _check_multi_margin_shapes(input, target, weight)
    x = input.reshape(-1, input.shape[-1] if input.dim() else 1)
    y = target.reshape(-1, 1)
    z = margin - x.gather(1, y) + x
    other = gt.arange(x.shape[1]).unsqueeze(0) != y
    h = gt.where(other, _positive_part(z), 0.0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[target.reshape(-1)].unsqueeze(1)
    loss = h.sum(1) / x.shape[1]
    if reduction == "none":
        return loss if target.dim() > 0 else loss.reshape(())
    return _reduce(loss, reduction)


def _multilabel_pairs(target: np.ndarray, n_classes: int) -> np.ndarray:
    """``pairs[n, j, k]``: how often class ``j`` is listed among sample ``n``'s targets
    (the indices before the first -1), where class ``k`` is not a target."""
    counts = np.zeros(target.shape, dtype=np.int64)
    is_target = np.zeros(target.shape, dtype=bool)
    for n, row in enumerate(target):
        for j in row:
            if j < 0:
                break
            counts[n, j] += 1
            is_target[n, j] = True
    return counts[:, :, None] * ~is_target[:, None, :]


@autocast_function("multilabel_margin_loss")
def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The multi-label hinge loss: for each sample, ``sum over target classes j and
    non-target classes k of max(0, 1 - (input[j] - input[k]))`` over the number of
    classes; ``target`` (int64, the input's shape) lists each sample's classes, ended by
    the first -1.

    A term exactly at the margin gets no gradient (Note [Hinge kernels are strict at the
    margin]).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> round(multilabel_margin_loss(x, gt.tensor([[3, 0, -1, 1]])).item(), 4)
    0.85
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _check_vector_or_matrix(input)
    n_classes = input.shape[-1] if input.dim() else 1
    if input.dim() <= 1:
        ok = target.dim() <= 1 and target.numel() == n_classes
    else:
        ok = target.dim() == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(
            f"inconsistent target size: {_sizes(target)} for input of size: {_sizes(input)}"
        )
    _check_long(target)
    indices = target.numpy().reshape(-1, n_classes)
    if indices.size and (indices.min() < -1 or indices.max() >= n_classes):
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(-1, n_classes)
    pairs = gt.tensor(_multilabel_pairs(indices, n_classes), dtype=input.dtype)
    z = 1 - x.unsqueeze(2) + x.unsqueeze(1)  # z[n, j, k] = 1 - x[n, j] + x[n, k]
    loss = (_positive_part(z) * pairs).sum(2).sum(1) / n_classes
    if reduction == "none":
        return loss if input.dim() == 2 else loss.reshape(())
    return _reduce(loss, reduction)


# -------------------------------------------------------------------------------------
# triplets


def _check_triplet_dims(anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p and p == n):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs"
        )


def _check_margin(margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


@autocast_function("triplet_margin_loss")
def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))``, reduced, with ``d``
    the ``p``-norm pairwise distance over the last dim (:func:`pairwise_distance` with
    ``eps``); with ``swap``, the negative's distance is the smaller of the anchor's and
    the positive's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> a, pos, neg = gt.tensor([[0.0, 0.0]]), gt.tensor([[3.0, 4.0]]), gt.tensor([[0.0, 6.0]])
    >>> round(triplet_margin_loss(a, pos, neg, eps=0.0).item(), 4)
    0.0
    >>> round(triplet_margin_loss(a, pos, neg, eps=0.0, swap=True).item(), 4)
    2.3944
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = gt.minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(gt.clamp_min(margin + dist_pos - dist_neg, 0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """:func:`triplet_margin_loss` with any ``distance_function`` (default:
    :func:`pairwise_distance`), which returns one non-negative distance per pair.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> a, pos, neg = gt.tensor([[0.0, 0.0]]), gt.tensor([[3.0, 4.0]]), gt.tensor([[0.0, 6.0]])
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> triplet_margin_with_distance_loss(a, pos, neg, distance_function=l1).item()
    2.0
    """
    _check_reduction(reduction)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = gt.minimum(dist_neg, distance(positive, negative))
    return _reduce(gt.clamp_min(margin + dist_pos - dist_neg, 0), reduction)
