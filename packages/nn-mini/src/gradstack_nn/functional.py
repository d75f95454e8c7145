"""``gradstack_nn.functional`` (``gradstack.nn.functional``): the layers as functions.

Every function is written with gradstack ops, so gradients flow through it and it can be
differentiated again (``create_graph=True``), and the profiler sees the ops it is made of.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_nn.functional as F
>>> logits = gt.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
>>> target = gt.tensor([0, 2])
>>> round(F.cross_entropy(logits, target).item(), 4)
0.1755
>>> F.mse_loss(gt.tensor([1., 2.]), gt.tensor([1., 4.])).item()
2.0
"""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor._tensor import _data

__all__ = [
    "linear",
    "relu",
    "relu_",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "dropout",
    "mse_loss",
    "l1_loss",
    "nll_loss",
    "cross_entropy",
]

_REDUCTIONS = ("none", "mean", "sum")


# -------------------------------------------------------------------------------------
# layers


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``, with ``weight`` of shape ``(out_features, in_features)``.

    As torch: with a bias, one fused ``addmm`` (``grad_fn`` AddmmBackward0, whose inputs
    are the bias, the input and ``weight.t()``), the input first viewed as 2-D and the
    result viewed back when it has another number of dimensions (ViewBackward0); without
    a bias, ``matmul``.
    """
    if bias is not None:
        if input.dim() == 2:
            return gt.addmm(bias, input, weight.t())
        if input.dim() >= 1:
            out = gt.addmm(bias, input.reshape(-1, input.shape[-1]), weight.t())
            return out.view(*input.shape[:-1], out.shape[-1])
        return input.matmul(weight.t()) + bias
    return input.matmul(weight.t())


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (in place with ``inplace=True``)."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return input.relu_()


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``input`` where positive, ``negative_slope * input`` elsewhere."""
    out = gt.where(input > 0, input, input * negative_slope)
    if inplace:
        with ag.no_grad():
            input.copy_(out)
        return input
    return out


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return input.tanh()


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``, computed stably."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return input.log_softmax(dim, dtype=dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    during training; the identity otherwise."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * 0.0
    else:
        keep = gt.rand(input.shape, dtype=input.dtype) >= p
        out = input * keep.to(input.dtype) * (1.0 / (1.0 - p))
    if inplace:
        with ag.no_grad():
            input.copy_(out)
        return input
    return out


