"""torch's CPU samplers replayed by gradstack_nn.distributions (``_samplers.py``) against
torch 2.13 itself, bit for bit: ``_standard_gamma``, ``_sample_dirichlet``, ``poisson``,
``binomial`` and ``cauchy_``, in float32 and float64, with the generator's cached normal
before and after; and the implicit gradients ``_standard_gamma_grad`` and
``_dirichlet_grad`` (``_implicit_grads.py``)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn.distributions import _implicit_grads, _samplers

torch = pytest.importorskip("torch")

R = np.random.default_rng(3)
ALPHAS = np.concatenate(
    [[0.0, 1e-4, 0.01, 0.3, 0.5, 0.999, 1.0, 1.5, 3.0, 30.0, 1000.0], R.gamma(1.0, 2.0, 60)]
)
RATES = np.concatenate([[0.0, 1e-3, 0.5, 9.99, 10.0, 10.5, 250.0, 1e5], R.gamma(1.0, 8.0, 60)])


def _twice(fn_gs, fn_torch, seed, cached_normal):
    """Both samplers after the same seed (and, with ``cached_normal``, after an odd number
    of scalar normal draws, which leaves a Box-Muller value cached), and the draws that
    follow them."""
    out = []
    for lib, fn in ((gt, fn_gs), (torch, fn_torch)):
        lib.manual_seed(seed)
        if cached_normal:
            lib.randn(3, dtype=lib.float64)
        values = fn(lib)
        after = lib.randn(5, dtype=lib.float64), lib.rand(3)
        out.append((values.numpy(), [a.numpy() for a in after]))
    return out


def _assert_same(out):
    (a, after_a), (b, after_b) = out
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)
    for x, y in zip(after_a, after_b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cached_normal", [False, True])
def test_standard_gamma_is_torchs(dtype, cached_normal):
    a = ALPHAS.astype(dtype).reshape(-1, 1)
    out = _twice(
        lambda L: _samplers.standard_gamma(gt.tensor(a)),
        lambda L: torch._standard_gamma(torch.tensor(a)),
        seed=1,
        cached_normal=cached_normal,
    )
    _assert_same(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_of_an_expanded_tensor(dtype):
    a = R.uniform(0.2, 4, (3, 1)).astype(dtype)
    out = _twice(
        lambda L: _samplers.standard_gamma(gt.tensor(a).expand(3, 4)),
        lambda L: torch._standard_gamma(torch.tensor(a).expand(3, 4)),
        seed=4,
        cached_normal=False,
    )
    _assert_same(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_dirichlet_is_torchs(dtype):
    a = R.uniform(0.05, 6, (7, 5)).astype(dtype)
    a[0, :] = 1e-3  # draws that underflow to the smallest normal number, then renormalise
    out = _twice(
        lambda L: _samplers.sample_dirichlet(gt.tensor(a)),
        lambda L: torch._sample_dirichlet(torch.tensor(a)),
        seed=2,
        cached_normal=True,
    )
    (ours, after), (theirs, their_after) = out
    # the gamma draws are torch's bit for bit (the stream after them too); the normalising
    # sum over the last dim is tensor-core's, which adds 5 doubles in another order than
    # torch's AVX2 kernel (x4 + x0 + x1 + x2 + x3), so a ratio may differ in its last bit
    np.testing.assert_allclose(ours, theirs, rtol=4.5e-16, atol=0)
    for x, y in zip(after, their_after):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_poisson_is_torchs(dtype):
    lam = RATES.astype(dtype)
    out = _twice(
        lambda L: _samplers.poisson(gt.tensor(lam)),
        lambda L: torch.poisson(torch.tensor(lam)),
        seed=3,
        cached_normal=True,
    )
    _assert_same(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_is_torchs(dtype):
    count = np.concatenate(
        [[0, 5, 1, 20, 20, 20, 100, 1000, 1000, 30], R.integers(0, 300, 60)]
    ).astype(dtype)
    prob = np.concatenate(
        [[0.5, 0.0, 1.0, 0.3, 0.51, 0.97, 0.5, 0.01, 0.999, 0.2], R.uniform(0, 1, 60)]
    ).astype(dtype)
    out = _twice(
        lambda L: _samplers.binomial(gt.tensor(count), gt.tensor(prob)),
        lambda L: torch.binomial(torch.tensor(count), torch.tensor(prob)),
        seed=8,
        cached_normal=False,
    )
    _assert_same(out)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cauchy_is_torchs(dtype):
    out = _twice(
        lambda L: _samplers.cauchy((4, 5), getattr(gt, dtype)),
        lambda L: torch.empty(4, 5, dtype=getattr(torch, dtype)).cauchy_(),
        seed=6,
        cached_normal=False,
    )
    _assert_same(out)


@pytest.mark.parametrize(
    "call",
    [
        lambda L, S: S["poisson"](L.tensor([-1.0])),
        lambda L, S: S["poisson"](L.tensor([1, 2])),
        lambda L, S: S["gamma"](L.tensor([1, 2])),
        lambda L, S: S["dirichlet"](L.tensor([1, 2])),
        lambda L, S: S["binomial"](L.tensor([3]), L.tensor([0.5])),
        lambda L, S: S["binomial"](L.tensor([3.0]), L.tensor([1])),
        lambda L, S: S["binomial"](L.tensor([3.0]), L.tensor([0.5], dtype=L.float64)),
        lambda L, S: S["binomial"](L.tensor([3.0, 2.0]), L.tensor([0.5, 0.2, 0.1])),
    ],
)
def test_sampler_errors_are_torchs(call):
    samplers = {
        gt: {"poisson": _samplers.poisson, "gamma": _samplers.standard_gamma,
             "dirichlet": _samplers.sample_dirichlet, "binomial": _samplers.binomial},
        torch: {"poisson": torch.poisson, "gamma": torch._standard_gamma,
                "dirichlet": torch._sample_dirichlet, "binomial": torch.binomial},
    }  # fmt: skip
    errors = []
    for lib in (gt, torch):
        with pytest.raises(Exception) as info:
            call(lib, samplers[lib])
        errors.append((info.type, str(info.value)))
    (ours, our_message), (theirs, their_message) = errors
    assert ours is theirs
    assert our_message.startswith(their_message)  # tensor-core's broadcast error says more


def test_a_failing_sampler_keeps_the_draws_before_the_error_as_torch():
    """torch checks the rates element by element: the elements before the bad one have
    drawn, and the generator stays advanced after the error."""
    after = []
    for lib, poisson in ((gt, _samplers.poisson), (torch, torch.poisson)):
        lib.manual_seed(0)
        lib.randn(1, dtype=lib.float64)  # a cached normal, kept through the error
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            poisson(lib.tensor([3.0, 20.0, -1.0, 2.0]))
        after.append((lib.randn(3, dtype=lib.float64).numpy(), lib.rand(2).numpy()))
    for a, b in zip(*after):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_and_inf_parameters_draw_as_torch(dtype):
    a = np.array([np.nan, np.inf, 1.0], dtype=dtype)
    for ours, theirs in (
        (_samplers.standard_gamma, torch._standard_gamma),
        (_samplers.sample_dirichlet, torch._sample_dirichlet),
    ):
        out = _twice(
            lambda L, f=ours: f(gt.tensor(a)),
            lambda L, f=theirs: f(torch.tensor(a)),
            seed=0,
            cached_normal=False,
        )
        _assert_same(out)
    out = _twice(
        lambda L: _samplers.binomial(gt.tensor([5.0, 5.0], dtype=getattr(gt, dtype)),
                                     gt.tensor([np.nan, 0.3], dtype=getattr(gt, dtype))),
        lambda L: torch.binomial(torch.tensor([5.0, 5.0], dtype=getattr(torch, dtype)),
                                 torch.tensor([np.nan, 0.3], dtype=getattr(torch, dtype))),
        seed=0,
        cached_normal=False,
    )  # fmt: skip
    _assert_same(out)


def test_nan_rate_raises_as_torch():
    for lib, poisson in ((gt, _samplers.poisson), (torch, torch.poisson)):
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            poisson(lib.tensor([np.nan]))


def test_standard_gamma_grad_is_torchs():
    alpha = np.concatenate([[0.5, 2.0, 8.5, 20.0, 20.0, 20.0, 1e-3], R.gamma(1, 5, 200)])
    x = np.concatenate([[0.3, 1.5, 8.0, 19.0, 22.0, 40.0, 1e-20], R.gamma(alpha[7:], 1.0)])
    ours = _implicit_grads.standard_gamma_grad(alpha, x)
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)
    ours32 = _implicit_grads.standard_gamma_grad(alpha.astype("float32"), x.astype("float32"))
    theirs32 = torch._standard_gamma_grad(
        torch.tensor(alpha, dtype=torch.float32), torch.tensor(x, dtype=torch.float32)
    ).numpy()
    assert ours32.dtype == np.float32
    np.testing.assert_allclose(ours32, theirs32, rtol=2e-6)


def test_dirichlet_grad_is_torchs():
    alpha = np.concatenate([[1.0, 0.5, 8.0, 3.0, 0.3], R.uniform(0.05, 20, 300)])
    beta = np.concatenate([[2.0, 0.5, 9.0, 0.2, 30.0], R.uniform(0.05, 20, 300)])
    x = R.beta(alpha, beta)
    x[:5] = [0.3, 0.5, 0.45, 0.99, 0.001]
    total = alpha + beta
    ours = _implicit_grads.dirichlet_grad(x, alpha, total)
    theirs = torch._dirichlet_grad(
        torch.tensor(x), torch.tensor(alpha), torch.tensor(total)
    ).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-11, atol=1e-300)


def test_digamma_is_torchs():
    x = np.concatenate([[1.0, 10.0, 1e-8, 1e20, -2.5, -0.3], R.uniform(0, 50, 100)])
    np.testing.assert_allclose(
        _implicit_grads.digamma(x), torch.digamma(torch.tensor(x)).numpy(), rtol=1e-13
    )
    # ATen's digamma_one (the implicit gradients' own) is +inf at 0 and at negative
    # integers, where torch.digamma gives -inf and nan; no gamma or Dirichlet parameter
    # reaches them
    assert np.isposinf(_implicit_grads.digamma(np.array([0.0, -1.0, -3.0]))).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [3, 16, 37])
def test_the_tensor_core_samplers_the_distributions_call_are_torchs(dtype, n):
    """What the other families draw with (tensor-core's ops), bit for bit: ``normal`` (the
    scalar path below 16 values and the vectorised one from 16), ``rand``, ``uniform_``
    with bounds, ``exponential_``, ``bernoulli`` and ``multinomial``."""
    draws = []
    for lib in (gt, torch):
        dt = getattr(lib, dtype)
        lib.manual_seed(13)
        p = lib.rand(n, dtype=dt)
        draws.append(
            [
                lib.normal(lib.zeros(n, dtype=dt), lib.full((n,), 2.0, dtype=dt)),
                lib.empty(n, dtype=dt).normal_(),
                lib.rand(n, dtype=dt),
                lib.empty(n, dtype=dt).uniform_(lib.finfo(dt).eps - 1, 1),
                lib.empty(n, dtype=dt).uniform_(lib.finfo(dt).tiny, 1),
                lib.empty(n, dtype=dt).exponential_(),
                lib.bernoulli(p),
                lib.multinomial(lib.stack([p, 1 - p]), 5, True),
                lib.rand(2, dtype=dt),
            ]
        )
    for ours, theirs in zip(*draws):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
