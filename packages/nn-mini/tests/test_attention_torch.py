"""Attention against torch: ``scaled_dot_product_attention`` (functional/attention.py) to
the second order in float64, and MultiheadAttention (modules/attention.py) with the
Transformer encoder built on it (modules/transformer.py): the same initial weights after
the same seed, parameter names, reprs, outputs, attention weights and gradients in
float64, masks of both kinds, and the dropout masks in training."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import assert_program_matches_torch, assert_same_error
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.standard_normal((5, 3, 8))
Y = R.standard_normal((6, 3, 8))
K4 = R.standard_normal((6, 3, 4))
V6 = R.standard_normal((6, 3, 6))
BOOL_MASK = R.random((5, 6)) < 0.3
BOOL_MASK[:, 0] = False
FLOAT_MASK = R.standard_normal((5, 6))
PADDING = R.random((3, 6)) < 0.3
PADDING[:, 0] = False
CAUSAL = np.triu(np.ones((5, 5), bool), 1)

# name -> (module builder, inputs, forward keywords, train mode)
CASES = {
    "self": (lambda L: L.nn.MultiheadAttention(8, 2), [X, X, X], None, False),
    "cross": (lambda L: L.nn.MultiheadAttention(8, 2), [X, Y, Y], None, False),
    "batch_first": (
        lambda L: L.nn.MultiheadAttention(8, 4, batch_first=True),
        [X, X, X],
        None,
        False,
    ),
    "per_head_weights": (
        lambda L: L.nn.MultiheadAttention(8, 2),
        [X, Y, Y],
        lambda L: dict(average_attn_weights=False),
        False,
    ),
    "no_weights": (
        lambda L: L.nn.MultiheadAttention(8, 2),
        [X, Y, Y],
        lambda L: dict(need_weights=False),
        False,
    ),
    "bool_mask": (
        lambda L: L.nn.MultiheadAttention(8, 2),
        [X, Y, Y],
        lambda L: dict(attn_mask=L.tensor(BOOL_MASK)),
        False,
    ),
    "padding_and_float_mask": (
        lambda L: L.nn.MultiheadAttention(8, 2),
        [X, Y, Y],
        lambda L: dict(key_padding_mask=L.tensor(PADDING), attn_mask=L.tensor(FLOAT_MASK)),
        False,
    ),
    "kdim_vdim_bias_kv_zero_attn": (
        lambda L: L.nn.MultiheadAttention(
            8, 2, kdim=4, vdim=6, add_bias_kv=True, add_zero_attn=True
        ),
        [X, K4, V6],
        None,
        False,
    ),
    "no_bias": (lambda L: L.nn.MultiheadAttention(8, 2, bias=False), [X, X, X], None, False),
    "unbatched": (
        lambda L: L.nn.MultiheadAttention(8, 2),
        [X[:, 0], Y[:, 0], Y[:, 0]],
        None,
        False,
    ),
    "dropout_in_training": (
        lambda L: L.nn.MultiheadAttention(8, 2, dropout=0.3),
        [X, Y, Y],
        None,
        True,
    ),
    "encoder_layer": (lambda L: L.nn.TransformerEncoderLayer(8, 2, 16), [X], None, False),
    "encoder_layer_norm_first_gelu": (
        lambda L: L.nn.TransformerEncoderLayer(
            8, 2, 16, activation="gelu", norm_first=True, batch_first=True
        ),
        [X],
        None,
        False,
    ),
    "encoder_layer_training": (
        lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.3),
        [X],
        None,
        True,
    ),
    "encoder_with_norm": (
        lambda L: L.nn.TransformerEncoder(
            L.nn.TransformerEncoderLayer(8, 2, 16),
            2,
            norm=L.nn.LayerNorm(8),
            enable_nested_tensor=False,
        ),
        [X],
        None,
        False,
    ),
    "encoder_causal": (
        lambda L: L.nn.TransformerEncoder(
            L.nn.TransformerEncoderLayer(8, 2, 16), 2, enable_nested_tensor=False
        ),
        [X],
        lambda L: dict(mask=L.tensor(CAUSAL), is_causal=True),
        False,
    ),
}


def run(lib, name):
    build, inputs, keywords, train = CASES[name]
    lib.manual_seed(0)
    module = build(lib).double()
    module.train(train)
    tensors = [lib.tensor(a, requires_grad=True) for a in inputs]
    out = module(*tensors, **(keywords(lib) if keywords else {}))
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
    sum((o * o).sum() for o in outs).backward()
    return (
        repr(module),
        [n for n, _ in module.named_parameters()],
        [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in tensors],
        [p.grad.numpy() for p in module.parameters()],
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ours, theirs = run(gs, name), run(torch, name)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_module_list_repr_compresses_repeats_as_torch():
    for lib in (gs, torch):
        lib.manual_seed(0)
    ours = gs.nn.ModuleList([gs.nn.ReLU(), gs.nn.ReLU(), gs.nn.Tanh(), gs.nn.ReLU()])
    theirs = torch.nn.ModuleList(
        [torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.ReLU()]
    )
    assert repr(ours) == repr(theirs)
    assert repr(gs.nn.ModuleList()) == repr(torch.nn.ModuleList())


def test_errors_match_torch():
    for lib in (gs, torch):
        with pytest.raises(AssertionError):
            lib.nn.MultiheadAttention(10, 3)
        mha = lib.nn.MultiheadAttention(8, 2)
        x = lib.ones(5, 3, 8)
        with pytest.raises(RuntimeError, match="is_causal"):
            mha(x, x, x, is_causal=True)
        with pytest.raises(RuntimeError, match="2D attn_mask"):
            mha(x, x, x, attn_mask=lib.ones(4, 4, dtype=lib.bool))


# ---------------------------------------------------------------------------------------
# scaled_dot_product_attention

_RS = np.random.default_rng(16)
Q, KK, VV = (_RS.standard_normal(s) for s in [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7)])
MASK = _RS.random((5, 6)) < 0.7
MASK[:, 0] = True

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "sdpa": (lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v), [Q, KK, VV]),
    "sdpa_causal": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k[:, :, :5], v[:, :, :5], is_causal=True
        ),
        [Q, KK, VV],
    ),
    "sdpa_bool_mask": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=L.tensor(MASK)),
        [Q, KK, VV],
    ),
    "sdpa_float_mask_scale": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=L.tensor(MASK * 0.5), scale=0.3
        ),
        [Q, KK, VV],
    ),
}


# F.multi_head_attention_forward, torch's signature (the computation of MultiheadAttention)
_RM = np.random.default_rng(35)
WIN, BIN = _RM.standard_normal((24, 8)) * 0.3, _RM.standard_normal(24) * 0.1
WOUT, BOUT = _RM.standard_normal((8, 8)) * 0.3, _RM.standard_normal(8) * 0.1
WK5, WV7 = _RM.standard_normal((8, 5)) * 0.3, _RM.standard_normal((8, 7)) * 0.3
K5, V7 = _RM.standard_normal((6, 3, 5)), _RM.standard_normal((6, 3, 7))
BKV = _RM.standard_normal((2, 1, 1, 8))
STATIC = _RM.standard_normal((2, 6, 4, 4))
FMASK = _RM.standard_normal((5, 6))
KPM = _RM.random((3, 6)) < 0.3
KPM[:, 0] = False
L_MASK_3D = np.zeros((5, 5, 6))


def _mha(L, F, x, y, w, b, wo, bo, **kw):
    return F.multi_head_attention_forward(x, y, y, 8, 2, w, b, None, None, False, 0.0, wo, bo, **kw)


_MHA_ARRAYS = [X, Y, WIN, BIN, WOUT, BOUT]
PROGRAMS.update({
    "mha_forward": (lambda L, F, *a: _mha(L, F, *a)[0], _MHA_ARRAYS),
    "mha_forward_weights": (lambda L, F, *a: _mha(L, F, *a)[1], _MHA_ARRAYS),
    "mha_forward_weights_per_head": (
        lambda L, F, *a: _mha(L, F, *a, average_attn_weights=False)[1], _MHA_ARRAYS
    ),
    "mha_forward_unbatched_masks": (
        lambda L, F, x, y, *a: _mha(
            L, F, x[:, 0], y[:, 0], *a, attn_mask=L.tensor(FMASK),
            key_padding_mask=L.tensor(KPM[0]),
        )[0],
        _MHA_ARRAYS,
    ),
    "mha_forward_bias_kv_zero_attn": (
        lambda L, F, x, y, w, b, wo, bo, bkv: F.multi_head_attention_forward(
            x, y, y, 8, 2, w, b, bkv[0], bkv[1], True, 0.0, wo, bo,
            attn_mask=L.tensor(FMASK), key_padding_mask=L.tensor(KPM),
        )[0],
        _MHA_ARRAYS + [BKV],
    ),
    "mha_forward_separate": (
        lambda L, F, x, k, v, w, wk, wv, b, wo: F.multi_head_attention_forward(
            x, k, v, 8, 4, None, b, None, None, False, 0.0, wo, None,
            use_separate_proj_weight=True, q_proj_weight=w[:8], k_proj_weight=wk,
            v_proj_weight=wv, need_weights=True,
        )[1],
        [X, K5, V7, WIN, WK5, WV7, BIN, WOUT],
    ),
    "mha_forward_static": (
        lambda L, F, x, y, w, b, wo, bo, st: F.multi_head_attention_forward(
            x, y, y, 8, 2, w, b, None, None, False, 0.0, wo, bo, static_k=st[0], static_v=st[1],
        )[0],
        _MHA_ARRAYS + [STATIC],
    ),
})  # fmt: skip


def test_multi_head_attention_forward_without_weights_gives_none():
    """(torch's ``need_weights=False`` path is its fused kernel, not twice differentiable:
    the values and first-order gradients only; ``training=False`` turns dropout off.)"""
    results = []
    for L in (gs, torch):
        args = [L.tensor(a, requires_grad=True) for a in _MHA_ARRAYS]
        out, w = _mha(L, L.nn.functional, *args, need_weights=False)
        out2, _ = L.nn.functional.multi_head_attention_forward(
            *args[:2], args[1], 8, 2, *args[2:4], None, None, False, 0.9, *args[4:],
            training=False,
        )  # fmt: skip
        grads = L.autograd.grad((out * out).sum(), args)
        results.append((w, out.detach().numpy(), out2.detach().numpy(), [g.numpy() for g in grads]))
    (w1, o1, p1, g1), (w2, o2, p2, g2) = results
    assert w1 is None and w2 is None
    np.testing.assert_allclose(o1, o2, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(p1, o2, rtol=1e-9, atol=1e-12)
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_multi_head_attention_forward_errors_match_torch():
    def bad(**kw):
        return lambda L: _mha(
            L, L.nn.functional, *[L.tensor(a) for a in _MHA_ARRAYS],
            **{k: (L.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()},
        )  # fmt: skip

    for program in [
        lambda L: L.nn.functional.multi_head_attention_forward(
            *[L.tensor(a) for a in (X, Y, Y)], 6, 2, *[L.tensor(a) for a in (WIN, BIN)],
            None, None, False, 0.0, L.tensor(WOUT), None,
        ),
        lambda L: L.nn.functional.multi_head_attention_forward(
            *[L.tensor(a) for a in (X, Y, Y)], 8, 2, None, None, None, None, False, 0.0,
            L.tensor(WOUT), None,
        ),
        bad(is_causal=True),
        bad(attn_mask=L_MASK_3D),
    ]:  # fmt: skip
        assert_same_error(program, words=False)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scaled_dot_product_attention_matches_torch(name):
    # (torch's CPU kernel blocks the softmax otherwise: agreement to rounding)
    assert_program_matches_torch(
        *PROGRAMS[name], value=(1e-9, 1e-12), first=(1e-8, 1e-10), second=(1e-8, 1e-10)
    )
