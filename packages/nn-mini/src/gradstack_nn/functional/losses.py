"""The regression, classification and likelihood losses as functions: ``mse_loss``,
``l1_loss``, ``smooth_l1_loss``, ``huber_loss``, ``nll_loss``, ``cross_entropy``,
``binary_cross_entropy``, ``binary_cross_entropy_with_logits``, ``kl_div``,
``poisson_nll_loss`` and ``gaussian_nll_loss`` (the margin and embedding losses are in
:mod:`gradstack_nn.functional.margin_losses`).

Each checks its arguments as torch's does and calls one op of the registry where torch
records one node (``cross_entropy`` gives ``NllLossBackward0`` over
``LogSoftmaxBackward0``, ``mse_loss`` ``MseLossBackward0``); the others are composed of
gradstack ops as torch composes them, so every loss differentiates to any order.

Examples
--------
>>> import gradstack_tensor as gt
>>> logits = gt.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], requires_grad=True)
>>> round(cross_entropy(logits, gt.tensor([0, 2])).item(), 4)
0.1755
>>> mse_loss(gt.tensor([1., 2.]), gt.tensor([1., 4.])).item()
2.0
>>> logp = gt.tensor([[0.25, 0.75]]).log()
>>> round(kl_div(logp, gt.tensor([[0.5, 0.5]]), reduction="batchmean").item(), 4)
0.1438
>>> round(poisson_nll_loss(gt.tensor([0.0, 1.0]), gt.tensor([1.0, 3.0])).item(), 4)
0.3591
"""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function

from ._utils import _not_differentiable, _type_name

__all__ = [
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "poisson_nll_loss",
    "gaussian_nll_loss",
]

_OP = gt.get_op


# -------------------------------------------------------------------------------------
# reductions


_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction: str, stacklevel: int) -> str:
    """torch's ``legacy_get_string``: the reduction the deprecated ``size_average`` and
    ``reduce`` ask for (with torch's deprecation warning), else ``reduction`` unchecked (the
    loss modules take it so, and report a bad one at their first call, as torch)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        stacklevel=stacklevel,
    )
    return reduction


def _reduction(size_average, reduce, reduction: str, stacklevel: int = 4) -> str:
    reduction = _legacy_reduction(size_average, reduce, reduction, stacklevel + 1)
    _check_reduction(reduction)
    return reduction


def _checked_reduction(size_average, reduce, reduction: str, message: str = "") -> str:
    """The reduction the arguments ask for: the legacy ``size_average``/``reduce`` through
    :func:`_reduction` (torch's deprecation warning), else
    ``reduction`` checked with torch's ``ValueError`` (``message``: the function's own
    words after the name, where torch's Python spells them differently)."""
    if size_average is not None or reduce is not None:
        return _reduction(size_average, reduce, reduction, stacklevel=4)
    _check_reduction(reduction, message)
    return reduction


def _check_reduction(reduction: str, message: str = "") -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction}{message or ' is not a valid value for reduction'}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """torch's ``apply_loss_reduction``."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# -------------------------------------------------------------------------------------
# regression losses


def _warn_size(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=stacklevel,
        )


def _regression_args(input, target, size_average, reduce, reduction):
    """What ``mse_loss``, ``l1_loss`` and ``smooth_l1_loss`` do first, as torch: warn of a
    target of another size, resolve the reduction, broadcast input and target."""
    _warn_size(input, target, stacklevel=4)
    reduction = _reduction(size_average, reduce, reduction, stacklevel=5)
    x, y = _broadcast(input, target)
    return x, y, reduction


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """``torch.broadcast_tensors(input, target)``: expanded views (ExpandBackward0)."""
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    shape = tuple(_broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    a = input if tuple(input.shape) == shape else input.expand(tuple(shape))
    b = target if tuple(target.shape) == shape else target.expand(tuple(shape))
    return a, b


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and 1 not in (x, y):
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                f"non-singleton dimension {i}"
            )
        out.append(max(x, y) if 0 not in (x, y) else 0)
    return tuple(out)


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight: bool):
    """torch's manual weighting of mse_loss/l1_loss/huber_loss (``weight`` of the input's
    size; ``mean`` divides by the sum of the weights, huber's by the number of elements)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    weighted = loss * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum() if mean_by_weight else weighted.mean()


