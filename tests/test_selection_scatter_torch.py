"""The index and shape ops' fast paths of issue 34, against torch 2.13, bit for bit:

* split/chunk: the pieces (views of the input, one slice each) and the backward that writes
  the pieces' gradients into one zeroed block (some pieces without a gradient);
* the backward of the ops that select along a dim (gather with repeated indices, sort,
  topk, max/min with a dim, ties included) by ``scatter_along`` (Note [A selection's
  backward straight into the kernel]);
* scatter/scatter_/scatter_add/scatter_add_ through tensor-core's ``scatter_`` and
  ``scatter_add_`` kernels (repeated indices: the last write wins, the sums in index order)
  and their backward on arrays (Note [scatter's backward on arrays]);

for float32 and float64, every dim and negative dims, non-contiguous inputs, 0-size
inputs, integer dtypes where torch allows them (the numpy paths), and the errors; the
differentiable formulas (create_graph) by gradcheck / gradgradcheck in float64.
"""

# ruff: noqa: B023 (the lambdas of a loop are called in their own iteration)

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

FLOATS = [np.float32, np.float64]


def _both(x, requires_grad=True):
    a = gs.tensor(x, requires_grad=requires_grad and x.dtype.kind == "f")
    b = torch.tensor(x, requires_grad=requires_grad and x.dtype.kind == "f")
    return a, b


def _same(ours, theirs):
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def _grads(fn, x, *rest, seed=0):
    """``fn``'s output and the input's gradient for a random output gradient, both libraries."""
    out = []
    for L in (gs, torch):
        a = L.tensor(x, requires_grad=True)
        r = fn(L, a, *[L.tensor(v) if isinstance(v, np.ndarray) else v for v in rest])
        g = np.random.default_rng(seed).standard_normal(tuple(r.shape)).astype(x.dtype)
        (ga,) = L.autograd.grad(r, a, L.tensor(g))
        out.append((r, ga))
    _same(out[0][0], out[1][0])
    _same(out[0][1], out[1][1])


# ---------------------------------------------------------------------------------------
# split / chunk


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("sizes", [1, 3, 7, [2, 0, 5], [7]])
def test_split_values_and_gradient(dtype, dim, sizes):
    x = np.random.default_rng(0).standard_normal((7, 7)).astype(dtype)
    for used in ([1], [0, -1], "all"):

        def fn(L, a):
            pieces = L.split(a, sizes, dim)
            picked = pieces if used == "all" else [pieces[i] for i in used if i < len(pieces)]
            return L.cat([p.reshape(-1) for p in picked] or [a.reshape(-1)[:0]])

        _grads(fn, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_split_of_a_non_contiguous_input_is_views(dtype):
    x = np.random.default_rng(1).standard_normal((6, 8)).astype(dtype)
    a, b = _both(x)
    pa, pb = a.t()[:, ::2].split(2, 1), b.t()[:, ::2].split(2, 1)
    assert len(pa) == len(pb)
    for p, q in zip(pa, pb):
        _same(p, q)
        assert p.stride() == q.stride() and p.storage_offset() == q.storage_offset()
        assert p._base is a or p._base is a.t()._base or p.data_ptr() != 0
    _grads(lambda L, t: L.split(t.t()[:, ::2], 2, 1)[1] * 2, x)
    _grads(lambda L, t: t.chunk(3, 0)[2], x)


def test_split_zero_size_and_int_dtypes():
    x = np.zeros((0, 4), np.float32)
    _grads(lambda L, t: L.split(t, 2, 1)[1], x)
    xi = np.arange(12).reshape(3, 4)
    for p, q in zip(gs.split(gs.tensor(xi), 2, 1), torch.split(torch.tensor(xi), 2, 1)):
        _same(p, q)


@pytest.mark.parametrize("dtype", FLOATS)
def test_split_gradient_when_every_piece_has_one(dtype):
    # Note [split's gradient needs no zeros when every piece has one]: the block is not
    # zeroed first; every element must still be written (a GPT's q, k, v: the pieces'
    # gradients arrive transposed, non-contiguous)
    x = np.random.default_rng(3).standard_normal((2, 5, 12)).astype(dtype)

    def attention_like(L, a):
        q, k, v = a.split(4, dim=2)
        heads = [t.view(2, 5, 2, 2).transpose(1, 2) for t in (q, k, v)]
        return L.cat([(h * (i + 1)).reshape(-1) for i, h in enumerate(heads)])

    _grads(attention_like, x)
    _grads(lambda L, a: L.cat([p.t().reshape(-1) for p in a[0].split([5, 0, 7], 1)]), x)
    _grads(lambda L, a: L.stack([u * (i + 1) for i, u in enumerate(a.unbind(1))], 2), x)
    _grads(lambda L, a: L.cat([p.reshape(-1) for p in a.chunk(4, 2)]), x)
    empty = np.zeros((3, 0, 4), dtype)
    _grads(lambda L, a: L.cat([p.reshape(-1) for p in a.split(2, 2)]), empty)


def test_split_pieces_are_views_that_refuse_in_place_writes_under_grad():
    a = gs.tensor(np.ones((4, 3), np.float32), requires_grad=True)
    pieces = (a * 1).split(2, 0)
    with pytest.raises(RuntimeError, match="view"):
        pieces[0].add_(1)


def test_split_second_order():
    x = np.random.default_rng(2).standard_normal((5, 4))
    a = gs.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: t.split(2, 0)[1] ** 2, (a,))
    assert gradgradcheck(lambda t: t.split(2, 0)[1] ** 2, (a,))


