"""The nn functions torch also has at its top level (``torch.conv2d``, ``torch.dropout``,
``torch.layer_norm``, ``torch.cdist`` ...), from nn-mini's ``functional``.

Most take ``functional``'s arguments; those whose top-level form is aten's signature
take aten's: ``dropout(input, p, train)``, ``embedding(weight, indices, padding_idx=-1,
...)``, ``batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
eps, cudnn_enabled)`` and ``instance_norm`` likewise, ``layer_norm``/``group_norm`` with
their trailing ``cudnn_enable(d)``.

Examples
--------
>>> import gradstack as torch
>>> torch.dropout(torch.ones(3), 0.5, False).tolist()
[1.0, 1.0, 1.0]
>>> torch.embedding(torch.eye(3), torch.tensor([2, 0])).tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
"""

from __future__ import annotations

from gradstack_nn import functional as _F
from gradstack_tensor import Tensor as _Tensor

__all__ = [
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "pixel_shuffle",
    "pixel_unshuffle",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    "cdist",
    "selu",
    "celu",
    "threshold",
    "rrelu",
    "bilinear",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "embedding",
    "embedding_bag",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "instance_norm",
    "conv3d",
    "conv_transpose3d",
    "channel_shuffle",
    "rms_norm",
    "selu_",
    "celu_",
    "threshold_",
    "rrelu_",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "max_pool1d_with_indices",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "kl_div",
    "ctc_loss",
    "margin_ranking_loss",
    "poisson_nll_loss",
    "triplet_margin_loss",
]

# the same function as functional's
conv1d = _F.conv1d
conv2d = _F.conv2d
conv_transpose1d = _F.conv_transpose1d
conv_transpose2d = _F.conv_transpose2d
pixel_shuffle = _F.pixel_shuffle
pixel_unshuffle = _F.pixel_unshuffle
cosine_similarity = _F.cosine_similarity
pairwise_distance = _F.pairwise_distance
pdist = _F.pdist
cdist = _F.cdist
celu = _F.celu
rrelu = _F.rrelu
bilinear = _F.bilinear
conv3d = _F.conv3d
conv_transpose3d = _F.conv_transpose3d


def _tensor(input, name):
    from gradstack_tensor import Tensor

    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return input


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``functional.rms_norm``."""
    return _F.rms_norm(_tensor(input, "rms_norm"), normalized_shape, weight, eps)


def channel_shuffle(input, groups):
    """``functional.channel_shuffle(input, groups)``; ``groups`` an int."""
    _tensor(input, "channel_shuffle")
    if not isinstance(groups, int) or isinstance(groups, bool):
        raise TypeError(
            "channel_shuffle(): argument 'groups' (position 2) must be int, not "
            f"{type(groups).__name__}"
        )
    return _F.channel_shuffle(input, groups)


def selu_(input):
    """In-place ``selu``."""
    return _F.selu_(_tensor(input, "selu_"))


def celu_(input, alpha=1.0):
    """In-place ``celu``."""
    return _F.celu_(_tensor(input, "celu_"), alpha)


def threshold_(input, threshold, value):
    """In-place ``threshold``."""
    return _F.threshold_(_tensor(input, "threshold_"), threshold, value)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place ``rrelu`` (aten's signature; ``generator`` must be None)."""
    if generator is not None:
        raise NotImplementedError("rrelu_(generator=...) is not implemented in gradstack")
    return _F.rrelu_(_tensor(input, "rrelu_"), lower, upper, training)


