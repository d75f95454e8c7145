"""torch.stft / torch.istft (and the Tensor methods) against torch 2.13: values for
center and pad modes, windows shorter than n_fft, normalized, onesided, complex inputs and
windows, batches, return_complex=False; round trips; gradients (gradcheck in float64 and
against torch's); torch's errors and warnings."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:A window was not provided")

RNG = np.random.default_rng(11)
SIG = RNG.standard_normal(37)
SIG2 = RNG.standard_normal((3, 40))
CSIG = RNG.standard_normal(30) + 1j * RNG.standard_normal(30)


def _lib_args(L, kwargs):
    out = {}
    for k, v in kwargs.items():
        if k == "window":
            out[k] = None if v is None else L.from_numpy(np.array(v))
        else:
            out[k] = v
    return out


CASES = [
    (SIG, 8, {}),
    (SIG, 8, {"window": np.hanning(8), "hop_length": 3}),
    (SIG, 8, {"win_length": 5, "window": np.hanning(5)}),
    (SIG, 8, {"win_length": 6}),
    (SIG, 8, {"pad_mode": "constant"}),
    (SIG, 8, {"pad_mode": "replicate"}),
    (SIG, 8, {"pad_mode": "circular"}),
    (SIG, 8, {"center": False, "hop_length": 4}),
    (SIG, 8, {"normalized": True}),
    (SIG, 8, {"onesided": False}),
    (SIG2, 16, {"hop_length": 5, "window": np.hamming(16)}),
    (CSIG, 8, {}),
    (SIG, 8, {"window": np.hanning(8) + 0.5j}),
    (SIG, 9, {"hop_length": 2}),
    (SIG, 8, {"center": False, "win_length": 4, "align_to_window": True, "hop_length": 2}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_values(case, dtype):
    x, n_fft, kwargs = CASES[case]
    if dtype == "float32":
        x = x.astype(np.complex64 if np.iscomplexobj(x) else np.float32)
        if kwargs.get("window") is not None:
            w = np.asarray(kwargs["window"])
            kwargs = dict(
                kwargs, window=w.astype(np.complex64 if np.iscomplexobj(w) else np.float32)
            )
    got = gs.stft(gs.from_numpy(x), n_fft, return_complex=True, **_lib_args(gs, kwargs))
    want = torch.stft(torch.from_numpy(x), n_fft, return_complex=True, **_lib_args(torch, kwargs))
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    tol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)
    method = gs.from_numpy(x).stft(n_fft, return_complex=True, **_lib_args(gs, kwargs))
    np.testing.assert_array_equal(method.numpy(), got.numpy())


def test_return_complex_false_is_view_as_real():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = gs.stft(gs.from_numpy(SIG), 8, return_complex=False)
        want = torch.stft(torch.from_numpy(SIG), 8, return_complex=False)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


ICASES = [
    (SIG, 8, {"window": np.hanning(8)}, {"length": 37}),
    (SIG, 8, {"window": np.hanning(8)}, {}),
    (SIG2, 16, {"window": np.hamming(16), "hop_length": 5}, {"length": 40}),
    (SIG, 8, {"window": np.hanning(8), "normalized": True}, {"length": 37}),
    (SIG, 8, {"onesided": False, "window": np.hanning(8)}, {"length": 37}),
    (SIG, 8, {"center": False, "window": np.hanning(8) + 0.1}, {"center": False}),
    (SIG, 8, {"win_length": 6, "window": np.hanning(6), "hop_length": 2}, {"length": 37}),
    (SIG, 8, {"window": np.hanning(8) + 0.1, "center": False}, {"length": 45, "center": False}),
    (CSIG, 8, {"window": np.hanning(8)}, {"length": 30, "return_complex": True}),
]


@pytest.mark.parametrize("case", range(len(ICASES)))
def test_istft_values_and_round_trip(case):
    x, n_fft, skw, ikw = ICASES[case]
    values = []
    for L in (gs, torch):
        kw = _lib_args(L, skw)
        s = L.stft(L.from_numpy(x), n_fft, return_complex=True, **kw)
        ikwargs = dict(ikw)
        for k in ("hop_length", "win_length", "window", "normalized", "onesided"):
            if k in kw:
                ikwargs[k] = kw[k]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(L.istft(s, n_fft, **ikwargs).numpy())
    np.testing.assert_allclose(values[0], values[1], rtol=1e-10, atol=1e-12)
    if "length" in ikw and ikw["length"] == x.shape[-1]:
        np.testing.assert_allclose(values[0], x, rtol=1e-10, atol=1e-12)


def test_gradients():
    w = gs.from_numpy(np.hanning(8))
    x = gs.from_numpy(SIG[:20].copy()).requires_grad_()

    def f(t):
        return gs.view_as_real(gs.stft(t, 8, hop_length=3, window=w, return_complex=True))

    assert gs.autograd.gradcheck(f, (x,))
    assert gs.autograd.gradgradcheck(f, (x,))

    def g(t):
        s = gs.stft(t, 8, window=w, return_complex=True)
        return gs.istft(s * 1.5, 8, window=w, length=20)

    assert gs.autograd.gradcheck(g, (x,))
    grads = []
    for L in (gs, torch):
        t = L.from_numpy(SIG[:20].copy()).requires_grad_()
        win = L.from_numpy(np.hanning(8)).requires_grad_()
        s = L.stft(t, 8, hop_length=3, window=win, return_complex=True, pad_mode="reflect")
        y = L.istft(s, 8, hop_length=3, window=win, length=20)
        loss = (s.abs() ** 2).sum() + (y * L.arange(20.0, dtype=L.float64)).sum()
        grads.append([v.numpy() for v in L.autograd.grad(loss, (t, win))])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


def _error(f):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    return None


def _tail(message):
    """The words after torch's description of the call (which names torch's types)."""
    return message.split(") ")[-1] if message.startswith(("stft(", "istft(")) else message


X = np.arange(16.0)
ERRORS = {
    "no return_complex": lambda L: L.stft(L.from_numpy(X), 4),
    "int input": lambda L: L.stft(L.arange(16), 4, return_complex=True, center=False),
    "3-d input": lambda L: L.stft(L.ones(2, 2, 16), 4, return_complex=True, center=False),
    "n_fft too big": lambda L: L.stft(L.ones(8), 16, return_complex=True, center=False),
    "hop 0": lambda L: L.stft(L.ones(16), 4, hop_length=0, return_complex=True),
    "win too big": lambda L: L.stft(L.ones(16), 4, win_length=5, return_complex=True),
    "window size": lambda L: L.stft(L.ones(16), 4, window=L.ones(3), return_complex=True),
    "reflect too big": lambda L: L.stft(L.ones(3), 8, return_complex=True),
    "align with center": lambda L: L.stft(L.ones(16), 4, return_complex=True, align_to_window=True),
    "onesided complex": lambda L: L.stft(
        L.ones(16, dtype=L.complex64), 4, onesided=True, return_complex=True
    ),
    "istft real": lambda L: L.istft(L.ones(3, 5), 4),
    "istft freq": lambda L: L.istft(L.ones(4, 5, dtype=L.complex64), 4, onesided=True),
    "istft envelope": lambda L: L.istft(
        L.ones(3, 5, dtype=L.complex64), 4, window=L.hann_window(4), center=False
    ),
    "istft hop": lambda L: L.istft(L.ones(3, 5, dtype=L.complex64), 4, hop_length=5),
    "istft window": lambda L: L.istft(L.ones(3, 5, dtype=L.complex64), 4, window=L.ones(3)),
    "istft empty": lambda L: L.istft(L.ones(3, 0, dtype=L.complex64), 4),
    "istft list": lambda L: L.istft([1.0], 4),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    got, want = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert want is not None
    assert got is not None and got[0] is want[0], (got, want)
    if want[0] is not TypeError:
        assert _tail(got[1]) == _tail(want[1]), (got, want)


def test_warnings():
    from gradstack_tensor import short_time_fourier

    short_time_fourier._WARNED.clear()
    with pytest.warns(UserWarning, match="A window was not provided"):
        gs.stft(gs.ones(16), 4, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        gs.stft(gs.ones(16), 4, window=gs.ones(4), return_complex=False)
