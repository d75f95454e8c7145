"""``scaled_dot_product_attention``: torch's reference computation (its documentation's
"math" implementation) with gradstack ops: ``softmax(q @ k^T * scale + bias) @ v``.

torch's CPU kernel (flash attention for long sequences) blocks the softmax differently:
the values agree to rounding, not bit for bit.

Examples
--------
>>> import gradstack_tensor as gt
>>> q = k = v = gt.ones(1, 2, 4)
>>> scaled_dot_product_attention(q, k, v, is_causal=True).tolist()
[[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor
from gradstack_tensor.autocast_mode import autocast_function

from .activation import softmax
from .dropouts import dropout

__all__ = ["scaled_dot_product_attention"]


@autocast_function("scaled_dot_product_attention")
def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """Attention of ``query`` ``(..., L, E)`` over ``key`` ``(..., S, E)`` and ``value``
    ``(..., S, Ev)``: ``softmax(query @ key^T * scale + bias) @ value``, with ``scale``
    ``1 / sqrt(E)`` by default; ``attn_mask`` is a bool mask (False: not attended) or an
    additive float bias, ``is_causal`` masks the future; ``dropout_p`` drops attention
    weights; ``enable_gqa`` repeats the key and value heads (dim -3) to the query's."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"scaled_dot_product_attention(): argument '{name}' must be Tensor, not "
                f"{type(t).__name__}"
            )
    if is_causal and attn_mask is not None:
        raise RuntimeError(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
            "is_causal=True"
        )
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    length, source = query.shape[-2], key.shape[-2]
    factor = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    if enable_gqa and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        repeats = query.shape[-3] // key.shape[-3]
        key = key.repeat_interleave(repeats, dim=-3)
        value = value.repeat_interleave(repeats, dim=-3)
    weights = query @ key.transpose(-2, -1) * factor
    if is_causal:
        future = gt.ones(length, source, dtype=gt.bool).tril(0).logical_not()
        weights = weights.masked_fill(future, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype is gt.bool:
            weights = weights.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            weights = weights + attn_mask
    weights = softmax(weights, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights @ value
