"""The activation kernels (_activation_kernels.pyx: GELU, SiLU, erf, erfinv, forward and
backward) and the ops that take them, against torch 2.13: float32 and float64, edge values
(+-inf, nan, -0.0, huge |x|, subnormals), layouts (transposed, sliced, 0-size, 0-d) and
the threaded path; the argument checks of the public kernels."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _activation_kernels, _kernels, kernels
from gradstack_tensor_tests_float32_checks import SIMD_COPIES, simd_copy

torch = pytest.importorskip("torch")
F = torch.nn.functional

RNG = np.random.default_rng(34)
EDGES = [0.0, -0.0, 1e-40, -1e-40, 1e-30, 3.5, -3.5, 5.8, -5.8, 10.0, -10.0, 60.0, -60.0,
         100.0, -100.0, 1e20, -1e20, 3e38, -3e38, np.inf, -np.inf, np.nan]  # fmt: skip

# (op name, gradstack, torch) of the forward ops
FORWARD = {
    "gelu": (lambda t: gt.OPS["gelu"](t, "none"), lambda t: F.gelu(t)),
    "gelu_tanh": (lambda t: gt.OPS["gelu"](t, "tanh"), lambda t: F.gelu(t, approximate="tanh")),
    "silu": (lambda t: gt.OPS["silu"](t), F.silu),
    "erf": (gt.erf, torch.erf),
    "leaky_relu": (lambda t: gt.OPS["leaky_relu"](t, 0.03), lambda t: F.leaky_relu(t, 0.03)),
}
# float32: torch's loops use Sleef's erf/exp/tanh (and, in GELU, an erf within ~1e-7
# absolutely), these compute them in double and round once: a few ulp, and ~1e-6 in
# absolute terms where GELU's 1 + erf(x / sqrt 2) cancels (Note [Activation kernels
# follow torch's formulas])
TOL = {"float32": dict(rtol=2e-6, atol=2e-6), "float64": dict(rtol=1e-13, atol=1e-15)}


def _inputs(dtype, n=4000, scale=4.0):
    x = np.concatenate([RNG.standard_normal(n) * scale, EDGES])
    return x.astype(dtype)


def _close(got, want, dtype, **tol):
    got = np.asarray(got)
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.dtype == want.dtype
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, **{**TOL[dtype], **tol})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_matches_torch(name, dtype):
    ours, theirs = FORWARD[name]
    x = _inputs(dtype)
    _close(ours(gt.tensor(x)).numpy(), theirs(torch.tensor(x)), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erfinv_matches_torch(dtype):
    y = np.concatenate([RNG.uniform(-1, 1, 4000), [0.0, -0.0, 1e-40, 0.7, -0.7, 0.99999,
                        -0.99999, 1.0, -1.0, 1.5, -2.0, np.inf, np.nan]]).astype(dtype)  # fmt: skip
    # near +-1 erfinv is ill-conditioned (Note in test_special_functions.py)
    tol = {"float32": 4e-6, "float64": 4e-13}[dtype]
    _close(gt.erfinv(gt.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)), dtype, rtol=tol,
           atol=tol)  # fmt: skip


def test_float32_erf_is_within_an_ulp_of_the_true_value():
    x = np.concatenate([RNG.standard_normal(200_000) * 2, np.float32(2.0) ** -np.arange(149),
                        np.linspace(-4.5, 4.5, 100_001)]).astype(np.float32)  # fmt: skip
    from scipy.special import erf as exact

    got = kernels.erf(x).astype(np.float64)
    want = exact(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - want) <= ulp).all()
    assert np.array_equal(np.signbit(kernels.erf(np.array([0.0, -0.0], np.float32))), [0, 1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_matches_torch(approximate, dtype):
    x = _inputs(dtype)
    g = RNG.standard_normal(x.shape).astype(dtype)
    got = gt.OPS["gelu_backward"](gt.tensor(g), gt.tensor(x), approximate).numpy()
    want = torch.ops.aten.gelu_backward(torch.tensor(g), torch.tensor(x), approximate=approximate)
    # where x < -5 the two terms of the derivative cancel, and torch's tanh rounds to -1
    # sooner than the correctly rounded one: ~1e-6 of |g| in float32, ~1e-15 in float64
    _close(got, want, dtype, atol={"float32": 5e-6, "float64": 1e-13}[dtype])


def _torch_grad(f, x, g):
    xt = torch.tensor(x, requires_grad=True)
    f(xt).backward(torch.tensor(g))
    return xt.grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_kernels_match_torch_autograd(dtype):
    x = _inputs(dtype)
    g = RNG.standard_normal(x.shape).astype(dtype)
    _close(kernels.silu_backward(g, x), _torch_grad(F.silu, x, g), dtype)
    _close(kernels.erf_backward(g, x), _torch_grad(torch.erf, x, g), dtype)
    y = np.concatenate([RNG.uniform(-0.99, 0.99, 4000), [0.0, -0.0]]).astype(dtype)
    gy = RNG.standard_normal(y.shape).astype(dtype)
    tol = {"float32": 2e-5, "float64": 1e-12}[dtype]  # exp(erfinv(y)**2) magnifies
    _close(kernels.erfinv_backward(gy, y), _torch_grad(torch.erfinv, y, gy), dtype, rtol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(FORWARD))
def test_layouts_and_sizes(name, dtype):
    ours, theirs = FORWARD[name]
    base = RNG.standard_normal((6, 5, 4)).astype(dtype)
    views = {
        "transposed": lambda a: a.permute(2, 0, 1),
        "sliced": lambda a: a[:, ::2, 1:],
    }
    for make in views.values():
        got = ours(make(gt.tensor(base)))
        want = theirs(make(torch.tensor(base)))
        _close(got.numpy(), want, dtype)
    # a dense permutation keeps its layout (as numpy's and torch's loops)
    assert ours(gt.tensor(base).permute(2, 0, 1)).stride() == (1, 20, 4)
    for shape in [(0,), (3, 0, 2), (), (1,), (7,), (3, 1, 5, 2)]:
        x = RNG.standard_normal(shape).astype(dtype)
        got = ours(gt.tensor(x))
        assert tuple(got.shape) == shape
        _close(got.numpy(), theirs(torch.tensor(x)), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_threads_give_the_same_bits(dtype):
    n = _activation_kernels.ACTIVATION_THRESHOLD * 8 + 3
    x = (RNG.standard_normal(n) * 3).astype(dtype)
    g = RNG.standard_normal(n).astype(dtype)
    y = np.clip(x / 4, -1, 1)
    calls = [
        lambda: kernels.gelu(x), lambda: kernels.gelu(x, "tanh"), lambda: kernels.erf(x),
        lambda: kernels.silu(x), lambda: kernels.erfinv(y),
        lambda: kernels.gelu_backward(g, x), lambda: kernels.gelu_backward(g, x, "tanh"),
        lambda: kernels.silu_backward(g, x), lambda: kernels.erf_backward(g, x),
        lambda: kernels.erfinv_backward(g, y), lambda: kernels.leaky_relu(x, 0.1),
        lambda: kernels.leaky_relu_backward(g, x, 0.1),
    ]  # fmt: skip
    old = _kernels.get_num_threads()
    try:
        _kernels.set_num_threads(1)
        one = [f() for f in calls]
        _kernels.set_num_threads(2)
        two = [f() for f in calls]
    finally:
        _kernels.set_num_threads(old)
    for k, (a, b) in enumerate(zip(one, two)):
        differ = np.flatnonzero((a != b) & ~(np.isnan(a) & np.isnan(b)))
        assert differ.size == 0, (k, differ[:5], a[differ[:5]], b[differ[:5]], x[differ[:5]])
    _close(one[0], F.gelu(torch.tensor(x)), dtype)


@pytest.mark.parametrize("avx", SIMD_COPIES)
def test_every_simd_copy_matches_torch(avx):
    x = _inputs("float32")
    with simd_copy(avx):
        for ours, theirs in FORWARD.values():
            _close(ours(gt.tensor(x)).numpy(), theirs(torch.tensor(x)), "float32")


def test_silu_in_place():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    t = gt.tensor(x)
    gt.OPS["silu_"](t)
    _close(t.numpy(), F.silu(torch.tensor(x)), "float32")
    t = gt.tensor(x.T.copy()).t()  # a transposed, writable view
    gt.OPS["silu_"](t)
    _close(t.numpy(), F.silu(torch.tensor(x)), "float32")


def test_float16_keeps_the_numpy_path():
    x = RNG.standard_normal(50).astype(np.float16)
    got = gt.OPS["gelu"](gt.tensor(x), "none")
    assert got.dtype == gt.float16
    np.testing.assert_allclose(got.numpy(), F.gelu(torch.tensor(x)).numpy(), rtol=2e-3,
                               atol=2e-3)  # fmt: skip


def test_arguments_are_checked_before_memory_is_touched():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match="gelu: x"):
        kernels.gelu(x.astype(np.float16))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        kernels.erf([1.0, 2.0])
    with pytest.raises(ValueError, match="erfinv: x"):
        kernels.erfinv(x.T)
    with pytest.raises(ValueError, match="approximate"):
        kernels.gelu(x, "sigmoid")
    with pytest.raises(ValueError, match="approximate"):
        kernels.gelu_backward(x, x, "exact")
    with pytest.raises(TypeError, match="same dtype"):
        kernels.silu_backward(x, x.astype(np.float64))
    with pytest.raises(ValueError, match="shape"):
        kernels.erf_backward(x, np.ones((4, 3), np.float32))


def test_the_public_kernels_are_exported():
    for name in _activation_kernels.__all__:
        assert getattr(kernels, name) is getattr(_activation_kernels, name)
        assert name in kernels.__all__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_leaky_relu_is_torchs_to_the_bit(dtype):
    x = _inputs(dtype)
    g = RNG.standard_normal(x.shape).astype(dtype)
    for slope in (0.01, 0.2, -0.5, 0.0, 1e-30):
        want = F.leaky_relu(torch.tensor(x), slope).numpy()
        got = gt.OPS["leaky_relu"](gt.tensor(x), slope).numpy()
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))
        want = torch.ops.aten.leaky_relu_backward(torch.tensor(g), torch.tensor(x), slope, False)
        assert np.array_equal(
            kernels.leaky_relu_backward(g, x, slope), want.numpy(), equal_nan=True
        )
    t = gt.tensor(x.copy())
    gt.OPS["leaky_relu_"](t, 0.2)
    assert np.array_equal(t.numpy(), F.leaky_relu(torch.tensor(x), 0.2).numpy(), equal_nan=True)
    # a non-finite slope keeps numpy (the kernel refuses it)
    got = gt.OPS["leaky_relu"](gt.tensor(x), float("inf")).numpy()
    want = F.leaky_relu(torch.tensor(x), float("inf")).numpy()
    assert np.array_equal(got, want, equal_nan=True)
    with pytest.raises(ValueError, match="finite"):
        kernels.leaky_relu(x, float("nan"))
