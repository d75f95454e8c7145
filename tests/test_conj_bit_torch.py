"""The conjugate and negative bits against torch 2.13: ``conj()`` of a complex tensor is a
lazy view (``is_conj()``), ``imag`` of one a negative view (``is_neg()``), writes through
either reach the tensor they view (conjugated, negated) and writes into that tensor reach
them; ``resolve_conj``/``resolve_neg``/``conj_physical``/``conj_physical_``; torch's
refusals (``numpy()``, ``view_as_real``); gradients (Note [The conjugate and negative
bits] in tensor-core's ``lazy_views.py``).

Each program runs with ``torch`` bound to gradstack and to torch and returns what it
observed (values, flags); the two must be equal.  What is not torch's, on purpose or not
yet, is tested as such at the end: ``data_ptr()`` of a lazy view is its mirror's, and an
in-place write that autograd records into a storage with a live lazy view is refused.
"""

from __future__ import annotations

import gc

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _plain(x):
    """Comparable values: tensors as (dtype, lists), recursively."""
    if isinstance(x, (gs.Tensor, torch.Tensor)):
        x = x.detach().resolve_conj().resolve_neg()
        return str(x.dtype).split(".")[-1], tuple(x.shape), np.round(x.numpy(), 6).tolist()
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    return x


def _agree(program):
    ours, theirs = program(gs), program(torch)
    assert _plain(ours) == _plain(theirs)


def _z(L, dtype="complex64"):
    return L.tensor([[1 + 2j, 3 - 4j, -5j], [2.5 + 0j, -1 - 1j, 0.5 + 7j]], dtype=getattr(L, dtype))


def flags(L):
    z = _z(L)
    c = z.conj()
    return (
        c.is_conj(), c.is_neg(), c._is_view(), c._base is z,
        c.conj().is_conj(), c.conj()._base is z,
        c.resolve_conj().is_conj(), c.resolve_conj()._is_view(), z.resolve_conj() is z,
        c.clone().is_conj(), c.contiguous().is_conj(), c.detach().is_conj(),
        c[0].is_conj(), c.t().is_conj(), c.reshape(3, 2).is_conj(), c.view(6).is_conj(),
        c.to(L.complex64).is_conj(), c.to(L.complex128).is_conj(),
        (c * 2).is_conj(), (c + 0).is_conj(), L.is_conj(c), L.resolve_conj(c).is_conj(),
        c.real.is_neg(), c.imag.is_neg(), c.imag.is_conj(), c.imag._base is z,
        c.imag.resolve_neg().is_neg(), c.imag.clone().is_neg(), (c.imag * 2).is_neg(),
        c.conj_physical().is_conj(), L.conj_physical(c).is_conj(),
        L.tensor([1.0]).conj().is_conj(), L.tensor([1]).conj().is_conj(),
        L.tensor([1.0]).is_neg(), L.tensor([1.0]).resolve_neg().is_neg(),
    )  # fmt: skip


def values(L):
    z = _z(L)
    c = z.conj()
    return (c, c.real, c.imag, c.conj(), c.t(), c[1, 1:], c.sum(), c.abs(), c @ c.t(),
            c.imag.resolve_neg(), c.tolist(), repr(c).replace("gradstack", "torch"))  # fmt: skip


def write_through_conj(L):
    z = _z(L)
    c = z.conj()
    out = []
    c[0, 0] = 5 + 5j
    out.append(z.clone())
    c.mul_(1j)
    out.append(z.clone())
    c[1:, 1:].add_(1)
    out.append(z.clone())
    c.t()[2].fill_(2 - 3j)
    out.append(z.clone())
    c.detach()[0, 1] = 7j
    out.append(z.clone())
    c.copy_(L.ones(2, 3, dtype=L.complex64) * (1 + 1j))
    out.append(z.clone())
    c.conj_physical_()
    out.append((z.clone(), c.is_conj()))
    return out, c


def read_through_base(L):
    z = _z(L)
    c = z.conj()
    i = c.imag
    out = [c.clone(), i.clone()]
    z[1] = 9 - 9j
    out += [c.clone(), i.clone()]
    z.mul_(2)
    out += [c.clone(), i.clone()]
    z[0].real.fill_(-1)
    out += [c.clone(), i.clone()]
    return out


