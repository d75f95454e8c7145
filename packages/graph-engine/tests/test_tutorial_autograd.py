"""The "Fundamentals of Autograd" tutorial, up to "Autograd and In-place Operations".

Its code, written against gradstack_tensor (``torch``'s tensors) and gradstack_autograd
(``torch.autograd``), with each printed claim asserted with numbers.  nn-mini is a layer
above, so TinyModel is built from a minimal local ``Linear``/``ReLU``/``SGD``.
The "doubling" example of the advanced section is included too.
"""

from __future__ import annotations

import math
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

# ---------------------------------------------------------------------------------------
# A Simple Example


@pytest.fixture
def simple():
    a = gt.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
    b = gt.sin(a)
    c = 2 * b
    d = c + 1
    out = d.sum()
    return a, b, c, d, out


def test_printed_tensors_show_their_grad_fn(simple):
    a, b, c, d, out = simple
    assert "requires_grad=True" in repr(a) and "grad_fn" not in repr(a)
    assert repr(b).endswith("grad_fn=<SinBackward0>)")
    assert repr(c).endswith("grad_fn=<MulBackward0>)")
    assert repr(d).endswith("grad_fn=<AddBackward0>)")
    assert repr(out) == "tensor(25., grad_fn=<SumBackward0>)"
    np.testing.assert_allclose(b.detach().numpy(), np.sin(np.linspace(0, 2 * np.pi, 25)), atol=1e-6)
    np.testing.assert_allclose(d.detach().numpy(), 2 * b.detach().numpy() + 1, rtol=1e-6)


def test_next_functions_walk_back_to_the_input(simple):
    a, b, c, d, out = simple
    fn = d.grad_fn
    assert type(fn).__name__ == "AddBackward0"
    # print(d.grad_fn.next_functions) -> ((<MulBackward0>, 0), (None, 0))
    (mul, i), (none, j) = fn.next_functions
    assert (type(mul).__name__, i, none, j) == ("MulBackward0", 0, None, 0)
    # -> ((<SinBackward0>, 0), (None, 0))
    (sin, i), (none, j) = mul.next_functions
    assert (type(sin).__name__, i, none, j) == ("SinBackward0", 0, None, 0)
    # -> ((<AccumulateGrad>, 0),)
    ((acc, i),) = sin.next_functions
    assert (type(acc).__name__, i) == ("AccumulateGrad", 0) and acc.variable is a
    # -> ()
    assert acc.next_functions == ()
    assert c.grad_fn is mul and b.grad_fn is sin and a.grad_fn is None
    assert repr(c.grad_fn).startswith("<MulBackward0 object at 0x")


def test_backward_gives_two_cos_a(simple):
    a, b, c, d, out = simple
    out.backward()
    av = a.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.cos(av), atol=1e-6)
    assert gt.allclose(a.grad, 2 * gt.cos(a.detach()))
    # only leaves get gradients: c.grad is None (with torch's warning)
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert c.grad is None


# ---------------------------------------------------------------------------------------
# Autograd in Training


class Linear:
    """y = x W^T + b, initialized as torch's nn.Linear (uniform in +-1/sqrt(in))."""

    def __init__(self, n_in, n_out):
        bound = 1.0 / math.sqrt(n_in)
        self.weight = (gt.rand(n_out, n_in) * 2 * bound - bound).requires_grad_()
        self.bias = (gt.rand(n_out) * 2 * bound - bound).requires_grad_()

    def __call__(self, x):
        return gt.addmm(self.bias, x, self.weight.t())

    def parameters(self):
        return [self.weight, self.bias]


class ReLU:
    def __call__(self, x):
        return x.relu()


class TinyModel:
    def __init__(self):
        self.layer1 = Linear(1000, 100)
        self.relu = ReLU()
        self.layer2 = Linear(100, 10)

    def __call__(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x

    def parameters(self):
        return self.layer1.parameters() + self.layer2.parameters()


class SGD:
    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def step(self):
        with ag.no_grad():
            for p in self.params:
                p.sub_(p.grad * self.lr)

    def zero_grad(self):
        # the tutorial prints the zeroed gradients afterwards (set_to_none=False)
        for p in self.params:
            if p.grad is not None:
                p.grad.zero_()


def test_training_a_tiny_model():
    gt.manual_seed(0)
    BATCH_SIZE, DIM_IN, DIM_OUT = 16, 1000, 10
    some_input = gt.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
    ideal_output = gt.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)
    model = TinyModel()

    # no gradients yet
    assert model.layer2.weight[0][0:10].shape == (10,)
    assert model.layer2.weight.grad is None
    assert model.layer2.weight.requires_grad and model.layer2.weight.is_leaf

    optimizer = SGD(model.parameters(), lr=0.001)
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    assert loss.grad_fn.name() == "SumBackward0" and loss.item() > 0
    assert prediction.grad_fn.name() == "AddmmBackward0"

    # backward computes gradients but leaves the weights alone
    before = model.layer2.weight.detach().numpy().copy()
    loss.backward()
    after_backward = model.layer2.weight.detach().numpy()
    np.testing.assert_array_equal(before, after_backward)
    grad = model.layer2.weight.grad.numpy().copy()
    assert grad.shape == (10, 100) and np.abs(grad).max() > 0
    assert all(p.grad is not None and p.grad.shape == p.shape for p in model.parameters())

    # the optimizer step changes them, by exactly -lr * grad
    optimizer.step()
    np.testing.assert_allclose(
        model.layer2.weight.detach().numpy(), before - 0.001 * grad, rtol=1e-6, atol=1e-9
    )
    assert not np.array_equal(model.layer2.weight.detach().numpy(), before)

    # without zero_grad, gradients accumulate over the next 5 backward calls
    (step_grad,) = ag.grad((ideal_output - model(some_input)).pow(2).sum(), model.layer2.weight)
    for _ in range(5):
        prediction = model(some_input)
        loss = (ideal_output - prediction).pow(2).sum()
        loss.backward()
    accumulated = model.layer2.weight.grad.numpy()
    np.testing.assert_allclose(accumulated, grad + 5 * step_grad.numpy(), rtol=1e-4, atol=1e-3)
    grew = np.abs(accumulated) > np.abs(grad)
    assert grew.mean() > 0.8  # "most of the gradients ... much larger"
    assert np.median(np.abs(accumulated) / np.maximum(np.abs(grad), 1e-12)) > 3

    optimizer.zero_grad()
    assert model.layer2.weight.grad[0][0:10].tolist() == [0.0] * 10


