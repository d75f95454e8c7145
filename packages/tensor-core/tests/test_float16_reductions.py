"""float16 reductions accumulate in float32 and round once, as torch's do.

Note [float16 accumulates in float32] in ``_impl_reduce.py``: a float16 running sum
overflows past 65504 (the mean of 1000 x 100.0 was inf) and loses every addend smaller
than half an ulp of the sum (a cumsum of 0.1s stalled at 256).  Each reduction is compared
with torch 2.13's float16 result, to 2 ulps (the two libraries sum in different orders).
The product is the exception: torch multiplies in half, and so does ``prod`` (compared bit
for bit at the end).
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
RANDN = (RNG.standard_normal((40, 250)) * 3).astype(np.float16)
ARRAYS = {
    "1000x100": np.full(1000, 100.0, np.float16),
    "1000x300": np.full(1000, 300.0, np.float16),
    "10000x0.1": np.full(10000, 0.1, np.float16),
    "columns": np.full((3000, 2), 40.0, np.float16),
    "randn": RANDN,
}

# (name, fn(L, t)) for both libraries
CALLS = [
    ("mean", lambda L, t: t.mean()),
    ("mean_dim0", lambda L, t: t.mean(0)),
    ("mean_keepdim", lambda L, t: t.mean(-1, keepdim=True)),
    ("std", lambda L, t: t.std()),
    ("std_dim0", lambda L, t: t.std(0)),
    ("var", lambda L, t: t.var()),
    ("var_dim_c0", lambda L, t: t.var(-1, correction=0)),
    ("norm", lambda L, t: t.norm()),
    ("norm_dim0", lambda L, t: t.norm(dim=0)),
    ("norm_1", lambda L, t: t.norm(1)),
    ("norm_3", lambda L, t: t.norm(3)),
    ("norm_inf", lambda L, t: t.norm(float("inf"))),
    ("prod_small", lambda L, t: (t.reshape(-1)[:8] / 4 + 1).prod()),
    ("cumsum", lambda L, t: t.cumsum(0)),
    ("logsumexp", lambda L, t: t.logsumexp(0)),
    ("softmax", lambda L, t: t.softmax(0)),
    ("log_softmax", lambda L, t: t.log_softmax(-1)),
]


def _assert_half_close(got, want, what):
    got = np.asarray(got, dtype=np.float32)
    want = np.asarray(want, dtype=np.float32)
    assert got.shape == want.shape, what
    assert (np.isnan(got) == np.isnan(want)).all(), f"{what}: nan\n{got}\n{want}"
    assert (np.isinf(got) == np.isinf(want)).all(), f"{what}: inf\n{got}\n{want}"
    ok = np.isfinite(want)
    # 2 float16 ulps relative, and an absolute floor for results near 0
    np.testing.assert_allclose(got[ok], want[ok], rtol=2 * 2.0**-10, atol=2e-3, err_msg=what)


@pytest.mark.parametrize("array", list(ARRAYS))
@pytest.mark.parametrize(("name", "fn"), CALLS, ids=[c[0] for c in CALLS])
def test_float16_reduction_matches_torch(name, fn, array):
    a = ARRAYS[array]
    ours = fn(gt, gt.from_numpy(a.copy()))
    theirs = fn(torch, torch.from_numpy(a.copy()))
    assert ours.dtype is gt.float16
    _assert_half_close(ours.numpy(), theirs.numpy(), f"{name} of {array}")


def test_the_issue_11_figures():
    big = gt.full((1000,), 300.0, dtype=gt.float16)
    assert big.std().item() == 0.0
    assert big.norm().item() == 9488.0
    assert gt.full((1000,), 100.0, dtype=gt.float16).mean().item() == 100.0
    assert gt.full((10000,), 0.1, dtype=gt.float16).cumsum(0)[-1].item() == 1000.0


@pytest.mark.parametrize(
    "shape_dim", [((2, 0), 1), ((0, 3), 1), ((0, 3), (0, 1)), ((4, 0, 2), (1,))]
)
def test_logsumexp_of_empty_slices_is_minus_inf(shape_dim):
    shape, dim = shape_dim
    ours = gt.zeros(*shape).logsumexp(dim)
    theirs = torch.zeros(*shape).logsumexp(dim)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.tolist() == theirs.tolist()


def test_float16_sum_along_a_dim_accumulates_in_float32():
    a = np.full((4000, 2), 0.1, np.float16)
    ours = gt.from_numpy(a).sum(0)
    theirs = torch.from_numpy(a).sum(0)
    _assert_half_close(ours.numpy(), theirs.numpy(), "sum(0)")


PROD_SHAPES = [(), (3,), (63,), (64,), (65,), (129,), (1000,), (8, 33), (4, 70), (3, 5, 66), (0,)]


@pytest.mark.parametrize("shape", PROD_SHAPES, ids=str)
def test_a_float16_product_rounds_at_every_step_in_torchs_order(shape):
    """Note [A float16 product rounds at every step]: bit for bit against torch, over
    every dim, contiguous and transposed (memory order), n below and above 64."""
    rng = np.random.default_rng(len(shape) * 100 + sum(shape))
    a = rng.uniform(0.5, 1.6, shape).astype(np.float16)
    for transposed in (False, True):
        b = np.ascontiguousarray(a.T) if transposed else a
        tt, g = torch.from_numpy(b), gt.from_numpy(b)
        if transposed:
            tt, g = tt.permute(*reversed(range(b.ndim))), g.permute(*reversed(range(b.ndim)))
        for d in [None, *range(len(shape))]:
            want = (tt.prod() if d is None else tt.prod(d)).numpy()
            got = (g.prod() if d is None else g.prod(d)).numpy()
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_a_float16_product_overflows_as_torchs():
    """fuzz seed 3 #9464: 300 * 300 is inf in half, times 0 is NaN (float32 gives 0)."""
    for vals in ([300.0, 300.0, 0.0], [0.0, 300.0, 300.0], [300.0] * 3 + [0.1] * 3):
        want = torch.tensor(vals, dtype=torch.float16).prod().item()
        got = gt.tensor(vals, dtype=gt.float16).prod().item()
        assert got == want or (np.isnan(got) and np.isnan(want))


def test_float16_logsumexp_rounds_each_step_as_torch():
    # Note [logsumexp rounds each step as torch's]: torch composes it of float16 ops
    rng = np.random.default_rng(40)
    for _ in range(400):
        shape = tuple(int(n) for n in rng.integers(1, 6, size=rng.integers(1, 4)))
        a = (rng.standard_normal(shape) * rng.choice([0.5, 3.0, 20.0])).astype(np.float16)
        dim = int(rng.integers(0, len(shape)))
        ours = gt.from_numpy(a).logsumexp(dim).numpy()
        theirs = torch.from_numpy(a).logsumexp(dim).numpy()
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{a!r} dim={dim}")
    # fuzz seed 40 #7179: log(2) - 0.6934 is 0.0 in float16 steps, so atan2 gives +pi
    x = gt.tensor([[0.5], [0.5]], dtype=gt.float16).log_softmax(-2)
    assert gt.logsumexp(x, -2, keepdim=True).tolist() == [[0.0]]
