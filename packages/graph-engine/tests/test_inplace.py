"""In-place correctness: version checks and their messages, leaves, views (CopySlices)."""

from __future__ import annotations

import inspect
import os
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

HERE = os.path.basename(__file__)


def _line():
    """The line number of the caller (for the file:line an error message must name)."""
    return inspect.currentframe().f_back.f_lineno


# ---------------------------------------------------------------------------------------
# saved tensors modified in place


def test_modified_saved_input_names_tensor_node_versions_and_where():
    x = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    y = h.sin()  # SinBackward0 saves h at version 0
    h.add_(1)
    line = _line() - 1  # the line of add_ above
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert msg.startswith(
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation"
    )  # torch's words
    assert "[gradstack.float32 [3]]" in msg  # dtype and shape
    assert "SinBackward0" in msg  # the node that saved it
    assert "is at version 1; expected version 0 instead" in msg
    assert f"add_ at {__file__}:{line}" in msg  # which op, where
    assert HERE in msg


def test_modified_saved_output_names_the_node_that_made_it():
    x = gt.tensor([[0.5, 1.0]], dtype=gt.float64, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its output
    y.mul_(2)
    y.mul_(3)
    line = _line() - 1  # the line above
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    msg = str(info.value)
    assert "[gradstack.float64 [1, 2]], which is output 0 of ExpBackward0" in msg
    assert "is at version 2; expected version 0 instead" in msg
    assert f"mul_ at {__file__}:{line}" in msg


def test_modification_through_a_view_or_detach_is_caught():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.exp() * h  # MulBackward0 saves h
    h.detach()[0] = 5.0
    line = _line() - 1  # the write above (detach shares the version)
    with pytest.raises(RuntimeError, match=rf"setitem\w* at .*{HERE}:{line}"):
        y.sum().backward()
    h2 = x * 1
    y2 = h2.exp() * h2
    h2[1:].zero_()
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y2.sum().backward()


def test_data_writes_are_invisible_to_version_checks():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = (h * h).sum()
    h.data.mul_(10)  # as in torch: .data is outside autograd
    y.backward()
    assert x.grad.tolist() == [20.0, 40.0]


def test_in_place_under_no_grad_on_a_saved_tensor_is_still_caught():
    w = gt.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    with ag.no_grad():
        w.sub_(0.5)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_version_error_carries_the_forward_trace_in_anomaly_mode():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ag.detect_anomaly():
            h = x * 2
            y = h.sin()
            line = _line() - 1  # the op that saved h
            h.add_(1)
            with pytest.raises(RuntimeError) as info:
                y.sum().backward()
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Traceback of forward call that caused the error" in notes
    assert f'{HERE}", line {line}' in notes


# ---------------------------------------------------------------------------------------
# leaves


def test_in_place_on_a_leaf_that_requires_grad_raises():
    a = gt.linspace(0.0, 2.0 * np.pi, steps=25, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used "
        r"in an in-place operation \(sin_\)",
    ):
        gt.sin_(a)  # the tutorial's torch.sin_(a)
    assert a._version == 0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a.add_(1)
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being used in an in-place operation",
    ):
        a[:3].mul_(2)


def test_in_place_on_leaves_under_no_grad_works():
    w = gt.tensor([1.0, 2.0], requires_grad=True)
    with ag.no_grad():
        w.mul_(3)
        w[0] = 10.0
        gt.sin_(w)
    assert w.is_leaf and w.requires_grad and w._version == 3
    np.testing.assert_allclose(w.detach().numpy(), np.sin([10.0, 6.0]), rtol=1e-6)
    (w * w).sum().backward()  # a new graph sees the new values
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.sin([10.0, 6.0]), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# in-place on non-leaves


def test_in_place_on_a_non_leaf_when_nothing_saved_needs_the_old_value():
    x = gt.tensor([0.5, 1.5], dtype=gt.float64, requires_grad=True)
    y = x.sin()  # saves x, not y
    y.add_(1)
    y.mul_(x)  # mul_ keeps the old y for x's gradient
    assert type(y.grad_fn).__name__ == "MulBackward0" and y._version == 2
    y.sum().backward()
    xv = np.array([0.5, 1.5])
    # d/dx [(sin x + 1) * x] = cos x * x + sin x + 1
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xv) * xv + np.sin(xv) + 1, rtol=1e-14)


