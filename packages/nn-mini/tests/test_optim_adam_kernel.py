"""optim.Adam and AdamW against torch.optim: the fused kernel (``kernels.adam_update_``)
and the tensor-op path, every option, five steps, float32 and float64."""

from __future__ import annotations

import itertools

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter
from gradstack_nn.optim import Adam, AdamW
from gradstack_nn.optim import adam as adam_module
from gradstack_nn_tests_oracle import step_both_optimizers
from gradstack_tensor.kernels import adam_update_

torch = pytest.importorskip("torch")

OPTIONS = [
    dict(betas=b, weight_decay=wd, amsgrad=a, maximize=m)
    for b, wd, a, m in itertools.product(
        [(0.9, 0.999), (0.3, 0.6)], [0.0, 0.1], [False, True], [False, True]
    )
]


def _ids(o):
    return ",".join(f"{k}={v}" for k, v in o.items() if v)


def run_both(cls, options, dtype, steps=5, layout="contiguous", lr=0.05):
    """``steps`` steps on the same parameters and gradients in gradstack and torch."""
    rng = np.random.default_rng(1)
    shapes = [(5, 3), (3,), (), (0, 4)]
    init = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    gcls, tcls = (Adam, torch.optim.Adam) if cls == "Adam" else (AdamW, torch.optim.AdamW)
    return step_both_optimizers(
        init,
        grads,
        layout,
        lambda params: gcls(params, lr=lr, **options),
        lambda params: tcls(params, lr=lr, foreach=False, **options),
    )


def assert_close(a, b, dtype):
    if dtype == np.float64:
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    else:  # torch's vectorised lerp and add(alpha=) fuse multiply-adds: an ulp per step
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("options", OPTIONS, ids=_ids)
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_five_steps_match_torch(cls, options, dtype, layout):
    gp, tp, gopt, topt = run_both(cls, options, dtype, layout=layout)
    for p, q in zip(gp, tp):
        assert_close(p.detach().numpy(), q.detach().numpy(), dtype)
        gs, ts = gopt.state[p], topt.state[q]
        assert list(gs) == list(ts)
        for key, b in ts.items():
            a = gs[key]
            assert a.dtype.name == str(b.dtype).removeprefix("torch.")
            assert_close(a.numpy(), b.numpy(), dtype)


@pytest.mark.parametrize("options", OPTIONS, ids=_ids)
@pytest.mark.parametrize("cls", ["Adam", "AdamW"])
def test_kernel_and_tensor_paths_agree(cls, options):
    """float64: the kernel and the tensor ops do the same operations in the same order."""
    a, _, _, _ = run_both(cls, options, np.float64, layout="contiguous")
    b, _, _, _ = run_both(cls, options, np.float64, layout="transposed")
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-15, atol=0)


def test_kernel_path_is_taken_and_bumps_versions(monkeypatch):
    calls = []
    real = adam_module._adam_update_
    monkeypatch.setattr(
        adam_module, "_adam_update_", lambda *a, **k: (calls.append(a[0].shape), real(*a, **k))
    )
    p = Parameter(gt.tensor([1.0, 2.0]))
    p.grad = gt.tensor([0.5, -1.0])
    opt = Adam([p], lr=0.1, amsgrad=True)
    v = p._version
    opt.step()
    opt.step()
    assert calls == [(2,), (2,)]
    assert p._version == v + 2
    assert opt.state[p]["step"].item() == 2.0
    assert opt.state[p]["exp_avg"]._version == 2


def test_the_tensor_path_without_the_kernel_matches_torch(monkeypatch):
    monkeypatch.setattr(adam_module, "_adam_update_", None)
    gp, tp, _, _ = run_both("Adam", dict(amsgrad=True), np.float32)
    for p, q in zip(gp, tp):
        assert_close(p.detach().numpy(), q.detach().numpy(), np.float32)


