"""A float32/float64 tensor's ``add_``/``sub_`` of a bfloat16 tensor with ``alpha`` against
torch 2.13: ``alpha`` times the operand is computed in the written tensor's dtype (it was
rounded to bfloat16, Muon's parameter update was 4e-6 off), while a bfloat16 tensor's own
``add_`` still rounds its scalar to bfloat16 (Note [bfloat16 add and sub round their
scalar])."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
P = RNG.standard_normal(64)
U = RNG.standard_normal(64).astype(np.float32)


@pytest.mark.parametrize("target", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("op", ["add_", "sub_"])
@pytest.mark.parametrize("alpha", [-0.0123456, 2, 0.5])
def test_inplace_alpha_with_a_bfloat16_operand_as_torch(target, op, alpha):
    out = []
    for L in (gs, torch):
        p = L.tensor(P, dtype=getattr(L, target))
        getattr(p, op)(L.tensor(U).bfloat16(), alpha=alpha)
        out.append(p.double().numpy())
    # (torch fuses the multiply-add; gradstack rounds the product first: a last-bit
    # difference at most, where the bfloat16 product was a thousand times larger)
    tol = {"float32": 2e-7, "float64": 1e-15, "bfloat16": 0}[target]
    np.testing.assert_allclose(out[0], out[1], rtol=tol, atol=tol)
