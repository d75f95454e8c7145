"""``gradstack.fft`` against ``torch.fft`` 2.13: values and dtypes of every transform in
float32/float64/complex64/complex128 with ``n``/``s``, ``dim`` and ``norm``, their nodes
and gradients (``.grad`` compared with torch's, gradcheck in float64/complex128), the
frequency and shift helpers, torch's errors, and an FFT convolution."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(2013)
TOL = {
    "float32": (2e-5, 2e-5),
    "complex64": (2e-5, 2e-5),
    "float64": (1e-12, 1e-12),
    "complex128": (1e-12, 1e-12),
}


def _array(shape, dtype):
    a = RNG.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _name(d):
    return str(d).split(".")[-1]


# (function, kwargs, input shape, input kinds)
REAL, COMPLEX, BOTH = ("float32", "float64"), ("complex64", "complex128"), None
CASES = [
    ("fft", {}, (8,), BOTH),
    ("fft", {"n": 5, "norm": "ortho"}, (3, 8), BOTH),
    ("fft", {"n": 11, "dim": 0, "norm": "forward"}, (6, 2), BOTH),
    ("ifft", {}, (7,), BOTH),
    ("ifft", {"dim": 0, "norm": "ortho"}, (4, 3), BOTH),
    ("ifft", {"n": 10, "norm": "forward"}, (6,), BOTH),
    ("rfft", {}, (8,), REAL),
    ("rfft", {"n": 7, "norm": "ortho"}, (2, 9), REAL),
    ("rfft", {"dim": 0, "norm": "forward"}, (5, 3), REAL),
    ("irfft", {}, (5,), COMPLEX),
    ("irfft", {"n": 9}, (2, 5), COMPLEX),
    ("irfft", {"n": 4, "dim": 0, "norm": "ortho"}, (5, 2), COMPLEX),
    ("irfft", {"norm": "forward"}, (6,), REAL),
    ("hfft", {}, (5,), COMPLEX),
    ("hfft", {"n": 7, "norm": "ortho"}, (5,), COMPLEX),
    ("hfft", {"n": 6, "norm": "forward"}, (3, 4), BOTH),
    ("ihfft", {}, (8,), REAL),
    ("ihfft", {"n": 5, "norm": "ortho"}, (2, 7), REAL),
    ("fft2", {}, (3, 4, 5), BOTH),
    ("fft2", {"s": (3, 6), "norm": "ortho"}, (4, 5), BOTH),
    ("ifft2", {"dim": (0, 2)}, (3, 2, 4), BOTH),
    ("rfft2", {}, (3, 4, 6), REAL),
    ("rfft2", {"s": (5, 5), "norm": "forward"}, (4, 6), REAL),
    ("irfft2", {}, (3, 4, 6), COMPLEX),
    ("irfft2", {"s": (4, 7)}, (3, 4), COMPLEX),
    ("fftn", {}, (3, 4, 5), BOTH),
    ("fftn", {"dim": (0, 2), "s": (4, -1)}, (3, 4, 5), BOTH),
    ("fftn", {"s": (6,)}, (3, 4), BOTH),
    ("ifftn", {"norm": "ortho"}, (3, 4, 5), BOTH),
    ("ifftn", {"dim": (-1,)}, (2, 3), BOTH),
    ("rfftn", {"s": (5, 7)}, (3, 4, 5), REAL),
    ("rfftn", {"dim": (1, 0)}, (4, 6), REAL),
    ("irfftn", {"s": (4, 7), "norm": "forward"}, (3, 4, 5), COMPLEX),
    ("irfftn", {}, (3, 4, 5), COMPLEX),
    ("irfftn", {"dim": (0,)}, (5, 3), COMPLEX),
    ("hfft2", {}, (3, 4, 5), BOTH),
    ("hfft2", {"s": (3, 7), "norm": "ortho"}, (4, 5), COMPLEX),
    ("ihfft2", {}, (3, 4, 6), REAL),
    ("ihfft2", {"s": (5, 5), "norm": "forward"}, (4, 6), REAL),
    ("hfftn", {}, (3, 4, 5), COMPLEX),
    ("hfftn", {"dim": (0,), "s": (6,)}, (3, 4), COMPLEX),
    ("ihfftn", {}, (3, 4, 5), REAL),
    ("ihfftn", {"dim": (2, 0), "norm": "ortho"}, (3, 4, 5), REAL),
]


def _params():
    for fname, kwargs, shape, kinds in CASES:
        for dtype in kinds or REAL + COMPLEX:
            yield pytest.param(fname, kwargs, shape, dtype, id=f"{fname}-{kwargs}-{dtype}")


@pytest.mark.parametrize("fname, kwargs, shape, dtype", list(_params()))
def test_values_dtypes_and_gradients_as_torch(fname, kwargs, shape, dtype):
    a = _array(shape, dtype)
    res = []
    for L in (gs, torch):
        x = L.tensor(a, requires_grad=True)
        out = getattr(L.fft, fname)(x, **kwargs)
        w = L.tensor(_weights(out.shape, out.is_complex(), dtype))
        loss = (out * w).real.sum() if out.is_complex() else (out * w).sum()
        loss.backward()
        res.append((out, x.grad))
    (out, g), (tout, tg) = res
    assert _name(out.dtype) == _name(tout.dtype) and tuple(out.shape) == tuple(tout.shape)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    rtol, atol = TOL[_name(out.dtype)]
    scale = max(1.0, float(np.abs(tout.detach().resolve_conj().numpy()).max(initial=0)))
    assert out.is_conj() == tout.is_conj()  # (torch's ifft of a real input is a conj view)
    np.testing.assert_allclose(
        out.detach().resolve_conj().numpy(),
        tout.detach().resolve_conj().numpy(),
        rtol=rtol,
        atol=atol * scale,
    )
    assert g.dtype == x_dtype(dtype) and _name(tg.dtype) == dtype
    gscale = max(1.0, float(np.abs(tg.resolve_conj().numpy()).max(initial=0)))
    np.testing.assert_allclose(g.numpy(), tg.resolve_conj().numpy(), rtol=rtol, atol=atol * gscale)


def x_dtype(name):
    return getattr(gs, name)


_W = {}


def _weights(shape, complex_out, dtype):
    key = (tuple(shape), complex_out, dtype)
    if key not in _W:
        part = "float64" if dtype in ("float64", "complex128") else "float32"
        w = RNG.standard_normal(tuple(shape))
        if complex_out:
            w = (w + 1j * RNG.standard_normal(tuple(shape))).astype(
                "complex128" if part == "float64" else "complex64"
            )
        _W[key] = w.astype(w.dtype if complex_out else part)
    return _W[key]


GRADCHECK = [
    ("fft", {"n": 6, "norm": "ortho"}, (2, 5), "float64"),
    ("fft", {}, (5,), "complex128"),
    ("ifft", {"dim": 0}, (4, 2), "float64"),
    ("ifft", {"n": 3}, (4,), "complex128"),
    ("rfft", {}, (6,), "float64"),
    ("rfft", {"n": 7, "norm": "forward"}, (5,), "float64"),
    ("irfft", {}, (4,), "complex128"),
    ("irfft", {"n": 7, "norm": "ortho"}, (4,), "complex128"),
    ("hfft", {"n": 6}, (4,), "complex128"),
    ("ihfft", {}, (5,), "float64"),
    ("fft2", {}, (3, 4), "complex128"),
    ("rfft2", {"norm": "ortho"}, (3, 4), "float64"),
    ("irfft2", {"s": (3, 5)}, (3, 3), "complex128"),
    ("fftn", {"dim": (0, 2)}, (2, 2, 3), "float64"),
    ("ifftn", {"s": (3, 2)}, (2, 2), "complex128"),
    ("rfftn", {}, (2, 3, 4), "float64"),
    ("rfftn", {"dim": (0, 2), "norm": "forward"}, (3, 2, 5), "float64"),
    ("rfft", {"n": 2}, (3, 2), "float64"),
    ("rfft", {}, (1,), "float64"),
    ("rfft2", {"dim": (1, 0)}, (5, 3), "float64"),
    ("irfftn", {}, (2, 3, 3), "complex128"),
    ("hfft2", {}, (3, 3), "complex128"),
    ("ihfftn", {}, (2, 3, 4), "float64"),
    ("fftshift", {}, (3, 4), "complex128"),
    ("ifftshift", {"dim": 1}, (3, 5), "float64"),
]


@pytest.mark.parametrize(
    "fname, kwargs, shape, dtype", GRADCHECK, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in GRADCHECK]
)
def test_gradcheck_and_gradgradcheck(fname, kwargs, shape, dtype):
    x = gs.tensor(_array(shape, dtype), requires_grad=True)

    def f(t):
        return getattr(gs.fft, fname)(t, **kwargs)

    assert gs.autograd.gradcheck(f, (x,))
    assert gs.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64", None])
@pytest.mark.parametrize("n, d", [(1, 1.0), (4, 1.0), (5, 0.5), (8, 0.1), (7, 3)])
def test_frequencies_as_torch(n, d, dtype):
    for fname in ("fftfreq", "rfftfreq"):
        kw = {} if dtype is None else {"dtype": getattr(gs, dtype)}
        tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        a = getattr(gs.fft, fname)(n, d, **kw)
        t = getattr(torch.fft, fname)(n, d, **tkw)
        assert _name(a.dtype) == _name(t.dtype)
        np.testing.assert_array_equal(a.numpy(), t.numpy())


SHIFTS = [((5,), None), ((4, 5), None), ((4, 5), 0), ((3, 4, 5), (0, 2)), ((6,), (-1,))]


@pytest.mark.parametrize("shape, dim", SHIFTS)
def test_shifts_as_torch(shape, dim):
    a = _array(shape, "complex64")
    for fname in ("fftshift", "ifftshift"):
        r = getattr(gs.fft, fname)(gs.tensor(a), dim=dim)
        t = getattr(torch.fft, fname)(torch.tensor(a), dim=dim)
        np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_integer_input_is_promoted_as_torch():
    for fname in ("fft", "rfft", "ihfft", "fft2", "rfftn"):
        a = getattr(gs.fft, fname)(gs.arange(8).reshape(2, 4))
        t = getattr(torch.fft, fname)(torch.arange(8).reshape(2, 4))
        assert _name(a.dtype) == _name(t.dtype)
        np.testing.assert_allclose(a.resolve_conj().numpy(), t.resolve_conj().numpy(), atol=1e-5)


ERRORS = [
    "torch.fft.rfft(torch.ones(4, dtype=torch.complex64))",
    "torch.fft.rfftn(torch.ones(4, dtype=torch.complex64))",
    "torch.fft.fft(torch.ones(4), n=0)",
    "torch.fft.irfft(torch.ones(1, dtype=torch.complex64))",
    "torch.fft.fft(torch.ones(4), norm='bogus')",
    "torch.fft.fft(torch.ones(4), dim=1)",
    "torch.fft.fft(torch.tensor(1.0))",
    "torch.fft.fftn(torch.ones(4, 4), dim=(0, 0))",
    "torch.fft.fftn(torch.ones(4, 4), s=(2, 2), dim=(0,))",
    "torch.fft.fftn(torch.ones(4), s=(2, 2))",
    "torch.fft.fftn(torch.ones(4, 4), s=(0, 2))",
    "torch.fft.fft('abc')",
]


@pytest.mark.parametrize("src", ERRORS)
def test_errors_as_torch(src):
    with pytest.raises(Exception) as te:
        eval(src, {"torch": torch})
    with pytest.raises(type(te.value)) as ge:
        eval(src, {"torch": gs})
    if isinstance(te.value, TypeError):
        return  # (torch's argument parser words its own message)
    assert str(te.value).split("\n")[0] in str(ge.value), (str(ge.value), str(te.value))


def test_fft_convolution_as_torch():
    """A 1-d convolution by FFT (zero-padded rfft product, irfft), with a learnable
    kernel: the same output and gradients as torch, and as the direct convolution."""
    signal = RNG.standard_normal((2, 16)).astype(np.float32)
    kernel = RNG.standard_normal(5).astype(np.float32)
    res = []
    for L in (gs, torch):
        s, k = L.tensor(signal, requires_grad=True), L.tensor(kernel, requires_grad=True)
        n = 16 + 5 - 1
        out = L.fft.irfft(L.fft.rfft(s, n=n) * L.fft.rfft(k, n=n), n=n)
        (out**2).mean().backward()
        res.append((out.detach().numpy(), s.grad.numpy(), k.grad.numpy()))
    for a, b in zip(res[0], res[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    direct = np.stack([np.convolve(row, kernel) for row in signal])
    np.testing.assert_allclose(res[0][0], direct, atol=1e-4)


def test_spectral_filter_module_trains_as_torch():
    """A module that filters in the frequency domain (a learnable complex gain per rfft
    bin, kept as a (bins, 2) real parameter) trained by SGD with momentum: torch's losses
    step for step.  (Not Adam: the imaginary parts of the DC and Nyquist gains do not reach
    the output, their gradients are rounding noise of either library, which Adam's
    normalisation would turn into steps of the learning rate.)"""
    x = RNG.standard_normal((4, 32)).astype(np.float64)
    y = np.roll(x, 3, axis=1) * 0.5
    losses = []
    for L in (gs, torch):
        gain = L.nn.Parameter(L.zeros(17, 2, dtype=L.float64))
        opt = L.optim.SGD([gain], lr=0.5, momentum=0.9)
        xs, ys = L.tensor(x), L.tensor(y)
        run = []
        for _ in range(30):
            opt.zero_grad()
            pred = L.fft.irfft(L.fft.rfft(xs) * L.view_as_complex(gain), n=32)
            loss = ((pred - ys) ** 2).mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-9)
    assert losses[0][-1] < losses[0][0] / 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "fname, kwargs, shape",
    [
        ("rfft", {}, (40, 64)),
        ("rfft", {"norm": "ortho"}, (40, 63)),
        ("rfft", {"dim": 0, "norm": "forward"}, (33, 20)),
        ("rfft2", {}, (3, 16, 17)),
        ("rfftn", {"dim": (2, 0), "norm": "ortho"}, (6, 3, 10)),
        ("ihfft", {}, (4, 11)),
    ],
)
def test_onesided_r2c_backward_is_torchs(fname, kwargs, shape, dtype):
    """Note [The onesided r2c backward as a c2r]: the gradient of a real-to-complex
    transform, against torch's zero-filled inverse c2c."""
    x = _array(shape, dtype)
    r = np.random.default_rng(5)
    grads = []
    for lib in (gs, torch):
        t = lib.tensor(x, requires_grad=True)
        y = getattr(lib.fft, fname)(t, **kwargs)
        g = r.standard_normal(tuple(y.shape)) + 1j * r.standard_normal(tuple(y.shape))
        g = lib.tensor(g.astype("complex64" if dtype == "float32" else "complex128"))
        r = np.random.default_rng(5)
        grads.append(lib.autograd.grad(y, t, g)[0].numpy())
    assert grads[0].dtype == grads[1].dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(grads[0], grads[1], rtol=0, atol=tol * np.abs(grads[1]).max())