# -------------------------------------------------------------------------------------
# losses


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            stacklevel=3,
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_broadcast(name: str, input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """Mean squared error: ``((input - target) ** 2)`` reduced by ``reduction``
    (``'mean'``, ``'sum'`` or ``'none'``)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_broadcast("mse_loss", input, target)
    loss = (input - target).pow(2)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(
    input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean"
) -> Tensor:
    """Mean absolute error: ``|input - target|`` reduced by ``reduction``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_broadcast("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction)


def _class_index_checks(name: str, input: Tensor, target: Tensor) -> None:
    if target.dtype not in (gt.int64, gt.int32, gt.int16, gt.int8, gt.uint8):
        raise RuntimeError(
            f"{name}: expected target of class indices with an integer dtype (int64), got "
            f"{target.dtype}; for class probabilities pass a float target of the input's "
            "shape to cross_entropy"
        )
    if input.dim() < 1:
        raise ValueError(f"{name}: input must have at least one dimension (the classes)")
    batch = (input.shape[0],) + tuple(input.shape[2:]) if input.dim() >= 2 else ()
    if tuple(target.shape) != batch:
        raise ValueError(
            f"{name}: expected target of shape {list(batch)} for input of shape "
            f"{list(input.shape)} (classes on dim {1 if input.dim() >= 2 else 0}), got "
            f"{list(target.shape)}"
        )


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average=None,
    ignore_index: int = -100,
    reduce=None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood loss: ``-input[n, target[n]]`` (times ``weight[target[n]]``).

    ``input`` holds log-probabilities of shape ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``;
    ``target`` holds class indices in ``[0, C)`` (entries equal to ``ignore_index`` count
    for nothing).  ``'mean'`` divides by the total weight of the counted targets.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _class_index_checks("nll_loss", input, target)
    if input.dim() == 1:  # unbatched
        return nll_loss(
            input.unsqueeze(0),
            target.unsqueeze(0),
            weight,
            None,
            ignore_index,
            None,
            reduction if reduction != "none" else "sum",
        )
    n_classes = input.shape[1]
    t = _data(target)
    ignored = t == ignore_index
    any_ignored = bool(ignored.any())
    valid = t[~ignored] if any_ignored else t
    if valid.size and (valid.min() < 0 or valid.max() >= n_classes):
        bad = valid[(valid < 0) | (valid >= n_classes)][0]
        raise IndexError(f"Target {int(bad)} is out of bounds (the input has {n_classes} classes)")
    safe = (
        np.where(ignored, 0, t).astype(np.int64) if any_ignored else t.astype(np.int64, copy=False)
    )
    picked = input.gather(1, gt.from_numpy(safe).unsqueeze(1)).squeeze(1)
    if weight is None and not any_ignored:
        loss = -picked
        return _reduce(loss, reduction)
    if weight is not None:
        if weight.dim() != 1 or weight.shape[0] != n_classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
        w = _data(weight.detach())[safe]
    else:
        w = np.ones(safe.shape, dtype=_data(input).dtype)
    if any_ignored:
        w = np.where(ignored, 0, w)
    w = gt.from_numpy(np.ascontiguousarray(w, dtype=_data(input).dtype))
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


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

    ``target`` holds class indices (an integer tensor of shape ``(N,)`` or
    ``(N, d1, ...)``) or class probabilities (a float tensor of the input's shape).
    ``label_smoothing`` mixes the target with the uniform distribution, as torch does.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.dim() >= 2 else 0
    logp = input.log_softmax(class_dim)
    n_classes = input.shape[class_dim]
    if target.is_floating_point():
        return _cross_entropy_probs(
            logp, target, weight, reduction, label_smoothing, class_dim, n_classes
        )
    loss = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return loss
    # Note [Label smoothing as torch computes it]
    # torch (aten/src/ATen/native/LossNLL.cpp, cross_entropy_loss_label_smoothing) adds
    # eps / C times the "smooth" loss -sum_c logp[c] * weight[c], normalised for 'mean' by
    # the same total weight as nll_loss.
    if class_dim == 0:
        logp, target = logp.unsqueeze(0), target.unsqueeze(0)
    t = _data(target)
    ignored = t == ignore_index
    if weight is not None:
        shape = [1] * logp.dim()
        shape[1] = n_classes
        smooth = -(logp * weight.reshape(shape)).sum(1)
    else:
        smooth = -logp.sum(1)
    if ignored.any():
        smooth = smooth.masked_fill(gt.from_numpy(ignored), 0.0)
    if reduction == "mean":
        if weight is not None:
            safe = t[~ignored].astype(np.int64)
            smooth = smooth.sum() / float(_data(weight.detach())[safe].sum())
        else:
            smooth = smooth.sum() / float((~ignored).sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    elif class_dim == 0:
        smooth = smooth.squeeze(0)
    return (1 - label_smoothing) * loss + smooth * (label_smoothing / n_classes)


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim, n_classes):
    if target.shape != logp.shape:
        raise ValueError(
            f"cross_entropy: a float target holds class probabilities and must have the "
            f"input's shape {list(logp.shape)}, got {list(target.shape)}"
        )
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        shape = [1] * logp.dim()
        shape[class_dim] = n_classes
        prod = prod * weight.reshape(shape)
    loss = -prod.sum(class_dim)
    if reduction == "mean":
        count = logp.numel() // n_classes if logp.dim() > 1 else 1
        return loss.sum() / count
    return _reduce(loss, reduction)
