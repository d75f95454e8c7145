"""``vdot`` is torch's own op (VdotBackward0), and the other products' node names are
torch's, with torch's values and gradients (real and complex)."""

from __future__ import annotations

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")

PRODUCTS = {
    "vdot": lambda L, a, b, A: L.vdot(a, b),
    "vdot method": lambda L, a, b, A: a.vdot(b),
    "dot": lambda L, a, b, A: L.dot(a, b),
    "inner 1-d": lambda L, a, b, A: L.inner(a, b),
    "inner 2-d": lambda L, a, b, A: L.inner(A, b),
    "inner 0-d": lambda L, a, b, A: L.inner(a, L.tensor(2.0)),
    "outer": lambda L, a, b, A: L.outer(a, b),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_nodes_values_and_gradients_are_torchs(name):
    out = []
    for L in (gs, torch):
        a = L.tensor([1.0, 2.0, -3.0], requires_grad=True)
        b = L.tensor([4.0, -5.0, 6.5], requires_grad=True)
        A = L.tensor([[1.0, 0.5, 2.0], [3.0, -1.0, 0.25]], requires_grad=True)
        y = PRODUCTS[name](L, a, b, A)
        y.sum().backward()
        grads = [t.grad.tolist() if t.grad is not None else None for t in (a, b, A)]
        out.append((y.grad_fn.name(), y.tolist(), grads))
    assert out[0] == out[1]


def test_complex_vdot_conjugates_its_first_operand_in_value_and_gradients():
    out = []
    for L in (gs, torch):
        c = L.tensor([1 + 2j, 3 - 1j, -0.5j], requires_grad=True)
        d = L.tensor([2 - 1j, 1 + 1j, 4.0 + 0j], requires_grad=True)
        y = L.vdot(c, d)
        (y * L.tensor(1 - 2j)).real.backward()
        out.append((y.grad_fn.name(), y.item(), c.grad.tolist(), d.grad.tolist()))
    assert out[0][0] == out[1][0]
    assert out[0][1] == pytest.approx(out[1][1])
    assert out[0][2] == pytest.approx(out[1][2]) and out[0][3] == pytest.approx(out[1][3])


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_vdot_gradcheck_and_forward_ad(dtype):
    dt = getattr(gs, dtype)
    a = gs.randn(4, dtype=dt, requires_grad=True)
    b = gs.randn(4, dtype=dt, requires_grad=True)
    assert gs.autograd.gradcheck(gs.vdot, (a, b))
    assert gs.autograd.gradgradcheck(gs.vdot, (a, b))
    import gradstack.autograd.forward_ad as fwAD

    ta, tb = gs.randn(4, dtype=dt), gs.randn(4, dtype=dt)
    with fwAD.dual_level():
        y = gs.vdot(fwAD.make_dual(a.detach(), ta), fwAD.make_dual(b.detach(), tb))
        tangent = fwAD.unpack_dual(y).tangent
    expected = gs.vdot(ta, b.detach()) + gs.vdot(a.detach(), tb)
    assert tangent.item() == pytest.approx(expected.item())


def test_vmap_of_vdot_is_vdot_per_sample():
    a = gs.tensor([[1.0 + 1j, 2.0], [0.5j, -1.0]])
    b = gs.tensor([[3.0, 1j], [2.0, 2.0 - 1j]])
    got = gs.vmap(gs.vdot)(a, b)
    assert got.tolist() == pytest.approx([gs.vdot(a[i], b[i]).item() for i in range(2)])
