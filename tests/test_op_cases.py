"""The op sweep covers the whole op table (issue 34): every differentiable op of
gradstack's op table (``benchmarks/library_worker.op_sweep_ops``, the sweep's own list) has
a case in ``benchmarks/op_cases.py`` or is listed in ``op_cases.NO_TORCH_TWIN`` with the
reason; and the cases added for the op table's later ops (special functions, complex
numbers, FFTs, linalg factorisations) run in gradstack and give
torch's values and gradients at about 100 elements (as the sweep's check does)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import gradstack as gs  # noqa: E402
from library_worker import op_sweep_ops  # noqa: E402
from op_cases import NO_TORCH_TWIN, case  # noqa: E402

OPS = dict(op_sweep_ops())


def test_every_differentiable_op_has_a_case():
    missing = [
        name
        for name, kind in sorted(OPS.items())
        if name not in NO_TORCH_TWIN and case(name, 100, np.random.default_rng(0), kind) is None
    ]
    assert not missing, (
        f"{len(missing)} ops of the op table have no case in benchmarks/op_cases.py "
        f"(add a recipe to RECIPES, or to NO_TORCH_TWIN with the reason): {missing}"
    )


def test_no_torch_twin_names_ops_of_the_table():
    assert set(NO_TORCH_TWIN) <= set(OPS), set(NO_TORCH_TWIN) - set(OPS)


ADDED = [
    "_neg_view",
    "angle",
    "complex",
    "conj",
    "conj_physical",
    "erfc",
    "fft_c2c",
    "fft_c2r",
    "fft_r2c",
    "frexp",
    "i0",
    "i0_",
    "igamma",
    "igamma_",
    "igammac",
    "igammac_",
    "linalg_eig",
    "linalg_eigh",
    "linalg_lstsq",
    "linalg_lu",
    "linalg_pinv",
    "linalg_qr",
    "linalg_solve_triangular",
    "linalg_svd",
    "nextafter",
    "nextafter_",
    "polar",
    "softplus",
    "special_erfcx",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_zeta",
    "view_as_complex",
    "view_as_real",
]


def _run(lib, name):
    rng = np.random.default_rng(100)
    c = case(name, 100, rng, OPS[name])
    lib.manual_seed(0)
    tensors = [
        lib.from_numpy(np.array(a, copy=True)).requires_grad_(g) for a, g in zip(c.arrays, c.grad)
    ]
    out = c.build(lib)(*tensors)
    leaves = [t for t, g in zip(tensors, c.grad) if g]
    value = out.detach().resolve_conj().resolve_neg().numpy()
    grad_out = rng.standard_normal(value.shape)
    if np.iscomplexobj(value):
        grad_out = grad_out + 1j * rng.standard_normal(value.shape)
    grad_out = lib.from_numpy(grad_out.astype(value.dtype))
    grads = lib.autograd.grad(out, leaves, grad_out, allow_unused=True)
    return [value] + [None if g is None else g.numpy(force=True) for g in grads]


@pytest.mark.parametrize("name", [n for n in ADDED if n in OPS])
def test_added_case_is_torchs(name):
    ours, theirs = _run(gs, name), _run(torch, name)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4 * max(1.0, np.abs(b).max()))
