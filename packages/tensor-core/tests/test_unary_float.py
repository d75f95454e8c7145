"""sigmoid and the other unary float ops, by value, on both paths (C loop, numpy), every
layout and every dtype: against a float64 (or long double) reference and against torch.

sigmoid's numpy path computes ``1 / (1 + exp(-x))`` and redoes as ``exp(x)`` the elements
where ``exp(-x)`` overflowed (Note [sigmoid on the numpy path]); float16 math happens in
float32, rounded once (sigmoid, tanh and rsqrt cast around the float32 loops, numpy's
other float16 loops do it per element); the C loops stop at a size per op and dtype
(Note [Where the unary C loops stop]).  These tests pin the values, never the timings.
"""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor._loops import _unary_c_limit

FLOATS = ["float16", "float32", "float64"]

# sizes on both sides of every C-loop limit (32 ... 4096), and a large one
SIZES = [0, 1, 7, 32, 33, 128, 129, 512, 513, 4096, 4097, 100_000]

# x where sigmoid is subnormal or 0 in float32 (exp(-x) overflows below -88.72) and in
# float64 (below -709.78), around 0, and the non-finite values
EXTREMES = [
    -1e30,
    -1000.0,
    -750.0,
    -745.0,
    -710.0,
    -709.0,
    -104.0,
    -103.0,
    -100.0,
    -95.0,
    -89.0,
    -88.5,
    -88.0,
    -87.0,
    -20.0,
    -17.0,
    -12.0,
    -11.0,
    -1.0,
    -0.0,
    0.0,
    1e-8,
    1.0,
    11.0,
    17.0,
    20.0,
    40.0,
    100.0,
    1000.0,
    1e30,
    np.inf,
    -np.inf,
    np.nan,
]


def _sigmoid_ref(x):
    """sigmoid in long double (x86: 64-bit mantissa), from the stable formula."""
    x = np.asarray(x, dtype=np.longdouble)
    e = np.exp(-np.abs(x))
    with np.errstate(invalid="ignore"):
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _rounded(ref, dtype):
    with np.errstate(over="ignore", under="ignore"):
        return ref.astype(np.float64).astype(dtype) if dtype != "float64" else ref.astype(dtype)


def _assert_ulps(got, ref, dtype, ulps, what=""):
    """|got - ref| <= ulps * eps * |ref| + one subnormal step, nan where ref is nan."""
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), what
    info = np.finfo(dtype)
    step = float(info.smallest_subnormal)
    ref64 = np.asarray(ref, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref64), err_msg=what)
    ok = ~np.isnan(ref64)
    err = np.abs(got[ok].astype(np.float64) - ref64[ok])
    bound = ulps * float(info.eps) * np.abs(ref64[ok]) + step
    assert (err <= bound).all(), (what, got[ok][err > bound][:5], ref64[ok][err > bound][:5])


def _layouts(a):
    """The same values as a C-contiguous, an F-ordered, a strided and a reversed array."""
    yield "contiguous", np.ascontiguousarray(a)
    if a.ndim == 1 and a.size >= 4 and a.size % 2 == 0:
        yield "F-order", np.asfortranarray(a.reshape(2, -1)).reshape(2, -1)
    if a.ndim == 1 and a.size >= 2:
        buf = np.empty(2 * a.size, a.dtype)
        buf[::2] = a
        yield "strided", buf[::2]
        yield "reversed", a[::-1].copy()[::-1]