@autocast_function("mse_loss")
def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error ``(input - target) ** 2`` reduced by ``reduction`` (``'mean'``,
    ``'sum'`` or ``'none'``); MseLossBackward0.  With ``weight`` (the input's size),
    ``'mean'`` is the weighted sum over the sum of the weights, as torch."""
    x, y, reduction = _regression_args(input, target, size_average, reduce, reduction)
    if weight is not None:
        return _weighted((x - y).pow(2), weight, input, reduction, True)
    return _OP("mse_loss")(x, y, reduction)


@autocast_function("l1_loss")
def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean absolute error ``|input - target|`` reduced by ``reduction``.

    torch's ``l1_loss`` is a composite: ``(input - target).abs()`` then ``mean``/``sum``
    (MeanBackward0 over AbsBackward0 over SubBackward0), as here.
    """
    x, y, reduction = _regression_args(input, target, size_average, reduce, reduction)
    loss = (x - y).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction, True)
    return _reduce(loss, reduction)


@autocast_function("smooth_l1_loss")
def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``), reduced; SmoothL1LossBackward0, or :func:`l1_loss` when ``beta == 0`` (torch
    does the same)."""
    x, y, reduction = _regression_args(input, target, size_average, reduce, reduction)
    if beta == 0.0:
        return l1_loss(x, y, reduction=reduction)
    return _OP("smooth_l1_loss")(x, y, reduction, beta)


@autocast_function("huber_loss")
def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, reduced
    (HuberLossBackward0).  With ``weight``, ``'mean'`` is the mean of the weighted losses,
    as torch."""
    _warn_size(input, target)
    _check_reduction(reduction)
    x, y = _broadcast(input, target)
    if weight is None:
        return _OP("huber_loss")(x, y, reduction, delta)
    return _weighted(_OP("huber_loss")(x, y, "none", delta), weight, input, reduction, False)


# -------------------------------------------------------------------------------------
# classification losses


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    """torch's ``nll_loss_nd``: 1-D/2-D inputs take ``nll_loss``, 4-D ``nll_loss2d``,
    others are viewed as 4-D ``(N, C, 1, -1)`` (ViewBackward0) and back."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and target.dim() >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if input.dim() <= 2:
        _not_differentiable("nll_loss_forward", "weight", weight)
        return _OP("nll_loss")(input, target, weight, reduction, ignore_index)
    _not_differentiable("nll_loss2d_forward", "weight", weight)
    if input.dim() == 4:
        return _OP("nll_loss2d")(input, target, weight, reduction, ignore_index)
    n, c = input.shape[0], input.shape[1]
    out_size = (n,) + tuple(input.shape[2:])
    if tuple(target.shape) != out_size:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    if not input.is_contiguous():
        input = input.contiguous()
    if not target.is_contiguous():
        target = target.contiguous()
    input = input.view(n, c, 1, -1) if input.numel() > 0 else input.view(n, c, 0, 0)
    target = target.view(n, 1, -1) if target.numel() > 0 else target.view(n, 0, 0)
    out = _OP("nll_loss2d")(input, target, weight, reduction, ignore_index)
    return out.view(*out_size) if reduction == "none" else out


@autocast_function("nll_loss")
def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood loss: ``-input[n, target[n]] * weight[target[n]]``.

    ``input`` holds log-probabilities of shape ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``;
    ``target`` holds int64 class indices in ``[0, C)`` (entries equal to ``ignore_index``
    count for nothing).  ``'mean'`` divides by the total weight of the counted targets.
    NllLossBackward0 (NllLoss2DBackward0 for inputs of 3 or more dims).
    """
    reduction = _reduction(size_average, reduce, reduction)
    return _nll_loss_nd(input, target, weight, reduction, ignore_index)


