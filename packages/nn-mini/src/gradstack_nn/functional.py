"""``gradstack_nn.functional`` (``gradstack.nn.functional``): the layers as functions.

Each function does what ``torch.nn.functional``'s does in Python (argument checks, torch's
warnings, broadcasting, the composite cases) and then calls one op of the registry, so the
graph records torch's nodes: ``cross_entropy`` gives ``NllLossBackward0`` over
``LogSoftmaxBackward0``, ``layer_norm`` ``NativeLayerNormBackward0``, ``mse_loss``
``MseLossBackward0``.  The ops' formulas are written with gradstack ops, so every function
differentiates to any order (``create_graph=True``).

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_nn.functional as F
>>> logits = gt.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], requires_grad=True)
>>> target = gt.tensor([0, 2])
>>> loss = F.cross_entropy(logits, target)
>>> round(loss.item(), 4), loss.grad_fn.name()
(0.1755, 'NllLossBackward0')
>>> F.mse_loss(gt.tensor([1., 2.]), gt.tensor([1., 4.])).item()
2.0
>>> F.one_hot(gt.tensor([0, 2]), 3).tolist()
[[1, 0, 0], [0, 0, 1]]
"""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = [
    "linear",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "max_pool2d",
    "max_pool2d_with_indices",
    "unfold",
    "fold",
    "relu",
    "relu_",
    "leaky_relu",
    "leaky_relu_",
    "sigmoid",
    "tanh",
    "gelu",
    "silu",
    "logsigmoid",
    "softmax",
    "log_softmax",
    "dropout",
    "layer_norm",
    "batch_norm",
    "embedding",
    "one_hot",
    "mse_loss",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
]

_REDUCTIONS = ("none", "mean", "sum")
_OP = gt.get_op

# convolution and pooling live in their own module (Note [A convolution is an unfold and a
# product]); they are functions of this namespace as in torch
# the composed families, each in its own module; functions of this namespace as in torch
from ._activations import *  # noqa: E402, F403
from ._activations import __all__ as _activations_all  # noqa: E402
from ._attention import scaled_dot_product_attention  # noqa: E402
from ._convolution import (  # noqa: E402
    conv1d,
    conv2d,
    conv_transpose1d,
    conv_transpose2d,
    fold,
    max_pool2d,
    max_pool2d_with_indices,
    pixel_shuffle,
    pixel_unshuffle,
    unfold,
)
from ._distances import *  # noqa: E402, F403
from ._distances import __all__ as _distances_all  # noqa: E402
from ._divergences import kl_div  # noqa: E402
from ._dropout import dropout1d, dropout2d, dropout3d  # noqa: E402
from ._extra_layers import *  # noqa: E402, F403
from ._extra_layers import __all__ as _extra_layers_all  # noqa: E402
from ._interpolation import *  # noqa: E402, F403
from ._interpolation import __all__ as _interpolation_all  # noqa: E402
from ._margin_losses import *  # noqa: E402, F403
from ._margin_losses import __all__ as _margin_losses_all  # noqa: E402
from ._normalizations import *  # noqa: E402, F403
from ._normalizations import __all__ as _normalizations_all  # noqa: E402
from ._padding import pad  # noqa: E402
from ._pooling import *  # noqa: E402, F403
from ._pooling import __all__ as _pooling_all  # noqa: E402
from ._spatial import *  # noqa: E402, F403
from ._spatial import __all__ as _spatial_all  # noqa: E402

__all__ += _activations_all
__all__ += _distances_all
__all__ += _normalizations_all
__all__ += ["pad", "scaled_dot_product_attention", "kl_div", "dropout1d", "dropout2d"]
__all__ += ["dropout3d"]
__all__ += _interpolation_all
__all__ += _margin_losses_all
__all__ += _pooling_all
__all__ += _extra_layers_all
__all__ += _spatial_all

# torch's names of the scalar types, as its error messages spell them
_TORCH_TYPE_NAMES = {
    "float16": "Half",
    "float32": "Float",
    "float64": "Double",
    "int64": "Long",
    "int32": "Int",
    "int16": "Short",
    "int8": "Char",
    "uint8": "Byte",
    "bool": "Bool",
}