def _random(n, dtype, seed, scale=8.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * scale
    return x.astype(dtype)


# ---------------------------------------------------------------------------------------
# sigmoid


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_sigmoid_values_every_size_and_layout(dtype, n):
    x = _random(n, dtype, seed=n)
    for layout, a in _layouts(x):
        got = gt.from_numpy(a).sigmoid().numpy()
        assert got.shape == a.shape
        # float16 rounds a float32 result (torch's opmath): one float16 ulp of error at most
        ulps = 1 if dtype == "float16" else 4
        _assert_ulps(got, _sigmoid_ref(a), dtype, ulps, f"{dtype}[{n}] {layout}")


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_extremes_no_overflow_warning_no_lost_tail(dtype):
    """Large negative inputs: no warning even under errstate(all='raise'), and the result is
    exp(x) (subnormal where that is), not the 0 of a bare 1 / (1 + exp(-x))."""
    x = np.array(EXTREMES, dtype=np.float64)
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    ref = _sigmoid_ref(x)
    ones = np.ones(4096 + 1, dtype)  # large enough for the numpy path in every dtype
    for a, what in (
        (x, "C loop"),
        (np.concatenate([x, ones]), "numpy path"),
        (np.repeat(x, 2)[::2], "strided"),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                got = gt.from_numpy(a).sigmoid().numpy()
        got = got[: x.size]
        _assert_ulps(got, ref, dtype, 1 if dtype == "float16" else 4, f"{dtype} {what}")
        assert got[0] == 0 and got[-2] == 0 and got[-3] == 1  # -1e30, -inf; +inf
        assert np.signbit(got[x == 0]).sum() == 0 and (got[x == 0] == 0.5).all()
        exact = _rounded(ref, dtype)
        positive = exact > 0
        assert (got[positive] > 0).all(), f"{dtype} {what}: lost the subnormal tail"
        finite = ~np.isnan(x)
        assert (np.diff(got[finite][np.argsort(x[finite], kind="stable")]) >= 0).all()


def test_sigmoid_subnormal_tail_values():
    # sigmoid(-100) = 3.72e-44: the nearest float32 is 27 subnormal steps (2**-149 each)
    big = np.full(10_000, -100.0, np.float32)
    for a in (big[:7], big):
        got = gt.from_numpy(a).sigmoid().numpy()
        assert (got == np.float32(27 * 2.0**-149)).all()
    got = gt.from_numpy(np.full(10_000, -720.0)).sigmoid().numpy()
    assert (got == np.exp(-720.0)).all() and got[0] > 0


def test_sigmoid_tail_fixup_with_nan_present():
    """The overflowed elements are found even when nan is in the array."""
    a = _random(50_000, np.float32, seed=1)
    a[::97] = -95.0  # sigmoid = 5.5e-42, a float32 subnormal; exp(95) overflows
    a[::89] = np.nan
    got = gt.from_numpy(a).sigmoid().numpy()
    _assert_ulps(got, _sigmoid_ref(a), "float32", 4)
    assert (got[a == -95.0] > 0).all() and np.isnan(got[np.isnan(a)]).all()


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0, 2), (2, 3, 4)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_shapes_and_0d(shape, dtype):
    x = _random(int(np.prod(shape)), dtype, seed=3).reshape(shape)
    t = gt.from_numpy(x)
    for out in (t.sigmoid(), gt.sigmoid(t), t.permute(tuple(reversed(range(t.dim())))).sigmoid()):
        assert out.dtype.name == dtype
    out = t.sigmoid()
    assert tuple(out.shape) == shape
    _assert_ulps(out.numpy(), _sigmoid_ref(x), dtype, 1 if dtype == "float16" else 4)


@pytest.mark.parametrize("src", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_sigmoid_of_integers_and_bools_is_the_default_float(src):
    a = (np.arange(-60, 60) if src != "bool" else np.arange(120) % 2).astype(src)
    for n in (a[:7], np.tile(a, 50)):  # the C loop and the numpy path
        out = gt.from_numpy(n).sigmoid()
        assert out.dtype is gt.float32
        _assert_ulps(out.numpy(), _sigmoid_ref(n.astype(np.float64)), "float32", 4)
    previous = gt.get_default_dtype()
    gt.set_default_dtype(gt.float64)
    try:
        out = gt.from_numpy(a).sigmoid()
        assert out.dtype is gt.float64
        _assert_ulps(out.numpy(), _sigmoid_ref(a.astype(np.float64)), "float64", 4)
    finally:
        gt.set_default_dtype(previous)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [7, 600, 5000])
def test_sigmoid_inplace_matches_out_of_place(dtype, n):
    x = _random(n, dtype, seed=n)
    x[::5] = -120.0
    expected = gt.from_numpy(x.copy()).sigmoid().numpy()
    t = gt.from_numpy(x.copy())
    assert t.sigmoid_() is t and t._version == 1
    np.testing.assert_array_equal(t.numpy(), expected)  # the same path, the same bits
    buf = np.repeat(x, 2)
    view = gt.from_numpy(buf)[::2]  # a non-contiguous view, written in place
    expected_view = view.sigmoid().numpy()
    view.sigmoid_()
    np.testing.assert_array_equal(buf[::2], expected_view)
    np.testing.assert_array_equal(buf[1::2], x)
    _assert_ulps(buf[::2], _sigmoid_ref(x), dtype, 1 if dtype == "float16" else 4)


def test_sigmoid_int_inplace_still_refuses():
    with pytest.raises(RuntimeError, match="can't be cast"):
        gt.tensor([1, 2]).sigmoid_()


# ---------------------------------------------------------------------------------------
# Against torch

TORCH_DTYPES = ["float16", "float32", "float64", "int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("dtype", TORCH_DTYPES)
@pytest.mark.parametrize("n", [7, 513, 4097, 100_000])
def test_sigmoid_agrees_with_torch(dtype, n):
    torch = pytest.importorskip("torch")
    if dtype in ("uint8", "bool"):
        x = (np.arange(n) % (2 if dtype == "bool" else 256)).astype(dtype)
    elif dtype.startswith("int"):
        x = (np.arange(n) % 200 - 100).astype(dtype)
    else:
        x = _random(n, dtype, seed=7, scale=30.0)
        with np.errstate(over="ignore"):  # -1e30 is -inf in float16
            ext = np.array(EXTREMES, dtype=np.float64).astype(dtype)
        x[::11] = ext[np.arange(len(x[::11])) % len(ext)]
    expected = torch.sigmoid(torch.from_numpy(x.copy()))
    got = gt.from_numpy(x).sigmoid().numpy()
    assert str(expected.dtype).removeprefix("torch.") == str(got.dtype)
    e = expected.numpy()
    # torch flushes float32 sigmoid(x < -88.7) to 0 (it overflows exp(-x)); gradstack
    # keeps the subnormal: they differ by less than the smallest normal number there
    tiny = float(np.finfo(got.dtype).tiny)
    eps = float(np.finfo(got.dtype).eps)
    np.testing.assert_allclose(
        got, e, rtol=(1 if got.dtype == np.float16 else 4) * eps, atol=tiny, equal_nan=True
    )


FLOAT_FAMILY = [
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "sigmoid",
]


def _all_float16():
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("name", FLOAT_FAMILY)
def test_float16_computes_in_float32_like_torch(name):
    """Every float16 value: the result is torch's (float32 math, rounded once to float16),
    with no warning for the overflow of the rounding."""
    torch = pytest.importorskip("torch")
    x = _all_float16()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(gt.from_numpy(x), name)().numpy()
    expected = getattr(torch, name)(torch.from_numpy(x.copy())).numpy()
    assert got.dtype == np.float16
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    # SIMD float32 loops (numpy's, Sleef's) may differ by an ulp before the rounding:
    # at most a couple of the 65536 values land on the other side of a float16 rounding
    assert (~same).sum() <= 4, (name, x[~same][:4], got[~same][:4], expected[~same][:4])
    np.testing.assert_allclose(
        got.astype(np.float64),
        expected.astype(np.float64),
        rtol=2.0**-10,
        atol=2.0**-24,
        equal_nan=True,
    )


@pytest.mark.parametrize("name", ["tanh", "exp", "sin", "log1p"])
def test_float16_is_the_float32_value_rounded_once(name):
    # the float32 value itself may be off by an ulp or two (numpy's float32 loops are
    # SIMD approximations, AVX-512's less exact than AVX2's; so are torch's): the float16
    # result is one of those float32 values rounded once to half
    x = _all_float16()
    got = getattr(gt.from_numpy(x), name)().numpy()
    ref = {"tanh": np.tanh, "exp": np.exp, "sin": np.sin, "log1p": np.log1p}[name]
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64)).astype(np.float32)
    same = (got == exact.astype(np.float16)) | (np.isnan(got) & np.isnan(exact))
    up = down = exact
    for _ in range(2):
        up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(-np.inf))
        same |= (got == up.astype(np.float16)) | (got == down.astype(np.float16))
    assert same.all(), (x[~same][:4], got[~same][:4], exact[~same][:4])


