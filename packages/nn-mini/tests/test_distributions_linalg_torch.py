"""The triangular solves of gradstack_nn.distributions (``_linalg.py``) against torch's
``linalg.solve_triangular``, ``cholesky_solve`` and ``cholesky_inverse``: values over
broadcast batch dims, gradients (torch's formulas, the factor's gradient projected onto
its triangle for solve_triangular and not for the Cholesky ones), first and second order
gradchecks, errors."""

from __future__ import annotations

import gradstack_autograd as ga
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn.distributions import _linalg

torch = pytest.importorskip("torch")

R = np.random.default_rng(2)


def _lower(*shape):
    n = shape[-1]
    return np.tril(R.standard_normal(shape)) + np.eye(n) * (
        2.0 + R.uniform(0, 1, shape[:-1] + (1,))
    )


OURS = {
    "solve_triangular": lambda A, B, upper: _linalg.solve_triangular(A, B, upper=upper),
    "cholesky_solve": lambda A, B, upper: _linalg.cholesky_solve(B, A, upper=upper),
    "cholesky_inverse": lambda A, B, upper: _linalg.cholesky_inverse(A, upper=upper),
}
THEIRS = {
    "solve_triangular": lambda A, B, upper: torch.linalg.solve_triangular(A, B, upper=upper),
    "cholesky_solve": lambda A, B, upper: torch.cholesky_solve(B, A, upper=upper),
    "cholesky_inverse": lambda A, B, upper: torch.cholesky_inverse(A, upper=upper),
}


@pytest.mark.parametrize("fn", sorted(OURS))
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize(
    "a_shape, b_shape", [((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((2, 1, 4, 4), (3, 4, 2))]
)
def test_values_and_gradients_match_torch(fn, upper, a_shape, b_shape):
    if fn == "cholesky_inverse" and len(a_shape) > 3:
        a_shape = a_shape[-3:]
    a = _lower(*a_shape)
    if upper:
        a = np.swapaxes(a, -1, -2)
    b = R.standard_normal(b_shape)
    results = []
    for lib, ops in ((gt, OURS), (torch, THEIRS)):
        A = lib.tensor(a, requires_grad=True)
        B = lib.tensor(b, requires_grad=True)
        X = ops[fn](A, B, upper)
        grad = (lib.autograd if lib is torch else ga).grad
        inputs = [A] if fn == "cholesky_inverse" else [A, B]
        grads = grad(X.sin().sum(), inputs)
        results.append([X.detach().numpy()] + [g.numpy() for g in grads])
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn", sorted(OURS))
@pytest.mark.parametrize("upper", [False, True])
def test_gradcheck_and_gradgradcheck(fn, upper):
    a = gt.tensor(_lower(2, 3, 3), requires_grad=True)
    b = gt.tensor(R.standard_normal((2, 3, 2)), requires_grad=True)

    def f(a, b):
        # the factor's triangle is the parameter (the other triangle is not read)
        A = a.tril().mT if upper else a.tril()
        return OURS[fn](A, b, upper)

    assert ga.gradcheck(f, (a, b))
    assert ga.gradgradcheck(f, (a, b))


def test_errors_are_torchs():
    for call in (
        lambda L, f: f(L.ones(2, 3), L.ones(2, 1)),
        lambda L, f: f(L.eye(3), L.ones(2, 1)),
        lambda L, f: f(L.eye(2), L.ones(2)),
    ):
        errors = []
        for lib, fn in ((gt, OURS["solve_triangular"]), (torch, THEIRS["solve_triangular"])):
            with pytest.raises(RuntimeError) as info:
                call(lib, lambda A, B, fn=fn: fn(A, B, False))
            errors.append(str(info.value))
        assert errors[0] == errors[1]


@pytest.mark.parametrize("a_dtype, b_dtype", [("float32", "float64"), ("float64", "float32")])
def test_the_result_has_the_matrix_dtype_as_torchs(a_dtype, b_dtype):
    a = np.array([[2.0, 0.0], [1.0, 3.0]])
    b = np.array([[1 / 3], [1 / 7]])
    x = _linalg.solve_triangular(
        gt.tensor(a, dtype=getattr(gt, a_dtype)),
        gt.tensor(b, dtype=getattr(gt, b_dtype)),
        upper=False,
    )
    y = torch.linalg.solve_triangular(
        torch.tensor(a, dtype=getattr(torch, a_dtype)),
        torch.tensor(b, dtype=getattr(torch, b_dtype)),
        upper=False,
    )
    assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1] == a_dtype
    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-7)