# aten's pooling forms: ``stride=()`` (torch's default) means the kernel size, and the max
# pools return no indices
def _stride(stride):
    return None if stride is None or (isinstance(stride, list | tuple) and not stride) else stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``functional.max_pool1d`` without indices (aten's signature)."""
    return _F.max_pool1d(
        _tensor(input, "max_pool1d"), kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``functional.max_pool2d`` without indices (aten's signature)."""
    return _F.max_pool2d(
        _tensor(input, "max_pool2d"), kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``functional.max_pool3d`` without indices (aten's signature)."""
    return _F.max_pool3d(
        _tensor(input, "max_pool3d"), kernel_size, _stride(stride), padding, dilation, ceil_mode
    )


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):  # fmt: skip
    """``functional.avg_pool1d`` (aten's signature)."""
    return _F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """``functional.adaptive_avg_pool1d(input, output_size)``."""
    return _F.adaptive_avg_pool1d(_tensor(input, "adaptive_avg_pool1d"), output_size)


def adaptive_max_pool1d(input, output_size):
    """The pair ``(values, indices)`` of ``functional.adaptive_max_pool1d`` (aten's form
    always returns the indices)."""
    return _F.adaptive_max_pool1d(
        _tensor(input, "adaptive_max_pool1d"), output_size, return_indices=True
    )


def selu(input):
    """``functional.selu(input)`` (torch's top-level ``selu`` takes no ``inplace``)."""
    return _F.selu(input)


def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input``."""
    return _F.threshold(input, threshold, value)


def dropout(input, p, train):
    """``functional.dropout(input, p, training=train)`` (aten's signature)."""
    return _F.dropout(input, p, train)


def alpha_dropout(input, p, train):
    """``functional.alpha_dropout(input, p, training=train)``."""
    return _F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    """``functional.feature_alpha_dropout(input, p, training=train)``."""
    return _F.feature_alpha_dropout(input, p, train)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """The rows of ``weight`` at ``indices`` (aten's order: the weight first; a
    ``padding_idx`` of -1 means none)."""
    return _F.embedding(
        indices,
        weight,
        padding_idx=None if padding_idx == -1 else padding_idx,
        scale_grad_by_freq=scale_grad_by_freq,
        sparse=sparse,
    )


_BAG_MODES = ("sum", "mean", "max")


def embedding_bag(
    weight,
    indices,
    offsets,
    scale_grad_by_freq=False,
    mode=0,
    sparse=False,
    per_sample_weights=None,
    include_last_offset=False,
    padding_idx=None,
):
    """aten's ``embedding_bag``: ``functional.embedding_bag``'s bags (``mode`` 0 sum, 1 mean,
    2 max; a 1-d ``indices`` cut at ``offsets``) and torch's three by-products:
    ``(output, offset2bag, bag_size, max_indices)``.

    ``offset2bag`` gives each index its bag (empty where torch's fast sum path skips it:
    a float32/float16/bfloat16 table with unit column stride and no ``padding_idx``),
    ``bag_size`` each bag's count without ``padding_idx`` (zeros for sums), ``max_indices``
    the row each maximum came from (``mode=2``; else ``bag_size``).

    Examples
    --------
    >>> import gradstack as torch
    >>> w = torch.arange(10.0).reshape(5, 2)
    >>> out, offset2bag, bag_size, _ = torch.embedding_bag(
    ...     w, torch.tensor([0, 1, 4, 2]), torch.tensor([0, 3]), mode=1
    ... )
    >>> out.tolist(), offset2bag.tolist(), bag_size.tolist()
    ([[3.3333332538604736, 4.333333492279053], [4.0, 5.0]], [0, 0, 0, 1], [3, 1])
    """
    import numpy as np

    _tensors("embedding_bag", weight=weight, indices=indices, offsets=offsets)
    if isinstance(mode, bool) or not isinstance(mode, int):
        raise TypeError(
            f"embedding_bag(): argument 'mode' (position 5) must be int, not {type(mode).__name__}"
        )
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if not weight.is_floating_point():
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar "
            f"types: Half, BFloat16, Float, Double; but got {weight.type()} instead (while "
            "checking arguments for embedding_bag)"
        )
    if offsets.dim() != 1:
        raise RuntimeError(
            f"offsets has to be a 1D Tensor, but got Tensor of dimension {offsets.dim()}"
        )
    flat = indices.reshape(-1) if indices.dim() > 1 else indices
    output = _F.embedding_bag(
        flat, weight, offsets, scale_grad_by_freq=scale_grad_by_freq, mode=_BAG_MODES[mode],
        sparse=sparse, per_sample_weights=per_sample_weights,
        include_last_offset=include_last_offset, padding_idx=padding_idx,
    )  # fmt: skip
    # torch's by-products, from the (checked) arguments
    from gradstack_tensor import from_numpy

    idx = flat.detach().numpy().astype(np.int64)
    starts = offsets.detach().numpy().astype(np.int64)
    if include_last_offset:
        starts = starts[:-1]
    bags, n = starts.shape[0], idx.shape[0]
    both_int = str(indices.dtype).endswith("int32") and str(offsets.dtype).endswith("int32")
    itype = np.int32 if both_int else np.int64
    pad = None if padding_idx is None else padding_idx % weight.shape[0]
    fast_sum = (
        mode == 0
        and pad is None
        and str(weight.dtype).split(".")[-1] in ("float32", "float16", "bfloat16")
        and weight.stride(1) == 1
    )
    bag_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    offset2bag = np.zeros(0, itype) if fast_sum else bag_of.astype(itype)
    bag_size = np.zeros(offsets.shape[0], itype)  # (sums: torch's zeros, one per offset)
    if mode != 0:
        ends = np.append(starts[1:], n)
        kept = idx != pad if pad is not None else np.ones(n, bool)
        bag_size = np.array(
            [int(kept[s:e].sum()) for s, e in zip(starts, ends)], dtype=itype
        ).reshape(bags)
    max_indices = bag_size.copy()
    if mode == 2:
        table = weight.detach().numpy()
        max_indices = np.zeros((bags, weight.shape[1]), itype)
        for b, (s, e) in enumerate(zip(starts, ends)):
            rows = idx[s:e][kept[s:e]]
            if rows.size:  # (the first maximum wins, as torch's strict comparison)
                max_indices[b] = rows[np.argmax(table[rows], axis=0)]
    return (output,) + tuple(from_numpy(a) for a in (offset2bag, bag_size, max_indices))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """``functional.layer_norm`` (``cudnn_enable`` is ignored on the CPU)."""
    return _F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """``functional.group_norm`` (``cudnn_enabled`` is ignored on the CPU)."""
    return _F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):  # fmt: skip
    """``functional.batch_norm`` with aten's order of arguments."""
    return _F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):  # fmt: skip
    """``functional.instance_norm`` with aten's order of arguments."""
    return _F.instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps
    )


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):  # fmt: skip
    """``functional.max_pool1d(..., return_indices=True)`` (aten's signature): the maxima
    and their indices."""
    return _F.max_pool1d(
        _tensor(input, "max_pool1d_with_indices"), kernel_size, _stride(stride), padding,
        dilation, ceil_mode, return_indices=True,
    )  # fmt: skip


