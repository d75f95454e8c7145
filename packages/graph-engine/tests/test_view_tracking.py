"""Views and in-place writes, against torch 2.13 (issue 11: GE2, GE3, GE11, GE12, GE16,
GE17, TC26; Note [Views follow in-place writes on their base], _views.pyx)."""

from __future__ import annotations

import types

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
import torch

# gradstack under torch's names (L.autograd.grad, L.no_grad), as the programs spell them
GS = types.SimpleNamespace(
    **{name: getattr(gt, name) for name in dir(gt) if not name.startswith("_")},
    autograd=types.SimpleNamespace(grad=ag.grad),
    no_grad=ag.no_grad,
)


def _outcome(lib, fn):
    try:
        r = fn(lib)
    except (RuntimeError, TypeError, IndexError) as e:
        return ("raise", type(e).__name__, str(e))
    return ("ok", r)


def _num(t):
    return None if t is None else np.asarray(t.detach().tolist(), dtype=np.float64)


def test_gradient_through_a_view_sees_a_later_write_into_its_base():
    def fn(lib):
        x = lib.ones(2, 4, dtype=lib.float64, requires_grad=True)
        v2 = x.cos()
        v7 = v2[...]
        v2[0] = 3.0
        v7.backward(lib.ones(2, 4, dtype=lib.float64))
        return _num(x.grad)

    got, want = fn(GS), fn(torch)
    np.testing.assert_allclose(got, want)
    assert (got[0] == 0).all()  # the written row no longer depends on x (was -sin(1))


@pytest.mark.parametrize("write", ["base_setitem", "base_mul_", "sibling_view"])
def test_views_of_a_written_base_match_torch(write):
    def fn(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([5.0, 6.0, 7.0, 8.0], dtype=lib.float64, requires_grad=True)
        b = x * 1
        v = b[1:3]
        if write == "base_setitem":
            b[:2] = w[:2] * 2
        elif write == "base_mul_":
            b.mul_(w)
        else:
            b[2:].mul_(w[2:])
        (v * lib.tensor([10.0, 100.0], dtype=lib.float64)).sum().backward()
        return _num(x.grad), _num(w.grad), type(v.grad_fn).__name__

    got, want = fn(GS), fn(torch)
    for g, t in zip(got[:2], want[:2]):
        np.testing.assert_allclose(g if g is not None else 0, t if t is not None else 0)
    assert got[2] == want[2] == "AsStridedBackward0"


def test_a_view_of_a_plain_tensor_requires_grad_after_a_write_that_does():
    for lib in (GS, torch):
        base = lib.ones(1, 1)
        v = base.mT
        base[...] = lib.tensor([[0.5]], requires_grad=True)
        assert v.requires_grad and v.grad_fn is not None, lib


def test_views_made_under_no_grad_follow_torchs_rules():
    for lib in (GS, torch):
        x = lib.ones(3, requires_grad=True) * 1
        with lib.no_grad():
            v = x[1:]
        assert (v.requires_grad, v.grad_fn, v.is_leaf) == (True, None, True), lib
        y = v * 2  # records a node that sends nothing back (torch: next (None, 0))
        assert y.requires_grad
        assert y.grad_fn.next_functions[0][0] is None
        with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
            v.mul_(2)
        with lib.no_grad():
            v.mul_(2)  # both inside no_grad: allowed
    leaf = gt.ones(3, requires_grad=True)
    with ag.no_grad():
        lv = leaf[1:]
    assert lv.requires_grad
    (lv * 2).sum().backward()
    assert leaf.grad is None and lv.grad is None  # as torch


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda x: x.split(2), "Split"),
        (lambda x: x.chunk(2), "Split"),
        (lambda x: x.reshape(2, 2).unbind(), "Unbind"),
        (lambda x: x.split([1, 3]), "SplitWithSizes"),
    ],
)
def test_in_place_on_one_of_several_views_is_refused(make, name):
    for lib in (GS, torch):
        x = lib.ones(4, requires_grad=True) * 1
        outs = make(x)
        with pytest.raises(RuntimeError) as e:
            outs[1].mul_(2)
        assert str(e.value).startswith(f"Output 1 of {name} is a view and is being modified")
        plain = make(lib.ones(4) * 1)
        plain[0].mul_(2)  # nothing requires grad: allowed


@pytest.mark.parametrize("make", [lambda x: x.split(4), lambda x: x.chunk(1)])
def test_in_place_on_the_only_view_of_a_split_is_refused_too(make):
    for lib in (GS, torch):
        (only,) = make(lib.ones(4, requires_grad=True) * 1)
        with pytest.raises(RuntimeError, match="^Output 0 of Split is a view"):
            only.mul_(2)


@pytest.mark.parametrize("kind", ["no_grad", "split"])
def test_a_no_grad_or_split_view_of_a_written_base_may_not_be_used(kind):
    """torch gives such a view no new history: using it with grad mode on raises."""
    messages, values = [], []
    for lib in (GS, torch):
        x = lib.ones(4, dtype=lib.float64, requires_grad=True)
        y = x * 1
        if kind == "no_grad":
            with lib.no_grad():
                v = y[1:]
        else:
            v = y.split(2)[0]
        y[2:].mul_(3)  # written through another view of the base
        with pytest.raises(RuntimeError, match="its base or another view of its base") as e:
            (v * 2).sum().backward()
        messages.append(str(e.value))
        assert x.grad is None
        with lib.no_grad():
            values.append((v * 2).tolist())  # under no_grad it may be used
    assert messages[0] == messages[1]
    assert values[0] == values[1]