def test_large_parameter_on_threads_matches_one_thread():
    from gradstack_tensor import kernels

    rng = np.random.default_rng(2)
    n = 3 * kernels.PARALLEL_THRESHOLD + 5
    arrays = [rng.standard_normal(n).astype(np.float32) for _ in range(2)]
    results = []
    old = kernels.get_num_threads()
    try:
        for threads in (1, 2):
            kernels.set_num_threads(threads)
            p, g = arrays[0].copy(), arrays[1].copy()
            m, v, vmax = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
            for step in range(1, 4):
                adam_update_(
                    p,
                    g,
                    m,
                    v,
                    vmax,
                    lr=0.01,
                    beta1=0.9,
                    beta2=0.999,
                    eps=1e-8,
                    weight_decay=0.1,
                    step=float(step),
                    amsgrad=True,
                )
            results.append(p)
    finally:
        kernels.set_num_threads(old)
    np.testing.assert_array_equal(results[0], results[1])


def test_kernel_checks_its_arrays():
    p, g, m, v = (np.zeros(3) for _ in range(4))
    kw = dict(lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, step=1.0)
    with pytest.raises(ValueError, match="max_exp_avg_sq is None"):
        adam_update_(p, g, m, v, None, amsgrad=True, **kw)
    with pytest.raises(ValueError, match="share memory"):
        adam_update_(p, g, m, m, None, **kw)
    with pytest.raises(ValueError, match="same shape"):
        adam_update_(p, g, np.zeros(4), v, None, **kw)
    with pytest.raises(TypeError, match="same dtype"):
        adam_update_(p, g, m.astype(np.float32), v, None, **kw)
    with pytest.raises(ValueError, match="C-contiguous"):
        adam_update_(
            np.zeros((3, 2)).T, np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), None, **kw
        )
    with pytest.raises(TypeError):
        adam_update_(p, g, m, v, None, **{**kw, "lr": "x"})


def _numpy_adam(p, g, m, v, *, lr, beta1, beta2, eps, weight_decay, step, maximize, decoupled):
    """torch's single-tensor Adam in numpy, in the parameter's dtype, torch's order."""
    t = p.dtype.type
    g = -g if maximize else g
    if weight_decay:
        if decoupled:
            p = p * t(1 - lr * weight_decay)
        else:
            g = g + t(weight_decay) * p
    w = t(1 - beta1)
    m = m + w * (g - m) if abs(w) < 0.5 else g - (g - m) * (t(1) - w)
    v = v * t(beta2) + (t(1 - beta2) * g) * g
    d = np.sqrt(v) / t((1 - beta2**step) ** 0.5) + t(eps)
    return p + (t(-(lr / (1 - beta1**step))) * m) / d, m, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 8, 1001])
@pytest.mark.parametrize(
    "options",
    [
        dict(weight_decay=0.0, decoupled=False, beta1=0.9, maximize=False),
        dict(weight_decay=0.1, decoupled=True, beta1=0.9, maximize=True),
        dict(weight_decay=0.1, decoupled=False, beta1=0.3, maximize=False),
    ],
    ids=["plain", "adamw-maximize", "l2-large-lerp"],
)
def test_kernel_is_bitwise_the_numpy_transcription(dtype, n, options):
    """Each element, in the vector (SSE2) lanes and the scalar tail, does torch's operations
    in torch's order: bit for bit a numpy transcription in the same dtype."""
    rng = np.random.default_rng(3)
    p, g = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    m, v = np.zeros(n, dtype), np.zeros(n, dtype)
    wp, wm, wv = p.copy(), m.copy(), v.copy()
    kw = dict(lr=0.01, beta2=0.999, eps=1e-8, **options)
    for step in range(1, 6):
        g = rng.standard_normal(n).astype(dtype)
        adam_update_(p, g, m, v, None, step=float(step), **kw)
        wp, wm, wv = _numpy_adam(wp, g, wm, wv, step=float(step), **kw)
        np.testing.assert_array_equal(m, wm)
        np.testing.assert_array_equal(v, wv)
        np.testing.assert_array_equal(p, wp)