def _type_name(t: Tensor) -> str:
    return _TORCH_TYPE_NAMES.get(t.dtype.name, t.dtype.name)


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
    """``input`` where positive, ``negative_slope * input`` elsewhere (LeakyReluBackward0)."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    return _OP("leaky_relu")(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu` (torch names its node LeakyReluBackward1, gradstack
    LeakyReluBackward0: one node name per op and its in-place twin)."""
    return _OP("leaky_relu_")(input, negative_slope)


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-input))``."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return input.tanh()


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """``input * Phi(input)`` (Phi the standard normal CDF), or with ``approximate="tanh"``
    ``0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x**3)))`` (GeluBackward0)."""
    return _OP("gelu")(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``input * sigmoid(input)`` (SiluBackward0), in place with ``inplace=True``."""
    return _OP("silu_" if inplace else "silu")(input)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(input))``, stable for large ``|input|`` (LogSigmoidBackward0)."""
    return _OP("log_sigmoid")(input)


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)``, computed stably (SoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:  # as torch: cast first (ToCopyBackward0), then the softmax
        input = input.to(dtype)
    return input.softmax(dim)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``log(softmax(input, dim))``, computed stably (LogSoftmaxBackward0)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(dim)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """During training, zero each element with probability ``p`` and scale the others by
    ``1 / (1 - p)``; the identity otherwise.

    As torch's CPU dropout: the mask is ``empty_like(input).bernoulli_(1 - p)`` divided by
    ``1 - p`` (torch's generator: the same seed gives torch's mask), then one
    multiplication by it (MulBackward0), ``input.mul_(mask)`` with ``inplace=True``.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        noise = gt.zeros((), dtype=input.dtype)
    else:
        with ag.no_grad():
            noise = gt.empty_like(input).bernoulli_(1.0 - p).div_(1.0 - p)
    return input.mul_(noise) if inplace else input * noise


# -------------------------------------------------------------------------------------
# normalisation and embedding


def layer_norm(
    input: Tensor,
    normalized_shape,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims to zero mean and unit
    (biased) variance, then scale by ``weight`` and shift by ``bias``
    (NativeLayerNormBackward0)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return _OP("layer_norm")(input, tuple(normalized_shape), weight, bias, eps)


def _verify_batch_size(size) -> None:
    values = size[0]
    for s in size[2:]:
        values *= s
    if values == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation over dim 1 of an ``(N, C, *)`` input (NativeBatchNormBackward0).

    In training, the batch statistics normalise and the running statistics (when given)
    are updated in place with ``momentum`` (the unbiased variance); in evaluation, the
    running statistics normalise.
    """
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    return _OP("batch_norm")(
        input, weight, bias, running_mean, running_var, bool(training), momentum, eps
    )


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of ``weight`` picked by the indices ``input`` (EmbeddingBackward0).

    ``padding_idx``'s row gets no gradient; ``max_norm`` first rescales (in place, without
    recording) the picked rows whose ``norm_type``-norm exceeds it; ``scale_grad_by_freq``
    divides each row's gradient by its number of occurrences in ``input``.
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        if not input.is_contiguous():
            input = input.contiguous()
        with ag.no_grad():
            _OP("embedding_renorm_")(weight, input, max_norm, norm_type)
    return _OP("embedding")(weight, input, padding_idx, bool(scale_grad_by_freq), bool(sparse))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index
    (``num_classes=-1``: one more than the largest index)."""
    if tensor.dtype != gt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if tensor.numel() > 0:
        if int(tensor.min().item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max().item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == gt.arange(num_classes)).long()


# -------------------------------------------------------------------------------------
# losses


def _reduction(size_average, reduce, reduction: str, stacklevel: int = 4) -> str:
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn(
            "size_average and reduce args will be deprecated, please use "
            f"reduction='{reduction}' instead.",
            stacklevel=stacklevel,
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _warn_size(input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    """``torch.broadcast_tensors(input, target)``: expanded views (ExpandBackward0)."""
    if tuple(input.shape) == tuple(target.shape):
        return input, target
    shape = tuple(_broadcast_shapes(tuple(input.shape), tuple(target.shape)))
    a = input if tuple(input.shape) == shape else input.expand(*shape)
    b = target if tuple(target.shape) == shape else target.expand(*shape)
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
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _broadcast(input, target)
    if weight is not None:
        return _weighted((x - y).pow(2), weight, input, reduction, True)
    return _OP("mse_loss")(x, y, reduction)


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
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _broadcast(input, target)
    loss = (x - y).abs()
    if weight is not None:
        return _weighted(loss, weight, input, reduction, True)
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


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
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _broadcast(input, target)
    if beta == 0.0:
        return l1_loss(x, y, reduction=reduction)
    return _OP("smooth_l1_loss")(x, y, reduction, beta)


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
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x, y = _broadcast(input, target)
    if weight is None:
        return _OP("huber_loss")(x, y, reduction, delta)
    return _weighted(_OP("huber_loss")(x, y, "none", delta), weight, input, reduction, False)


def _not_differentiable(fn: str, name: str, t: Tensor | None) -> None:
    if t is not None and t.requires_grad and ag.is_grad_enabled():
        raise RuntimeError(
            f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
            "This input cannot have requires_grad True."
        )


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
        weight = weight.expand(*_broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
    return _OP("binary_cross_entropy")(input, target, weight, reduction)


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
