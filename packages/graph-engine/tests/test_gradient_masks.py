"""Gradients that are zero on part of the input are *selected* to zero, as torch's are.

Note [Masks select, never multiply] in derivatives/_formulas.py: a formula that multiplies an
incoming gradient by a 0/1 mask turns an inf or nan gradient into nan where torch gives 0
(``x.clamp(min=0).sqrt()`` at x = -1).  Every formula with a mask, a tie rule or a
degenerate case (constant input, n <= correction, 0-d input reduced over dim 0) runs here
on both gradstack and torch 2.13 in float64: values, first-order gradients for incoming
gradients holding inf and nan, second-order gradients, and forward-mode tangents.
"""

from __future__ import annotations

import importlib
import math

import gradstack_autograd as ag
import gradstack_autograd.forward_ad  # noqa: F401 - ag.forward_ad
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

# torch's forward mode scripts helpers with the deprecated torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")


_cmp = importlib.import_module("gradstack_autograd_tests_torch_compare")
GS, compare = _cmp.GS, _cmp.compare

nan, inf = math.nan, math.inf

# inputs with every special value: negatives, zero, ties, nan, +-inf
X = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, nan, inf, -inf])
Y = np.array([0.0, 0.0, 0.5, 1.0, 3.0, 1.0, 1.0, nan])
FINITE = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, -3.0])
M = np.array([[1.0, -2.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [3.0, 3.0, -1.0, 0.5]])


def _norm_of(p, dim=None):
    return lambda L, x: x.norm(p, dim=dim)


def _method_then_sqrt(name):
    return lambda L, x: getattr(x, name)().sqrt()


# (name, fn(L, *tensors), inputs, second order, forward mode); second order "ones": only
# for an all-ones incoming gradient (prod's double backward multiplies partial products
# in a different order than torch's cumprods, so an inf gradient meets 0 in other places)
CASES = [
    # the named cases of issue 11
    ("clamp_min_sqrt", lambda L, x: x.clamp(min=0).sqrt(), [X], True, True),
    ("maximum_sqrt", lambda L, x, y: L.maximum(x, y).sqrt(), [X, Y], True, True),
    ("minimum_sqrt", lambda L, x, y: (-L.minimum(x, y)).sqrt(), [X, Y], True, True),
    ("relu_sqrt", lambda L, x: x.relu().sqrt(), [X], True, True),
    ("max_nan", lambda L, x: x.max(), [np.array([1.0, nan, 2.0])], True, True),
    ("max_two_nans", lambda L, x: x.max(), [np.array([1.0, nan, nan])], True, False),
    ("max_ties", lambda L, x: x.max(), [np.array([2.0, 2.0, 1.0])], True, True),
    ("min_ties_nan", lambda L, x: x.min(), [np.array([nan, -1.0, -1.0])], True, False),
    ("std_constant", lambda L, x: x.std(), [np.full(4, 3.0)], True, True),
    ("var_constant", lambda L, x: x.var(), [np.full(4, 3.0)], True, True),
    ("std_constant_rows", lambda L, x: x.std(1), [np.array([[3.0, 3.0], [1.0, 2.0]])], True, True),
    # clamp: number bounds, tensor bounds, lo > hi, nan
    ("clamp_both", lambda L, x: x.clamp(-0.5, 1.0).sqrt(), [X], True, True),
    ("clamp_lo_gt_hi", lambda L, x: x.clamp(1.0, -0.5), [X], True, True),
    ("clamp_max_sqrt", lambda L, x: (-x).clamp(max=0).neg().sqrt(), [X], True, True),
    (
        "clamp_tensor_bounds",
        lambda L, x, lo, hi: L.clamp(x, lo, hi).sqrt(),
        [
            X,
            np.array([0.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 0.0]),
            np.array([1.0, -1, 2, 2, 1, 1, 1, 1]),
        ],
        True,
        True,
    ),
    ("clamp_tensor_min", lambda L, x, lo: L.clamp(x, min=lo).sqrt(), [X, Y], True, True),
    ("clamp_tensor_max", lambda L, x, hi: -L.clamp(-x, max=-hi), [X, Y], True, True),
    # the selections of max/min/amax/amin/sort along dims
    ("max_dim", lambda L, x: x.max(1)[0].sqrt(), [M], True, True),
    (
        "max_dim_nan_ties",
        lambda L, x: x.max(1)[0],
        [np.array([[1.0, nan, nan], [2.0, 2.0, 1.0], [-inf, -inf, -inf]])],
        True,
        True,
    ),
    (
        "min_dim_nan_ties",
        lambda L, x: x.min(0, keepdim=True)[0],
        [np.array([[1.0, nan, 3.0], [1.0, 2.0, nan]])],
        True,
        True,
    ),
    (
        "amin_dim_ties",
        lambda L, x: x.amin(1),
        [np.array([[1.0, 1.0, 3.0], [inf, inf, inf]])],
        True,
        True,
    ),
    ("min_dim_keepdim", lambda L, x: (-x.min(0, keepdim=True)[0]).sqrt(), [M], True, True),
    ("amax_all", lambda L, x: x.amax().sqrt(), [M], True, True),
    ("amax_dim", lambda L, x: x.amax(1).sqrt(), [M], True, True),
    ("amin_dims", lambda L, x: (-x.amin((0, 1))).sqrt(), [M], True, True),
    ("amax_nan", lambda L, x: x.amax(0), [np.array([[1.0, nan], [1.0, 2.0]])], True, True),
    # var/std along dims, corrections, degenerate dof
    ("var_dim", lambda L, x: x.var(1), [M], True, True),
    ("var_correction0", lambda L, x: x.var(0, correction=0), [M], True, True),
    ("var_dof0_full", lambda L, x: x.var(correction=2), [np.array([3.0, 4.0])], True, True),
    ("var_dof0_same", lambda L, x: x.var(), [np.array([3.0])], True, True),
    ("var_dof_neg_dim", lambda L, x: x.var(0, correction=3), [M[:2]], True, True),
    ("std_dof0_dim", lambda L, x: x.std(1, correction=4), [M], True, True),
    ("std_keepdim", lambda L, x: x.std(0, keepdim=True), [M], True, True),
    # norms of every order, with zero rows
    *[
        (f"norm_{p}", _norm_of(p), [M], p not in (0, 0.5), True)
        for p in (0, 1, 2, 3, 0.5, 1.5, inf, -inf)
    ],
    *[(f"norm_{p}_dim", _norm_of(p, dim=1), [M], False, True) for p in (1, 2, 3, 0.5, 1.5, inf)],
    ("norm_zero", lambda L, x: x.norm(), [np.zeros(3)], True, True),
    ("norm_inf_nan", lambda L, x: x.norm(inf), [np.array([1.0, nan, -1.0])], False, True),
    # prod with zeros
    ("prod_no_zero", lambda L, x: x.prod(), [np.array([1.5, -2.0, 3.0])], True, True),
    ("prod_one_zero", lambda L, x: x.prod(), [np.array([1.5, 0.0, 3.0])], "ones", True),
    ("prod_two_zeros", lambda L, x: x.prod(), [np.array([0.0, 2.0, 0.0])], "ones", True),
    ("prod_dim_zeros", lambda L, x: x.prod(1), [M], "ones", True),
    # pow: exponent 0, masks at a zero base
    ("pow_0", lambda L, x: x**0, [FINITE], True, True),
    ("pow_2", lambda L, x: x**2, [FINITE], True, True),
    ("pow_half_sqrt", lambda L, x: (x.abs() ** 0.5).sqrt(), [FINITE], False, True),
    (
        "pow_tensor",
        lambda L, x, y: x.abs() ** y,
        [FINITE, np.array([0.0, 2, 0, -1, 0.5, 3])],
        True,
        True,
    ),
    ("pow_zero_base", lambda L, y: 0.0**y, [np.array([0.0, 1.0, 2.0, -1.0])], True, True),
    # other selections
    ("trace", lambda L, x: x[:, :3].trace(), [M], True, True),
    ("where", lambda L, x, y: L.where(x > 0.5, x, y), [X, Y], True, True),
    ("masked_fill", lambda L, x: x.masked_fill(x > 1, 0.0).sqrt(), [X], True, True),
    ("abs_sqrt", lambda L, x: x.abs().sqrt(), [X], True, True),
    ("atan2", lambda L, x, y: L.atan2(x, y), [X, Y], True, True),
    ("logsumexp", lambda L, x: x.logsumexp(1), [M], True, True),
    ("softmax", lambda L, x: x.softmax(0), [M], True, True),
    *[
        (
            f"{name}_inf_grad",
            _method_then_sqrt(name),
            [X],
            True,
            True,
        )
        for name in ("sign", "floor", "ceil", "round", "trunc")
    ],
]


@pytest.mark.parametrize(
    ("name", "fn", "inputs", "second", "forward"), CASES, ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("go", ["ones", "inf", "nan"])
def test_gradients_match_torch_with_special_values(name, fn, inputs, second, forward, go):
    second = second is True or (second == "ones" and go == "ones")
    compare(fn, inputs, go=go, second=second, tangents="auto" if forward and go == "ones" else None)


def _setitem(L, x):
    y = x * 1
    y[x > 1] = 0.0
    return y.sqrt()


def _setitem_tensor(L, x, v):
    y = x * 1
    y[1:3] = v
    return y.sqrt()


def _fill(L, x):
    y = x * 1
    y[:2].fill_(4.0)
    return y.sqrt()


def _zero(L, x):
    y = x * 1
    y[2:].zero_()
    return y.sqrt()


def _copy(L, x, v):
    y = x * 1
    y[:2].copy_(v)
    return y.sqrt()


@pytest.mark.parametrize(
    ("fn", "inputs"),
    [
        (_setitem, [FINITE]),
        (_setitem_tensor, [FINITE, np.array([4.0, 9.0])]),
        (_fill, [FINITE]),
        (_zero, [FINITE]),
        (_copy, [FINITE, np.array([4.0, 9.0])]),
    ],
    ids=["setitem", "setitem_tensor", "fill_", "zero_", "copy_"],
)
@pytest.mark.parametrize("go", ["ones", "inf"])
def test_overwritten_elements_get_a_selected_zero(fn, inputs, go):
    compare(fn, inputs, go=go, second=fn in (_setitem, _setitem_tensor))


def test_in_place_on_a_view_with_create_graph_selects_its_zeros():
    compare(_zero, [FINITE], go="ones", second=True)


def test_relu_second_order_and_hessian_have_no_nan():
    """relu's gradient is a where, so create_graph=True gives the same zeros as without."""
    x = gt.tensor([-1.0, 4.0, 0.0], dtype=gt.float64, requires_grad=True)
    (g,) = ag.grad(x.relu().sqrt().sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.25, 0.0]
    (g2,) = ag.grad(g.sum(), x)
    assert g2.tolist() == [0.0, -0.03125, 0.0]
    # the Hessian of sum(relu(t)^3), row by row through double backward (functional's
    # hessian lives a layer above; tests/ at the root run it on the full stack)
    t = gt.tensor([-1.0, 2.0], dtype=gt.float64, requires_grad=True)
    (g,) = ag.grad(t.relu().pow(3).sum(), t, create_graph=True)
    rows = [ag.grad(g[i], t, retain_graph=True)[0].tolist() for i in range(2)]
    assert rows == [[0.0, 0.0], [0.0, 12.0]]


# 0-d inputs reduced over dim 0 (Note [Dims of a 0-d tensor]): torch keeps them 0-d
ZERO_D = [
    ("amax", lambda L, x: x.amax(dim=0)),
    ("amin", lambda L, x: x.amin(dim=0)),
    ("max", lambda L, x: x.max(dim=0)[0]),
    ("min", lambda L, x: x.min(dim=-1, keepdim=True)[0]),
    ("logsumexp", lambda L, x: x.logsumexp(dim=0)),
    ("norm", lambda L, x: x.norm(dim=0)),
    ("norm_inf", lambda L, x: x.norm(inf, dim=0)),
    ("std", lambda L, x: x.std(dim=0)),
    ("var", lambda L, x: x.var(dim=0, keepdim=True)),
    ("var_c0", lambda L, x: x.var(dim=0, correction=0)),
    ("sum", lambda L, x: x.sum(dim=0)),
    ("mean", lambda L, x: x.mean(dim=0)),
    ("prod", lambda L, x: x.prod(dim=0)),
    ("softmax", lambda L, x: x.softmax(dim=0)),
    ("cumsum", lambda L, x: x.cumsum(dim=0)),
]


@pytest.mark.parametrize(("name", "fn"), ZERO_D, ids=[c[0] for c in ZERO_D])
def test_zero_d_reductions_over_dim_0(name, fn):
    if name in ("std", "var"):
        with pytest.warns(UserWarning):  # torch warns about the degrees of freedom
            compare(fn, [np.array(3.0)], second=True, tangents=[np.array(1.0)])
        return
    compare(fn, [np.array(3.0)], second=True, tangents=[np.array(1.0)])


def test_norm_of_order_0_has_no_gradient_even_when_expanded():
    """torch's norm_backward returns an undefined gradient for p=0: the leaf keeps None."""
    for lib in (GS, torch):
        x = lib.ones(3, requires_grad=True)
        x.expand(2, 3).norm(p=0).backward()
        assert x.grad is None, lib.__name__


def test_masked_setitem_into_a_tensor_that_needs_no_grad():
    """``x[mask] = v`` where only ``v`` requires grad (the written tensor is a plain one)."""
    results = []
    for lib in (GS, torch):
        x = lib.zeros(2, 3)
        v = lib.tensor(2.0, requires_grad=True)
        x[:, lib.tensor([True, False, True])] = v
        (x * lib.arange(6.0).reshape(2, 3)).sum().backward()
        results.append(v.grad.item())
    assert results[0] == results[1] == 10.0


def test_floor_divide_records_a_not_implemented_node():
    """torch 2.13: the result requires grad, its node is NotImplemented, backward raises."""
    for lib in (GS, torch):
        x = lib.tensor([3.0, 4.0], requires_grad=True)
        for y in (lib.floor_divide(x, 2), x // lib.tensor(2.0), x.floor_divide(2)):
            assert y.requires_grad and not y.is_leaf, lib.__name__
            assert type(y.grad_fn).__name__ == "NotImplemented"
            assert y.grad_fn.next_functions[0][0] is not None
            assert y.tolist() == [1.0, 2.0]
            with pytest.raises(
                RuntimeError, match="derivative for aten::floor_divide is not implemented"
            ):
                y.sum().backward()
        with lib.no_grad():
            assert not lib.floor_divide(x, 2).requires_grad
        assert not lib.floor_divide(lib.tensor([3, 4]), 2).requires_grad
        z = x * 1
        z.floor_divide_(2)
        assert type(z.grad_fn).__name__ == "NotImplemented"
    # forward mode: torch raises NotImplementedError naming the op
    for fw, lib in ((ag.forward_ad, gt), (torch.autograd.forward_ad, torch)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([3.0]), lib.tensor([1.0]))
            with pytest.raises(NotImplementedError, match="forward AD with .*floor_divide"):
                lib.floor_divide(d, 2)


def test_remainder_double_backward_does_not_go_through_floor_divide():
    compare(lambda L, x, y: L.remainder(x, y) * y, [np.array([5.0, -3.5]), np.array([2.0, 1.5])])
