"""``MultiheadAttention``, as torch's: parameters, their names and initial draws, masks,
``batch_first``, and the computation of ``torch.nn.functional.multi_head_attention_forward``
written with gradstack ops (the Transformer built on it is in ``transformer.py``).

Note [Attention masks as additive biases]
torch turns every mask into a float bias first (its ``_canonical_mask``): a bool mask's
True is ``-inf`` ("not attended", the opposite of ``scaled_dot_product_attention``'s
convention), a float mask is added as it is; ``key_padding_mask`` (``(N, S)``) is
broadcast over heads and queries and added to ``attn_mask``.  With ``need_weights`` the
weights are ``softmax(baddbmm(bias, q * sqrt(1 / head_dim), k^T))``, else
``scaled_dot_product_attention``: the same values to rounding.

Examples
--------
>>> import gradstack_tensor as gt
>>> mha = MultiheadAttention(8, 2, batch_first=True)
>>> x = gt.randn(3, 5, 8)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
(gradstack.Size([3, 5, 8]), gradstack.Size([3, 5, 5]))
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


def _as_bias(mask: Tensor | None, dtype, name: str) -> Tensor | None:
    """Note [Attention masks as additive biases]."""
    if mask is None:
        return None
    if mask.dtype is gt.bool:
        return gt.zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads of ``embed_dim / num_heads`` features, as
    ``torch.nn.MultiheadAttention``; ``forward(query, key, value, key_padding_mask=None,
    need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)``
    returns ``(output, weights or None)``."""

    def __init__(
        self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
        add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
        vdim: int | None = None, batch_first: bool = False, device=None, dtype=None,
    ) -> None:  # fmt: skip
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        empty = lambda *shape: Parameter(gt.empty(shape, device=device, dtype=dtype))  # noqa: E731
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = empty(embed_dim, embed_dim)
            self.k_proj_weight = empty(embed_dim, self.kdim)
            self.v_proj_weight = empty(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = empty(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = empty(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(
            embed_dim, embed_dim, bias=bias, device=device, dtype=dtype
        )
        if add_bias_kv:
            self.bias_k = empty(1, 1, embed_dim)
            self.bias_v = empty(1, 1, embed_dim)
        else:
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _project(self, query, key, value):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e : 2 * e], w[2 * e :]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
        need_weights: bool = True, attn_mask: Tensor | None = None,
        average_attn_weights: bool = True, is_causal: bool = False,
    ):  # fmt: skip
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask."
            )
        out, weights = self._attend(
            query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights
        )
        if not batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0) if weights is not None else None
        elif self.batch_first:
            out = out.transpose(1, 0)
        return out, weights

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average):
        tgt_len, bsz, e = query.shape
        heads, head_dim = self.num_heads, self.head_dim
        if key.shape[0] != value.shape[0] or key.shape[1] != value.shape[1]:
            raise AssertionError(
                f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}"
            )
        mask = _as_bias(attn_mask, query.dtype, "attn_mask")
        padding = _as_bias(key_padding_mask, query.dtype, "key_padding_mask")
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (tgt_len, key.shape[0]):
                    raise RuntimeError(
                        f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be "
                        f"{(tgt_len, key.shape[0])}."
                    )
                mask = mask.unsqueeze(0)
            elif mask.dim() == 3:
                if tuple(mask.shape) != (bsz * heads, tgt_len, key.shape[0]):
                    raise RuntimeError(
                        f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                        f"{(bsz * heads, tgt_len, key.shape[0])}."
                    )
            else:
                raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
        q, k, v = self._project(query, key, value)
        if self.bias_k is not None:
            k = gt.cat([k, self.bias_k.repeat(1, bsz, 1)])
            v = gt.cat([v, self.bias_v.repeat(1, bsz, 1)])
            mask = F.pad(mask, (0, 1)) if mask is not None else None
            padding = F.pad(padding, (0, 1)) if padding is not None else None
        q = q.reshape(tgt_len, bsz * heads, head_dim).transpose(0, 1)
        k = k.reshape(k.shape[0], bsz * heads, head_dim).transpose(0, 1)
        v = v.reshape(v.shape[0], bsz * heads, head_dim).transpose(0, 1)
        if self.add_zero_attn:
            zeros = gt.zeros(bsz * heads, 1, head_dim, dtype=q.dtype)
            k = gt.cat([k, zeros], 1)
            v = gt.cat([v, zeros], 1)
            mask = F.pad(mask, (0, 1)) if mask is not None else None
            padding = F.pad(padding, (0, 1)) if padding is not None else None
        src_len = k.shape[1]
        if padding is not None:
            if tuple(padding.shape) != (bsz, src_len):
                raise AssertionError(
                    f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                    f"{tuple(padding.shape)}"
                )
            padding = padding.reshape(bsz, 1, 1, src_len).expand(-1, heads, -1, -1)
            padding = padding.reshape(bsz * heads, 1, src_len)
            mask = padding if mask is None else mask + padding
        p = self.dropout if self.training else 0.0
        scaled = q * math.sqrt(1.0 / float(head_dim))
        scores = scaled.bmm(k.transpose(-2, -1))
        if mask is not None:
            scores = mask + scores  # (torch: baddbmm(mask, q, k^T), the same sums)
        weights = F.softmax(scores, dim=-1)
        if p > 0.0:
            weights = F.dropout(weights, p=p)
        out = weights.bmm(v).transpose(0, 1).contiguous().reshape(tgt_len * bsz, e)
        out = F.linear(out, self.out_proj.weight, self.out_proj.bias).reshape(tgt_len, bsz, e)
        if not need_weights:
            return out, None
        weights = weights.reshape(bsz, heads, tgt_len, src_len)
        return out, (weights.mean(1) if average else weights)
