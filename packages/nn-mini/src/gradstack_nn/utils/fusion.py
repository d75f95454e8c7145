"""Folding an evaluation-mode batch norm into the convolution or linear layer before it, as
torch's ``nn.utils.fusion``: ``fuse_conv_bn_eval``, ``fuse_conv_bn_weights``,
``fuse_linear_bn_eval`` and ``fuse_linear_bn_weights`` (torch's formulas, term for term).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import BatchNorm2d, Conv2d
>>> conv, bn = Conv2d(2, 3, 3).eval(), BatchNorm2d(3).eval()
>>> x = gt.randn(1, 2, 5, 5)
>>> fused = fuse_conv_bn_eval(conv, bn)
>>> bool((fused(x) - bn(conv(x))).abs().max() < 1e-5)
True
"""

from __future__ import annotations

import copy

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ..parameter import Parameter

__all__ = [
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
]


def fuse_conv_bn_eval(conv, bn, transpose: bool = False):
    """A new convolution (a deep copy of ``conv``) computing ``bn(conv(x))`` of the two
    modules in evaluation mode."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose,
    )  # fmt: skip
    return fused


def fuse_conv_bn_weights(
    conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
    bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False,
) -> tuple[Parameter, Parameter]:  # fmt: skip
    """The fused convolution's ``(weight, bias)``: ``w * (bn_w / sqrt(bn_rv + eps))`` per
    output channel and ``(b - bn_rm) / sqrt(bn_rv + eps) * bn_w + bn_b``."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = gt.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = gt.ones_like(bn_rm)
    if bn_b is None:
        bn_b = gt.zeros_like(bn_rm)
    rsqrt = gt.rsqrt(bn_rv + bn_eps)
    rest = [1] * (len(conv_w.shape) - 2)
    shape = [1, -1, *rest] if transpose else [-1, 1, *rest]
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=weight_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A new linear layer (a deep copy of ``linear``) computing ``bn(linear(x))`` of the two
    modules in evaluation mode."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if not (linear.out_features == bn.num_features or bn.num_features == 1):
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
        )
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(
    linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
    bn_w: Tensor, bn_b: Tensor,
) -> tuple[Parameter, Parameter]:  # fmt: skip
    """The fused linear layer's ``(weight, bias)``: each row of ``w`` times ``bn_w /
    sqrt(bn_rv + eps)``, and ``(b - bn_rm) * bn_w / sqrt(bn_rv + eps) + bn_b``."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = gt.zeros_like(bn_rm)
    scale = bn_w * gt.rsqrt(bn_rv + bn_eps)
    w = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)
