"""torch's composite shape functions and contractions (tensor-core's arrangements.py and
contractions.py, and composites.py's std_mean/var_mean) against torch: values, dtypes,
errors, and first-order gradients in float64."""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((4, 5))
C = R.standard_normal((2, 3, 4))
D = R.standard_normal((2, 4, 3))
Q = R.standard_normal((2, 3, 4, 5))
K = R.standard_normal((2, 3, 6, 5))
S = R.standard_normal((3, 3))
V = R.standard_normal(4)
E = R.standard_normal((1, 3, 4))
F = R.standard_normal((2, 4, 2))
G = R.standard_normal((5, 2))
X3 = R.standard_normal((4, 3, 5))

# name -> (program over a library L and its float64 inputs, the inputs)
PROGRAMS = {
    "broadcast_to": (lambda L, v: L.broadcast_to(v, (3, 4)), [V]),
    "meshgrid_ij": (lambda L, a, b: L.meshgrid(a, b, indexing="ij"), [V, V[:3]]),
    "meshgrid_xy": (lambda L, a, b, c: L.meshgrid(a, b, c, indexing="xy"), [V, V[:3], V[:2]]),
    "tile": (lambda L, a: L.tile(a, (2, 1, 2)), [A]),
    "tile_method": (lambda L, a: a.tile(2), [A]),
    "repeat_interleave": (lambda L, a: L.repeat_interleave(a, 2), [A]),
    "repeat_interleave_tensor": (
        lambda L, a: a.repeat_interleave(L.tensor([1, 0, 3]), dim=0),
        [A],
    ),
    "roll_flat": (lambda L, a: L.roll(a, 5), [A]),
    "roll_dims": (lambda L, a: a.roll((1, -3), (0, 2)), [C]),
    "diff": (lambda L, a: L.diff(a, n=2), [A]),
    "diff_prepend_append": (
        lambda L, a, p, q: L.diff(a, dim=0, prepend=p, append=q),
        [A, A[:1], A[:2]],
    ),
    "atleast_3d": (lambda L, a, v: L.atleast_3d(a, v), [A, V]),
    "hstack": (lambda L, a, b: L.hstack([a, b]), [A, A]),
    "vstack": (lambda L, v, a: L.vstack([v, a]), [V, A]),
    "dstack": (lambda L, a, b: L.dstack([a, b]), [A, A]),
    "column_stack": (lambda L, v, a: L.column_stack([v[:3], a]), [V, A]),
    "swapdims": (lambda L, c: L.swapdims(c, 0, 2), [C]),
    "fliplr": (lambda L, a: L.fliplr(a), [A]),
    "flipud": (lambda L, a: a.flipud(), [A]),
    "unflatten": (lambda L, c: c.unflatten(2, (2, -1)), [C]),
    "tensor_split": (lambda L, a: L.tensor_split(a, 3, dim=1), [A]),
    "tensor_split_indices": (lambda L, a: a.tensor_split([-1, 2], dim=1), [A]),
    "hsplit": (lambda L, a: L.hsplit(a, 2), [A]),
    "einsum_mm": (lambda L, a, b: L.einsum("ij,jk->ik", a, b), [A, B]),
    "einsum_implicit": (lambda L, a, b: L.einsum("ij,jk", a, b), [A, B]),
    "einsum_trace": (lambda L, s: L.einsum("ii", s), [S]),
    "einsum_diagonal": (lambda L, s: L.einsum("ii->i", s), [S]),
    "einsum_batched": (lambda L, c, d: L.einsum("bij,bjk->bik", c, d), [C, D]),
    "einsum_ellipsis": (lambda L, c, b: L.einsum("...ij,...jk->...ik", c, b), [C, B]),
    "einsum_ellipsis_implicit": (lambda L, c, b: L.einsum("...ij,jk", c, b), [C, B]),
    "einsum_outer": (lambda L, v, w: L.einsum("i,j->ij", v, w), [V, V[:3]]),
    "einsum_sum_all": (lambda L, c: L.einsum("ijk->", c), [C]),
    "einsum_permute": (lambda L, c: L.einsum("ijk->kji", c), [C]),
    "einsum_three": (lambda L, a, b, g: L.einsum("ij,jk,kl->il", a, b, g), [A, B, G]),
    "einsum_attention": (lambda L, q, k: L.einsum("bhqd,bhkd->bhqk", q, k), [Q, K]),
    "einsum_broadcast": (lambda L, e, f: L.einsum("bij,bjk->bik", e, f), [E, F]),
    "einsum_bilinear": (
        lambda L, a, w, b: L.einsum("bn,anm,bm->ba", a, w, b),
        [A[:2, :3], X3, G.T],
    ),
    "einsum_sublist": (lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [0, 2]), [A, B]),
    "einsum_dot": (lambda L, v, w: L.einsum("i,i", v, w), [V, V]),
    "einsum_diagonal_product": (lambda L, s, v: L.einsum("ii,i->i", s, v), [S, V[:3]]),
    "tensordot_pairs": (lambda L, c, x: L.tensordot(c, x, dims=([1, 2], [1, 0])), [C, X3]),
    "tensordot_int": (lambda L, a, b: L.tensordot(a, b, dims=1), [A, B]),
    "tensordot_zero": (lambda L, v, w: L.tensordot(v, w, dims=0), [V, V[:2]]),
    "inner": (lambda L, a, c: L.inner(a, c), [A, C]),
    "kron": (lambda L, a, b: L.kron(a, b), [A, B]),
    "kron_ranks": (lambda L, v, a: v.kron(a), [V[:2], A]),
    "std_mean": (lambda L, a: L.std_mean(a, dim=1), [A]),
    "var_mean": (lambda L, a: L.var_mean(a, 0, correction=0, keepdim=True), [A]),
    "std_mean_all": (lambda L, a: L.std_mean(a), [A]),
}