# ---------------------------------------------------------------------------------------
# the backward of a selection along a dim


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather_backward_with_repeated_indices(dtype, dim):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 6)).astype(dtype)
    shape = [3, 4, 5]
    shape[dim] = 9
    idx = rng.integers(0, x.shape[dim], shape).astype(np.int64)
    _grads(lambda L, a, i: L.gather(a, dim, i), x, idx)
    _grads(lambda L, a, i: L.gather(a.transpose(0, 2), dim, i), x.transpose(2, 1, 0).copy(), idx)


def test_gather_zero_size_and_second_order():
    x = np.random.default_rng(4).standard_normal((3, 4))
    _grads(lambda L, a, i: L.gather(a, 1, i), x, np.zeros((3, 0), np.int64))
    idx = gs.tensor(np.array([[0, 0, 3], [1, 1, 1], [2, 0, 2]]))
    a = gs.tensor(x, requires_grad=True)
    assert gradcheck(lambda t: gs.gather(t, 1, idx) ** 2, (a,))
    assert gradgradcheck(lambda t: gs.gather(t, 1, idx) ** 2, (a,))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_min_along_a_dim_ties_and_gradient(dtype, name, dim, keepdim):
    x = np.random.default_rng(5).integers(0, 3, (6, 7)).astype(dtype)  # many ties
    a, b = _both(x)
    ra, rb = getattr(gs, name)(a, dim, keepdim), getattr(torch, name)(b, dim, keepdim)
    _same(ra.values, rb.values)
    _same(ra.indices, rb.indices)
    _grads(lambda L, t: getattr(L, name)(t, dim, keepdim).values, x)
    _grads(lambda L, t: getattr(L, name)(t.t(), dim, keepdim).values, x.T.copy())


def test_max_of_a_zero_size_dim_and_second_order():
    x = np.zeros((0, 3), np.float32)
    _grads(lambda L, t: L.max(t, 1).values, x)
    a = gs.tensor(np.random.default_rng(6).standard_normal((4, 5)), requires_grad=True)
    assert gradcheck(lambda t: gs.max(t, 1).values ** 2, (a,))
    assert gradgradcheck(lambda t: gs.min(t, 0, True).values ** 2, (a,))


@pytest.mark.parametrize("dtype", FLOATS)
def test_sort_and_topk_gradients(dtype):
    distinct = np.random.default_rng(7).permutation(200).reshape(5, 40).astype(dtype)
    _grads(lambda L, t: L.sort(t, 1).values, distinct)  # (sort's ties are not torch's)
    x = np.random.default_rng(7).integers(0, 4, (5, 40)).astype(dtype)
    _grads(lambda L, t: L.topk(t, 3, 0, False).values, x)
    _grads(lambda L, t: L.topk(t.t(), 3, -1).values, x.T.copy())


# ---------------------------------------------------------------------------------------
# scatter / scatter_add


