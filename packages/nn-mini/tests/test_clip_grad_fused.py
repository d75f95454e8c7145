"""Note [clip_grad_norm_ on the arrays]: the fused path gives the bits of the tensor ops
it replaces and torch's values, bumps the gradients' versions, and leaves the cases it
does not take (other norms, mixed dtypes, non-contiguous gradients) to the tensor ops."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter
from gradstack_nn.utils import clip_grad
from gradstack_nn.utils.clip_grad import clip_grad_norm_

RNG = np.random.default_rng(3)
SHAPES = [(7, 5), (130,), (3, 4, 2), (1,), (0, 3)]


def _params(dtype, scale=1.0):
    ps = []
    for shape in SHAPES:
        p = Parameter(gt.from_numpy(RNG.standard_normal(shape).astype(dtype)))
        p.grad = gt.from_numpy((RNG.standard_normal(shape) * scale).astype(dtype))
        ps.append(p)
    return ps


def _by_tensor_ops(ps, max_norm):
    """clip_grad_norm_'s tensor ops, as before the fused path."""
    grads = [p.grad for p in ps]
    total = gt.stack([g.norm(2.0) for g in grads]).norm(2.0)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef)
    return total


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("scale", "max_norm"), [(1.0, 0.5), (1.0, 1e6), (1e-3, 1.0)])
def test_same_bits_as_the_tensor_ops(dtype, scale, max_norm):
    ps = _params(dtype, scale)
    copies = [Parameter(gt.from_numpy(p.detach().numpy().copy())) for p in ps]
    for c, p in zip(copies, ps):
        c.grad = gt.from_numpy(p.grad.numpy().copy())
    assert clip_grad._fused_arrays([p.grad for p in ps], 2.0) is not None
    versions = [p.grad._version for p in ps]
    total = clip_grad_norm_(ps, max_norm)
    want = _by_tensor_ops(copies, max_norm)
    assert total.dtype == want.dtype and total.numpy().tobytes() == want.numpy().tobytes()
    for p, c, v in zip(ps, copies, versions):
        assert p.grad.numpy().tobytes() == c.grad.numpy().tobytes()
        assert p.grad._version == v + 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    ps = _params(dtype)
    tps = []
    for p in ps:
        tp = torch.nn.Parameter(torch.from_numpy(p.detach().numpy().copy()))
        tp.grad = torch.from_numpy(p.grad.numpy().copy())
        tps.append(tp)
    total = clip_grad_norm_(ps, 0.7)
    t_total = torch.nn.utils.clip_grad_norm_(tps, 0.7)
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(total.numpy(), t_total.numpy(), rtol=tol)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=tol, atol=tol)


def test_cases_left_to_the_tensor_ops():
    ps = _params(np.float32)
    grads = [p.grad for p in ps]
    assert clip_grad._fused_arrays(grads, 1.0) is None  # another norm
    assert clip_grad._fused_arrays([], 2.0) is None
    mixed = grads[:1] + [gt.ones(3, dtype=gt.float64)]
    assert clip_grad._fused_arrays(mixed, 2.0) is None
    strided = gt.from_numpy(RNG.standard_normal((4, 6)).astype(np.float32)).t()
    assert clip_grad._fused_arrays(grads[:1] + [strided], 2.0) is None
    half = gt.ones(3, dtype=gt.float16)
    assert clip_grad._fused_arrays([half], 2.0) is None
    # a non-contiguous gradient is still clipped, by the tensor ops, with torch's values
    p = Parameter(gt.zeros(6, 4))
    p.grad = strided
    norm = np.linalg.norm(strided.numpy())
    total = clip_grad_norm_([p], 0.1)
    np.testing.assert_allclose(total.item(), norm, rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(p.grad.numpy()), 0.1, rtol=1e-5)


def test_a_nonfinite_norm_raises_before_any_gradient_is_scaled():
    ps = _params(np.float32)
    ps[1].grad.numpy()[3] = np.inf
    before = [p.grad.numpy().copy() for p in ps]
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    for p, b in zip(ps, before):
        assert p.grad.numpy().tobytes() == b.tobytes()