def write_through_neg(L):
    z = _z(L)
    c = z.conj()
    n = c.imag
    n[0] = 10.0
    out = [z.clone(), c.clone()]
    n.mul_(2)
    out += [z.clone(), c.clone()]
    c.real.add_(100)
    out += [z.clone(), c.clone(), n.clone()]
    return out


def two_views(L):
    z = _z(L)
    a, b = z.conj(), z[1].conj()
    a[1, 0] = 4j
    out = [b.clone(), z.clone()]
    b.sub_(1)
    out += [a.clone(), z.clone()]
    return out


def strided_base(L):
    big = L.arange(24, dtype=L.float64).reshape(4, 6)
    z = L.complex(big, -big)[:, ::2].t()  # non-contiguous
    c = z.conj()
    c[1] = 1j
    out = [z.clone(), c.clone(), c.is_contiguous()]
    z[:, 0] = 3 + 3j
    out += [c.clone()]
    return out


def conj_of_conj_writes(L):
    z = _z(L, "complex128")
    p = z.conj().conj()
    p[0, 0] = 8 + 8j
    return z, p, p.is_conj()


def empty_and_expanded(L):
    e = L.ones(0, 3, dtype=L.complex64).conj()
    x = L.tensor([1 + 1j]).expand(3)
    c = x.conj()
    return e, e.is_conj(), c, c.is_conj()


def gradients(L):
    a = L.tensor([1 + 2j, 3 - 1j, -0.5 + 0.25j], dtype=L.complex128, requires_grad=True)
    w = L.tensor([2 + 1j, 1j, -1 + 0j], dtype=L.complex128)
    (a.conj() * w).abs().sum().backward()
    g1 = a.grad.clone()
    a.grad = None
    c = a.conj()
    (c.real * 2 + c.imag * 3 - c.imag.resolve_neg() ** 2).sum().backward()
    g2 = a.grad.clone()
    a.grad = None
    b = a.clone().conj()
    (b.conj() * w).sum().abs().backward()
    g3 = a.grad.clone()
    return g1, g2, g3, c.grad_fn.name(), b.conj().grad_fn.name()


def errors(L):
    c = _z(L).conj()
    out = []
    for f in (lambda: c.numpy(), lambda: L.view_as_real(c), lambda: c.imag.numpy()):
        try:
            f()
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the outcome compared
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize(
    "program",
    [
        flags, values, write_through_conj, read_through_base, write_through_neg, two_views,
        strided_base, conj_of_conj_writes, empty_and_expanded, gradients, errors,
    ],
)  # fmt: skip
def test_as_torch(program):
    _agree(program)


def test_gradcheck_through_lazy_views():
    a = gs.tensor([1 + 2j, 3 - 1j], dtype=gs.complex128, requires_grad=True)
    assert gs.autograd.gradcheck(lambda x: (x.conj() * x.conj().imag).sum(), (a,))
    assert gs.autograd.gradgradcheck(lambda x: (x.conj() * (1 + 2j)).abs(), (a,))
    assert gs.autograd.gradcheck(lambda x: x.conj()[1:].real * x.conj().imag[:1], (a,))


def test_in_place_write_recorded_by_autograd_is_refused():
    # Note [No in-place write through a lazy view under autograd] (graph-engine): torch
    # rebases the history with CopySlices; gradstack refuses rather than give a wrong
    # gradient, while the lazy view lives
    a = gs.tensor([1 + 2j], dtype=gs.complex128, requires_grad=True)
    b = a.clone()
    c = b.conj()
    with pytest.raises(NotImplementedError, match="lazy conj"):
        c.mul_(2)
    with pytest.raises(NotImplementedError, match="lazy conj"):
        b.mul_(2)
    with gs.no_grad():
        c.mul_(2)
    assert b.tolist() == [2 + 4j]
    del c
    gc.collect()
    b.mul_(2)  # no lazy view left: recorded as usual
    b.abs().sum().backward()
    assert a.grad is not None


def test_data_ptr_is_the_mirrors():
    # not torch's: the mirror is a copy laid out as the input's memory
    z = gs.tensor([1 + 2j])
    assert z.conj().data_ptr() != z.data_ptr()
    assert z.conj().conj().data_ptr() == z.data_ptr()