# ---------------------------------------------------------------------------------------
# Turning Autograd Off and On


def test_requires_grad_flag():
    a = gt.ones(2, 3, requires_grad=True)
    b1 = 2 * a
    assert b1.grad_fn.name() == "MulBackward0" and b1.tolist() == [[2.0] * 3] * 2
    a.requires_grad = False
    b2 = 2 * a
    assert b2.grad_fn is None and not b2.requires_grad and b2.tolist() == [[2.0] * 3] * 2
    assert "grad_fn" not in repr(b2)


def test_no_grad_context():
    a = gt.ones(2, 3, requires_grad=True) * 2
    b = gt.ones(2, 3, requires_grad=True) * 3
    c1 = a + b
    assert c1.grad_fn.name() == "AddBackward0" and c1.tolist() == [[5.0] * 3] * 2
    with ag.no_grad():
        c2 = a + b
    assert c2.grad_fn is None and c2.tolist() == [[5.0] * 3] * 2
    c3 = a * b
    assert c3.grad_fn.name() == "MulBackward0" and c3.tolist() == [[6.0] * 3] * 2


def test_no_grad_decorator_and_enable_grad():
    def add_tensors1(x, y):
        return x + y

    @ag.no_grad()
    def add_tensors2(x, y):
        return x + y

    a = gt.ones(2, 3, requires_grad=True) * 2
    b = gt.ones(2, 3, requires_grad=True) * 3
    c1 = add_tensors1(a, b)
    c2 = add_tensors2(a, b)
    assert c1.grad_fn.name() == "AddBackward0" and c2.grad_fn is None
    assert c1.tolist() == c2.tolist() == [[5.0] * 3] * 2

    @ag.enable_grad()
    def add_tensors3(x, y):
        return x + y

    with ag.no_grad():
        assert add_tensors3(a, b).grad_fn.name() == "AddBackward0"
        with ag.enable_grad():
            assert (a + b).requires_grad


def test_detach():
    x = gt.rand(5, requires_grad=True)
    y = x.detach()
    assert "requires_grad=True" in repr(x) and "requires_grad" not in repr(y)
    assert y.tolist() == x.tolist() and not y.requires_grad and y.grad_fn is None
    assert y.data_ptr() == x.data_ptr()  # a view of the same data, not a copy
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    assert y.numpy().shape == (5,)  # what matplotlib needs


# ---------------------------------------------------------------------------------------
# Autograd and In-place Operations


def test_in_place_on_a_leaf_requiring_grad_raises():
    a = gt.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
        gt.sin_(a)


# ---------------------------------------------------------------------------------------
# Advanced Topic: the vector-Jacobian product of repeated doubling


def test_doubling_example():
    gt.manual_seed(3)
    x = gt.randn(3, requires_grad=True)
    y = x * 2
    doublings = 1
    while y.data.norm() < 1000:
        y = y * 2
        doublings += 1
    assert y.grad_fn.name() == "MulBackward0"
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * 2**doublings, rtol=1e-6)
    with pytest.raises(
        RuntimeError, match="grad can be implicitly created only for scalar outputs"
    ):
        y.backward()
    v = gt.tensor([0.1, 1.0, 0.0001], dtype=gt.float)  # stand-in for gradients
    y.backward(v)
    ratio = x.grad.numpy() / v.numpy()
    # "the output gradients are all related to powers of two"
    np.testing.assert_allclose(ratio, [2.0**doublings] * 3, rtol=1e-6)
    assert math.log2(ratio[0]) == pytest.approx(doublings) and doublings >= 9


def test_tutorial_code_emits_no_unexpected_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = gt.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
        out = (2 * gt.sin(a) + 1).sum()
        out.backward()
        _ = a.grad