def test_float16_rsqrt_rounds_once():
    # 1 / sqrt(x) in float16 rounded twice (8402 of the 65536 values off by an ulp)
    x = _all_float16()
    x = x[np.isfinite(x) & (x > 0)]
    got = gt.from_numpy(x).rsqrt().numpy()
    expected = (1.0 / np.sqrt(x.astype(np.float64))).astype(np.float32).astype(np.float16)
    assert (got == expected).mean() > 0.9999


@pytest.mark.parametrize("name", ["exp", "expm1", "tanh", "log1p", "sigmoid", "sqrt"])
def test_float16_inplace_matches_out_of_place(name):
    x = np.linspace(-12, 12, 1001).astype(np.float16)
    expected = getattr(gt.from_numpy(x.copy()), name)().numpy()
    t = gt.from_numpy(x.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(t, name + "_")()
    np.testing.assert_array_equal(t.numpy(), expected)


# ---------------------------------------------------------------------------------------
# The rest of the family on both sides of the C-loop limits


UNARY_REFS = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "expm1": np.expm1,
    "log1p": np.log1p,
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(UNARY_REFS))
def test_family_values_around_the_c_limit(name, dtype):
    limit = _unary_c_limit(name, dtype)
    rng = np.random.default_rng(11)
    for n in sorted({1, 31, 64, max(limit, 1), limit + 1, 4096, 4097, 50_000}):
        x = rng.uniform(0.01, 5.0, n).astype(dtype)
        got = getattr(gt.from_numpy(x), name)().numpy()
        ref = UNARY_REFS[name](x.astype(np.longdouble))
        _assert_ulps(got, ref, dtype, 4, f"{name} {dtype}[{n}]")


def test_c_limits_are_where_the_notes_say():
    assert _unary_c_limit("tanh", np.float32) == 32
    assert _unary_c_limit("sigmoid", np.float32) == 512
    assert _unary_c_limit("sigmoid", np.float64) == 4096
    assert _unary_c_limit("neg", np.float32) == 4096
    assert _unary_c_limit("expm1", np.float32) == 0  # numpy only
    assert _unary_c_limit("exp", np.float16) == 0
