"""scatter_reduce and index_reduce (tensor-core's ops, graph-engine's derivatives) against
torch 2.13: values of every reduce with include_self both ways, in float32, float64 and
integers, the in-place and function forms, repeated indices, NaN, the errors; gradients
against torch's (ties and zeros included) and by gradcheck/gradgradcheck in float64."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")

SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")
INDEX_REDUCES = ("prod", "mean", "amax", "amin")


def _both(a):
    return gs.from_numpy(np.array(a)), torch.from_numpy(np.array(a))


def _close(g, t):
    np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_reduce_values(dtype, reduce, include_self, dim):
    rng = np.random.default_rng(0)
    x = (rng.uniform(-3, 3, (4, 5)) * 3).astype(dtype)
    src = (rng.uniform(-3, 3, (4, 5)) * 3).astype(dtype)
    size = x.shape[dim]
    idx = rng.integers(0, size, (3, 4))
    (gx, tx), (gsrc, tsrc), (gi, ti) = _both(x), _both(src), _both(idx)
    out = gx.scatter_reduce(dim, gi, gsrc, reduce, include_self=include_self)
    ref = tx.scatter_reduce(dim, ti, tsrc, reduce, include_self=include_self)
    if dtype in (np.float32,) and reduce in ("sum", "mean", "prod"):
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    else:
        _close(out, ref)
    assert out.dtype == gs.from_numpy(x).dtype
    f = gs.scatter_reduce(gx, dim, gi, gsrc, reduce=reduce, include_self=include_self)
    _close(f, out)
    y = gx.clone()
    assert y.scatter_reduce_(dim, gi, gsrc, reduce, include_self=include_self) is y
    _close(y, out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("reduce", INDEX_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_index_reduce_values(dtype, reduce, include_self, dim):
    rng = np.random.default_rng(1)
    x = (rng.uniform(-3, 3, (3, 4, 2)) * 3).astype(dtype)
    shape = list(x.shape)
    shape[dim] = 5
    src = (rng.uniform(-3, 3, shape) * 3).astype(dtype)
    idx = rng.integers(0, x.shape[dim], 5)
    (gx, tx), (gsrc, tsrc), (gi, ti) = _both(x), _both(src), _both(idx)
    out = gx.index_reduce(dim, gi, gsrc, reduce, include_self=include_self)
    ref = tx.index_reduce(dim, ti, tsrc, reduce, include_self=include_self)
    if dtype == np.float32 and reduce in ("mean", "prod"):
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    else:
        _close(out, ref)
    _close(gs.index_reduce(gx, dim, gi, gsrc, reduce, include_self=include_self), out)
    y = gx.clone()
    assert y.index_reduce_(dim, gi, gsrc, reduce, include_self=include_self) is y
    _close(y, out)


def test_nan_wins_and_the_old_names():
    for reduce in ("amax", "amin", "max", "min"):
        (gx, tx), (gs_, ts), (gi, ti) = _both([1.0, 2.0]), _both([np.nan, 3.0]), _both([0, 0])
        _close(gx.scatter_reduce(0, gi, gs_, reduce), tx.scatter_reduce(0, ti, ts, reduce))
    for reduce in ("amax", "amin"):
        _close(gx.index_reduce(0, gi, gs_, reduce), tx.index_reduce(0, ti, ts, reduce))


def test_zero_dim_empty_and_bool():
    g = gs.tensor(1.0).scatter_reduce(0, gs.tensor(0), gs.tensor(5.0), "sum")
    assert g.item() == 6.0 and g.shape == ()
    e = gs.zeros(2, 3).scatter_reduce(1, gs.zeros(0, 2, dtype=gs.int64), gs.ones(2, 3), "prod")
    assert e.tolist() == [[0.0] * 3] * 2
    e = gs.zeros(2, 3).index_reduce(1, gs.tensor([], dtype=gs.int64), gs.ones(2, 0), "prod")
    assert e.tolist() == [[0.0] * 3] * 2
    for reduce in ("sum", "prod", "amax", "amin"):
        (gx, tx), (gs_, ts), (gi, ti) = (
            _both([True, False]),
            _both([True, False]),
            _both([1, 1]),
        )
        _close(gx.scatter_reduce(0, gi, gs_, reduce), tx.scatter_reduce(0, ti, ts, reduce))


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    return None


ERRORS = {
    "bad reduce": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0]), L.ones(1), "add"),
    "float index": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0.0]), L.ones(1), "sum"),
    "src dtype": lambda L: L.zeros(3).scatter_reduce(
        0, L.tensor([0]), L.ones(1, dtype=L.float64), "sum"
    ),
    "number src": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0]), 1.0, "sum"),
    "bounds": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([5]), L.ones(1), "sum"),
    "rank": lambda L: L.zeros(3, 2).scatter_reduce(0, L.tensor([0]), L.ones(1), "sum"),
    "dim": lambda L: L.zeros(3).scatter_reduce(4, L.tensor([0]), L.ones(1), "sum"),
    "bool mean": lambda L: L.tensor([True]).scatter_reduce(
        0, L.tensor([0]), L.tensor([True]), "mean"
    ),
    "include_self positional": lambda L: L.zeros(3).scatter_reduce(
        0, L.tensor([0]), L.ones(1), "sum", True
    ),
    "index sum": lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0]), L.ones(1, 2), "sum"),
    "index float": lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0.0]), L.ones(1, 2), "prod"),
    "index matrix": lambda L: L.ones(3, 2).index_reduce(
        0, L.tensor([[0, 0]]), L.ones(2, 2), "prod"
    ),
    "index bounds": lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0, 5]), L.ones(2, 2), "prod"),
    "index negative": lambda L: L.ones(3, 2).index_reduce(
        0, L.tensor([0, -1]), L.ones(2, 2), "prod"
    ),
    "index shape": lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0, 0]), L.ones(2, 3), "prod"),
    "index count": lambda L: L.ones(3, 2).index_reduce(0, L.tensor([0, 0]), L.ones(3, 2), "prod"),
    "index dtype": lambda L: L.ones(3, 2).index_reduce(
        0, L.tensor([0, 0]), L.ones(2, 2, dtype=L.float64), "prod"
    ),
    "index bool": lambda L: L.tensor([True]).index_reduce(
        0, L.tensor([0]), L.tensor([True]), "amax"
    ),
    "reduce type": lambda L: L.zeros(3).scatter_reduce(0, L.tensor([0]), L.ones(1), 3),
    "dim type": lambda L: L.zeros(3).scatter_reduce(0.5, L.tensor([0]), L.ones(1), "sum"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert want is not None
    assert got is not None and got[0] is want[0], (got, want)
    if want[0] is not TypeError:
        assert got[1] == want[1]


def _grads(lib, x, src, idx, fn):
    a = lib.from_numpy(x.copy()).requires_grad_()
    b = lib.from_numpy(src.copy()).requires_grad_()
    out = fn(lib, a, lib.from_numpy(idx.copy()), b)
    w = lib.from_numpy(np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)))
    (out * w).sum().backward()
    return out, a.grad, b.grad


@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_with_ties_and_zeros(reduce, include_self):
    x = np.array([[1.0, 0.0, 3.0, 2.0], [2.0, 2.0, 0.0, 1.0]])
    src = np.array([[3.0, 0.0, 3.0], [2.0, 0.0, 5.0]])  # ties with x, zeros, repeats
    idx = np.array([[0, 0, 2], [1, 1, 1]])

    def fn(L, a, i, b):
        return a.scatter_reduce(1, i, b, reduce, include_self=include_self)

    g, t = _grads(gs, x, src, idx, fn), _grads(torch, x, src, idx, fn)
    assert type(g[0].grad_fn).__name__ == type(t[0].grad_fn).__name__ == "ScatterReduceBackward0"
    for a, b in zip(g, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduce", INDEX_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradients_with_ties_and_zeros(reduce, include_self):
    x = np.array([[1.0, 0.0], [3.0, 2.0], [2.0, 2.0]])
    src = np.array([[3.0, 0.0], [1.0, 0.0], [2.0, 5.0]])
    idx = np.array([1, 1, 2])

    def fn(L, a, i, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return a.index_reduce(0, i, b, reduce, include_self=include_self)

    g, t = _grads(gs, x, src, idx, fn), _grads(torch, x, src, idx, fn)
    assert type(g[0].grad_fn).__name__ == type(t[0].grad_fn).__name__ == "IndexReduceBackward0"
    for a, b in zip(g, t):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
def test_gradcheck_float64(reduce):
    rng = np.random.default_rng(3)
    x = gs.from_numpy(rng.uniform(0.5, 2.0, (3, 4))).requires_grad_()
    src = gs.from_numpy(rng.uniform(0.5, 2.0, (2, 4))).requires_grad_()
    idx = gs.tensor([[0, 1, 0, 1], [2, 2, 2, 0]])
    for include_self in (True, False):

        def f(a, b, include_self=include_self):
            return a.scatter_reduce(0, idx, b, reduce, include_self=include_self)

        assert gs.autograd.gradcheck(f, (x, src))
        assert gs.autograd.gradgradcheck(f, (x, src))
        if reduce != "sum":

            def h(a, b, include_self=include_self):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    source = b[:, :3].repeat(2, 1)[:3]
                    return a.index_reduce(
                        1, gs.tensor([3, 3, 0]), source, reduce, include_self=include_self
                    )

            assert gs.autograd.gradcheck(h, (x, src))


# ---- the C pass (Note [One pass of a reducing scatter]): layouts, every dim, many
# repeated indices, int32 indices, -0.0 and NaN in self, the in-place write through a view


def _strided(a, transpose):
    """``a`` as a non-contiguous array of the same values (a transposed copy's view)."""
    return np.ascontiguousarray(a.T).T if transpose else a


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduce", SCATTER_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "int32"])
def test_scatter_reduce_layouts_and_repeats_exact(dtype, reduce, include_self, dim, layout):
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, (6, 7, 5)).astype(dtype)
    src = rng.uniform(-2, 2, (6, 8, 5)).astype(dtype)
    src[0, 0, 0] = np.nan if reduce in ("amax", "amin") else src[0, 0, 0]
    x[1, 1, 1] = -0.0
    ishape = (5, 6, 4)
    idx = rng.integers(0, x.shape[dim], ishape).astype(np.int32 if layout == "int32" else np.int64)
    strided = layout == "strided"
    gx, tx = gs.from_numpy(x.copy()), torch.from_numpy(x.copy())
    a_src, a_idx = _strided(src, strided), _strided(idx, strided)
    gsrc, tsrc = gs.from_numpy(a_src), torch.from_numpy(a_src)
    gi, ti = gs.from_numpy(a_idx), torch.from_numpy(a_idx)
    if strided:  # in place into a non-contiguous view of a larger tensor
        gbig = gs.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 2)))
        tbig = torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 2)))
        gv, tv = gbig.transpose(0, 2), tbig.transpose(0, 2)
        gv.scatter_reduce_(dim, gi, gsrc, reduce, include_self=include_self)
        tv.scatter_reduce_(dim, ti, tsrc, reduce, include_self=include_self)
        np.testing.assert_array_equal(gbig.numpy(), tbig.numpy())
    out = gx.scatter_reduce(dim, gi, gsrc, reduce, include_self=include_self)
    ref = tx.scatter_reduce(dim, ti, tsrc, reduce, include_self=include_self)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    np.testing.assert_array_equal(np.signbit(out.numpy()), np.signbit(ref.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduce", INDEX_REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("strided", [False, True])
def test_index_reduce_layouts_and_repeats_exact(dtype, reduce, include_self, dim, strided):
    rng = np.random.default_rng(8)
    x = rng.uniform(-2, 2, (5, 6, 7)).astype(dtype)
    shape = list(x.shape)
    shape[dim] = 20
    src = rng.uniform(-2, 2, shape).astype(dtype)
    if reduce in ("amax", "amin"):
        src[0, 0, 0] = np.nan
        x[1, 2, 3] = np.nan
    idx = rng.integers(0, x.shape[dim], 20)
    a_src = _strided(src, strided)
    gx, tx = gs.from_numpy(_strided(x, strided).copy()), torch.from_numpy(x.copy())
    gi, ti = gs.from_numpy(idx), torch.from_numpy(idx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = gx.index_reduce(dim, gi, gs.from_numpy(a_src), reduce, include_self=include_self)
        ref = tx.index_reduce(dim, ti, torch.from_numpy(a_src), reduce,
                              include_self=include_self)  # fmt: skip
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        if strided:
            gbig = gs.from_numpy(np.ascontiguousarray(x.T))
            gbig.T.index_reduce_(dim, gi, gs.from_numpy(a_src), reduce, include_self=include_self)
            np.testing.assert_array_equal(gbig.T.numpy(), ref.numpy())


def test_reducing_write_index_errors_before_any_write():
    for L in (gs, torch):
        x = L.zeros(3, 4)
        with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1"):
            x.scatter_reduce_(1, L.tensor([[0, -1]]), L.ones(1, 2), "amax")
        with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1"):
            x.scatter_reduce_(1, L.tensor([[0, 1], [4, 0]]), L.ones(2, 2), "sum")
        with warnings.catch_warnings(), pytest.raises(IndexError, match="out of range"):
            warnings.simplefilter("ignore")
            x.index_reduce_(1, L.tensor([0, 9]), L.ones(3, 2), "mean")
        if L is gs:  # (torch's sum writes the positions before the bad index)
            assert x.sum().item() == 0.0


def test_scatter_reduce_kernel_checks_its_arguments():
    from gradstack_tensor.kernels import scatter_reduce_

    out = np.zeros((3, 4))
    idx = np.zeros((2, 2), np.int64)
    with pytest.raises(TypeError, match="int32 or int64"):
        scatter_reduce_(out, 0, idx.astype(np.float64), np.ones((2, 2)), "sum")
    with pytest.raises(TypeError, match="same dtype"):
        scatter_reduce_(out, 0, idx, np.ones((2, 2), np.float32), "sum")
    with pytest.raises(ValueError, match="C-contiguous"):
        scatter_reduce_(out.T, 0, idx, np.ones((2, 2)), "sum")
    with pytest.raises(ValueError, match="reduce"):
        scatter_reduce_(out, 0, idx, np.ones((2, 2)), "add")
    with pytest.raises(ValueError, match="no larger"):
        scatter_reduce_(out, 0, idx, np.ones((2, 1)), "sum")
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        scatter_reduce_(out, 0, np.array([[0, 3]]), np.ones((1, 2)), "sum")
    with pytest.raises(IndexError, match="dim"):
        scatter_reduce_(out, 2, idx, np.ones((2, 2)), "sum")
    read_only = np.zeros((3, 4))
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        scatter_reduce_(read_only, 0, idx, np.ones((2, 2)), "sum")
    assert not out.any()
