"""The linear layers as functions: ``linear`` (``input @ weight.T + bias``, one fused
``addmm`` as torch's: AddmmBackward0) and ``bilinear`` (``input1^T weight input2 +
bias``, two products).

Examples
--------
>>> import gradstack_tensor as gt
>>> linear(gt.ones(2, 3), gt.ones(4, 3), gt.zeros(4)).tolist()
[[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
>>> bilinear(gt.ones(5, 3), gt.ones(5, 4), gt.ones(2, 3, 4), gt.tensor([0.0, 1.0])).tolist()[0]
[12.0, 13.0]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function

__all__ = ["linear", "bilinear"]


@autocast_function("linear")
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


def _check_bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias) -> None:
    """torch's checks in ``at::bilinear``, in its order and words."""
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: got "
                f"{input1.shape[i]} and {input2.shape[i]}"
            )
    for n, (t, d) in enumerate(((input1, 1), (input2, 2)), 1):
        if t.shape[-1] != weight.shape[d]:
            raise RuntimeError(
                f"bilinear(): input{n} size does not match weight size: got {t.shape[-1]} "
                f"but expected {weight.shape[d]}"
            )
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(
            f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but "
            f"expected {weight.shape[0]}"
        )


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``.

    ``input1`` is ``(*, in1)``, ``input2`` ``(*, in2)`` with the same leading dims,
    ``weight`` ``(out, in1, in2)``; computed as one product of ``input1`` with the weight
    viewed as ``(in1, out * in2)``, then a product with ``input2`` summed over ``in2``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> w = gt.ones(2, 3, 4)
    >>> bilinear(gt.ones(5, 3), gt.ones(5, 4), w, gt.tensor([0.0, 1.0])).tolist()[0]
    [12.0, 13.0]
    """
    for position, (name, value) in enumerate(
        (("input1", input1), ("input2", input2), ("weight", weight)), 1
    ):
        if not isinstance(value, Tensor):  # torch's TypeError (it was an AttributeError)
            raise TypeError(
                f"bilinear(): argument '{name}' (position {position}) must be Tensor, not "
                f"{type(value).__name__}"
            )
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(
            f"bilinear(): argument 'bias' (position 4) must be Tensor, not {type(bias).__name__}"
        )
    _check_bilinear(input1, input2, weight, bias)
    out_features, in1, in2 = weight.shape
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    mixed = x1.matmul(weight.permute(1, 0, 2).reshape(in1, out_features * in2))
    out = (mixed.reshape(-1, out_features, in2) * x2.unsqueeze(1)).sum(-1)
    out = out.reshape(*lead, out_features)
    return out + bias if bias is not None else out
