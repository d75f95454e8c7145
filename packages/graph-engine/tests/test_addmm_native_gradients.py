"""Note [A linear layer's gradients as two GEMMs]: addmm's first-order gradients computed
on the arrays have the bits of the formula written with gradstack ops (which create_graph
runs), in the layout of Note [Matmul gradients in their input's layout]."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

RNG = np.random.default_rng(12)


def _grads(create_graph, dtype, bias_shape, transposed_input):
    x = RNG.standard_normal((16, 40)) if not transposed_input else RNG.standard_normal((40, 16)).T
    w = RNG.standard_normal((30, 40))
    b = RNG.standard_normal(bias_shape)
    g = RNG.standard_normal((16, 30))
    tx = gt.tensor(x, dtype=dtype)
    if transposed_input:
        tx = gt.tensor(x.T, dtype=dtype).t()
    tx.requires_grad_()
    tw = gt.tensor(w, dtype=dtype, requires_grad=True)
    tb = gt.tensor(b, dtype=dtype, requires_grad=True)
    out = gt.addmm(tb, tx, tw.t())
    grads = ag.grad(out, [tb, tx, tw], gt.tensor(g, dtype=dtype), create_graph=create_graph)
    return [r.detach() for r in grads]


@pytest.mark.parametrize("dtype", [gt.float32, gt.float64])
@pytest.mark.parametrize("bias_shape", [(30,), (16, 30)])
@pytest.mark.parametrize("transposed_input", [False, True])
def test_same_bits_and_layouts_as_the_formula_with_ops(dtype, bias_shape, transposed_input):
    state = RNG.bit_generator.state
    plain = _grads(False, dtype, bias_shape, transposed_input)
    RNG.bit_generator.state = state
    with_graph = _grads(True, dtype, bias_shape, transposed_input)
    for a, b in zip(plain, with_graph, strict=True):
        assert a.shape == b.shape and a.stride() == b.stride() and a.dtype == b.dtype
        assert a.numpy().tobytes() == b.numpy().tobytes()


def test_linear_weight_gradient_is_row_major_and_matches_torch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((8, 20)).astype(np.float32)
    w = RNG.standard_normal((5, 20)).astype(np.float32)
    got = []
    for lib in (gt, torch):
        tw = lib.tensor(w, requires_grad=True)
        lib.addmm(lib.zeros(5), lib.tensor(x), tw.t()).pow(2).sum().backward()
        got.append(tw.grad)
    assert got[0].is_contiguous()
    np.testing.assert_allclose(got[0].numpy(), got[1].numpy(), rtol=1e-5, atol=1e-5)


def test_float16_and_alpha_take_the_formula_with_ops():
    x = gt.tensor(RNG.standard_normal((4, 6)), dtype=gt.float16, requires_grad=True)
    w = gt.tensor(RNG.standard_normal((3, 6)), dtype=gt.float16, requires_grad=True)
    gt.addmm(gt.zeros(3, dtype=gt.float16), x, w.t()).sum().backward()
    assert x.grad.dtype == gt.float16 and w.grad.dtype == gt.float16
    y = gt.tensor(RNG.standard_normal((4, 6)), dtype=gt.float64, requires_grad=True)
    v = gt.tensor(RNG.standard_normal((6, 3)), dtype=gt.float64, requires_grad=True)
    gt.addmm(gt.zeros(3, dtype=gt.float64), y, v, alpha=2.0).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), 2 * np.ones((4, 3)) @ v.detach().numpy().T)
