"""``func.rearrange`` against torch 2.13: shapes and values of einops patterns
(permutations, splits, merges, the ellipsis, unit axes on either side, a list stacked),
gradients (against torch, and by gradcheck in float64), integer dtypes, views, and every
error torch's parser and first-class dimensions give (type and words)."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

PATTERNS = [
    ("b h c -> b h c", {}),
    ("a b c -> c b a", {}),
    ("b h c -> (b h) c", {}),
    ("b h c -> h (b c)", {}),
    ("b h c -> b (c h)", {}),
    ("b (h1 h) c -> (b h1) h c", {"h1": 3}),
    ("b h (c1 c) -> b (h c1) c", {"c": 2}),
    ("(a a2) b c -> a (b a2) c", {"a2": 2}),
    ("b (h w) c -> b h w c", {"h": 3, "w": 1}),
    ("... c -> c ...", {}),
    ("a ... -> ... a", {}),
    ("b ... -> (b ...)", {}),
    ("a b c ... -> (c a) b ...", {}),
    ("1 h c -> h c", {}),
    ("b () c -> b c", {}),
    ("b h c -> b h c 1", {}),
    ("b h c -> b () h c ()", {}),
    ("b (h) c -> (b h c)", {}),
    ("b (h 1) c -> b h c", {}),
    ("b h c -> b (h 1 c)", {}),
]


def _x(L, dtype="float64"):
    return L.arange(24, dtype=getattr(L, dtype)).reshape(2, 3, 4)


@pytest.mark.parametrize("pattern, lengths", PATTERNS)
@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_values_as_torch(pattern, lengths, dtype):
    ours = gs.func.rearrange(_x(gs, dtype), pattern, **lengths)
    theirs = torch.func.rearrange(_x(torch, dtype), pattern, **lengths)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("pattern, lengths", PATTERNS)
def test_gradients_as_torch_and_gradcheck(pattern, lengths):
    grads = []
    for L in (gs, torch):
        x = (_x(L) / 10).requires_grad_()
        y = L.func.rearrange(x, pattern, **lengths)
        (y * L.arange(y.numel(), dtype=L.float64).reshape(y.shape)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
    x = (_x(gs) / 10).requires_grad_()
    assert gs.autograd.gradcheck(lambda t: gs.func.rearrange(t, pattern, **lengths), (x,))


def test_a_list_is_stacked_and_a_0d_tensor_kept():
    for L in (gs, torch):
        parts = [L.ones(2, 3), L.zeros(2, 3)]
        out = L.func.rearrange(parts, "n h c -> h (n c)")
        assert tuple(out.shape) == (2, 6)
        assert out.tolist() == [[1, 1, 1, 0, 0, 0]] * 2
        s = L.tensor(3.0)
        assert L.func.rearrange(s, " -> ") is s


def test_a_permutation_is_a_view():
    x = _x(gs)
    y = gs.func.rearrange(x, "a b c -> c b a")
    y[0, 0, 0] = 100.0
    assert x[0, 0, 0].item() == 100.0


def test_under_vmap():
    x = gs.randn(5, 2, 3, 4)
    out = gs.func.vmap(lambda t: gs.func.rearrange(t, "a b c -> c (a b)"))(x)
    expected = torch.func.vmap(lambda t: torch.func.rearrange(t, "a b c -> c (a b)"))(
        torch.tensor(x.numpy())
    )
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


ERRORS = [
    ("b (h w) c -> b h w c", {}),
    ("b (h w) c -> b h w c", {"h": 2}),
    ("b (h w) c -> b h w c", {"h": 5}),
    ("b (h w) c -> b h w c", {"h": 0}),
    ("b (h w) c -> b h w c", {"h": -1}),
    ("(b h) c d -> b h c d", {"b": 5}),
    ("b h c -> b h c", {"b": 3}),
    ("b h c -> b h c", {"h": 4}),
    ("b (h h2) c -> b h h2 c", {"h": 3, "h2": 2}),
    ("b h c -> b h c", {"b": 2.0}),
    ("b h c -> b h", {}),
    ("a b c d ... -> a b c d ...", {}),
    ("a b -> a b", {}),
    ("a b c d -> a b c d", {}),
    ("b h c", {}),
    ("b h -> c -> d", {}),
    ("b h c -> b c h", {"q": 2}),
    ("b h c -> (b h) c 2", {}),
    ("b h c -> (b b) h c", {}),
    ("b h c -> b (h . c)", {}),
    ("b h c -> b h c ....", {}),
    ("b h _c -> b h _c", {}),
    ("b h c- -> b h c", {}),
    ("(b ...) -> b ...", {}),
    ("b h c -> ...", {}),
    ("b (h (c)) -> b h c", {}),
    ("b h) c -> b h c", {}),
    ("b (h c -> b h c", {}),
    ("b h 0 -> b h", {}),
]


@pytest.mark.parametrize("pattern, lengths", ERRORS)
def test_errors_as_torch(pattern, lengths):
    errors = []
    for L in (gs, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                L.func.rearrange(_x(L), pattern, **lengths)
                errors.append(None)
            except Exception as e:  # noqa: BLE001 - the type and words are compared
                errors.append((type(e).__name__, str(e)))
    assert errors[1] is not None
    if errors[1][1].startswith("Identifiers only on one side"):  # (a set: any order)
        assert errors[0][0] == errors[1][0]
        assert eval(errors[0][1].split(": ", 1)[1]) == eval(errors[1][1].split(": ", 1)[1])
    else:
        assert errors[0] == errors[1]


@pytest.mark.parametrize("name, category", [("for", RuntimeWarning), ("axis", FutureWarning)])
def test_discouraged_names_warn_as_torch(name, category):
    for L in (gs, torch):
        with pytest.warns(category):
            L.func.rearrange(_x(L), f"b h {name} -> b h {name}")
