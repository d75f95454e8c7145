"""det's and slogdet's gradients from the inverse the invertibility check computes (Note
[Deciding invertibility without an SVD]) and slogdet's sign from the kernel's
factorization (Note [slogdet's sign from the kernel's factorization]), against torch 2.13
and against the SVD's decision: well-conditioned, ill-conditioned and singular matrices,
batches, float32 and float64, first order and create_graph."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest
from gradstack_autograd.derivatives import decompositions as dec

torch = pytest.importorskip("torch")


def _matrices(dtype):
    r = np.random.default_rng(0)
    well = r.standard_normal((3, 6, 6))
    ill = well.copy()
    ill[1, :, -1] = ill[1, :, 0] + 1e-9 * r.standard_normal(6)  # nearly dependent columns
    singular = well.copy()
    singular[2, -1] = singular[2, 0]  # equal rows
    spd = r.standard_normal((40, 40))
    spd = spd @ spd.T / 40 + np.eye(40)
    return {
        "well": well.astype(dtype),
        "ill": ill.astype(dtype),
        "singular": singular.astype(dtype),
        "spd": spd.astype(dtype),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_decision_is_the_svds(dtype):
    eps = np.finfo(dtype).eps
    scales = [1.0, 1e-3, 1e-6, 1e-9, 1e-12, 0.0]
    r = np.random.default_rng(1)
    for name, a in _matrices(dtype).items():
        expected = bool(np.all(np.linalg.cond(a) < 1.0 / eps))
        assert (dec._inverse_if_invertible(gs.tensor(a)) is not None) == expected, name
    for s in scales:  # a column made dependent up to s
        a = r.standard_normal((5, 5))
        a[:, -1] = a[:, 0] + s * r.standard_normal(5)
        a = a.astype(dtype)
        expected = bool(np.all(np.linalg.cond(a) < 1.0 / eps))
        assert (dec._inverse_if_invertible(gs.tensor(a)) is not None) == expected, s


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["well", "spd", "singular"])
@pytest.mark.parametrize("fn", ["det", "logabsdet"])
def test_gradients_match_torch(dtype, name, fn):
    a = _matrices(dtype)[name]
    grads = []
    for L in (gs, torch):
        t = L.tensor(a, requires_grad=True)
        out = L.linalg.det(t) if fn == "det" else L.linalg.slogdet(t)[1]
        (g,) = L.autograd.grad(out.sum(), t)
        grads.append(g.numpy())
    if fn == "logabsdet" and name == "singular":
        return  # NaN/inf either side (torch's LU divides by its zero pivot)
    rtol = 2e-3 if dtype == np.float32 else 1e-9
    scale = np.abs(grads[1]).max()
    np.testing.assert_allclose(grads[0], grads[1], rtol=rtol, atol=rtol * scale)


def test_create_graph_still_differentiates_twice():
    a = gs.tensor(_matrices(np.float64)["well"][0], requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: gs.linalg.slogdet(t)[1], (a,))
    assert gs.autograd.gradgradcheck(lambda t: gs.linalg.slogdet(t)[1], (a,))
    assert gs.autograd.gradgradcheck(gs.linalg.det, (a,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slogdet_signs_match_torch(dtype):
    r = np.random.default_rng(2)
    for shape in [(5, 5), (3, 4, 4), (0, 3, 3), (2, 0, 0), (1, 1)]:
        a = r.standard_normal(shape).astype(dtype)
        ours, theirs = gs.linalg.slogdet(gs.tensor(a)), torch.linalg.slogdet(torch.tensor(a))
        np.testing.assert_array_equal(ours.sign.numpy(), theirs.sign.numpy())
        np.testing.assert_allclose(ours.logabsdet.numpy(), theirs.logabsdet.numpy(), rtol=1e-5)
        view = gs.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
        np.testing.assert_array_equal(gs.slogdet(view).sign.numpy(), theirs.sign.numpy())
