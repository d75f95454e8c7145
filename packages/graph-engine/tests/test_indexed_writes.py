"""scatter, scatter_add, index_add, index_copy and index_fill (tensor-core's
_impl_scatter.py, graph-engine's derivatives/indexed_writes.py) against torch: values,
node names, first- and second-order gradients, forward-mode tangents and errors."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_autograd.forward_ad as gs_fwad
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
SRC = R.standard_normal((3, 4))
ROWS = R.standard_normal((2, 4))
W = R.standard_normal((3, 4))
IDX = np.array([[0, 2, 1, 3], [3, 3, 0, 1], [1, 0, 2, 2]])


def _grad(lib):
    return ag.grad if lib is gt else torch.autograd.grad


# name -> fn(L, x, values, index) -> (output, differentiable inputs used)
PROGRAMS = {
    "scatter": lambda L, x, s, r, v, i: (x.scatter(1, i, s), [x, s]),
    "scatter_dim0": lambda L, x, s, r, v, i: (x.scatter(0, i[:, :3] % 3, s), [x]),
    "scatter_value": lambda L, x, s, r, v, i: (x.scatter(1, i, 1.5), [x]),
    "scatter_function": lambda L, x, s, r, v, i: (L.scatter(x, 1, i, s), [x, s]),
    "scatter_add": lambda L, x, s, r, v, i: (x.scatter_add(1, i, s), [x, s]),
    "scatter_add_function": lambda L, x, s, r, v, i: (L.scatter_add(x, 1, i, s), [x, s]),
    "index_add": lambda L, x, s, r, v, i: (x.index_add(0, L.tensor([2, 0]), r, alpha=-1.5), [x, r]),
    "index_add_repeated": lambda L, x, s, r, v, i: (L.index_add(x, 0, L.tensor([1, 1]), r), [x, r]),
    "index_copy": lambda L, x, s, r, v, i: (x.index_copy(0, L.tensor([2, 0]), r), [x, r]),
    "index_fill": lambda L, x, s, r, v, i: (x.index_fill(1, L.tensor([0, 3]), -1.0), [x]),
    "index_fill_tensor": lambda L, x, s, r, v, i: (x.index_fill(1, L.tensor([0, 3, 0]), v), [x, v]),
    "scatter_inplace": lambda L, x, s, r, v, i: ((x * 1).scatter_(1, i, s), [x, s]),
    "scatter_add_inplace": lambda L, x, s, r, v, i: ((x * 1).scatter_add_(1, i, s), [x, s]),
    "index_add_inplace": lambda L, x, s, r, v, i: (
        (x * 2).index_add_(0, L.tensor([2, 0]), r),
        [x, r],
    ),
    "index_copy_inplace": lambda L, x, s, r, v, i: (
        (x + 0).index_copy_(0, L.tensor([1, 2]), r),
        [x, r],
    ),
    "index_fill_inplace": lambda L, x, s, r, v, i: (
        (x + 0).index_fill_(0, L.tensor([1]), v),
        [x, v],
    ),
}


def run(lib, name):
    x = lib.tensor(X.copy(), requires_grad=True)
    s = lib.tensor(SRC.copy(), requires_grad=True)
    r = lib.tensor(ROWS.copy(), requires_grad=True)
    v = lib.tensor(2.5, dtype=lib.float64, requires_grad=True)
    out, inputs = PROGRAMS[name](lib, x, s, r, v, lib.tensor(IDX))
    loss = (out * lib.tensor(W)).sum()
    first = _grad(lib)(loss, inputs, create_graph=True)
    total = sum((g * g.sin()).sum() for g in first)
    second = (
        _grad(lib)(total, inputs, allow_unused=True)
        if total.requires_grad
        else [None] * len(inputs)
    )
    return (
        out.grad_fn.name(),
        out.detach().numpy().copy(),
        [g.detach().numpy().copy() for g in first],
        [
            np.zeros(t.shape) if g is None else g.detach().numpy().copy()
            for g, t in zip(second, inputs)
        ],
    )


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    ours, theirs = run(gt, name), run(torch, name)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
    for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "name", ["scatter_dim0", "scatter_add", "index_add", "index_copy", "index_fill_tensor"]
)
def test_gradcheck(name):
    # (scatter with a repeated index has no derivative: the last write wins, and torch's
    # formula, like this one, gives every repeat the gradient)
    x = gt.tensor(X.copy(), requires_grad=True)
    s = gt.tensor(SRC.copy(), requires_grad=True)
    r = gt.tensor(ROWS.copy(), requires_grad=True)
    v = gt.tensor(2.5, dtype=gt.float64, requires_grad=True)
    _, inputs = PROGRAMS[name](gt, x, s, r, v, gt.tensor(IDX))

    def fn(*ts):
        args = dict(zip([id(t) for t in inputs], ts))
        pick = [args.get(id(t), t) for t in (x, s, r, v)]
        return PROGRAMS[name](gt, *pick, gt.tensor(IDX))[0]

    assert ag.gradcheck(fn, inputs)


@pytest.mark.parametrize(
    "name", ["scatter", "scatter_add", "index_add", "index_copy", "index_fill_tensor"]
)
def test_forward_mode_matches_torch(name):
    tangents = [R.standard_normal(a.shape) for a in (X, SRC, ROWS)] + [np.array(0.75)]

    def run_fw(lib, fwad):
        values = [X, SRC, ROWS, np.array(2.5)]
        with fwad.dual_level():
            duals = [
                fwad.make_dual(
                    lib.tensor(a.copy(), dtype=lib.float64), lib.tensor(t.copy(), dtype=lib.float64)
                )
                for a, t in zip(values, tangents)
            ]
            out = PROGRAMS[name](lib, *duals, lib.tensor(IDX))[0]
            return fwad.unpack_dual(out).tangent.numpy().copy()

    np.testing.assert_allclose(
        run_fw(gt, gs_fwad), run_fw(torch, torch.autograd.forward_ad), rtol=1e-12, atol=1e-12
    )


def test_one_hot_by_scatter_and_reduce():
    for lib in (gt, torch):
        hot = lib.zeros(3, 5).scatter_(1, lib.tensor([[1], [4], [0]]), 1)
        assert hot.tolist() == [[0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [1, 0, 0, 0, 0]]
    ours = gt.ones(2, 3).scatter_(1, gt.tensor([[0, 0], [2, 1]]), 2.0, reduce="multiply")
    theirs = torch.ones(2, 3).scatter_(1, torch.tensor([[0, 0], [2, 1]]), 2.0, reduce="multiply")
    assert ours.tolist() == theirs.tolist()
    ours = gt.ones(2, 3).scatter(1, gt.tensor([[0, 0], [2, 1]]), gt.full((2, 2), 3.0), reduce="add")
    theirs = torch.ones(2, 3).scatter(
        1, torch.tensor([[0, 0], [2, 1]]), torch.full((2, 2), 3.0), reduce="add"
    )
    assert ours.tolist() == theirs.tolist()


def test_a_src_larger_than_index_fails_in_backward_as_in_torch():
    # torch's formula gives src a gradient of index's shape
    for lib in (gt, torch):
        src = lib.ones(2, 3, requires_grad=True)
        y = lib.zeros(2, 3).scatter(1, lib.tensor([[0, 1], [2, 0]]), src)
        with pytest.raises(RuntimeError, match="invalid gradient"):
            y.sum().backward()


ERRORS = {
    "scatter_index_dtype": lambda L: L.zeros(2, 3).scatter(1, L.tensor([[0.0]]), L.ones(1, 1)),
    "index_add_index_dtype": lambda L: L.zeros(3).index_add(0, L.tensor([0.0]), L.ones(1)),
    "index_copy_matrix_index": lambda L: L.zeros(3, 4).index_copy(0, L.tensor([[0]]), L.ones(1, 4)),
    "index_fill_matrix_index": lambda L: L.zeros(3, 4).index_fill(0, L.tensor([[0]]), 1.0),
    "index_copy_negative": lambda L: L.zeros(3).index_copy(0, L.tensor([-1]), L.ones(1)),
    "index_add_negative": lambda L: L.zeros(3).index_add(0, L.tensor([-1]), L.ones(1)),
    "scatter_dtype": lambda L: L.zeros(2, 3).scatter(
        1, L.tensor([[0]]), L.ones(1, 1, dtype=L.float64)
    ),
    "scatter_bounds": lambda L: L.zeros(2, 3).scatter(1, L.tensor([[5]]), L.ones(1, 1)),
    "scatter_rank": lambda L: L.zeros(2, 3).scatter(1, L.tensor([0]), L.ones(1, 1)),
    "scatter_sizes": lambda L: L.zeros(2, 3).scatter(1, L.tensor([[0], [1], [0]]), L.ones(3, 1)),
    "scatter_add_bounds": lambda L: L.zeros(3).scatter_add(0, L.tensor([-1]), L.ones(1)),
    "index_add_matrix_index": lambda L: L.zeros(3, 4).index_add(0, L.tensor([[0]]), L.ones(1, 4)),
    "index_add_shape": lambda L: L.zeros(3, 4).index_add(0, L.tensor([0]), L.ones(1, 5)),
    "index_add_bounds": lambda L: L.zeros(3, 4).index_add(0, L.tensor([7]), L.ones(1, 4)),
    "index_add_dtype": lambda L: L.zeros(3, 4).index_add(
        0, L.tensor([0]), L.ones(1, 4, dtype=L.float64)
    ),
    "index_copy_bounds": lambda L: L.zeros(3).index_copy(0, L.tensor([3]), L.ones(1)),
    "index_fill_bounds": lambda L: L.zeros(3).index_fill(0, L.tensor([3]), 1.0),
    "index_fill_value_dims": lambda L: L.zeros(3).index_fill(0, L.tensor([1]), L.ones(2)),
    "scatter_into_leaf": lambda L: L.zeros(3, requires_grad=True).scatter_(0, L.tensor([0]), 1.0),
    "index_add_into_expanded": lambda L: (
        L.zeros(1).expand(3).index_add_(0, L.tensor([0]), L.ones(1))
    ),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gt, torch):
        with pytest.raises((RuntimeError, TypeError, IndexError)) as info:
            ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]


def test_repeated_index_adds_and_last_write_wins():
    for lib in (gt, torch):
        i = lib.tensor([[0, 0, 0]])
        assert lib.zeros(1, 2).scatter_add(1, i, lib.tensor([[1.0, 2.0, 3.0]])).tolist() == [
            [6.0, 0.0]
        ]
        assert lib.zeros(3).index_add(0, lib.tensor([2, 2]), lib.tensor([1.0, 2.0])).tolist() == [
            0,
            0,
            3,
        ]
        assert lib.zeros(3).index_copy(0, lib.tensor([0]), lib.tensor([5.0])).tolist() == [5, 0, 0]
        assert lib.zeros(3).index_fill(0, lib.tensor([-1]), 1.0).tolist() == [0, 0, 1]
        i32 = lib.tensor([[2]], dtype=lib.int32)
        assert lib.zeros(1, 3).scatter(1, i32, 4.0).tolist() == [[0, 0, 4]]
