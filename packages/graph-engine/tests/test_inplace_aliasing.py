"""In-place ops whose operand aliases their target, and what a node saves (issue 11).

An in-place op saves its operands *before* it writes (Note [In-place ops save their
operands before the write]): an operand sharing storage with the target is then seen as
modified and backward raises torch's error, never a silently wrong gradient.  A node
saves only what the gradient of an input that requires grad reads (Note [Save what a
gradient needs]), as torch does, so no false "modified by an inplace operation".
"""

from __future__ import annotations

import gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as gt
import pytest
import torch

MODIFIED = "modified by an inplace operation"


def _run(lib, fn):
    """fn(lib) -> gradient; returns ("ok", list) or ("raise", message)."""
    try:
        g = fn(lib)
    except RuntimeError as e:
        return "raise", str(e)
    return "ok", g.tolist()


@pytest.mark.parametrize("op", ["mul_", "div_", "pow_", "atan2_", "sub_", "add_"])
@pytest.mark.parametrize("operand", ["self", "detached", "alias"])
def test_in_place_op_whose_operand_aliases_its_target_agrees_with_torch(op, operand):
    def fn(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = x * 1
        other = {"self": y, "detached": y.detach(), "alias": y[:]}[operand]
        getattr(y, op)(other)
        y.sum().backward()
        return x.grad

    got, want = _run(gt, fn), _run(torch, fn)
    assert got[0] == want[0], (got, want)
    if want[0] == "raise":
        assert MODIFIED in got[1] and MODIFIED in want[1]
    else:
        assert got[1] == pytest.approx(want[1])


def test_mul_by_itself_raises_instead_of_a_wrong_gradient():
    x = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    y.mul_(y)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()  # was x.grad = [2, 6, 12]; the right value is [2, 4, 6]
    assert x.grad is None


def test_overlapping_views_never_give_a_silent_gradient():
    x = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    try:
        y[:2].mul_(y[1:])  # torch refuses this at once; gradstack refuses at backward
    except RuntimeError as e:
        assert "single memory location" in str(e)
        return
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_in_place_op_with_an_independent_operand_still_differentiates():
    x = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64, requires_grad=True)
    w = gt.tensor([4.0, 5.0, 6.0], dtype=gt.float64, requires_grad=True)
    y = x * 1
    y.mul_(w)
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 5.0, 6.0]
    assert w.grad.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "case",
    ["mv_vec", "mv_mat", "mul_a", "mm_b", "bmm_a", "dot_a", "outer_b", "div_a", "mul_scalar"],
)
def test_a_value_no_wanted_gradient_reads_is_not_saved(case):
    """Writing in place into an operand whose value no wanted gradient needs: torch runs."""

    def fn(lib):
        f = lib.float64
        m = lib.arange(1.0, 7.0, dtype=f).reshape(2, 3)
        v = lib.tensor([1.0, 2.0, 3.0], dtype=f)
        r = lib.tensor([1.0, -1.0, 2.0], dtype=f, requires_grad=True)
        if case == "mv_vec":  # only the vector requires grad: the matrix is saved, not v
            vv = r * 1
            out = lib.mv(m, vv)
            vv.mul_(2)
        elif case == "mv_mat":
            mm = lib.ones(2, 3, dtype=f, requires_grad=True) * 1
            out = lib.mv(mm, v)
            mm.mul_(3)
        elif case == "mul_a":
            a = r * 1
            out = a * v
            a.mul_(2)
        elif case == "mm_b":
            a = lib.ones(2, 3, dtype=f, requires_grad=True)
            b = m.t() * 1
            out = a.mm(b)
            b.mul_(2)
        elif case == "bmm_a":
            a = m.reshape(1, 2, 3) * 1
            b = (r * 1).reshape(1, 3, 1)
            out = a.bmm(b)
            a.mul_(2)
        elif case == "dot_a":
            a = v * 1
            out = lib.dot(a, r)
            a.add_(1)
        elif case == "outer_b":
            b = v * 1
            out = lib.outer(r, b)
            b.mul_(3)  # r's gradient reads b: both raise
        elif case == "div_a":
            a = r * 1
            out = a / v
            a.mul_(2)
        else:  # tensor * number saves only the number
            a = r * 1
            out = a * 3.0
            a.mul_(2)
        out.sum().backward()
        return r.grad if r.grad is not None else lib.zeros(1)

    got, want = _run(gt, fn), _run(torch, fn)
    assert got[0] == want[0], (got, want)
    if want[0] == "ok":
        assert got[1] == pytest.approx(want[1])
    else:
        assert MODIFIED in got[1]


def test_the_saved_values_of_a_node_follow_the_gradients_it_needs():
    a = gt.tensor([1.0, 2.0], requires_grad=True)
    b = gt.tensor([3.0, 4.0])
    node = (a * b).grad_fn
    assert node.saved[0] is None  # a: only b's gradient reads it, and b needs none
    assert node.saved[1] is not None


def test_in_place_ops_with_independent_operands_pass_gradcheck():
    from gradstack_autograd import gradcheck, gradgradcheck

    def fn(x, w):
        y = x * 1
        y.mul_(w)
        y.div_(w + 3.0)
        y.atan2_(w + 2.0)
        y.pow_(w.abs() + 1.0)  # (last: it saves its result, as torch's pow_)
        return y

    x = gt.tensor([0.5, 1.5, 2.5], dtype=gt.float64, requires_grad=True)
    w = gt.tensor([0.25, 0.75, 1.25], dtype=gt.float64, requires_grad=True)
    assert gradcheck(fn, (x, w))
    assert gradgradcheck(fn, (x, w))


@pytest.mark.parametrize("op", ["bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_"])
@pytest.mark.parametrize("leaf", ["leaf", "view_of_leaf", "non_leaf"])
def test_bitwise_in_place_on_float_that_requires_grad_raises_as_torch(op, leaf):
    # torch checks the leaf first, then the float kernel raises NotImplementedError
    errors = []
    for lib in (gt, torch):
        x = lib.ones(2, requires_grad=True)
        t = {"leaf": x, "view_of_leaf": x[:1], "non_leaf": x * 1}[leaf]
        with pytest.raises((RuntimeError, NotImplementedError)) as info:
            getattr(t, op)(*([] if op == "bitwise_not_" else [t]))
        errors.append(info.type)
    assert errors[0] is errors[1]


def test_logical_not_in_place_on_a_float_leaf_runs_as_torch():
    for lib in (gt, torch):
        x = lib.ones(2, requires_grad=True)
        x.logical_not_()
        assert x.tolist() == [0.0, 0.0] and x.requires_grad and x.grad_fn is None
