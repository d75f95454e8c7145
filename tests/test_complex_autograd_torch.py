"""Autograd of complex numbers against torch 2.13: torch's convention (the gradient is the
conjugate Wirtinger derivative, Note [The conjugate Wirtinger gradient]), ``.grad`` of real
losses built from complex intermediates, gradcheck of complex functions, and a complex
least-squares fit."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(35)


def _c(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _r(*shape):
    return RNG.standard_normal(shape)


def _loss(L, out):
    """A real loss of any output: ``sum |out|^2``, with other weights per element."""
    w = L.arange(out.numel(), dtype=L.float64).reshape(out.shape) / 7 + 1
    if out.is_complex():
        return (w * out.abs() ** 2).sum() + (w * out).real.sum()
    return (w * out * out).sum()


# (name, function of the module and inputs, inputs as numpy arrays)
PROGRAMS = [
    ("mul", lambda L, a, b: a * b, (_c(3), _c(3))),
    ("mul real by complex", lambda L, a, b: a * b, (_r(3), _c(3))),
    ("mul by a complex number", lambda L, a: a * (2 - 1j), (_c(3),)),
    ("real times a complex number", lambda L, a: a * (2 - 1j), (_r(3),)),
    ("div", lambda L, a, b: a / b, (_c(3), _c(3))),
    ("real by complex", lambda L, a, b: a / b, (_r(3), _c(3))),
    ("add sub alpha", lambda L, a, b: L.add(a, b, alpha=2) - a, (_c(3), _c(3))),
    ("matmul", lambda L, a, b: a @ b, (_c(2, 3), _c(3, 4))),
    ("batched matmul", lambda L, a, b: a @ b, (_c(2, 2, 3), _c(3, 4))),
    ("matmul vector", lambda L, a, b: a @ b, (_c(2, 3), _c(3))),
    ("sum", lambda L, a: a.sum(0), (_c(2, 3),)),
    ("mean", lambda L, a: a.mean(), (_c(2, 3),)),
    ("exp", lambda L, a: a.exp(), (_c(4),)),
    ("log sqrt", lambda L, a: a.log() + a.sqrt(), (_c(4),)),
    ("sin tanh", lambda L, a: a.sin() * a.tanh(), (_c(4),)),
    ("pow 2", lambda L, a: a**2, (_c(4),)),
    ("pow 3.5", lambda L, a: a**3.5, (_c(4),)),
    ("reciprocal", lambda L, a: 1 / a, (_c(4),)),
    ("abs", lambda L, a: a.abs(), (_c(4),)),
    ("angle", lambda L, a: a.angle(), (_c(4),)),
    ("sgn", lambda L, a: a.sgn() * a, (_c(4),)),
    ("conj", lambda L, a: a.conj() * a, (_c(4),)),
    ("conj_physical", lambda L, a: a.conj_physical() * 1j, (_c(4),)),
    ("real and imag", lambda L, a: a.real * 2 + a.imag**2, (_c(4),)),
    ("view_as_real", lambda L, a: L.view_as_real(a) ** 3, (_c(2, 3),)),
    ("view_as_complex", lambda L, a: L.view_as_complex(a) * (1 + 1j), (_r(4, 2),)),
    ("polar", lambda L, a, b: L.polar(a.abs() + 0.1, b), (_r(4), _r(4))),
    ("complex", lambda L, a, b: L.complex(a, b) ** 2, (_r(4), _r(4))),
    ("mH", lambda L, a: a.mH @ a, (_c(3, 2),)),
    ("vdot", lambda L, a, b: L.vdot(a, b), (_c(3), _c(3))),
    ("norm", lambda L, a: a.norm(), (_c(3),)),
    ("to complex", lambda L, a: a.to(L.complex128) * 1j, (_r(3),)),
    ("prod", lambda L, a: a.prod(1), (_c(2, 3),)),
    ("cumsum", lambda L, a: a.cumsum(0), (_c(4),)),
    ("var std", lambda L, a: a.var() + a.std(0).sum(), (_c(5, 2),)),
    ("det", lambda L, a: L.linalg.det(a), (_c(3, 3),)),
    ("inv", lambda L, a: L.linalg.inv(a), (_c(3, 3),)),
    ("solve", lambda L, a, b: L.linalg.solve(a, b), (_c(3, 3), _c(3))),
    ("einsum", lambda L, a, b: L.einsum("ij,j->i", a, b), (_c(2, 3), _c(3))),
    ("sigmoid rsqrt", lambda L, a: a.sigmoid() + a.rsqrt(), (_c(4),)),
    (
        "where index cat",
        lambda L, a, b: L.cat([a[1:], b]).where(L.tensor([True, False, True, True]), 0.0),
        (_c(3), _r(2)),
    ),
]


@pytest.mark.parametrize("name, fn, arrays", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_grad_matches_torch(name, fn, arrays):
    results = []
    for L in (gs, torch):
        xs = [L.tensor(a, requires_grad=True) for a in arrays]
        out = fn(L, *xs)
        _loss(L, out).backward()
        results.append((out, [x.grad for x in xs]))
    (out, grads), (tout, tgrads) = results
    assert str(out.dtype).split(".")[-1] == str(tout.dtype).split(".")[-1]
    if name != "vdot":  # (gradstack's vdot is conj() then dot: DotBackward0)
        assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    np.testing.assert_allclose(
        out.detach().numpy(), tout.detach().resolve_conj().numpy(), rtol=1e-10, atol=1e-12
    )
    for g, tg in zip(grads, tgrads):
        assert str(g.dtype).split(".")[-1] == str(tg.dtype).split(".")[-1]
        np.testing.assert_allclose(g.numpy(), tg.resolve_conj().numpy(), rtol=1e-9, atol=1e-11)


def test_float32_complex64_grads_match_torch():
    a, b = _c(5).astype(np.complex64), _r(5).astype(np.float32)
    res = []
    for L in (gs, torch):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        ((x * y).exp().abs() ** 2).sum().backward()
        res.append((x.grad, y.grad))
    assert res[0][0].dtype is gs.complex64 and res[0][1].dtype is gs.float32
    np.testing.assert_allclose(res[0][0].numpy(), res[1][0].numpy(), rtol=1e-5)
    np.testing.assert_allclose(res[0][1].numpy(), res[1][1].numpy(), rtol=1e-5)


GRADCHECKS = [
    (lambda a, b: a * b.conj() / (b + 3), (_c(3), _c(3))),
    (lambda a: (a @ a.mH).exp(), (_c(2, 2),)),
    (lambda a: a.abs(), (_c(4),)),
    (lambda a: a.angle(), (_c(4),)),
    (lambda a: a.sgn(), (_c(4),)),
    (lambda a, b: gs.polar(a, b), (np.abs(_r(3)) + 0.5, _r(3))),
    (lambda a, b: gs.complex(a, b).sqrt(), (_r(3) + 3, _r(3))),
    (lambda a: gs.view_as_real(a * 1j).sum(-1), (_c(3),)),
    (lambda a, x: (a * x).sum(), (_c(3), _r(3))),
]


@pytest.mark.parametrize("k", range(len(GRADCHECKS)))
def test_gradcheck_and_gradgradcheck_of_complex_functions(k):
    fn, arrays = GRADCHECKS[k]
    xs = tuple(gs.tensor(a, requires_grad=True) for a in arrays)
    assert gs.autograd.gradcheck(fn, xs)
    assert gs.autograd.gradgradcheck(fn, xs)
    # and torch's gradcheck agrees that the function is checkable there
    txs = tuple(torch.tensor(a, requires_grad=True) for a in arrays)
    assert torch.autograd.gradcheck(_torch_version(fn), txs)


def _torch_version(fn):
    """``fn`` with ``gs`` bound to torch (the functions above name only ``gs``)."""
    import types

    return types.FunctionType(fn.__code__, {**fn.__globals__, "gs": torch})


def test_gradcheck_catches_a_missing_conjugate():
    class NoConj(gs.autograd.Function):
        """z * w with the real-number formula: the conjugates forgotten."""

        @staticmethod
        def forward(ctx, z, w):
            ctx.save_for_backward(z, w)
            return z * w

        @staticmethod
        def backward(ctx, g):
            z, w = ctx.saved_tensors
            return g * w, g * z

    z, w = (gs.tensor(_c(3), requires_grad=True) for _ in range(2))
    with pytest.raises(gs.autograd.GradcheckError):
        gs.autograd.gradcheck(NoConj.apply, (z, w))
    assert not gs.autograd.gradcheck(NoConj.apply, (z, w), raise_exception=False)


def test_complex_least_squares_fit_as_torch():
    """A complex linear model fitted by gradient descent on |A x - b|^2: the same iterates
    as torch's, and the least-squares solution."""
    A = _c(8, 3)
    x_true = _c(3)
    b = A @ x_true + 0.01 * _c(8)
    traj = []
    for L in (gs, torch):
        a_t, b_t = L.tensor(A), L.tensor(b)
        x = L.zeros(3, dtype=L.complex128, requires_grad=True)
        opt = (gs.optim if L is gs else torch.optim).SGD([x], lr=0.02)
        for _ in range(200):
            opt.zero_grad()
            loss = ((a_t @ x - b_t).abs() ** 2).sum()
            loss.backward()
            opt.step()
        traj.append((x.detach().numpy(), loss.item()))
    np.testing.assert_allclose(traj[0][0], traj[1][0], rtol=1e-9, atol=1e-12)
    assert abs(traj[0][1] - traj[1][1]) < 1e-9
    np.testing.assert_allclose(traj[0][0], np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-6)


def test_inplace_ops_on_complex_tensors_record_as_torch():
    res = []
    for L in (gs, torch):
        a = L.tensor([1 + 2j, 3 - 1j], dtype=L.complex128, requires_grad=True)
        z = a * 1
        z.mul_(2j)
        z.add_(a)
        z.exp_()
        (z.abs() ** 2).sum().backward()
        res.append(a.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_inplace_write_through_a_complex_view_is_refused_under_autograd():
    # Note [No in-place write through a complex view under autograd]: refused, never a
    # wrong gradient; under no_grad (or without grad) the write goes through
    a = gs.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    z = a * 1
    for write in (lambda: z.real.mul_(3), lambda: gs.view_as_real(z).zero_()):
        with pytest.raises(NotImplementedError, match="view of another dtype"):
            write()
    x = gs.ones(2, 2, dtype=gs.float64, requires_grad=True) * 1
    with pytest.raises(NotImplementedError, match="view of another dtype"):
        gs.view_as_complex(x).mul_(1j)
    with gs.no_grad():
        z.real.mul_(3)
    assert z.tolist() == [3 + 2j, 9 - 1j]
