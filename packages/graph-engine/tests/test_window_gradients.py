"""The first-order gradients that run on arrays (Note [Window gradients on arrays]: max
pooling's, batch norm's) equal the formulas in gradstack ops that ``create_graph=True``
runs, and torch's, in float32 and float64, with and without a weight, in training and
evaluation, for contiguous and channels-last inputs."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _both_paths(fn, x, *params):
    """Gradients of ``(fn(x, *params) * g).sum()`` without and with create_graph."""
    out = []
    for create_graph in (False, True):
        leaves = [gt.tensor(x, requires_grad=True)] + [
            None if p is None else gt.tensor(p, requires_grad=True) for p in params
        ]
        y = fn(*leaves)
        g = gt.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(x.dtype))
        wanted = [t for t in leaves if t is not None]
        grads = ag.grad((y * g).sum(), wanted, create_graph=create_graph)
        out.append([t.detach().numpy() for t in grads])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("channels_last", [False, True])
def test_max_pool2d_gradient_on_arrays_equals_the_graph_formula(dtype, channels_last):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 7, 3) if channels_last else (2, 3, 6, 7)).astype(dtype)
    if channels_last:
        x = x.transpose(0, 3, 1, 2)
    x[0, 0, 0, :2] = 5.0  # a tie
    args = ((3, 3), (2, 2), (1, 1), (1, 1), True)
    fast, graph = _both_paths(lambda t: gt.OPS["max_pool2d_with_indices"](t, *args)[0], x)
    # the graph formula scatters in another order: equal up to the rounding of the sums
    np.testing.assert_allclose(fast[0], graph[0], rtol=1e-6, atol=1e-6)
    xt = torch.from_numpy(x).requires_grad_()
    y = torch.nn.functional.max_pool2d(xt, *args)
    g = np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)).astype(dtype)
    y.backward(torch.from_numpy(g))
    np.testing.assert_array_equal(fast[0], xt.grad.numpy())  # torch's order of the sums


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_gradient_on_arrays_equals_the_graph_formula(dtype, training, affine):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 3, 5, 2)) * 2 + 1).astype(dtype)
    w, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    rm, rv = rng.standard_normal(3).astype(dtype), (rng.random(3) + 0.5).astype(dtype)

    def bn(t, *p):
        weight, bias = p if p else (None, None)
        return gt.OPS["batch_norm"](
            t, weight, bias, gt.tensor(rm.copy()), gt.tensor(rv.copy()), training, 0.1, 1e-5
        )

    fast, graph = _both_paths(bn, x, *((w, b) if affine else ()))
    tol = dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for a, c in zip(fast, graph):
        np.testing.assert_allclose(a, c, **tol)
