"""Run one program on gradstack and on torch, and compare everything autograd computes.

A *case* is ``fn(L, *xs)`` written once for a library namespace ``L`` (``GS`` or torch's
module; both spell ``L.tensor``, ``L.where``, ``L.maximum`` ... the same way) on float64
inputs given as numpy arrays.  :func:`compare` runs it on both libraries and checks, in
float64 and with nan and inf in the same places:

- the output values;
- the first-order gradients for an incoming gradient that may hold inf and nan (``go``);
- the second-order gradients (``create_graph=True``, then the gradient of
  ``sum(w * grad)`` for fixed weights ``w``);
- the forward-mode tangents (``forward_ad``) for tangents that may hold inf.

A missing gradient (None) counts as zeros on both sides, except where a test asks for
the None itself.
"""

from __future__ import annotations

import types

import gradstack_autograd as ag
import gradstack_autograd.forward_ad as gs_fwad
import gradstack_tensor as gt
import numpy as np

__all__ = ["GS", "compare", "special_grad", "assert_same", "to_numpy"]

GS = types.SimpleNamespace(
    **{name: getattr(gt, name) for name in dir(gt) if not name.startswith("_")},
    autograd=types.SimpleNamespace(grad=ag.grad, forward_ad=gs_fwad),
    no_grad=ag.no_grad,
)
GS.__name__ = "gradstack"


def to_numpy(t):
    if t is None:
        return None
    # force: torch's forward mode may hand back a ZeroTensor, which numpy() refuses
    return np.array(t.detach().numpy(force=True), dtype=np.float64)


def assert_same(got, want, what, rtol=1e-10, atol=1e-12):
    """Equal shapes, nan and +-inf at the same places, close elsewhere."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != torch's {want.shape}"
    gn, wn = np.isnan(got), np.isnan(want)
    assert (gn == wn).all(), f"{what}: nan at {np.argwhere(gn != wn).tolist()}\n{got}\n{want}"
    fin = ~gn
    gi, wi = np.isinf(got) & fin, np.isinf(want) & fin
    assert (gi == wi).all() and (got[gi] == want[gi]).all(), f"{what}: inf\n{got}\n{want}"
    ok = fin & ~gi
    np.testing.assert_allclose(got[ok], want[ok], rtol=rtol, atol=atol, err_msg=what)


def special_grad(shape, kind):
    """An incoming gradient of ``shape``: ones, or ones with inf / nan in some entries."""
    g = np.ones(shape, dtype=np.float64)
    if kind == "inf" and g.size:
        g.reshape(-1)[::2] = np.inf
    elif kind == "nan" and g.size:
        g.reshape(-1)[1::2] = np.nan
    return g


def _tensor(L, a, requires_grad):
    if L is GS:
        return gt.tensor(a, dtype=gt.float64, requires_grad=requires_grad)
    import torch

    return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)


def _grad(L, out, xs, go, create_graph):
    return L.autograd.grad(out, xs, go, create_graph=create_graph, allow_unused=True)


def _run(L, fn, inputs, go_kind, second, tangents):
    xs = [_tensor(L, a, True) for a in inputs]
    out = fn(L, *xs)
    res = {"out": to_numpy(out)}
    go = _tensor(L, special_grad(tuple(out.shape), go_kind), False)
    if out.requires_grad:
        grads = _grad(L, out, xs, go, create_graph=second)
    else:
        grads = [None] * len(xs)
    res["grad"] = [to_numpy(g) for g in grads]
    if second:
        rng = np.random.default_rng(7)
        terms = []
        for g in grads:
            if g is not None and g.requires_grad:
                w = _tensor(L, rng.standard_normal(tuple(g.shape)), False)
                terms.append((g * w).sum())
        if terms:
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            res["grad2"] = [to_numpy(g) for g in L.autograd.grad(total, xs, allow_unused=True)]
        else:
            res["grad2"] = [None] * len(xs)
    if tangents is not None:
        fw = L.autograd.forward_ad
        with fw.dual_level():
            duals = [
                fw.make_dual(_tensor(L, a, False), _tensor(L, t, False))
                for a, t in zip(inputs, tangents)
            ]
            res["jvp"] = to_numpy(fw.unpack_dual(fn(L, *duals)).tangent)
    return res


def compare(fn, inputs, *, go="ones", second=True, tangents=None, rtol=1e-10):
    """Run ``fn`` on both libraries and assert they agree (see the module docstring).

    ``tangents="auto"`` uses a tangent per input with an inf in its first entry.
    """
    import torch

    inputs = [np.asarray(a, dtype=np.float64) for a in inputs]
    if tangents == "auto":
        tangents = []
        for a in inputs:
            t = np.linspace(0.5, 1.5, a.size).reshape(a.shape)
            if t.size > 1:
                t.reshape(-1)[0] = np.inf
            tangents.append(t)
    ours = _run(GS, fn, inputs, go, second, tangents)
    theirs = _run(torch, fn, inputs, go, second, tangents)
    assert_same(ours["out"], theirs["out"], "output", rtol)
    for key in ("grad", "grad2"):
        for i, (a, b) in enumerate(zip(ours.get(key, ()), theirs.get(key, ()))):
            if a is None and b is None:
                continue
            a = np.zeros_like(b) if a is None else a
            b = np.zeros_like(a) if b is None else b
            assert_same(a, b, f"{key} of input {i}", rtol)
    if tangents is not None:
        a, b = ours["jvp"], theirs["jvp"]
        if a is None or b is None:
            ref = ours["out"]
            a = np.zeros_like(ref) if a is None else a
            b = np.zeros_like(ref) if b is None else b
        assert_same(a, b, "forward-mode tangent", rtol)
    return ours, theirs
