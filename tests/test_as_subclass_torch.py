"""Tensor.as_subclass against torch 2.13: the class, shared storage and version counter,
the AliasBackward0 node and gradients through it, torch's errors."""

from __future__ import annotations

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def _sub(L):
    class Marked(L.Tensor):
        pass

    return Marked


@pytest.mark.parametrize("L", [gs, torch], ids=["gradstack", "torch"])
def test_as_subclass(L):
    Marked = _sub(L)
    x = L.ones(2, requires_grad=True)
    z = x.as_subclass(Marked)
    assert type(z) is Marked and isinstance(z, L.Tensor)
    assert type(z.grad_fn).__name__ == "AliasBackward0"
    assert not z.is_leaf and z.requires_grad and z._base is x
    y = (x * 2).as_subclass(Marked)
    assert type(y.grad_fn).__name__ == "AliasBackward0" and y._is_view()
    (y * y).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]
    a = L.ones(2)
    b = a.as_subclass(Marked)
    assert b._is_view() and not b.requires_grad and b.grad_fn is None
    b.add_(1)
    assert a.tolist() == [2.0, 2.0] and a._version == 1 == b._version


@pytest.mark.parametrize("cls", [int, 3])
def test_errors_are_torchs(cls):
    for L in (gs, torch):
        with pytest.raises(TypeError) as e:
            L.ones(2).as_subclass(cls)
        if L is torch:
            want = str(e.value)
        else:
            got = str(e.value)
    assert got == want
