"""``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (the computation
of ``nn.MultiheadAttention``, below).  ``scaled_dot_product_attention``: torch's reference
computation (its documentation's "math" implementation) with gradstack ops:
``softmax(q @ k^T * scale + bias) @ v``.

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
from .linear_layers import linear as _linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


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


# -------------------------------------------------------------------------------------
# multi-head attention (the computation behind nn.MultiheadAttention)


def _as_bias(mask: Tensor | None, dtype, name: str) -> Tensor | None:
    """Note [Attention masks as additive biases] (modules/attention.py)."""
    if mask is None:
        return None
    if mask.dtype is gt.bool:
        return gt.zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


def _pad_last(t: Tensor | None) -> Tensor | None:
    if t is None:
        return None
    return gt.cat([t, gt.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype)], -1)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
    bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Tensor | None, training: bool = True,
    key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:  # fmt: skip
    """torch's ``F.multi_head_attention_forward``: ``(L, N, E)`` (or unbatched ``(L, E)``)
    queries attend over ``num_heads`` heads to keys and values, projected by
    ``in_proj_weight`` (or the three ``*_proj_weight``) and ``out_proj_weight``; returns
    ``(output, weights or None)``, the weights averaged over heads unless
    ``average_attn_weights=False``.  The masks are additive biases (Note [Attention masks
    as additive biases] in modules/attention.py); the weights are always computed
    (``softmax(mask + q k^T / sqrt(head_dim))``), which torch's ``need_weights=False``
    path gets from ``scaled_dot_product_attention``: the same values to rounding.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.ones(3, 2, 4)
    >>> out, w = multi_head_attention_forward(
    ...     x, x, x, 4, 2, gt.ones(12, 4), None, None, None, False, 0.0, gt.eye(4), None)
    >>> out.shape, w.shape
    (gradstack.Size([3, 2, 4]), gradstack.Size([2, 3, 3]))
    """
    batched = query.dim() == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    heads = num_heads
    head_dim = embed_dim // heads
    if head_dim * heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    padding = _as_bias(key_padding_mask, query.dtype, "key_padding_mask")
    mask = _as_bias(attn_mask, query.dtype, "attn_mask")
    e = embed_dim
    b = in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w = in_proj_weight
        wq, wk, wv = w[:e], w[e : 2 * e], w[2 * e :]
    else:
        for name, weight in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if weight is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    q, k, v = _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)
    src_len = key.shape[0]
    if mask is not None:
        if mask.dim() == 2:
            if tuple(mask.shape) != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            mask = mask.unsqueeze(0)
        elif mask.dim() == 3:
            if tuple(mask.shape) != (bsz * heads, tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {mask.shape}, but should be "
                    f"{(bsz * heads, tgt_len, src_len)}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = gt.cat([k, bias_k.repeat(1, bsz, 1)])
        v = gt.cat([v, bias_v.repeat(1, bsz, 1)])
        mask, padding = _pad_last(mask), _pad_last(padding)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
    for name, static in (("k", static_k), ("v", static_v)):
        if static is not None:
            if static.size(0) != bsz * heads:
                raise AssertionError(
                    f"expecting static_{name}.size(0) of {bsz * heads}, but got {static.size(0)}"
                )
            if static.size(2) != head_dim:
                raise AssertionError(
                    f"expecting static_{name}.size(2) of {head_dim}, but got {static.size(2)}"
                )
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
    else:
        v = static_v
    if add_zero_attn:
        k = gt.cat([k, gt.zeros(bsz * heads, 1, head_dim, dtype=k.dtype)], 1)
        v = gt.cat([v, gt.zeros(bsz * heads, 1, head_dim, dtype=v.dtype)], 1)
        mask, padding = _pad_last(mask), _pad_last(padding)
    src_len = k.shape[1]
    if padding is not None:
        if tuple(padding.shape) != (bsz, src_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, src_len)}, but got {padding.shape}"
            )
        padding = padding.reshape(bsz, 1, 1, src_len).expand(-1, heads, -1, -1)
        padding = padding.reshape(bsz * heads, 1, src_len)
        mask = padding if mask is None else mask + padding
    p = dropout_p if training else 0.0
    scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    scores = scaled.bmm(k.transpose(-2, -1))
    if mask is not None:
        scores = mask + scores  # (torch: baddbmm(mask, q, k^T), the same sums)
    weights = softmax(scores, dim=-1)
    if p > 0.0:
        weights = dropout(weights, p=p)
    out = weights.bmm(v).transpose(0, 1).contiguous().reshape(tgt_len * bsz, embed_dim)
    out = _linear(out, out_proj_weight, out_proj_bias)
    out = out.reshape(tgt_len, bsz, out.shape[-1])
    result = weights.reshape(bsz, heads, tgt_len, src_len) if need_weights else None
    if result is not None and average_attn_weights:
        result = result.mean(1)
    if not batched:
        out = out.squeeze(1)
        result = result.squeeze(0) if result is not None else None
    return out, result