@autocast_function("cross_entropy_loss")
def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between logits ``input`` and ``target``: ``nll_loss(log_softmax(input))``.

    ``target`` holds class indices (int64, the input's shape without the class dim 1) or
    class probabilities (floats of the input's shape).  ``label_smoothing`` mixes the
    target with the uniform distribution.  The graph is torch's: NllLossBackward0 over
    LogSoftmaxBackward0 for indices; with label smoothing or probabilities, the
    composite of elementwise ops torch records (AddBackward0, DivBackward0 ... on top).
    """
    reduction = _reduction(size_average, reduce, reduction)
    class_dim = 0 if input.dim() == 1 else 1
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
            )
        return _cross_entropy_smoothed(
            input, target, weight, reduction, ignore_index, label_smoothing, class_dim
        )
    return _nll_loss_nd(input.log_softmax(class_dim), target, weight, reduction, ignore_index)


def _class_shape(input: Tensor, class_dim: int) -> tuple:
    shape = [1] * input.dim()
    shape[class_dim] = input.shape[class_dim]
    return tuple(shape)


def _cross_entropy_smoothed(input, target, weight, reduction, ignore_index, ls, class_dim):
    """torch's ``cross_entropy_loss_label_smoothing`` (aten/src/ATen/native/LossNLL.cpp):
    ``(1 - ls) * nll + ls / C * smooth`` with ``smooth = -sum_c logp[c] * weight[c]``,
    normalised for ``'mean'`` by the weight of the targets that are not ignored."""
    logp = input.log_softmax(class_dim)
    n_classes = input.shape[class_dim]
    nll = _nll_loss_nd(logp, target, weight, reduction, ignore_index)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * weight.view(*_class_shape(input, class_dim))).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = gt.where(ignore_mask, 0, target)
            denominator = (weight[kept] * (~ignore_mask).to(weight.dtype)).sum()
            ret = smooth.sum() / denominator
        else:
            ret = smooth.sum() / (~ignore_mask).sum()
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    # (torch's C++ multiplies by Scalars: MulBackward1, Note [Scalar overloads])
    return _OP("mul_scalar")(nll, 1 - ls) + _OP("mul_scalar")(ret, ls / n_classes)


def _cross_entropy_probs(input, target, weight, reduction, ignore_index, ls, class_dim):
    """torch's ``cross_entropy_loss_prob_target``: ``-sum(log_softmax(input) * target *
    weight)``, over ``numel / C`` for ``'mean'``."""
    if not target.is_floating_point():
        raise RuntimeError(
            "Expected floating point type for target with class probabilities, got "
            f"{_type_name(target)}"
        )
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if ls > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {ls}")
    logp = input.log_softmax(class_dim)
    n_classes = input.shape[class_dim]
    if ls > 0.0:
        target = _OP("mul_scalar")(target, 1 - ls) + (ls / n_classes)
    prod = logp * target
    if weight is not None:
        prod = prod * weight.view(*_class_shape(input, class_dim))
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:  # torch: -(...).sum().fill_(NAN)
        return -(prod.sum().fill_(float("nan")))
    # (a division by a Scalar in torch's C++, DivBackward1: Note [Scalar overloads])
    return _OP("div_scalar")(-prod.sum(), input.numel() // n_classes)


@autocast_function("binary_cross_entropy")
def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """``-weight * (target * log(input) + (1 - target) * log(1 - input))`` for
    probabilities ``input`` in [0, 1], the logs clamped to >= -100, reduced
    (BinaryCrossEntropyBackward0; differentiable in ``input`` and ``target``)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    _not_differentiable("binary_cross_entropy", "weight", weight)
    if weight is not None:
        weight = weight.expand(_broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    return _OP("binary_cross_entropy")(input, target, weight, reduction)


@autocast_function("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)`` computed stably from the logits:
    ``(1 - target) * input - (1 + (pos_weight - 1) * target) * log_sigmoid(input)``, times
    ``weight``, reduced (BinaryCrossEntropyWithLogitsBackward0)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    _not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    _not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return _OP("binary_cross_entropy_with_logits")(input, target, weight, pos_weight, reduction)


# -------------------------------------------------------------------------------------
# divergence and likelihood losses


@autocast_function("kl_div")
def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """``target * (log(target) - input)`` summed as ``reduction`` says (``"batchmean"``:
    the sum over the batch size, the divergence's definition; ``"mean"`` divides by every
    element, with torch's warning); ``input`` holds log-probabilities, ``target``
    probabilities (log-probabilities with ``log_target=True``).

    Where the target is 0 the term is 0 and its gradient finite (torch's ``xlogy`` gives
    the target a NaN gradient there; the input's gradient is the same).
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = gt.where(positive, target, 1.0)
        loss = gt.where(positive, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _stirling(target: Tensor) -> Tensor:
    """Stirling's approximation of ``log(target!)``, ``target * log(target) - target +
    0.5 * log(2 pi target)``, where ``target > 1``; 0 elsewhere.

    Note [A finite Stirling term below 1]
    torch computes the term everywhere and masks it (``masked_fill(target <= 1, 0)``), so
    at ``target == 0`` its ``log`` makes the target's gradient NaN; here the masked
    entries see a target of 1 instead, and their gradient is the mask's 0.
    """
    above = target > 1
    t = gt.where(above, target, 1.0)
    term = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
    return gt.where(above, term, 0.0)


@autocast_function("poisson_nll_loss")
def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average=None,
    eps: float = 1e-8,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood of ``target`` under a Poisson distribution of rate
    ``exp(input)`` (``log_input=True``: ``exp(input) - target * input``) or ``input``
    (``input - target * log(input + eps)``), without the constant ``log(target!)`` unless
    ``full`` (Stirling's approximation, for targets above 1), reduced.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> round(poisson_nll_loss(gt.tensor([0.0, 1.0]), gt.tensor([1.0, 3.0])).item(), 4)
    0.3591
    >>> round(poisson_nll_loss(gt.tensor([0.0, 1.0]), gt.tensor([1.0, 3.0]), full=True).item(), 4)
    1.2412
    """
    reduction = _checked_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        loss = loss + _stirling(target)
    return _reduce(loss, reduction)


def _gaussian_var(input: Tensor, var) -> Tensor:
    """``var`` checked and shaped as torch's ``gaussian_nll_loss``: a float becomes a
    tensor of the input's shape; a tensor one dim short of the input gets a last dim of 1;
    otherwise it must equal the input's shape but for one dim of size 1."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * gt.ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(
            f"gaussian_nll_loss(): argument 'var' must be Tensor, not {type(var).__name__}"
        )
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    in_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape == in_shape:
        return var
    if in_shape[:-1] == var_shape:
        return var.unsqueeze(-1)
    if len(in_shape) == len(var_shape):
        mismatched = sum(v for i, v in zip(in_shape, var_shape) if i != v)
        if mismatched == 1:
            return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood of ``target`` under a Gaussian of mean ``input`` and
    variance ``var``: ``0.5 * (log(max(var, eps)) + (input - target) ** 2 / max(var,
    eps))``, plus ``0.5 * log(2 pi)`` if ``full``, reduced.

    ``var`` is a float, a tensor of the input's shape, of its shape without the last dim
    (one variance per sample), or of its shape with one dim of size 1.  As torch, the
    clamp at ``eps`` does not stop the variance's gradient (torch clamps a clone in place
    under ``no_grad``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x, t = gt.tensor([[1.0, 2.0]]), gt.tensor([[2.0, 2.0]])
    >>> gaussian_nll_loss(x, t, gt.tensor([1.0]), reduction="none").tolist()
    [[0.5, 0.0]]
    >>> round(gaussian_nll_loss(x, t, 1.0, full=True).item(), 4)
    1.1689
    """
    var = _gaussian_var(input, var)
    _check_reduction(reduction, " is not valid")
    # Note [The variance's clamp passes its gradient]: max(var, eps) in value, var in
    # gradient, as torch's in-place clamp of a clone under no_grad
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