def run(lib, name):
    fn, arrays = PROGRAMS[name]
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    weights = [np.random.default_rng(i).standard_normal(tuple(o.shape)) for i, o in enumerate(outs)]
    loss = sum((o * lib.tensor(w)).sum() for o, w in zip(outs, weights))
    grad = ag.grad if lib is gt else torch.autograd.grad
    grads = grad(loss, xs, allow_unused=True)
    return (
        [np.asarray(o.detach().tolist()) for o in outs],
        [np.zeros(a.shape) if g is None else np.asarray(g.tolist()) for g, a in zip(grads, arrays)],
    )


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    (ours, our_grads), (theirs, their_grads) = run(gt, name), run(torch, name)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "name", ["einsum_attention", "einsum_diagonal_product", "roll_dims", "kron"]
)
def test_gradcheck(name):
    fn, arrays = PROGRAMS[name]
    xs = [gt.tensor(a.copy(), requires_grad=True) for a in arrays]
    assert ag.gradcheck(lambda *t: fn(gt, *t), xs)


def test_meshgrid_without_indexing_warns_and_is_ij():
    for lib in (gt, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = lib.meshgrid(lib.tensor([1, 2]), lib.tensor([3, 4, 5]))
        assert any("indexing" in str(w.message) for w in caught)
        assert [tuple(g.shape) for g in grids] == [(2, 3), (2, 3)]


def test_einsum_contracts_with_bmm_not_a_broadcast_product():
    # Note [einsum contracts pairwise with bmm]: the attention-shaped contraction records
    # one BmmBackward0 and never builds the (b, h, q, k, d) product
    q = gt.ones(2, 3, 4, 5, requires_grad=True)
    k = gt.ones(2, 3, 6, 5, requires_grad=True)
    out = gt.einsum("bhqd,bhkd->bhqk", q, k)
    names, stack, seen = set(), [out.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(node.name())
        stack.extend(n for n, _ in node.next_functions)
    assert "BmmBackward0" in names and "MulBackward0" not in names
    assert out.shape == (2, 3, 4, 6) and out.detach().numpy().max() == 5.0


ERRORS = {
    "einsum_operand_count": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)),
    "einsum_sizes": lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(2, 3)),
    "einsum_output_letter": lambda L: L.einsum("ij->iz", L.ones(2, 3)),
    "einsum_rank": lambda L: L.einsum("ijk->i", L.ones(2, 3)),
    "tensordot_sizes": lambda L: L.tensordot(L.ones(2, 3), L.ones(2, 3), dims=1),
    "roll_misaligned": lambda L: L.roll(L.ones(2, 3), (1, 2), 0),
    "repeat_interleave_negative": lambda L: L.repeat_interleave(L.ones(3), -1),
    "repeat_interleave_sizes": lambda L: L.ones(2, 2).repeat_interleave(L.tensor([1, 2, 3]), 0),
    "diff_0d": lambda L: L.diff(L.tensor(1.0)),
    "unflatten_sizes": lambda L: L.ones(2, 6).unflatten(1, (4, -1)),
    "hsplit_indivisible": lambda L: L.hsplit(L.ones(2, 3), 2),
    "fliplr_1d": lambda L: L.fliplr(L.ones(3)),
    "meshgrid_2d": lambda L: L.meshgrid(L.ones(2, 2), indexing="ij"),
    "broadcast_to": lambda L: L.broadcast_to(L.ones(3), (2, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gt, torch):
        with pytest.raises((RuntimeError, TypeError, IndexError, ValueError)) as info:
            ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]
