"""gradstack.linalg's norms and products (tensor-core's linalg.py) against torch.linalg:
values and float64 gradients; the decompositions raise NotImplementedError."""

from __future__ import annotations

import math

import gradstack_autograd  # noqa: F401 - registers autograd
import gradstack_tensor as gs  # (gradstack_tensor.linalg is gradstack.linalg)
import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = np.random.default_rng(0).standard_normal((3, 4, 5))

PROGRAMS = {
    "vector_norm": lambda L, a: L.linalg.vector_norm(a),
    "vector_norm_keepdim": lambda L, a: L.linalg.vector_norm(a, 3, keepdim=True),
    "vector_norm_1": lambda L, a: L.linalg.vector_norm(a, 1, dim=-1),
    "vector_norm_inf": lambda L, a: L.linalg.vector_norm(a, math.inf, dim=(0, 2), keepdim=True),
    "matrix_norm_fro": lambda L, a: L.linalg.matrix_norm(a),
    "matrix_norm_1": lambda L, a: L.linalg.matrix_norm(a, 1),
    "matrix_norm_minus_inf": lambda L, a: L.linalg.matrix_norm(a, -math.inf, keepdim=True),
    "norm_matrix": lambda L, a: L.linalg.norm(a[0]),
    "norm_fro": lambda L, a: L.linalg.norm(a[0], "fro"),
    "norm_vector_3": lambda L, a: L.linalg.norm(a[0, 0], 3),
    "norm_dims": lambda L, a: L.linalg.norm(a, dim=(1, 2)),
    "norm_dim": lambda L, a: L.linalg.norm(a, dim=2),
    "cross": lambda L, a: L.linalg.cross(a[..., :3], a[..., 1:4]),
    "vecdot": lambda L, a: L.linalg.vecdot(a, a),
    "multi_dot": lambda L, a: L.linalg.multi_dot([a[0], a[1].T, a[2]]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(name):
    results = []
    for lib in (gs, torch):
        t = lib.tensor(A, requires_grad=True)
        y = PROGRAMS[name](lib, t)
        (y * y).sum().backward()
        results.append((y.detach().numpy(), t.grad.numpy()))
    (a, ga), (b, gb) = results
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord", [2, -2, "nuc"])
@pytest.mark.parametrize("dim, keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_the_norms_of_the_singular_values_match_torch(ord, dim, keepdim):
    a = np.random.default_rng(7).standard_normal((3, 4, 5))
    x, t = gs.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got = gs.linalg.matrix_norm(x, ord, dim, keepdim)
    want = torch.linalg.matrix_norm(t, ord, dim, keepdim)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        gs.linalg.matrix_norm(x, 3)