@pytest.mark.parametrize(
    "op",
    [
        "add_",
        "mul_",
        "div_",
        "pow_",
        "exp_",
        "tanh_",
        "clamp_",
        "masked_fill_",
        "copy_",
        "fill_",
        "zero_",
    ],
)
def test_in_place_ops_on_non_leaves_match_torch(op):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    xv, wv = rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, (3,))

    def run(lib):
        x = lib.from_numpy(xv.copy()).requires_grad_()
        w = lib.from_numpy(wv.copy()).requires_grad_()
        y = x * 1.5
        calls = {
            "add_": lambda: y.add_(w, alpha=2),
            "mul_": lambda: y.mul_(w),
            "div_": lambda: y.div_(w),
            "pow_": lambda: y.pow_(w),
            "exp_": lambda: y.exp_(),
            "tanh_": lambda: y.tanh_(),
            "clamp_": lambda: y.clamp_(1.0, 1.8),
            "masked_fill_": lambda: y.masked_fill_(lib.from_numpy(xv > 1.0), 0.25),
            "copy_": lambda: y.copy_(w * 2),
            "fill_": lambda: y.fill_(3.0),
            "zero_": lambda: y.zero_(),
        }
        out = calls[op]()
        assert out is y
        (y * x).sum().backward()
        return (
            type(y.grad_fn).__name__,
            x.grad.numpy().copy(),
            None if w.grad is None else w.grad.numpy().copy(),
        )

    name, gx, gw = run(gt)
    tname, tgx, tgw = run(torch)
    assert name == tname
    np.testing.assert_allclose(gx, tgx, rtol=1e-12)
    if tgw is None:
        assert gw is None or not gw.any()
    else:
        np.testing.assert_allclose(gw, tgw, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# views of non-leaves: CopySlices


VIEWS = {
    "slice": lambda b: b[:, 1:],
    "select": lambda b: b[1],
    "transpose": lambda b: b.t(),
    "diagonal (strided)": lambda b: b.reshape(-1)[::4],
    "step slice": lambda b: b[:, ::2],
    "narrow": lambda b: b.narrow(0, 1, 2),
    "view of a view": lambda b: b[1:][:, 0],
    "unsqueeze": lambda b: b.unsqueeze(0)[:, 0],
}


def _view_inplace(lib, view, second_arg):
    x = lib.from_numpy(np.arange(1.0, 10.0).reshape(3, 3)).requires_grad_()
    w = lib.from_numpy(np.array([0.5, -1.5, 2.0])).requires_grad_()
    b = x * 1
    v = view(b)
    other = w[: v.shape[-1]] if second_arg else 3.0
    v.mul_(other)
    (b * b.detach().exp().reciprocal()).sum().backward()
    return (
        type(b.grad_fn).__name__,
        type(v.grad_fn).__name__,
        b.detach().numpy().copy(),
        x.grad.numpy().copy(),
        None if w.grad is None else w.grad.numpy().copy(),
    )


@pytest.mark.parametrize("second_arg", [False, True], ids=["scalar", "tensor arg"])
@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_in_place_on_a_view_rewrites_the_base_history(kind, second_arg):
    torch = pytest.importorskip("torch")
    ours = _view_inplace(gt, VIEWS[kind], second_arg)
    theirs = _view_inplace(torch, VIEWS[kind], second_arg)
    assert ours[:2] == theirs[:2] == ("CopySlices", "AsStridedBackward0")
    for a, b in zip(ours[2:], theirs[2:]):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_view_gradient_after_in_place_on_its_base():
    x = gt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float64, requires_grad=True)
    b = x * 1
    v = b[0]
    b[1].mul_(10)  # another view of the same base is written
    assert type(b.grad_fn).__name__ == "CopySlices"
    (v * 3 + b.sum()).sum().backward()  # 3 (v0 + v1) + 2 sum(b)
    assert x.grad.tolist() == [[5.0, 5.0], [20.0, 20.0]]


def test_a_view_of_a_leaf_that_does_not_require_grad():
    base = gt.zeros(2, 3)
    w = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base[1].copy_(w * 2)  # base starts recording here
    assert base.requires_grad and type(base.grad_fn).__name__ == "CopySlices"
    (base * base).sum().backward()
    assert w.grad.tolist() == [8.0, 16.0, 24.0]


def test_double_backward_through_an_in_place_op_on_a_view():
    torch = pytest.importorskip("torch")

    def run(lib):
        x = lib.tensor([[0.5, 1.0], [1.5, 2.0]], dtype=lib.float64, requires_grad=True)
        b = x * x
        b[0].mul_(b[1].detach() + 1)
        v = b[1]
        v.exp_()
        (g,) = (
            lib.autograd.grad((b * b).sum(), x, create_graph=True)
            if lib is torch
            else ag.grad((b * b).sum(), x, create_graph=True)
        )
        (h,) = lib.autograd.grad(g.sum(), x) if lib is torch else ag.grad(g.sum(), x)
        return g.detach().numpy().copy(), h.numpy().copy()

    (g, h), (tg, th) = run(gt), run(torch)
    np.testing.assert_allclose(g, tg, rtol=1e-12)
    np.testing.assert_allclose(h, th, rtol=1e-12)


@pytest.mark.parametrize("kind", sorted(VIEWS))
def test_gradgradcheck_through_in_place_on_views(kind):
    def f(x, w):
        b = x * x
        v = VIEWS[kind](b)
        v.mul_(w[: v.shape[-1]])
        return b.sin()

    rng = np.random.default_rng(1)
    x = gt.from_numpy(rng.uniform(0.5, 1.5, (3, 3))).requires_grad_()
    w = gt.from_numpy(rng.uniform(0.5, 1.5, (3,))).requires_grad_()
    assert ag.gradcheck(f, (x, w))
    assert ag.gradgradcheck(f, (x, w))
