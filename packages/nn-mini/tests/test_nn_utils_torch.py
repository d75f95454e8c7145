"""nn.utils against torch: ``clip_grad_norm_`` and ``clip_grad_value_`` (value for
value), ``get_total_norm`` and ``clip_grads_with_norm_``, the deprecated
``clip_grad_norm``, and ``parameters_to_vector``/``vector_to_parameters``."""

from __future__ import annotations

import math
import types
import warnings

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn.utils import clip_grad_norm_, clip_grad_value_
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

# ---------------------------------------------------------------------------------------
# gradient clipping


def _params_with_grads(lib, grads):
    ps = []
    for g in grads:
        if lib is torch:
            p = torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64))
            p.grad = None if g is None else torch.tensor(g)
        else:
            p = nn.Parameter(gt.zeros(g.shape, dtype=gt.float64))
            p.grad = None if g is None else gt.tensor(g)
        ps.append(p)
    return ps


GRADS = [np.array([[3.0, -4.0], [1.0, 0.5]]), np.array([12.0, -0.25]), np.array(2.0)]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    gp, tp = _params_with_grads(gt, GRADS), _params_with_grads(torch, GRADS)
    gn = clip_grad_norm_(gp, max_norm, norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert gn.dtype.name == str(tn.dtype)[6:] and gn.shape == tn.shape
    np.testing.assert_allclose(gn.item(), tn.item(), rtol=1e-12)
    for a, b in zip(gp, tp):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases_as_torch():
    ps = _params_with_grads(gt, [np.array([1.0]), np.array([2.0])])
    ps[1].grad = None  # skipped
    assert clip_grad_norm_(ps, 0.5).item() == pytest.approx(1.0)
    assert ps[0].grad.item() == pytest.approx(0.5 / (1 + 1e-6))
    assert clip_grad_norm_([nn.Parameter(gt.zeros(2))], 1.0).item() == 0.0  # no gradients
    single = nn.Parameter(gt.zeros(2))
    single.grad = gt.tensor([3.0, 4.0])
    assert clip_grad_norm_(single, 10.0).item() == 5.0  # a tensor, not a list
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        clip_grad_norm_((p for p in []), 1.0)
    bad = nn.Parameter(gt.zeros(1))
    bad.grad = gt.tensor([math.inf])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        clip_grad_norm_([bad], 1.0, error_if_nonfinite=True)
    assert isinstance((p for p in []), types.GeneratorType)


@pytest.mark.parametrize("clip", [0.5, 3])
def test_clip_grad_value_matches_torch(clip):
    gp, tp = _params_with_grads(gt, GRADS), _params_with_grads(torch, GRADS)
    assert clip_grad_value_(gp, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    for a, b in zip(gp, tp):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf")])
def test_get_total_norm_and_clip_grads_with_norm(norm_type):
    rng = np.random.default_rng(2)
    grads = [rng.standard_normal(s) for s in [(3, 2), (5,)]]
    gn = gs.nn.utils.get_total_norm([gs.tensor(g) for g in grads], norm_type)
    tn = torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], norm_type)
    assert gn.item() == pytest.approx(tn.item(), rel=1e-14)
    gps = [gs.nn.Parameter(gs.zeros(g.shape, dtype=gs.float64)) for g in grads]
    tps = [torch.nn.Parameter(torch.zeros(g.shape, dtype=torch.float64)) for g in grads]
    for p, q, g in zip(gps, tps, grads):
        p.grad, q.grad = gs.tensor(g), torch.tensor(g)
    assert gs.nn.utils.clip_grads_with_norm_(gps, 0.5, gn) is None
    torch.nn.utils.clip_grads_with_norm_(tps, 0.5, tn)
    for p, q in zip(gps, tps):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-14)
    assert gs.nn.utils.get_total_norm([]).item() == torch.nn.utils.get_total_norm([]).item()


def test_get_total_norm_nonfinite_error_as_torch():
    for lib in (gs, torch):
        with pytest.raises(RuntimeError, match="non-finite, so it cannot be clipped"):
            lib.nn.utils.get_total_norm([lib.tensor([1.0, float("inf")])], error_if_nonfinite=True)


def test_clip_grad_norm_is_deprecated_like_torch():
    for lib in (gs, torch):
        w = lib.nn.Parameter(lib.tensor([3.0, 4.0]))
        w.grad = lib.tensor([3.0, 4.0])
        with pytest.warns(
            FutureWarning, match=r"`torch.nn.utils.clip_grad_norm` is now deprecated"
        ):
            total = lib.nn.utils.clip_grad_norm([w], 1.0)
        assert total.item() == 5.0
        assert w.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = gs.nn.Parameter(gs.tensor([3.0, 4.0]))
        w.grad = gs.tensor([3.0, 4.0])
        gs.nn.utils.clip_grad_norm_([w], 1.0)  # the in-place form does not warn


# ---------------------------------------------------------------------------------------
# parameter vectors


def test_parameters_to_vector_and_back():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in [(2, 3), (4,), ()]]
    gps = [gs.nn.Parameter(gs.tensor(a)) for a in arrays]
    tps = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    gv = gs.nn.utils.parameters_to_vector(gps)
    tv = torch.nn.utils.parameters_to_vector(tps)
    assert tuple(gv.shape) == tuple(tv.shape) == (11,)
    np.testing.assert_array_equal(gv.detach().numpy(), tv.detach().numpy())
    assert gv.requires_grad and gv.grad_fn is not None
    new = rng.standard_normal(11)
    gs.nn.utils.vector_to_parameters(gs.tensor(new), gps)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tps)
    for p, q in zip(gps, tps):
        assert tuple(p.shape) == tuple(q.shape)
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    for lib, ps in ((gs, gps), (torch, tps)):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], ps)
