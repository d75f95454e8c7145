"""Custom ``Function``: ctx API, in-place and non-differentiable outputs, double backward."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import Function, once_differentiable


def f64(values, requires_grad=True):
    return gt.tensor(values, dtype=gt.float64, requires_grad=requires_grad)


class Cube(Function):
    """x^3 with a backward written in differentiable ops (double backward works)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class CubeCtxAttr(Function):
    """The same, keeping an intermediate on ctx: a constant for the double backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.square = x * x
        return x * ctx.square

    @staticmethod
    def backward(ctx, g):
        return g * 3 * ctx.square


# ---------------------------------------------------------------------------------------
# the basics


def test_save_for_backward_and_node():
    x = f64([0.5, -2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward" and not y.is_leaf
    assert y.grad_fn.next_functions[0][0].variable is x
    assert len(y.grad_fn.saved_tensors) == 1 and y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    assert x.grad.tolist() == [0.75, 12.0]
    assert ag.gradcheck(Cube.apply, (f64([0.3, -1.1, 2.0]),))


def test_saved_tensors_are_version_checked_and_freed():
    x = f64([1.0, 2.0])
    h = x * 1
    y = Cube.apply(h)
    h.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*CubeBackward"):
        y.sum().backward()
    y2 = Cube.apply(x * 1)
    y2.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y2.grad_fn.saved_tensors


def test_save_for_backward_accepts_tensors_and_none_only():
    class SaveNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            none, x = ctx.saved_tensors
            assert none is None and x is not None
            return g * 2

    x = f64([1.0])
    SaveNone.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0]

    class SaveNumber(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x

    with pytest.raises(TypeError, match="save_for_backward can only save tensors"):
        SaveNumber.apply(x)


def test_no_input_requires_grad_means_no_node():
    y = Cube.apply(f64([2.0], requires_grad=False))
    assert y.grad_fn is None and not y.requires_grad and y.tolist() == [8.0]


def test_forward_runs_under_no_grad_and_non_tensor_arguments_get_none():
    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, name):
            assert not ag.is_grad_enabled()
            inner = x * k
            assert inner.grad_fn is None
            ctx.k = k
            return inner

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, None

    x = f64([1.0, 2.0])
    Scale.apply(x, 4.0, "label").sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_extra_none_gradients_are_allowed_extra_tensors_are_not():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    x = f64([1.0])
    Extra.apply(x).sum().backward()
    assert x.grad.tolist() == [1.0]

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(
        RuntimeError,
        match=r"TooManyBackward returned an incorrect number of "
        r"gradients \(expected 1, got 2\)",
    ):
        TooMany.apply(x).sum().backward()


def test_function_objects_are_not_instantiated():
    with pytest.raises(RuntimeError, match="call YourFunction.apply"):
        Cube()


def test_returning_an_input_unchanged_gives_a_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = f64([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and y.grad_fn.name() == "IdentityBackward" and x.grad_fn is None
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_multiple_outputs():
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    x = f64([0.3, 1.2])
    s, c = SinCos.apply(x)
    assert s.grad_fn is c.grad_fn and (s.output_nr, c.output_nr) == (0, 1)
    (s * 2 + c * 3).sum().backward()
    xv = np.array([0.3, 1.2])
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(xv) - 3 * np.sin(xv), rtol=1e-14)
    assert ag.gradcheck(lambda t: SinCos.apply(t), (f64([0.3, 1.2]),))


# ---------------------------------------------------------------------------------------
# ctx methods


def test_mark_dirty():
    class MulTwo_(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = f64([1.0, 3.0])
    b = a * 1
    version = b._version
    r = MulTwo_.apply(b)
    assert r is b and r.grad_fn.name() == "MulTwo_Backward" and b._version > version
    assert r.tolist() == [2.0, 6.0]
    (r * r).sum().backward()
    assert a.grad.tolist() == [8.0, 24.0]  # d/da (2a)^2 = 8a
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad has been used in an in-place operation",
    ):
        MulTwo_.apply(f64([1.0]))
    plain = f64([1.0], requires_grad=False)
    MulTwo_.apply(plain)  # no graph: still bumps the version
    assert plain._version == 2 and plain.tolist() == [2.0]


def test_mark_non_differentiable():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g_values, g_idx):
            (idx,) = ctx.saved_tensors
            assert g_idx.tolist() == [0, 0, 0]  # materialized zeros for the indices
            out = gt.zeros_like(g_values)
            out[idx] = g_values
            return out

    x = f64([3.0, 1.0, 2.0])
    values, idx = SortWithIndex.apply(x)
    assert values.requires_grad and not idx.requires_grad and idx.grad_fn is None
    (values * gt.tensor([1.0, 10.0, 100.0], dtype=gt.float64)).sum().backward()
    assert x.grad.tolist() == [100.0, 1.0, 10.0]


def test_set_materialize_grads():
    seen = []

    def make(materialize):
        class Two(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1 is None, g2 is None, None if g2 is None else g2.tolist()))
                total = g1 * 2
                return total if g2 is None else total + g2 * 3

        return Two

    x = f64([1.0, 2.0])
    a, _ = make(False).apply(x)
    a.sum().backward()
    a, _ = make(True).apply(x)
    a.sum().backward()
    assert seen == [(False, True, None), (False, False, [0.0, 0.0])]
    assert x.grad.tolist() == [4.0, 4.0]


def test_needs_input_grad():
    seen = []

    class Three(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g, g, None

    Three.apply(f64([1.0]), f64([2.0], requires_grad=False), 3.0).sum().backward()
    Three.apply(f64([1.0], requires_grad=False), f64([2.0]), 3.0).sum().backward()
    assert seen == [(True, False, False), (False, True, False)]


def test_setup_context_style():
    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k
            ctx.save_for_backward(x, output)

        @staticmethod
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            assert out.tolist() == (x * ctx.k).tolist()
            return g * ctx.k, None

    x = f64([1.0, 2.0])
    y = Scale.apply(x, 5.0)
    assert y.grad_fn.name() == "ScaleBackward"
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


# ---------------------------------------------------------------------------------------
# double backward


def test_double_backward_through_save_for_backward_is_right():
    x = f64([0.5, -2.0, 1.5])
    xv = x.detach().numpy().copy()
    (g,) = ag.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * xv**2, rtol=1e-15)
    (h,) = ag.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), 6 * xv, rtol=1e-15)
    (k,) = ag.grad(h.sum(), x)
    np.testing.assert_allclose(k.numpy(), [6.0] * 3)
    assert ag.gradgradcheck(Cube.apply, (f64([0.3, -1.1]),))


def test_double_backward_through_ctx_attributes_runs_as_in_torch():
    # Note [Tensors kept on ctx are constants of the backward graph]: torch runs it, and the
    # intermediate is a constant (pytorch#58509; the double-backward tutorial shows it)
    torch = pytest.importorskip("torch")

    class TorchCubeCtxAttr(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.square = x * x
            return x * ctx.square

        @staticmethod
        def backward(ctx, g):
            return g * 3 * ctx.square

    x, tx = f64([0.5, -2.0]), torch.tensor([0.5, -2.0], dtype=torch.float64, requires_grad=True)
    (g,) = ag.grad(CubeCtxAttr.apply(x).sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(TorchCubeCtxAttr.apply(tx).sum(), tx, create_graph=True)
    assert g.tolist() == tg.tolist() == [0.75, 12.0]
    assert g.requires_grad == tg.requires_grad
    # with a grad_output that requires grad, the second derivative sees ctx.square constant
    v, tv = f64([1.0, 2.0]), torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = ag.grad(CubeCtxAttr.apply(x), x, grad_outputs=v, create_graph=True)
    (tg,) = torch.autograd.grad(TorchCubeCtxAttr.apply(tx), tx, grad_outputs=tv, create_graph=True)
    hx, hv = ag.grad(g.sum(), (x, v), allow_unused=True)
    thx, thv = torch.autograd.grad(tg.sum(), (tx, tv), allow_unused=True)
    assert hx is None and thx is None
    assert hv.tolist() == thv.tolist() == [0.75, 12.0]


def test_ctx_attributes_that_are_inputs_or_integers_are_tracked():
    class KeepsInput(Function):
        @staticmethod
        def forward(ctx, x, idx):
            ctx.x = x  # an input: tracked properly
            ctx.idx = idx  # an integer tensor: no gradient
            ctx.k = 2.0
            return x[idx] * ctx.k

        @staticmethod
        def backward(ctx, g):
            out = gt.zeros_like(ctx.x)
            out[ctx.idx] = g * ctx.k * ctx.x[ctx.idx]
            return out, None

    x = f64([1.0, 2.0, 3.0])
    y = KeepsInput.apply(x, gt.tensor([0, 2]))
    (g,) = ag.grad(y.sum(), x, create_graph=True)
    assert g.detach().tolist() == [2.0, 0.0, 6.0]


def test_once_differentiable():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not ag.is_grad_enabled()  # runs under no_grad
            (y,) = ctx.saved_tensors
            return g * y

    x = f64([0.0, 1.0])
    y = Exp.apply(x)
    (g,) = ag.grad((y * y).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2 * np.exp([0.0, 2.0]), rtol=1e-15)
    assert g.requires_grad  # through y * y's part of the graph
    with pytest.raises(
        RuntimeError,
        match="trying to differentiate twice a function that was marked with @once_differentiable",
    ):
        g.sum().backward()
    # as in torch, grad(..., x) does not even reach the error node: nothing leads to x
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ag.grad(g.sum(), x)
    # ctx attributes do not matter for a once_differentiable backward
    (g1,) = ag.grad(Exp.apply(x).sum(), x)
    assert g1.tolist() == pytest.approx([1.0, np.e])