def test_non_differentiable_in_place_op_runs_on_a_leaf_that_requires_grad():
    results = []
    for lib in (GS, torch):
        x = lib.ones(3, requires_grad=True)
        x.logical_not_()
        results.append((x.tolist(), x.requires_grad, x.is_leaf))
        y = lib.ones(3, requires_grad=True) * 1
        fn = y.grad_fn
        y.logical_not_()
        assert y.grad_fn is fn  # torch keeps the node
    assert results[0] == results[1]


def test_argument_errors_come_before_the_leaf_error():
    for lib in (GS, torch):
        x0 = lib.tensor(1.0, requires_grad=True)
        with pytest.raises(IndexError):
            x0[-2:] = lib.tensor(2.0)
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable"):
            x.add_(1.0)  # valid arguments: the leaf error
        assert x.tolist() == [1.0, 1.0, 1.0]


def test_in_place_on_a_0d_view_then_backward():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = (x * 1)[1]
        y.sigmoid_()
        y.backward()
        return _num(x.grad)

    np.testing.assert_allclose(fn(GS), fn(torch))


def test_in_place_on_a_0d_view_with_create_graph():
    def fn(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b = x * x
        b[1].mul_(3)
        (g,) = lib.autograd.grad(b.sum(), [x], create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), [x])
        return _num(g), _num(h)

    for a, b in zip(fn(GS), fn(torch)):
        np.testing.assert_allclose(a, b)


def test_copy_slices_gradient_of_a_value_with_extra_leading_dims():
    def fn(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        v = lib.zeros(1, 3, dtype=lib.float64) * 1
        v[None, None, :] = x.reshape(1, 1, 1, 1, 1, 3) * 2
        (g,) = lib.autograd.grad((v * v).sum(), [x], create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), [x])
        return _num(g), _num(h)

    for a, b in zip(fn(GS), fn(torch)):
        np.testing.assert_allclose(a, b)


def test_copy_slices_under_create_graph_selects_zeros_with_infinite_gradients():
    def fn(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        b = x * x
        b[1:].zero_()
        go = lib.tensor([float("inf"), float("inf"), 1.0], dtype=lib.float64)
        (g,) = lib.autograd.grad(b, [x], go, create_graph=True)
        return _num(g)

    got, want = fn(GS), fn(torch)
    np.testing.assert_array_equal(got, want)
    assert not np.isnan(got).any()


def test_a_hook_that_changes_the_gradient_dtype_raises_torchs_error():
    for lib in (GS, torch):
        x = lib.ones(3, requires_grad=True)

        def to_double(g):
            return g.double()

        x.register_hook(to_double)
        with pytest.raises(RuntimeError, match="hook 'to_double' has changed the type of value"):
            (x * 2).sum().backward()
        y = lib.ones(3, requires_grad=True) * 1
        y.register_hook(to_double)
        with pytest.raises(RuntimeError, match="has changed the type of value"):
            (y * 2).sum().backward()


def test_missing_derivatives_raise_torchs_error_naming_the_op():
    for lib in (GS, torch):
        x = lib.tensor(1.0, requires_grad=True)
        y = x * x
        y.floor_divide_(0.5)
        with pytest.raises(RuntimeError, match=r"derivative for aten::floor_divide_ is not"):
            y.backward()


def test_gradients_through_views_of_a_written_base_pass_gradcheck():
    def fn(x, w):
        b = x * 1
        v = b[1:3]  # made before the writes: its gradient must see them
        t = b.t()
        b[0].mul_(w[0])
        b[1:, 1:].mul_(w[1:, 1:])
        return v.sin().sum() + (t * t).sum()

    x = gt.tensor(np.arange(1.0, 10.0).reshape(3, 3) / 7, dtype=gt.float64, requires_grad=True)
    w = gt.tensor(np.linspace(-1.0, 2.0, 9).reshape(3, 3), dtype=gt.float64, requires_grad=True)
    assert ag.gradcheck(fn, (x, w))
    assert ag.gradgradcheck(fn, (x, w))


def test_ravel_records_torch_s_nodes():
    names = []
    for lib in (GS, torch):
        x = lib.ones(3, 2, requires_grad=True) * 1
        r = x.t().ravel()
        names.append((type(r.grad_fn).__name__, type(r.grad_fn.next_functions[0][0]).__name__))
    assert names[0] == names[1] == ("ViewBackward0", "CloneBackward0")


def test_ravel_under_no_grad_of_a_leaf_requires_grad_as_torch():
    # fuzz seed 2 #124: ravel of a contiguous leaf is a view of it (requires_grad True)
    flags = []
    for lib in (GS, torch):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            r = x.ravel()
        flags.append((r.requires_grad, r.grad_fn is None, r._base is x))
    assert flags[0] == flags[1] == (True, True, True)
