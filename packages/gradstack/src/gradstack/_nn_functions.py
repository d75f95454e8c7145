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
    "hardshrink",
    "rrelu",
    "bilinear",
    "dropout",
    "alpha_dropout",
    "feature_alpha_dropout",
    "embedding",
    "layer_norm",
    "group_norm",
    "batch_norm",
    "instance_norm",
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
hardshrink = _F.hardshrink
rrelu = _F.rrelu
bilinear = _F.bilinear


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
