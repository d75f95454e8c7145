"""Attention against torch: ``scaled_dot_product_attention`` (functional/attention.py) to
the second order in float64, and MultiheadAttention (modules/attention.py) with the
Transformer encoder built on it (modules/transformer.py): the same initial weights after
the same seed, parameter names, reprs, outputs, attention weights and gradients in
float64, masks of both kinds, and the dropout masks in training."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import assert_program_matches_torch
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


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_scaled_dot_product_attention_matches_torch(name):
    # (torch's CPU kernel blocks the softmax otherwise: agreement to rounding)
    assert_program_matches_torch(
        *PROGRAMS[name], value=(1e-9, 1e-12), first=(1e-8, 1e-10), second=(1e-8, 1e-10)
    )
