"""lerp, addcmul, addcdiv, masked_select, broadcast_tensors and histc (tensor-core's
composites.py) against torch: values, dtypes, gradients (float64, and gradcheck), method
and in-place forms, and errors."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
W = RNG.uniform(-1.0, 2.0, (3, 4))
C = RNG.uniform(0.5, 2.0, (4,))

PROGRAMS = {
    "lerp_small_weight": lambda L, a, b, w, c: L.lerp(a, b, 0.3),
    "lerp_large_weight": lambda L, a, b, w, c: L.lerp(a, b, 0.7),
    "lerp_tensor_weight": lambda L, a, b, w, c: L.lerp(a, b, w),
    "lerp_method": lambda L, a, b, w, c: a.lerp(b, w),
    "addcmul": lambda L, a, b, w, c: L.addcmul(a, b, c, value=0.5),
    "addcmul_method": lambda L, a, b, w, c: a.addcmul(b, c),
    "addcdiv": lambda L, a, b, w, c: L.addcdiv(a, b, c, value=-2),
    "addcdiv_method": lambda L, a, b, w, c: a.addcdiv(b, c),
    "masked_select": lambda L, a, b, w, c: L.masked_select(a, b > 0),
    "masked_select_broadcast": lambda L, a, b, w, c: a.masked_select(c > 1),
    "broadcast_tensors": lambda L, a, b, w, c: L.broadcast_tensors(a, c)[1] * a,
    "in_place": lambda L, a, b, w, c: (a * 1).lerp_(b, 0.25).addcmul_(b, c).addcdiv_(w, c),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_and_gradients_match_torch(name):
    results = []
    for lib in (gt, torch):
        leaves = [lib.tensor(x, dtype=lib.float64, requires_grad=True) for x in (A, B, W, C)]
        out = PROGRAMS[name](lib, *leaves)
        out.sum().backward()
        results.append(
            (
                np.asarray(out.tolist()),
                [None if t.grad is None else np.asarray(t.grad.tolist()) for t in leaves],
            )
        )
    (v, grads), (tv, tgrads) = results
    # torch's vectorised kernels fuse a multiply-add (lerp, addcmul): the last bit may differ
    np.testing.assert_allclose(v, tv, rtol=1e-15, atol=1e-15)
    for g, tg in zip(grads, tgrads):
        assert (g is None) == (tg is None)
        if g is not None:
            np.testing.assert_allclose(g, tg, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name", ["lerp_tensor_weight", "addcmul", "addcdiv", "masked_select"])
def test_gradcheck(name):
    leaves = [gt.tensor(x, dtype=gt.float64, requires_grad=True) for x in (A, B, W, C)]
    assert ag.gradcheck(lambda *t: PROGRAMS[name](gt, *t), tuple(leaves))


def test_integer_and_dtype_rules_match_torch():
    def outcome(fn):
        try:
            r = fn()
        except (RuntimeError, TypeError, NotImplementedError) as e:
            return type(e).__name__
        return (str(r.dtype).split(".")[-1], r.tolist())

    cases = [
        lambda L: L.addcmul(*[L.ones(2, dtype=L.int64)] * 3, value=2.5),
        lambda L: L.addcdiv(*[L.ones(2, dtype=L.int64)] * 3),
        lambda L: L.addcmul(L.ones(2), L.ones(2, dtype=L.float64), L.ones(2)),
        lambda L: L.lerp(L.ones(2), L.ones(2, dtype=L.float64), 0.5),
        lambda L: L.masked_select(L.arange(3), L.tensor([1, 0, 1])),
        lambda L: L.histc(L.tensor([1, 2, 1]), bins=4, min=0, max=3),
        lambda L: L.broadcast_tensors(L.ones(2), L.ones(3)),
    ]  # fmt: skip
    for case in cases:
        assert outcome(lambda c=case: c(gt)) == outcome(lambda c=case: c(torch))


@pytest.mark.parametrize(
    "data, kwargs",
    [
        ([1.0, 2.0, 1.0, 5.0], {"bins": 4, "min": 0, "max": 3}),
        ([1.0, 2.0, 1.0], {"bins": 4}),
        ([2.0, 2.0], {"bins": 4}),
        (list(RNG.standard_normal(1000)), {"bins": 17, "min": -1.3, "max": 2.1}),
        (list(RNG.standard_normal(1000)), {"bins": 33}),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_counts_match_torch(data, kwargs, dtype):
    got = gt.histc(gt.tensor(data, dtype=getattr(gt, dtype)), **kwargs)
    want = torch.histc(torch.tensor(data, dtype=getattr(torch, dtype)), **kwargs)
    assert got.tolist() == want.tolist() and str(got.dtype).split(".")[-1] == dtype
    assert gt.tensor(data, dtype=getattr(gt, dtype)).histc(**kwargs).tolist() == want.tolist()
