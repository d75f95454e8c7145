"""The gradient of xlogy by a number operand keeps the input's dtype and torch's values
(Note [xlogy computes in its result dtype] in tensor-core's ``elementwise_composites.py``)."""

from __future__ import annotations

import gradstack_autograd
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def test_gradcheck_float64():
    x = gt.tensor([0.0, 0.5, 2.0], dtype=gt.float64, requires_grad=True)
    assert gradstack_autograd.gradcheck(lambda a: gt.xlogy(a, 0.7), (x,))
    y = gt.tensor([0.5, 2.0], dtype=gt.float64, requires_grad=True)
    assert gradstack_autograd.gradcheck(lambda b: gt.xlogy(1.5, b), (y,))


def test_float16_gradient_dtype_and_values():
    vals = [0.0, 0.5, 2.0, 3.0]
    t = torch.tensor(vals, dtype=torch.float16, requires_grad=True)
    x = gt.tensor(vals, dtype=gt.float16, requires_grad=True)
    torch.xlogy(t, 0.5).sum().backward()
    gt.xlogy(x, 0.5).sum().backward()
    assert x.grad.dtype == gt.float16
    np.testing.assert_allclose(x.grad.float().numpy(), t.grad.float().numpy(), rtol=1e-3)
