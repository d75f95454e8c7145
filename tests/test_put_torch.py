"""``put`` (function, ``Tensor.put``, ``Tensor.put_``) against torch 2.13: values with
negative, repeated and n-d indices, ``accumulate``, gradients (torch's ``PutBackward0``:
``self`` gets the gradient with the written positions zeroed unless accumulating,
``source`` the gradient at the indices), and errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.arange(12.0).reshape(3, 4) - 4

CASES = [
    ([0, -1, 5], [10.0, 20.0, 30.0], False),
    ([[0, 3], [7, -12]], [[1.0, 2.0], [3.0, 4.0]], False),
    ([2, 2, 2], [1.0, 2.0, 3.0], True),
    ([1, -11, 4], [0.5, -1.5, 2.0], True),
    ([], [], False),
]


@pytest.mark.parametrize("index, source, accumulate", CASES)
def test_values_and_gradients_as_torch(index, source, accumulate):
    res = []
    w = np.linspace(-1, 2, X.size).reshape(X.shape)
    for L in (gs, torch):
        x = L.tensor(X, requires_grad=True)
        s = L.tensor(source, dtype=L.float64, requires_grad=True)
        i = L.tensor(index, dtype=L.int64)
        out = L.put(x, i, s, accumulate)
        (out * L.tensor(w)).sum().backward()
        method = x.detach().put(i, s.detach(), accumulate)
        inplace = x.detach().clone().put_(i, s.detach(), accumulate=accumulate)
        res.append([out.detach().numpy(), x.grad.numpy(), s.grad.numpy(), method.numpy(),
                    inplace.numpy()])  # fmt: skip
    for a, b in zip(*res, strict=True):
        np.testing.assert_array_equal(a, b)


def test_gradcheck():
    x = gs.tensor(X, requires_grad=True)
    s = gs.tensor([1.0, 2.0], dtype=gs.float64, requires_grad=True)
    i = gs.tensor([3, -2])
    assert gs.autograd.gradcheck(lambda a, b: gs.put(a, i, b), (x, s))
    assert gs.autograd.gradcheck(lambda a, b: gs.put(a, i, b, True), (x, s))


ERRORS = [
    lambda L: L.put(L.zeros(2, 3), L.tensor([0, 6]), L.tensor([1.0, 2.0])),
    lambda L: L.put(L.zeros(2, 3), L.tensor([0, -7]), L.tensor([1.0, 2.0])),
    lambda L: L.put(L.zeros(2, 3), L.tensor([0, 1]), L.tensor([1.0])),
    lambda L: L.put(L.zeros(2, 3), L.tensor([0, 1], dtype=L.int32), L.tensor([1.0, 2.0])),
    lambda L: L.put(L.zeros(2, 3), L.tensor([0, 1]), L.tensor([1, 2])),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    outcomes = []
    for L in (gs, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class and words compared
            call(L)
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[0] == outcomes[1]