# Note [torch's top-level losses take aten's reduction]
# ``torch.kl_div(input, target, 1)``: the top-level losses are aten's ops, whose
# ``reduction`` is an int of at::Reduction (0 none, 1 mean, 2 sum), not functional's str;
# ``kl_div``'s 1 is a plain mean, without functional's warning about "batchmean".  Their
# default is 0, no reduction, where torch's schema says Mean: the value torch 2.13's Python
# binding passes (``torch.kl_div(a, p).shape`` is ``a``'s), and what gradstack passes.
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction, name):
    if type(reduction) is not int:
        raise TypeError(
            f"{name}(): argument 'reduction' must be int (0 none, 1 mean, 2 sum), not "
            f"{type(reduction).__name__}"
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _tensors(name, **arguments):
    """torch's TypeError naming the first argument that is not a Tensor (the optional
    ones, given as ``(value,)``, may be None)."""
    for position, (arg, value) in enumerate(arguments.items(), 1):
        optional = isinstance(value, tuple)
        value = value[0] if optional else value
        if not (isinstance(value, _Tensor) or (optional and value is None)):
            raise TypeError(
                f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """``functional.binary_cross_entropy_with_logits`` with aten's int ``reduction``."""
    name = "binary_cross_entropy_with_logits"
    _tensors(name, input=input, target=target, weight=(weight,), pos_weight=(pos_weight,))
    return _F.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction, name), pos_weight=pos_weight
    )


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``functional.cosine_embedding_loss`` with aten's int ``reduction``."""
    _tensors("cosine_embedding_loss", input1=input1, input2=input2, target=target)
    return _F.cosine_embedding_loss(
        input1, input2, target, margin, reduction=_reduction(reduction, "cosine_embedding_loss")
    )


def ctc_loss(
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
    zero_infinity=False,
):  # fmt: skip
    """``functional.ctc_loss`` with aten's int ``reduction`` (lengths as lists or tensors)."""
    _tensors("ctc_loss", log_probs=log_probs, targets=targets)
    if isinstance(input_lengths, _Tensor) != isinstance(target_lengths, _Tensor):
        raise TypeError(
            "ctc_loss(): input_lengths and target_lengths must be both tensors or both "
            "sequences of ints"
        )
    return _F.ctc_loss(
        log_probs, targets, input_lengths, target_lengths, blank,
        reduction=_reduction(reduction, "ctc_loss"), zero_infinity=zero_infinity,
    )  # fmt: skip


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``functional.hinge_embedding_loss`` with aten's int ``reduction``."""
    _tensors("hinge_embedding_loss", input=input, target=target)
    return _F.hinge_embedding_loss(
        input, target, margin, reduction=_reduction(reduction, "hinge_embedding_loss")
    )


def kl_div(input, target, reduction=0, *, log_target=False):
    """``functional.kl_div`` with aten's int ``reduction`` (1 is a plain mean, Note
    [torch's top-level losses take aten's reduction])."""
    _tensors("kl_div", input=input, target=target)
    r = _reduction(reduction, "kl_div")
    if r == "mean":
        return _F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return _F.kl_div(input, target, reduction=r, log_target=log_target)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``functional.margin_ranking_loss`` with aten's int ``reduction``."""
    _tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    return _F.margin_ranking_loss(
        input1, input2, target, margin, reduction=_reduction(reduction, "margin_ranking_loss")
    )


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``functional.poisson_nll_loss`` with aten's arguments (all required, ``reduction``
    an int)."""
    _tensors("poisson_nll_loss", input=input, target=target)
    return _F.poisson_nll_loss(
        input, target, log_input, full, eps=eps,
        reduction=_reduction(reduction, "poisson_nll_loss"),
    )  # fmt: skip


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction=0):  # fmt: skip
    """``functional.triplet_margin_loss`` with aten's int ``reduction``."""
    _tensors("triplet_margin_loss", anchor=anchor, positive=positive, negative=negative)
    return _F.triplet_margin_loss(
        anchor, positive, negative, margin, p, eps, swap,
        reduction=_reduction(reduction, "triplet_margin_loss"),
    )  # fmt: skip