def _scatter_case(rng, shape, dim, dtype, repeat):
    x = rng.standard_normal(shape).astype(dtype)
    ishape = list(shape)
    ishape[dim] = shape[dim] + 2 if repeat else max(1, shape[dim] // 2)
    ishape = [max(1, s - 1) if d != dim else s for d, s in enumerate(ishape)]
    if repeat:
        idx = rng.integers(0, shape[dim], ishape)
    else:
        idx = np.argsort(rng.random(ishape[:dim] + [shape[dim]] + ishape[dim + 1 :]), axis=dim)
        idx = np.take(idx, range(ishape[dim]), axis=dim)
    src = rng.standard_normal([s + 1 for s in ishape]).astype(dtype)
    return x, idx.astype(np.int64), src


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["scatter", "scatter_add"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("repeat", [False, True])
@pytest.mark.parametrize("inplace", [False, True])
def test_scatter_values_and_gradients(dtype, name, dim, repeat, inplace):
    rng = np.random.default_rng(8)
    x, idx, src = _scatter_case(rng, (4, 5, 6), dim % 3, dtype, repeat)
    src = src[tuple(slice(0, s) for s in idx.shape)].copy()  # (src's gradient: index's shape)
    method = name + ("_" if inplace else "")
    out = []
    for L in (gs, torch):
        a = L.tensor(x, requires_grad=True)
        s = L.tensor(src, requires_grad=True)
        base = a * 1 if inplace else a
        r = getattr(base, method)(dim, L.tensor(idx), s)
        g = np.random.default_rng(9).standard_normal(tuple(r.shape)).astype(dtype)
        out.append((r, *L.autograd.grad(r, (a, s), L.tensor(g))))
    for p, q in zip(out[0], out[1]):
        _same(p, q)


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_of_a_value_and_non_contiguous_operands(dtype):
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 5)).astype(dtype)
    idx = rng.integers(0, 6, (4, 5))
    _grads(lambda L, a, i: a.scatter(0, i, 2.5), x, idx)
    _grads(lambda L, a, i: a.t().scatter(1, i.t(), -1.0), x, idx)
    src = rng.standard_normal((5, 8)).astype(dtype)
    ours = gs.tensor(x).t().scatter_add(1, gs.tensor(idx).t(), gs.tensor(src)[:, ::2])
    theirs = torch.tensor(x).t().scatter_add(1, torch.tensor(idx).t(), torch.tensor(src)[:, ::2])
    _same(ours, theirs)
    ours = gs.tensor(x).t().scatter(1, gs.tensor(idx).t(), gs.tensor(src)[:, ::2])
    theirs = torch.tensor(x).t().scatter(1, torch.tensor(idx).t(), torch.tensor(src)[:, ::2])
    _same(ours, theirs)


def test_scatter_from_itself_reads_before_it_writes():
    # (torch refuses the overlap; gradstack reads src whole before it writes, as the
    # numpy path did: torch's answer for a clone of src)
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([[3, 2, 1, 0]] * 3)
    for name in ("scatter_", "scatter_add_"):
        a, b = gs.tensor(x), torch.tensor(x)
        getattr(a, name)(1, gs.tensor(idx), a)
        getattr(b, name)(1, torch.tensor(idx), b.clone())
        _same(a, b)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float16])
def test_scatter_other_dtypes(dtype):
    rng = np.random.default_rng(11)
    x = rng.integers(-5, 5, (4, 6)).astype(dtype)
    idx = rng.integers(0, 6, (3, 6))
    src = rng.integers(-5, 5, (3, 6)).astype(dtype)
    for name in ("scatter", "scatter_add"):
        ours = getattr(gs.tensor(x), name)(1, gs.tensor(idx), gs.tensor(src))
        theirs = getattr(torch.tensor(x), name)(1, torch.tensor(idx), torch.tensor(src))
        _same(ours, theirs)


def test_scatter_zero_size_index_and_zero_d():
    x = np.ones((3, 4), np.float32)
    for L in (gs, torch):
        r = L.tensor(x).scatter(1, L.zeros((3, 0), dtype=L.int64), L.ones(3, 0))
        assert tuple(r.shape) == (3, 4) and float(r.sum()) == 12.0
    ours = gs.tensor(1.0).scatter(0, gs.tensor(0), gs.tensor(5.0))
    theirs = torch.tensor(1.0).scatter(0, torch.tensor(0), torch.tensor(5.0))
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["scatter", "scatter_add"])
def test_scatter_out_of_range_raises_torchs_error_before_writing(name):
    x = np.zeros((2, 3), np.float32)
    for bad in (3, -1):
        idx = np.array([[0, bad, 1]])
        with pytest.raises(RuntimeError) as ours:
            getattr(gs.tensor(x), name)(1, gs.tensor(idx), gs.ones(1, 3))
        with pytest.raises(RuntimeError) as theirs:
            getattr(torch.tensor(x), name)(1, torch.tensor(idx), torch.ones(1, 3))
        assert str(ours.value) == str(theirs.value)
        a = gs.tensor(x)
        with pytest.raises(RuntimeError):
            getattr(a, name + "_")(1, gs.tensor(idx), gs.ones(1, 3))
        assert float(a.abs().sum()) == 0.0  # nothing written


