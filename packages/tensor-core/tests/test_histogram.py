"""``histogram``, ``histogramdd``, ``histc`` and torch's ``linspace`` edges
(gradstack_tensor.histograms, _linspace), compared with torch 2.13: values bit for bit
(counts) or to float rounding (weights, density), edges bit for bit, errors by type and
words."""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor._linspace import torch_linspace

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(20261123)
DTYPES = [(np.float32, "float32"), (np.float64, "float64")]


def _np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _random_case(rng):
    dt = [np.float32, np.float64][int(rng.integers(0, 2))]
    size = int(rng.integers(0, 60))
    kind = int(rng.integers(0, 4))
    if kind == 0:
        x = rng.standard_normal(size)
    elif kind == 1:  # values on a grid: many elements exactly on bin edges
        x = rng.integers(-5, 6, size).astype(float) / rng.choice([1, 2, 3, 7])
    elif kind == 2:
        x = rng.uniform(0, 1, size)
    else:  # NaN and inf (with a finite range, as torch requires)
        x = rng.standard_normal(size)
        x[rng.random(size) < 0.15] = np.nan
        x[rng.random(size) < 0.1] = np.inf
        x[rng.random(size) < 0.1] = -np.inf
    kwargs = {}
    if rng.random() < 0.5 or kind == 3:
        lo = float(rng.integers(-3, 1))
        kwargs["range"] = (lo, lo + float(rng.integers(0, 5)) / rng.choice([1, 3]))
    if rng.random() < 0.3:
        kwargs["density"] = True
    if rng.random() < 0.3:
        kwargs["weight"] = rng.uniform(0, 2, size).astype(dt)
    if rng.random() < 0.3:
        bins = np.sort(rng.integers(-6, 7, int(rng.integers(2, 8))).astype(dt) / 2)
        kwargs.pop("range", None)
    else:
        bins = int(rng.integers(1, 120))
    return x.astype(dt), bins, kwargs


def _run(L, x, bins, kwargs):
    kw = dict(kwargs)
    if "weight" in kw:
        kw["weight"] = L.tensor(kw["weight"])
    b = L.tensor(bins) if isinstance(bins, np.ndarray) else bins
    try:
        r = L.histogram(L.tensor(x), b, **kw)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, str(e)
    return _np(r.hist), _np(r.bin_edges)


@pytest.mark.parametrize("seed", range(6))
def test_histogram_equals_torch_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        x, bins, kwargs = _random_case(rng)
        want = _run(torch, x, bins, kwargs)
        got = _run(gt, x, bins, kwargs)
        if isinstance(want[0], str):
            assert got == want, (x, bins, kwargs)
            continue
        assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
        np.testing.assert_array_equal(got[1], want[1])  # edges: bit for bit
        if "weight" in kwargs or kwargs.get("density"):
            np.testing.assert_allclose(got[0], want[0], rtol=2e-6, atol=0)
        else:
            np.testing.assert_array_equal(got[0], want[0])


def test_elements_on_edges_land_in_torchs_bins():
    # -1 + k * 3.5 / 38 lie on (or within an ulp of) the float32 edges torch computes
    for tdt in (torch.float32, torch.float64):
        edges = torch.linspace(-1.0, 2.5, 39, dtype=tdt).numpy()
        x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
        want = torch.histogram(torch.tensor(x), 38, range=(-1.0, 2.5))
        got = gt.histogram(gt.tensor(x), 38, range=(-1.0, 2.5))
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
        np.testing.assert_array_equal(got.bin_edges.numpy(), edges)


def test_result_is_a_named_tuple_and_method():
    x = gt.tensor([0.0, 1.0, 2.0, 2.5, 3.0])
    r = gt.histogram(x, gt.tensor([0.0, 1.0, 2.5, 3.0]))
    assert type(r).__name__ == "histogram" and r._fields == ("hist", "bin_edges")
    hist, edges = x.histogram(3, range=(0.0, 3.0))
    assert hist.tolist() == [1.0, 1.0, 3.0] and edges.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert not hist.requires_grad


def test_nan_and_inf_without_range_raise_as_torch():
    for values in ([0.0, float("nan")], [0.0, float("inf")], [float("-inf"), 1.0]):
        with pytest.raises(RuntimeError) as want:
            torch.histogram(torch.tensor(values), 3)
        with pytest.raises(RuntimeError) as got:
            gt.histogram(gt.tensor(values), 3)
        assert str(got.value) == str(want.value)


def _error(L, f):
    try:
        f(L)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, str(e)
    return None


ERRORS = {
    "integer_input": lambda L: L.histogram(L.tensor([1, 2]), 3),
    "half_input": lambda L: L.histogram(L.tensor([1.0, 2.0]).half(), 3),
    "zero_bins": lambda L: L.histogram(L.tensor([1.0]), 0),
    "negative_bins": lambda L: L.histogram(L.tensor([1.0]), -1),
    "one_edge": lambda L: L.histogram(L.tensor([1.0]), L.tensor([1.0])),
    "no_edge": lambda L: L.histogram(L.tensor([1.0]), L.tensor([])),
    "two_d_edges": lambda L: L.histogram(L.tensor([1.0]), L.tensor([[0.0, 1.0]])),
    "edges_dtype": lambda L: L.histogram(L.tensor([1.0]), L.tensor([0.0, 1.0]).double()),
    "min_above_max": lambda L: L.histogram(L.tensor([1.0]), 3, range=(3.0, 0.0)),
    "infinite_range": lambda L: L.histogram(L.tensor([1.0]), 3, range=(0.0, float("inf"))),
    "range_length": lambda L: L.histogram(L.tensor([1.0]), 3, range=(0.0,)),
    "weight_shape": lambda L: L.histogram(L.tensor([1.0, 2.0]), 3, weight=L.ones(3)),
    "weight_dtype": lambda L: L.histogram(L.tensor([1.0, 2.0]), 3, weight=L.ones(2).double()),
    "dd_one_dim": lambda L: L.histogramdd(L.tensor([1.0, 2.0]), 3),
    "dd_bins_count": lambda L: L.histogramdd(L.ones(3, 2), [2]),
    "dd_range_length": lambda L: L.histogramdd(L.ones(3, 2), 2, range=[0.0, 1.0]),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case):
    want = _error(torch, ERRORS[case])
    assert want is not None
    assert _error(gt, ERRORS[case]) == want


