"""The normalisations (functional/normalization.py, modules/normalization.py,
batchnorm.py, instancenorm.py) against torch: ``group_norm``, ``rms_norm``,
``local_response_norm`` and ``normalize`` to the second order in float64, the instance
norms' outputs, gradients and running statistics, module reprs, errors.  (``layer_norm``
and ``batch_norm``, ops of the registry, are compared node by node in
test_functional_nn_torch.py, BatchNorm1d in test_layers_torch.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_oracle import (
    assert_layer_matches_torch,
    assert_module_matches_torch,
    assert_program_matches_torch,
    assert_same_error,
    values_and_gradients,
)
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

_R = np.random.default_rng(21)
X = _R.uniform(-5, 5, (2, 3, 5, 6))
X1, V = _R.standard_normal((2, 3, 7)), _R.standard_normal((4, 6))
WC = _R.uniform(0.1, 0.5, 3)
_RL = np.random.default_rng(2)
XL, XL3, XL5 = (_RL.standard_normal(s) for s in [(2, 6, 5, 4), (2, 6, 7), (2, 4, 3, 2, 3)])

# name -> (fn(L, F, *tensors), arrays)
PROGRAMS = {
    "normalize": (lambda L, F, v: F.normalize(v), [V]),
    "normalize_p1": (lambda L, F, v: F.normalize(v, p=1, dim=0), [V]),
    "group_norm": (lambda L, F, x, w: F.group_norm(x, 3, w, w * 2), [X, WC]),
    "group_norm_one": (lambda L, F, x: F.group_norm(x, 1), [X]),
    "rms_norm": (lambda L, F, x: F.rms_norm(x, (5, 6)), [X]),
    "rms_norm_weight": (lambda L, F, v, w: F.rms_norm(v, (6,), w.repeat(2)), [V, WC]),
    "local_response_norm": (lambda L, F, x: F.local_response_norm(x, 3), [XL]),
    "local_response_norm_even": (
        lambda L, F, x: F.local_response_norm(x, 4, alpha=0.5, beta=0.6, k=2.0),
        [XL],
    ),
    "local_response_norm_3d": (lambda L, F, x: F.local_response_norm(x, 2, 0.3), [XL3]),
    "local_response_norm_5d": (lambda L, F, x: F.local_response_norm(x, 5, 1.0, 0.9), [XL5]),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    assert_program_matches_torch(*PROGRAMS[name])


def test_programs_are_not_trivial():
    """The gradients above are not all zero."""
    out, first, second = values_and_gradients(gs, *PROGRAMS["local_response_norm"])
    assert np.abs(first[0]).max() > 1e-3


MODULES = [
    ("GroupNorm", (3, 3)), ("GroupNorm", (1, 3, 1e-3, False)), ("RMSNorm", ((5, 6),)),
    ("GroupNorm", (3, 3, 1e-5, True, None, None)),
    ("RMSNorm", (6, 1e-4, False)), ("BatchNorm2d", (3,)), ("BatchNorm3d", (3,)),
]  # fmt: skip


@pytest.mark.parametrize("name, args", MODULES, ids=[f"{n}{a}" for n, a in MODULES])
def test_modules_match_torch(name, args):
    x = X[:, :, None] if name == "BatchNorm3d" else X
    assert_module_matches_torch(name, args, lambda L: L.tensor(x, dtype=L.float32))


@pytest.mark.parametrize("args", [(3,), (2, 0.1, 0.5, 2.0)], ids=str)
def test_local_response_norm_module_matches_torch(args):
    assert_module_matches_torch(
        "LocalResponseNorm", args, lambda L: L.tensor(XL, dtype=L.float32), eval=True
    )


# (channels, size, alpha, beta, k): torch's legacy window (never drops channel 0) and its
# hand-written backward, which is not the forward's derivative (torch's backward fails
# for size 1: its padded buffer is one channel short)
CROSS_MAP = [
    (5, 3, 0.3, 0.75, 1.5), (7, 5, 1.0, 0.6, 2.0), (3, 4, 0.5, 0.75, 1.0), (6, 2, 2.0, 0.9, 1.0),
    (2, 7, 0.3, 0.75, 1.0), (9, 3, 1e-4, 0.75, 1), (1, 3, 0.5, 0.5, 1.0), (8, 2, 0.7, 1.0, 0.5),
]  # fmt: skip


@pytest.mark.parametrize("channels, size, alpha, beta, k", CROSS_MAP, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cross_map_lrn2d_matches_torch(channels, size, alpha, beta, k, dtype):
    x = np.random.default_rng(channels * 10 + size).standard_normal((2, channels, 3, 4))
    g = np.random.default_rng(size).standard_normal(x.shape)
    results = []
    for L in (gs, torch):
        xt = L.tensor(x, dtype=getattr(L, dtype), requires_grad=True)
        layer = L.nn.CrossMapLRN2d(size, alpha, beta, k)
        y = layer(xt)
        (grad,) = L.autograd.grad(y, xt, L.tensor(g, dtype=getattr(L, dtype)))
        results.append((repr(layer), y.detach().numpy(), grad.numpy(), str(y.dtype)))
    (r1, y1, g1, d1), (r2, y2, g2, d2) = results
    assert r1 == r2 and d1.split(".")[-1] == d2.split(".")[-1]
    tol = 1e-12 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(y1, y2, rtol=tol, atol=tol)
    np.testing.assert_allclose(g1, g2, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_cross_map_lrn2d_non_contiguous_zero_size_and_half_as_torch(dtype):
    outs = []
    for L in (gs, torch):
        x = L.tensor(XL, dtype=getattr(L, dtype)).transpose(2, 3)
        y = L.nn.CrossMapLRN2d(3, 0.5)(x)
        empty = L.nn.CrossMapLRN2d(3)(L.zeros(0, 3, 2, 2))
        outs.append((y.float().numpy(), str(y.dtype).split(".")[-1], tuple(empty.shape)))
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=tol, atol=tol)
    assert outs[0][1:] == outs[1][1:]


def test_cross_map_lrn2d_is_not_local_response_norm():
    """The legacy window differs (as torch's): the table above tests something else."""
    x = gs.tensor(XL)
    a = gs.nn.CrossMapLRN2d(3, 0.5)(x)
    b = gs.nn.functional.local_response_norm(x, 3, 0.5)
    assert (a - b).abs().max().item() > 1e-3


def test_cross_map_lrn2d_differentiates_twice():
    """torch's backward raises under create_graph; gradstack's differentiates its formula:
    the second derivative is that of the first, checked by finite differences."""
    x = gs.tensor(XL, dtype=gs.float64, requires_grad=True)
    assert gs.autograd.gradgradcheck(lambda t: gs.nn.CrossMapLRN2d(3, 0.5, 0.7, 1.2)(t), (x,))


INSTANCE_NORMS = {
    "instance_norm2d": (lambda L: L.nn.InstanceNorm2d(3), X, {}),
    "instance_norm2d_affine": (lambda L: L.nn.InstanceNorm2d(3, affine=True), X, {}),
    "instance_norm1d_tracked": (lambda L: L.nn.InstanceNorm1d(3, track_running_stats=True), X1, {}),
    "instance_norm2d_unbatched": (lambda L: L.nn.InstanceNorm2d(3), X[0], {}),
    "instance_norm2d_no_bias": (lambda L: L.nn.InstanceNorm2d(3, affine=True, bias=False), X, {}),
    "instance_norm2d_tracked_momentum": (
        lambda L: L.nn.InstanceNorm2d(3, track_running_stats=True, momentum=0.3),
        X,
        {},
    ),
}


@pytest.mark.parametrize("name", sorted(INSTANCE_NORMS))
def test_instance_norms_match_torch(name):
    assert_layer_matches_torch(*INSTANCE_NORMS[name])


# the exception type and words, as torch's
ERRORS = {
    "group_norm_groups": lambda L: L.nn.functional.group_norm(L.ones(2, 3, 4), 2),
    "local_response_norm_dims": lambda L: L.nn.LocalResponseNorm(2)(L.ones(2, 6)),
    "instance_norm_features": lambda L: L.nn.InstanceNorm1d(3, affine=True)(L.ones(2, 4, 5)),
    "instance_norm_dims": lambda L: L.nn.InstanceNorm2d(3)(L.ones(2, 3)),
    "cross_map_lrn2d_dims": lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)),
}


def test_instance_norm_warns_as_torch_when_its_features_differ():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        gs.nn.InstanceNorm1d(3)(gs.ones(2, 4, 5))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    assert_same_error(ERRORS[name])
