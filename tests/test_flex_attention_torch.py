"""``torch.nn.attention.flex_attention`` against torch 2.13: ``create_block_mask``'s block
lists, ``flex_attention``'s values and log-sum-exp (causal, sliding-window and composed
masks, a relative-position ``score_mod``, GQA, rows with nothing kept), gradients
(gradcheck in float64, and against torch's autograd through the dense formula: torch has
no CPU backward for ``flex_attention``), errors, and the import path
(Note [flex_attention as a dense reference] in nn-mini's ``attention/flex_attention.py``).
"""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from gradstack.nn.attention import flex_attention as gfa  # noqa: E402
from torch.nn.attention import flex_attention as tfa  # noqa: E402


def causal(b, h, q, k):
    return q >= k


def window(b, h, q, k):
    return (q - k).abs() <= 3


def relative(score, b, h, q, k):
    return score + (q - k) * 0.1


def head_bias(score, b, h, q, k):
    return score * (h + 1) - 0.05 * (q - k).abs() + b


def _np(t):
    return t.detach().numpy()


MASKS = {
    "causal": causal,
    "window": window,
    "causal_and_window": lambda L: L.nn.attention.flex_attention.and_masks(causal, window),
    "diag_or_first": lambda L: L.nn.attention.flex_attention.or_masks(
        lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0
    ),
    "nothing_for_first_rows": lambda b, h, q, k: q >= 2,
}


def _mask_mod(name, L):
    m = MASKS[name]
    return m(L) if name in ("causal_and_window", "diag_or_first") else m


@pytest.mark.parametrize(
    "mask, B, H, Q, KV, size",
    [
        ("causal", None, None, 300, 260, 128),
        ("causal", 2, 3, 200, 200, 64),
        ("window", None, 2, 70, 90, (32, 16)),
        ("causal_and_window", 1, 1, 130, 129, 32),
        ("diag_or_first", None, None, 64, 64, 16),
    ],
)
def test_create_block_mask_as_torch(mask, B, H, Q, KV, size):
    ours = gfa.create_block_mask(_mask_mod(mask, gs), B, H, Q, KV, device="cpu", BLOCK_SIZE=size)
    theirs = tfa.create_block_mask(
        _mask_mod(mask, torch), B, H, Q, KV, device="cpu", BLOCK_SIZE=size
    )
    for field in (
        "kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
        "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
    ):  # fmt: skip
        a, t = getattr(ours, field), getattr(theirs, field)
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], field
        assert a.tolist() == t.tolist(), field
    assert ours.to_dense().tolist() == theirs.to_dense().tolist()
    assert ours.shape == theirs.shape and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
    assert ours.seq_lengths == theirs.seq_lengths
    assert ours.sparsity() == pytest.approx(theirs.sparsity())
    assert ours.numel() == theirs.numel()
    dense = gfa.create_mask(_mask_mod(mask, gs), B, H, Q, KV)
    tdense = tfa.create_mask(_mask_mod(mask, torch), B, H, Q, KV, device="cpu")
    assert dense.tolist() == tdense.tolist()


CASES = [
    # (name, B, Hq, Hkv, L, S, E, Ev, mask, score_mod, gqa, scale)
    ("plain", 2, 2, 2, 5, 7, 4, 4, None, None, False, None),
    ("causal", 2, 2, 2, 9, 9, 8, 8, "causal", None, False, None),
    ("relative", 1, 3, 3, 6, 6, 4, 5, None, relative, False, 0.7),
    ("causal_relative", 2, 2, 2, 9, 11, 4, 4, "causal", relative, False, None),
    ("window_head_bias", 2, 2, 2, 12, 12, 4, 4, "window", head_bias, False, None),
    ("gqa", 2, 4, 2, 6, 6, 4, 4, "causal", None, True, None),
    ("gqa_relative", 1, 6, 2, 5, 8, 4, 3, None, relative, True, None),
    ("composed", 1, 2, 2, 10, 10, 4, 4, "causal_and_window", None, False, None),
    ("rows_with_nothing", 1, 2, 2, 5, 5, 4, 4, "nothing_for_first_rows", None, False, None),
]


def _inputs(L, B, Hq, Hkv, Lq, S, E, Ev, dtype):
    rng = np.random.default_rng(B * 100 + Hq * 10 + Lq + S)
    q = rng.standard_normal((B, Hq, Lq, E))
    k = rng.standard_normal((B, Hkv, S, E))
    v = rng.standard_normal((B, Hkv, S, Ev))
    return tuple(L.tensor(a, dtype=getattr(L, dtype)) for a in (q, k, v))


def _call(L, fa, case, dtype, tensors=None, **extra):
    name, B, Hq, Hkv, Lq, S, E, Ev, mask, mod, gqa, scale = case
    q, k, v = tensors or _inputs(L, B, Hq, Hkv, Lq, S, E, Ev, dtype)
    bm = None
    if mask is not None:
        bm = fa.create_block_mask(_mask_mod(mask, L), B, Hq, Lq, S, device="cpu", BLOCK_SIZE=4)
    return fa.flex_attention(
        q, k, v, score_mod=mod, block_mask=bm, scale=scale, enable_gqa=gqa, **extra
    )


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_and_lse_as_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, aux = _call(gs, gfa, case, "float32", return_aux=gfa.AuxRequest(lse=True))
        tout, taux = _call(torch, tfa, case, "float32", return_aux=tfa.AuxRequest(lse=True))
    assert tuple(out.shape) == tuple(tout.shape) and out.dtype is gs.float32
    np.testing.assert_allclose(_np(out), _np(tout), rtol=1e-5, atol=2e-6)
    np.testing.assert_allclose(_np(aux.lse), _np(taux.lse), rtol=1e-5, atol=2e-6)


