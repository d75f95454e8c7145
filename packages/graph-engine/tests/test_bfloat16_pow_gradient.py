"""The gradient of a bfloat16 ``x ** 3`` is torch 2.13's bit for bit: its backward formula
computes ``3 * x ** 2`` through the bfloat16 kernels (Note [bfloat16 pow by a number rounds
as torch's] in tensor-core's ``_bfloat16.py``)."""

from __future__ import annotations

import gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("exponent", [3, -2, 1.1])
def test_pow_by_number_gradient_bit_equal(exponent):
    g = torch.Generator().manual_seed(3)
    t = (torch.randn(500, generator=g).abs() + 0.05).bfloat16().requires_grad_()
    x = gt.tensor(t.detach().float().numpy()).to(gt.bfloat16).requires_grad_()
    (t**exponent).sum().backward()
    (x**exponent).sum().backward()
    assert x.grad.dtype == gt.bfloat16
    np.testing.assert_array_equal(x.grad.float().numpy(), t.grad.float().numpy())


def test_pow_gradient_float64_gradcheck():
    x = gt.tensor([0.3, -1.2, 2.5], dtype=gt.float64, requires_grad=True)
    assert gradstack_autograd.gradcheck(lambda a: a**3, (x,))
