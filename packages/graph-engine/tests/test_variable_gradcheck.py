"""``Variable`` (deprecated, returns Tensors) and ``gradcheck``/``gradgradcheck``."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import Function, GradcheckError, Variable, gradcheck, gradgradcheck
from gradstack_autograd.gradcheck import get_analytical_jacobian, get_numerical_jacobian

# ---------------------------------------------------------------------------------------
# Variable


def test_variable_returns_tensors():
    t = gt.tensor([1.0, 2.0])
    v = Variable(t)
    assert type(v) is gt.Tensor and v is not t and not v.requires_grad
    assert v.data_ptr() == t.data_ptr()  # same data, as torch's
    w = Variable(t, requires_grad=True)
    assert type(w) is gt.Tensor and w.requires_grad and w.is_leaf and not t.requires_grad
    w2 = Variable(t, True)  # positional, as old code writes it
    assert w2.requires_grad
    assert isinstance(t, Variable) and isinstance(w, Variable)
    assert not isinstance(3.0, Variable)


def test_variables_work_with_the_tensor_autograd_methods():
    v = Variable(gt.tensor([1.0, 2.0]), requires_grad=True)
    calls = []
    v.register_hook(lambda g: calls.append(g.tolist()))
    (v * v).sum().backward()
    assert v.grad.tolist() == [2.0, 4.0] and calls == [[2.0, 4.0]]
    assert not v.detach().requires_grad and v.data.tolist() == [1.0, 2.0]


def test_variable_argument_checks():
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        Variable(gt.tensor([1, 2]), requires_grad=True)


# ---------------------------------------------------------------------------------------
# gradcheck


def f64(values):
    return gt.tensor(values, dtype=gt.float64, requires_grad=True)


def _cube(scale=1.0, second_order=True, second_order_off=0.0):
    """x^3 with a backward off by the factor ``scale``; with ``second_order_off``, the
    derivative of the backward is off by ``second_order_off * g`` (an added term whose value
    is zero but whose derivative is not)."""

    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if not second_order:
                x = x.detach()
            grad = g * 3 * x * x * scale
            if second_order_off:
                grad = grad + second_order_off * g * (x - x.detach())
            return grad

    return Cube


def test_gradcheck_accepts_correct_functions():
    x, y = f64([0.5, -1.2, 2.0]), f64([[1.5, -0.5], [0.3, 0.8]])
    assert gradcheck(lambda a: (a.sin() * a).sum(), (x,)) is True
    assert gradcheck(lambda a, b: (a[:2] @ b).exp(), (x, y)) is True
    assert gradcheck(_cube().apply, (x,)) is True
    assert gradcheck(_cube().apply, x, fast_mode=True) is True  # a lone tensor is fine
    # outputs that are not differentiable (indices) are fine too
    assert gradcheck(lambda a: a.sort(), (x,)) is True


def test_gradcheck_rejects_a_wrong_function():
    x = f64([0.5, -1.2, 2.0])
    Wrong = _cube(scale=1.1)
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ) as info:
        gradcheck(Wrong.apply, (x,))
    assert "numerical" in str(info.value) and "analytical" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError):
        gradcheck(Wrong.apply, (x,), fast_mode=True)


def test_gradcheck_tolerances_are_honoured():
    x = f64([0.5, -1.2, 2.0])
    slightly_off = _cube(scale=1 + 5e-4)  # relative error 5e-4
    assert gradcheck(slightly_off.apply, (x,))  # within the default rtol=1e-3
    assert not gradcheck(slightly_off.apply, (x,), rtol=1e-4, atol=0.0, raise_exception=False)
    assert gradcheck(slightly_off.apply, (x,), rtol=0.0, atol=1e-2)  # absolute: 12 * 5e-4
    assert not gradcheck(slightly_off.apply, (x,), rtol=0.0, atol=1e-3, raise_exception=False)


def test_gradcheck_eps_is_honoured():
    # central differences of x^3 are off by eps^2: a step of 0.1 shows at rtol=1e-3
    x = f64([1.0])
    cube = _cube()
    assert gradcheck(cube.apply, (x,), eps=1e-6)
    assert not gradcheck(cube.apply, (x,), eps=0.1, raise_exception=False)
    assert gradcheck(cube.apply, (x,), eps=0.1, atol=0.011, rtol=0.0)
    (num,) = get_numerical_jacobian(cube.apply, (x,), eps=0.1)[0]
    assert num[0, 0] == pytest.approx(3.0 + 0.01, rel=1e-12)


def test_gradcheck_checks_backward_with_zero_output_gradients():
    class Affine(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + 1  # not linear in g

    x = f64([1.0, 2.0])
    with pytest.raises(GradcheckError):
        gradcheck(Affine.apply, (x,))


def test_gradcheck_argument_checks_and_dtype_warning():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda a: a * 2, (gt.ones(2, dtype=gt.float64),))
    x32 = gt.tensor([0.5, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        gradcheck(lambda a: a * 2, (x32,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_jacobians():
    x = f64([1.0, 2.0])
    w = gt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=gt.float64)
    (num,) = get_numerical_jacobian(lambda a: w @ a, (x,))[0]
    (ana,) = get_analytical_jacobian(lambda a: w @ a, (x,))[0]
    np.testing.assert_allclose(num, w.numpy(), rtol=1e-9)
    np.testing.assert_array_equal(ana, w.numpy())


# ---------------------------------------------------------------------------------------
# gradgradcheck


def test_gradgradcheck_accepts_correct_second_derivatives():
    x = f64([0.5, -1.2, 2.0])
    assert gradgradcheck(lambda a: (a.sin() * a.exp()).sum(), (x,)) is True
    assert gradgradcheck(_cube().apply, (x,)) is True
    v = f64([1.0, -2.0, 0.5])
    assert gradgradcheck(lambda a: a.tanh(), (x,), (v,)) is True  # given grad_outputs


def test_gradgradcheck_rejects_a_wrong_second_derivative():
    x = f64([0.5, -1.2, 2.0])
    no_second_order = _cube(second_order=False)  # right first derivative, no second
    assert gradcheck(no_second_order.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradgradcheck(no_second_order.apply, (x,))
    assert gradgradcheck(no_second_order.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_tolerances():
    SecondOrderOff = _cube(second_order_off=1e-4)  # right first derivative
    x = f64([0.5, -1.2, 2.0])
    assert gradcheck(SecondOrderOff.apply, (x,), rtol=0.0, atol=1e-8)
    assert not gradgradcheck(
        SecondOrderOff.apply, (x,), rtol=1e-6, atol=1e-6, raise_exception=False
    )
    assert gradgradcheck(SecondOrderOff.apply, (x,), rtol=1e-6, atol=1e-3)


def test_gradcheck_of_grad_mode_sensitive_functions():
    """gradcheck's finite differences run in the caller's grad mode (the outputs of a
    function that differentiates inside must stay differentiable)."""

    def inner_grad(a):
        (g,) = ag.grad((a**4).sum(), a, create_graph=True)
        return g  # 4 a^3

    x = f64([0.5, 1.5])
    assert gradcheck(inner_grad, (x,))
    assert gradgradcheck(inner_grad, (x,))