@pytest.mark.parametrize(
    "x,bins,kwargs",
    [
        ([2.0, 2.0, 2.0], 3, {}),  # zero-width data range: widened by 0.5
        ([1.0], 3, {"range": (1.0, 1.0)}),
        ([], 3, {}),  # empty input: edges over [0, 1]
        ([5.0, 7.0], 3, {"range": (0.0, 1.0), "density": True}),  # nothing inside: NaN
        ([1.0, 2.0], 3, {"range": (0.0, 1e-30)}),
        ([1.0, 2.0], [2.0, 1.0], {}),  # decreasing edges: nothing counted
        ([1.0, 2.0], [0.0, float("nan")], {}),
    ],
)
def test_edge_cases_as_torch(x, bins, kwargs):
    results = []
    for L in (torch, gt):
        b = L.tensor(bins) if isinstance(bins, list) else bins
        r = L.histogram(L.tensor(x), b, **kwargs)
        results.append((_np(r.hist), _np(r.bin_edges)))
    (wh, we), (gh, ge) = results
    np.testing.assert_array_equal(gh, wh)
    np.testing.assert_array_equal(ge, we)


def test_out_tuple_and_its_checks():
    hist, edges = gt.empty(0), gt.empty(0)
    r = gt.histogram(gt.tensor([1.0, 2.0]), 3, out=(hist, edges))
    assert r.hist is hist and r.bin_edges is edges
    want = torch.histogram(torch.tensor([1.0, 2.0]), 3)
    np.testing.assert_array_equal(hist.numpy(), want.hist.numpy())
    np.testing.assert_array_equal(edges.numpy(), want.bin_edges.numpy())
    bad = (lambda L: L.empty(0, dtype=L.float64), lambda L: L.empty(0))
    f = lambda L: L.histogram(L.tensor([1.0, 2.0]), 3, out=tuple(b(L) for b in bad))  # noqa: E731
    assert _error(gt, f) == _error(torch, f)


@pytest.mark.parametrize("seed", range(3))
def test_histogramdd_equals_torch(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(60):
        n, d = int(rng.integers(0, 30)), int(rng.integers(1, 4))
        x = (rng.integers(-4, 5, (n, d)) / 2).astype(np.float32)
        kwargs = {}
        if rng.random() < 0.4:
            kwargs["weight"] = rng.uniform(0, 1, n).astype(np.float32)
        if rng.random() < 0.3:
            kwargs["density"] = True
        if rng.random() < 0.3:
            bins = [
                np.sort(rng.integers(-4, 5, int(rng.integers(2, 5))) / 2).astype(np.float32)
                for _ in range(d)
            ]
        else:
            bins = [int(b) for b in rng.integers(1, 6, d)]
            if rng.random() < 0.4:
                kwargs["range"] = [v for _ in range(d) for v in (-1.0, 1.5)]
        res = []
        for L in (torch, gt):
            kw = dict(kwargs)
            if "weight" in kw:
                kw["weight"] = L.tensor(kw["weight"])
            b = [L.tensor(e) for e in bins] if isinstance(bins[0], np.ndarray) else bins
            r = L.histogramdd(L.tensor(x), b, **kw)
            res.append((_np(r.hist), [_np(e) for e in r.bin_edges]))
        (wh, we), (gh, ge) = res
        np.testing.assert_allclose(gh, wh, rtol=2e-6, atol=0)
        for a, b in zip(ge, we, strict=True):
            np.testing.assert_array_equal(a, b)


def test_histc_unchanged_and_takes_out():
    x = gt.tensor([1.0, 2.0, 1.0, 3.0])
    out = gt.empty(0)
    assert gt.histc(x, bins=4, min=0, max=3, out=out) is out
    np.testing.assert_array_equal(
        out.numpy(), torch.histc(torch.tensor([1.0, 2.0, 1.0, 3.0]), 4, 0, 3).numpy()
    )
    f = lambda L: L.histc(L.tensor([1.0]), out=L.empty(0, dtype=L.float64))  # noqa: E731
    assert _error(gt, f) == _error(torch, f)


@pytest.mark.parametrize("dt,name", DTYPES)
def test_torch_linspace_bit_for_bit(dt, name):
    rng = np.random.default_rng(7)
    for _ in range(400):
        lo = float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4))
        hi = lo + abs(float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4)))
        n = int(rng.integers(1, 300))
        want = torch.linspace(lo, hi, n, dtype=getattr(torch, name)).numpy()
        np.testing.assert_array_equal(torch_linspace(lo, hi, n, np.dtype(dt)), want)