def test_deprecated_return_lse_and_float64():
    case = CASES[3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, lse = _call(gs, gfa, case, "float64", return_lse=True)
        tout, tlse = _call(torch, tfa, case, "float64", return_lse=True)
    assert out.dtype is gs.float64
    np.testing.assert_allclose(_np(out), _np(tout), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(lse), _np(tlse), rtol=1e-12, atol=1e-12)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        _call(gs, gfa, case, "float64", return_lse=True)


def _torch_dense(case, q, k, v):
    """torch's autograd through the dense formula (torch's flex_attention has no CPU
    backward)."""
    name, B, Hq, Hkv, Lq, S, E, Ev, mask, mod, gqa, scale = case
    if Hq != Hkv:
        k = k.repeat_interleave(Hq // Hkv, dim=1)
        v = v.repeat_interleave(Hq // Hkv, dim=1)
    s = q @ k.transpose(-2, -1) * (scale if scale is not None else E**-0.5)
    idx = (
        torch.arange(B).view(B, 1, 1, 1),
        torch.arange(Hq).view(1, Hq, 1, 1),
        torch.arange(Lq).view(1, 1, Lq, 1),
        torch.arange(S).view(1, 1, 1, S),
    )
    if mod is not None:
        s = mod(s, *idx)
    if mask is not None:
        keep = _mask_mod(mask, torch)(*idx).expand(B, Hq, Lq, S)
        s = s.masked_fill(~keep, float("-inf"))
    w = torch.softmax(s, -1).nan_to_num(0.0)
    return w @ v


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_as_torch(case):
    name, B, Hq, Hkv, Lq, S, E, Ev = case[:8]
    ours = _inputs(gs, B, Hq, Hkv, Lq, S, E, Ev, "float64")
    theirs = _inputs(torch, B, Hq, Hkv, Lq, S, E, Ev, "float64")
    for t in ours + theirs:
        t.requires_grad_(True)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((B, Hq, Lq, Ev))
    (_call(gs, gfa, case, "float64", tensors=ours) * gs.tensor(w)).sum().backward()
    (_torch_dense(case, *theirs) * torch.tensor(w)).sum().backward()
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", [CASES[3], CASES[6], CASES[8]], ids=lambda c: c[0])
def test_gradcheck_and_gradgradcheck(case):
    name, B, Hq, Hkv, Lq, S, E, Ev = case[:8]
    args = tuple(t.requires_grad_(True) for t in _inputs(gs, B, Hq, Hkv, Lq, S, E, Ev, "float64"))

    def f(q, k, v):
        out, aux = _call(
            gs, gfa, case, "float64", tensors=(q, k, v), return_aux=gfa.AuxRequest(lse=True)
        )
        return out, aux.lse.masked_fill(aux.lse.isinf(), 0.0)

    assert gs.autograd.gradcheck(f, args)
    assert gs.autograd.gradgradcheck(lambda q, k, v: f(q, k, v)[0], args)


ERRORS = [
    lambda L, fa: fa.flex_attention(L.ones(1, 4, 3, 2), L.ones(1, 2, 3, 2), L.ones(1, 2, 3, 2)),
    lambda L, fa: fa.flex_attention(
        L.ones(1, 3, 3, 2), L.ones(1, 2, 3, 2), L.ones(1, 2, 3, 2), enable_gqa=True
    ),
    lambda L, fa: fa.flex_attention(L.ones(1, 2, 3, 2), L.ones(1, 2, 3, 4), L.ones(1, 2, 3, 2)),
    lambda L, fa: fa.flex_attention(L.ones(1, 2, 3, 2), L.ones(1, 2, 3, 2), L.ones(1, 2, 4, 2)),
    lambda L, fa: fa.and_masks(causal, 3),
]


@pytest.mark.parametrize("program", ERRORS)
def test_errors_as_torch(program):
    outcomes = []
    for L, fa in ((gs, gfa), (torch, tfa)):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared
            program(L, fa)
        outcomes.append(type(info.value))
    assert outcomes[0] is outcomes[1]


def test_import_paths_and_sdpa_kernel():
    import gradstack.nn.attention.flex_attention as module
    from gradstack.nn.attention import SDPBackend, sdpa_kernel
    from gradstack.nn.attention.flex_attention import BlockMask, create_block_mask, flex_attention

    assert module.flex_attention is flex_attention and gs.nn.attention.flex_attention is module
    assert isinstance(create_block_mask(causal, None, None, 8, 8), BlockMask)
    assert [(m.name, m.value) for m in SDPBackend] == [
        (name, int(m)) for name, m in torch.nn.attention.SDPBackend.__members__.items()
    ]
    q = gs.ones(1, 2, 4)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        assert gs.nn.functional.scaled_dot_product_attention(q, q, q).shape == (1, 2, 4)
    assert gfa.noop_mask(*[gs.tensor(0)] * 4).item() is True
    bm = create_block_mask(causal, 2, None, 300, 260, device="cpu")
    tbm = tfa.create_block_mask(causal, 2, None, 300, 260, device="cpu")
    assert repr(bm) == repr(tbm)
    assert bm[1].kv_indices.tolist() == tbm[1].kv_indices.tolist()