def test_scatter_second_order():
    rng = np.random.default_rng(12)
    idx = gs.tensor(np.argsort(rng.random((3, 4)), axis=1))  # (distinct: no write lost)
    a = gs.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    s = gs.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t, u: t.scatter(1, idx, u) ** 2, (a, s))
    assert gradgradcheck(lambda t, u: t.scatter_add(1, idx, u) ** 2, (a, s))


# ---------------------------------------------------------------------------------------
# diagonal / unfold: views built on the array's buffer, gradients on arrays


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 6), (0, 3), (2, 0, 4), (4, 1)])
def test_diagonal_views_and_gradients(dtype, shape):
    x = np.random.default_rng(13).standard_normal(shape).astype(dtype)
    nd = len(shape)
    for offset in (-7, -2, -1, 0, 1, 3, 9):
        for d1 in range(-nd, nd):
            for d2 in range(-nd, nd):
                if d1 % nd == d2 % nd:
                    continue
                a, b = (
                    gs.tensor(x).diagonal(offset, d1, d2),
                    torch.tensor(x).diagonal(offset, d1, d2),
                )
                _same(a, b)
                assert a.stride() == b.stride()
                if b.numel():
                    assert a.storage_offset() == b.storage_offset()
        _grads(lambda L, t: t.diagonal(offset, -1, 0), x)


def test_diagonal_writes_through_and_of_non_contiguous_inputs():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    a, b = gs.tensor(x), torch.tensor(x)
    a.diagonal(1).mul_(-1)
    b.diagonal(1).mul_(-1)
    _same(a, b)
    _same(gs.tensor(x).t().diagonal(-1), torch.tensor(x).t().diagonal(-1))
    _grads(lambda L, t: t.t()[::2].diagonal(), x)
    _grads(lambda L, t: L.diagonal(t.expand(3, 4, 5), 0, 1, 2), x)
    a = gs.tensor(np.random.default_rng(14).standard_normal((4, 5)), requires_grad=True)
    assert gradgradcheck(lambda t: t.diagonal(1) ** 2, (a,))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5, 7), (3, 4, 6), (0, 3), (6,)])
def test_unfold_views_and_gradients(dtype, shape):
    x = np.random.default_rng(15).standard_normal(shape).astype(dtype)
    for d in range(-len(shape), len(shape)):
        for size in range(0, shape[d] + 1):
            for step in (1, 2, 3, 5):
                a, b = gs.tensor(x).unfold(d, size, step), torch.tensor(x).unfold(d, size, step)
                _same(a, b)
                assert a.stride() == b.stride()
                if size:
                    _grads(lambda L, t: t.unfold(d, size, step), x)


def test_unfold_of_non_contiguous_input_and_second_order():
    x = np.random.default_rng(16).standard_normal((6, 8))
    _grads(lambda L, t: t.t().unfold(1, 2, 2), x)
    _grads(lambda L, t: t[:, ::2].unfold(0, 3, 3), x)
    a = gs.tensor(x, requires_grad=True)
    assert gradgradcheck(lambda t: t.unfold(1, 2, 2) ** 2, (a,))
    assert gradgradcheck(lambda t: t.unfold(1, 3, 2) ** 2, (a,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_max_min_argmax_argmin_with_nan_inf_and_ties(dtype):
    # Note [numpy's argmax is torch's with NaN]: the first NaN of a row wins
    rng = np.random.default_rng(17)
    for _ in range(40):
        x = rng.integers(-2, 3, (4, int(rng.integers(1, 70)))).astype(dtype)
        x[rng.random(x.shape) < 0.05] = np.nan
        x[rng.random(x.shape) < 0.05] = np.inf
        x[rng.random(x.shape) < 0.05] = -np.inf
        x[rng.random(x.shape) < 0.1] = -0.0
        for dim in (0, 1):
            for name in ("max", "min"):
                r, t = (
                    getattr(gs, name)(gs.tensor(x), dim),
                    getattr(torch, name)(torch.tensor(x), dim),
                )
                _same(r.values, t.values)
                np.testing.assert_array_equal(
                    np.signbit(r.values.numpy()), np.signbit(t.values.numpy())
                )
                _same(r.indices, t.indices)
            for name in ("argmax", "argmin"):
                _same(
                    getattr(gs, name)(gs.tensor(x), dim), getattr(torch, name)(torch.tensor(x), dim)
                )
