"""Tests for ``gradstack_tensor._format``: tensor reprs byte-identical to PyTorch's.

Three layers:

* golden strings captured from torch 2.x, which run without torch installed;
* a deterministic corpus compared with ``repr(torch.from_numpy(arr))`` (every dtype,
  0-d, zero-size, non-contiguous, summarised, nan/inf, sci/fixed/int styles);
* hypothesis-generated arrays (up to 4-d, sizes around the summarisation threshold,
  magnitudes 1e-8..1e10, specials) and print options, compared with torch.
"""

from __future__ import annotations

import doctest
import math
import sys

import numpy as np
import pytest
from gradstack_tensor import _format
from gradstack_tensor._format import (
    format_tensor,
    get_printoptions,
    printoptions,
    set_printoptions,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]
FLOAT_DTYPES = DTYPES[:3]
INT_DTYPES = DTYPES[3:8]
DEFAULT_DTYPES = {"float32", "int64", "bool"}  # torch omits dtype= for these

# Hypothesis tests share the function-scoped options-reset fixture; it only restores
# module state, so reusing it across examples is safe.
HYPOTHESIS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(autouse=True)
def _default_printoptions():
    """Every test starts and ends with default print options, here and in torch."""
    _reset_printoptions()
    yield
    _reset_printoptions()


def _reset_printoptions():
    set_printoptions(profile="default")
    if "torch" in sys.modules:
        sys.modules["torch"].set_printoptions(profile="default")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def ours(arr: np.ndarray, suffixes=(), prefix="tensor(") -> str:
    name = arr.dtype.name
    return format_tensor(
        arr,
        dtype_name="torch." + name,
        is_default_dtype=name in DEFAULT_DTYPES,
        suffixes=suffixes,
        prefix=prefix,
    )


def theirs(torch, arr: np.ndarray, requires_grad: bool = False) -> str:
    # torch.from_numpy rejects negative strides: hand it a C-contiguous copy, while
    # format_tensor gets the original (possibly strided) array.
    tensor = torch.from_numpy(arr.copy(order="C"))
    if requires_grad:
        tensor.requires_grad_()
    return repr(tensor)


def assert_matches_torch(torch, arr: np.ndarray) -> None:
    assert ours(arr) == theirs(torch, arr)
    if arr.dtype.kind == "f":
        assert ours(arr, ["requires_grad=True"]) == theirs(torch, arr, requires_grad=True)


# ----------------------------------------------------------------------------------------
# Golden strings (no torch needed)


def _summarised_fixed():
    return np.arange(1200.0, dtype=np.float32).reshape(2, 600) / 4 + 100


GOLDEN = [
    pytest.param(
        np.linspace(0.0, 2 * math.pi, 25, dtype=np.float32),
        ["requires_grad=True"],
        "tensor([0.0000, 0.2618, 0.5236, 0.7854, 1.0472, 1.3090, 1.5708, 1.8326, 2.0944,\n"
        "        2.3562, 2.6180, 2.8798, 3.1416, 3.4034, 3.6652, 3.9270, 4.1888, 4.4506,\n"
        "        4.7124, 4.9742, 5.2360, 5.4978, 5.7596, 6.0214, 6.2832],\n"
        "       requires_grad=True)",
        id="tutorial-linspace",
    ),
    pytest.param(
        np.array(25.0, dtype=np.float32),
        ["grad_fn=<SumBackward0>"],
        "tensor(25., grad_fn=<SumBackward0>)",
        id="tutorial-sum",
    ),
    pytest.param(
        np.array([1.0, 2.0, 3.0], dtype=np.float32),
        [],
        "tensor([1., 2., 3.])",
        id="integer-valued-float",
    ),
    pytest.param(
        np.array([1.0, 2.0, 3.0], dtype=np.float32),
        ["requires_grad=True"],
        "tensor([1., 2., 3.], requires_grad=True)",
        id="requires-grad",
    ),
    pytest.param(
        np.array([0.1, 1.0, 0.5], dtype=np.float32),
        [],
        "tensor([0.1000, 1.0000, 0.5000])",
        id="fixed",
    ),
    pytest.param(
        np.array([0.1, 1.0, 0.0001], dtype=np.float32),
        [],
        "tensor([1.0000e-01, 1.0000e+00, 1.0000e-04])",
        id="sci-float32-1e-4",
    ),
    pytest.param(
        np.array([1e-8, 1e10, np.nan, -np.inf, 0.0, -0.0], dtype=np.float32),
        [],
        "tensor([1.0000e-08, 1.0000e+10,        nan,       -inf, 0.0000e+00, -0.0000e+00])",
        id="sci-specials",
    ),
    pytest.param(
        np.array([[1e-8, 1.0], [np.nan, 1e10]]),
        [],
        "tensor([[1.0000e-08, 1.0000e+00],\n"
        "        [       nan, 1.0000e+10]], dtype=torch.float64)",
        id="sci-matrix",
    ),
    pytest.param(
        np.array([-0.0, 1.0, -2.0], dtype=np.float32),
        [],
        "tensor([-0.,  1., -2.])",
        id="negative-zero",
    ),
    pytest.param(
        np.array([0.0, np.nan], dtype=np.float32), [], "tensor([0., nan])", id="no-nonzero-finite"
    ),
    pytest.param(np.array(-np.inf, dtype=np.float32), [], "tensor(-inf)", id="scalar-inf"),
    pytest.param(np.array(math.pi, dtype=np.float32), [], "tensor(3.1416)", id="scalar-pi"),
    pytest.param(np.array(3), [], "tensor(3)", id="scalar-int"),
    pytest.param(
        np.array([2.0, 4.0]),
        ["grad_fn=<MulBackward0>"],
        "tensor([2., 4.], dtype=torch.float64, grad_fn=<MulBackward0>)",
        id="float64-grad-fn",
    ),
    pytest.param(
        np.array([65504.0, 1e-7, 0.1], dtype=np.float16),
        [],
        "tensor([6.5504e+04, 1.1921e-07, 9.9976e-02], dtype=torch.float16)",
        id="float16",
    ),
    pytest.param(np.array([True, False]), [], "tensor([ True, False])", id="bool"),
    pytest.param(
        np.array([[True], [False]]), [], "tensor([[ True],\n        [False]])", id="bool-matrix"
    ),
    pytest.param(
        np.array([-128, 0, 127], dtype=np.int8),
        [],
        "tensor([-128,    0,  127], dtype=torch.int8)",
        id="int8",
    ),
    pytest.param(
        np.array([[1, -20], [300, 4]], dtype=np.int16),
        [],
        "tensor([[  1, -20],\n        [300,   4]], dtype=torch.int16)",
        id="int16",
    ),
    pytest.param(
        np.arange(24.0, dtype=np.float32).reshape(2, 3, 4),
        [],
        "tensor([[[ 0.,  1.,  2.,  3.],\n"
        "         [ 4.,  5.,  6.,  7.],\n"
        "         [ 8.,  9., 10., 11.]],\n"
        "\n"
        "        [[12., 13., 14., 15.],\n"
        "         [16., 17., 18., 19.],\n"
        "         [20., 21., 22., 23.]]])",
        id="3d",
    ),
    pytest.param(
        np.arange(2000).reshape(2, 1000),
        [],
        "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
        "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])",
        id="summarised-int",
    ),
    pytest.param(
        _summarised_fixed(),
        [],
        "tensor([[100.0000, 100.2500, 100.5000,  ..., 249.2500, 249.5000, 249.7500],\n"
        "        [250.0000, 250.2500, 250.5000,  ..., 399.2500, 399.5000, 399.7500]])",
        id="summarised-fixed",
    ),
    pytest.param(np.zeros((0, 3), dtype=np.float32), [], "tensor([], size=(0, 3))", id="empty-2d"),
    pytest.param(
        np.zeros((0,), dtype=np.int64), [], "tensor([], dtype=torch.int64)", id="empty-int64"
    ),
    pytest.param(
        np.zeros((2, 0)),
        ["requires_grad=True"],
        "tensor([], size=(2, 0), dtype=torch.float64, requires_grad=True)",
        id="empty-float64",
    ),
]


@pytest.mark.parametrize(("arr", "suffixes", "expected"), GOLDEN)
def test_golden(arr, suffixes, expected):
    assert ours(arr, suffixes) == expected


def test_golden_prefix_indents_continuation_lines():
    # torch uses the class name of a Tensor subclass as the prefix.
    arr = np.arange(30.0, dtype=np.float32).reshape(3, 10)
    assert ours(arr, prefix="Fancy(") == (
        "Fancy([[ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9.],\n"
        "       [10., 11., 12., 13., 14., 15., 16., 17., 18., 19.],\n"
        "       [20., 21., 22., 23., 24., 25., 26., 27., 28., 29.]])"
    )


def test_golden_printoptions():
    arr = np.array([1.12345, 1e-5])
    with printoptions(precision=2, sci_mode=False):
        assert ours(arr) == "tensor([1.12, 0.00], dtype=torch.float64)"
    with printoptions(threshold=5, edgeitems=1):
        assert ours(np.arange(10)) == "tensor([0,  ..., 9])"
    with printoptions(edgeitems=0):
        assert ours(np.arange(5)) == "tensor([0, 1, 2, 3, 4], size=(5,))"
        assert ours(np.array(3.0, dtype=np.float32)) == "tensor(3., size=())"
    with printoptions(edgeitems=0, threshold=2):
        assert ours(np.ones((3, 3), dtype=np.float32)) == "tensor([...], size=(3, 3))"


def test_docstring_examples():
    result = doctest.testmod(_format)  # exact output: alignment is the point
    assert result.attempted > 0
    assert result.failed == 0


def test_printoptions_semantics():
    assert get_printoptions() == {
        "precision": 4,
        "threshold": 1000,
        "edgeitems": 3,
        "linewidth": 80,
        "sci_mode": None,
    }
    set_printoptions(profile="short", linewidth=120, sci_mode=True)
    assert get_printoptions() == {
        "precision": 2,
        "threshold": 1000,
        "edgeitems": 2,
        "linewidth": 120,
        "sci_mode": True,
    }
    set_printoptions(precision=6)  # sci_mode is always assigned: omitted means None
    assert get_printoptions()["sci_mode"] is None
    assert get_printoptions()["linewidth"] == 120
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    saved = get_printoptions()
    with printoptions(precision=1, edgeitems=7):
        assert get_printoptions()["edgeitems"] == 7
    assert get_printoptions() == saved
    set_printoptions(**saved)
    assert get_printoptions() == saved


def test_rejects_unsupported_dtype():
    with pytest.raises(TypeError, match="unsupported dtype"):
        format_tensor(np.array(["a"]), dtype_name="c", is_default_dtype=True)


# ----------------------------------------------------------------------------------------
# Deterministic corpus, compared with torch


def _float_bases():
    rng = np.random.default_rng(0)
    yield "int-valued", np.array([1.0, 2.0, 3.0])
    yield "linspace", np.linspace(0.0, 2 * math.pi, 25)
    yield "sin", np.sin(np.linspace(0.0, 2 * math.pi, 25))
    yield "tiny", np.array([1e-5])
    yield "magnitudes", np.array([1e-8, 1e-4, 1.0, 1e4, 1e8, 1e10])
    yield "specials", np.array([np.nan, np.inf, -np.inf])
    yield "specials+value", np.array([np.nan, 1.5, -np.inf, 0.0, -0.0])
    yield "zeros", np.zeros(4)
    yield "negative-zero", np.array([-0.0, 0.0, -0.0])
    yield "negative-zero+frac", np.array([-0.0, 1.5])
    yield "boundary-1e8", np.array([1e8, 2.0e5])
    yield "above-1e8", np.array([1.0000001e8, 2.0e5])
    yield "boundary-1e-4", np.array([1e-4, 0.05])
    yield "ratio-1000", np.array([1.0, 1000.0])
    yield "ratio-1000.5", np.array([1.0, 1000.5])
    yield "rounding", np.array([0.00005, 0.99995, 1.00005, 2.5, -2.5, 0.125])
    yield "wide-int-valued", np.array([12345678.0, -1.0, 3.0] * 10)
    yield "float64-extremes", np.array([1e308, 5e-324, -1.7e308])
    yield "float64-ratio-overflow", np.array([1e300, 1e-300])
    yield "float16-range", np.array([65504.0, 6e-8, 6.1e-5, 0.1, -1e5])
    yield "scalar", np.array(math.pi)
    yield "scalar-int-valued", np.array(-7.0)
    yield "scalar-nan", np.array(np.nan)
    yield "scalar-negative-zero", np.array(-0.0)
    yield "scalar-huge", np.array(1e20)
    yield "randn-30", rng.standard_normal(30) * 100
    yield "randn-2d", rng.standard_normal((5, 7))
    yield "randn-3d", rng.standard_normal((2, 3, 4)) * 1e-3
    yield "randn-4d", rng.standard_normal((2, 2, 3, 5)) * 1e5
    yield "arange-100", np.arange(100.0)
    yield "threshold-1000", np.arange(1000.0) / 3
    yield "threshold-1001", np.arange(1001.0) / 3
    yield "summarised-2d", rng.standard_normal((10, 101))
    yield "summarised-2d-narrow", rng.standard_normal((1001, 1))
    yield "summarised-3d", rng.standard_normal((7, 11, 13))
    yield "summarised-4d", rng.standard_normal((2, 2, 2, 126)) * 1e9
    yield "summarised-partial", rng.standard_normal((6, 200))
    yield "summarised-specials", np.where(rng.random(2000) < 0.1, np.nan, rng.random(2000))
    yield "summarised-hidden-small", np.concatenate([np.ones(5), [1e-9], np.ones(1000)])
    for shape in [(0,), (0, 3), (3, 0), (0, 0, 0), (2, 0, 4)]:
        yield f"empty-{shape}", np.zeros(shape)


def _int_bases():
    rng = np.random.default_rng(1)
    yield "small", np.array([1, -2, 3])
    yield "zeros", np.zeros(5)
    yield "scalar", np.array(42)
    yield "scalar-negative", np.array(-5)
    yield "extremes", np.array([-128, 127, 0, 255, -32768, 32767])
    yield "matrix", rng.integers(-100, 100, (4, 6))
    yield "3d", rng.integers(0, 10, (3, 2, 5))
    yield "wrap", rng.integers(-(10**6), 10**6, 60)
    yield "summarised", np.arange(3000).reshape(3, 10, 100)
    yield "summarised-1d", np.arange(5000)
    for shape in [(0,), (0, 3), (4, 0)]:
        yield f"empty-{shape}", np.zeros(shape)


def _corpus():
    with np.errstate(all="ignore"):
        for name, base in _float_bases():
            for dtype in FLOAT_DTYPES:
                yield pytest.param(base.astype(dtype), id=f"{dtype}-{name}")
        for name, base in _int_bases():
            for dtype in INT_DTYPES:
                yield pytest.param(base.astype(dtype), id=f"{dtype}-{name}")
            yield pytest.param(base.astype(bool), id=f"bool-{name}")
        big = np.arange(-60, 60, dtype=np.int64) * 10**16
        yield pytest.param(big, id="int64-huge")
        base = np.random.default_rng(2).standard_normal((4, 5, 6))
        yield pytest.param(base.transpose(2, 0, 1), id="strided-transpose")
        yield pytest.param(base[::-1, ::2, 1:], id="strided-negative")
        yield pytest.param(np.broadcast_to(base[0, 0], (3, 6)), id="strided-broadcast")
        yield pytest.param(np.asfortranarray(base.astype(np.float16)), id="strided-fortran")


CORPUS = list(_corpus())


@pytest.mark.parametrize("arr", CORPUS)
def test_corpus_matches_torch(torch, arr):
    assert_matches_torch(torch, arr)


@pytest.mark.parametrize(("arr", "suffixes", "expected"), GOLDEN)
def test_golden_strings_are_torchs(torch, arr, suffixes, expected):
    tensor = torch.from_numpy(arr.copy())
    if suffixes == ["requires_grad=True"]:
        tensor.requires_grad_()
    elif suffixes == ["grad_fn=<SumBackward0>"]:
        tensor = tensor.reshape(1).requires_grad_().sum()
    elif suffixes == ["grad_fn=<MulBackward0>"]:
        tensor = (tensor / 2).requires_grad_() * 2
    else:
        assert not suffixes, "add a way to build this golden's suffix with torch"
    assert repr(tensor) == expected


@pytest.mark.parametrize("arr", [a for a in CORPUS if a.values[0].dtype.kind == "f"][::3])
def test_grad_fn_suffix_matches_torch(torch, arr):
    leaf = torch.from_numpy(arr.copy(order="C")).requires_grad_()
    for result, suffix in [
        (leaf * 2, "grad_fn=<MulBackward0>"),
        (leaf.exp(), "grad_fn=<ExpBackward0>"),
        (leaf.unsqueeze(-1).expand(*arr.shape, 2), "grad_fn=<ExpandBackward0>"),
    ]:
        assert ours(result.detach().numpy(), [suffix]) == repr(result)


def test_prefix_matches_torch_subclass(torch):
    class Fancy(torch.Tensor):
        pass

    for arr in [
        np.arange(30.0, dtype=np.float32).reshape(3, 10),
        np.random.default_rng(3).standard_normal((4, 40)),
        np.arange(24).reshape(2, 3, 4),
    ]:
        fancy = torch.from_numpy(arr).as_subclass(Fancy)
        assert ours(arr, prefix="Fancy(") == repr(fancy)


PRINTOPTION_CASES = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"threshold": 5},
    {"threshold": 0},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"edgeitems": 0},
    {"linewidth": 30},
    {"linewidth": 200},
    {"linewidth": 1},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 6, "sci_mode": True},
]


@pytest.mark.parametrize("options", PRINTOPTION_CASES, ids=repr)
def test_printoptions_match_torch(torch, options):
    from torch._tensor_str import get_printoptions as torch_get_printoptions

    set_printoptions(**options)
    torch.set_printoptions(**options)
    assert get_printoptions() == torch_get_printoptions()
    for param in CORPUS[::4]:
        assert_matches_torch(torch, param.values[0])


# ----------------------------------------------------------------------------------------
# Hypothesis, compared with torch

SHAPES_NEAR_THRESHOLD = [
    (999,),
    (1000,),
    (1001,),
    (1, 1001),
    (10, 100),
    (10, 101),
    (7, 11, 13),
    (2, 2, 2, 126),
    (1001, 1),
    (6, 167),
    (5, 5, 5, 8),
    (3, 334),
    (2, 7, 72),
]


@st.composite
def shapes(draw):
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=9))
    if choice == 1:
        return draw(st.sampled_from(SHAPES_NEAR_THRESHOLD))
    lead = draw(st.lists(st.integers(1, 12), max_size=3))
    target = draw(st.integers(900, 1100))
    return (*lead, max(1, round(target / math.prod(lead))))


def _float_values(rng, n, style):
    if style == "mixed":  # log-uniform over 1e-8..1e10
        values = 10.0 ** rng.uniform(-8, 10, n)
    elif style == "decade":  # one random scale: fixed-point output at every magnitude
        values = 10.0 ** (rng.integers(-9, 11) + rng.uniform(0, 1, n))
    elif style == "int-valued":
        values = rng.integers(-1000, 1000, n).astype(np.float64)
    else:
        values = rng.standard_normal(n)
    return values * rng.choice([-1.0, 1.0], n)


def _sprinkle_specials(rng, values, fraction):
    mask = rng.random(values.size) < fraction
    specials = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0], values.size)
    return np.where(mask, specials, values)


def _int_values(rng, n, dtype, style):
    info = np.iinfo(dtype)
    low, high = (info.min, info.max) if style == "full" else (max(info.min, -50), 50)
    return rng.integers(low, high, n, endpoint=True, dtype=dtype)


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(shapes())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = math.prod(shape)
    if dtype.kind == "f":
        style = draw(st.sampled_from(["mixed", "decade", "int-valued", "normal"]))
        values = _float_values(rng, n, style)
        values = _sprinkle_specials(rng, values, draw(st.sampled_from([0.0, 0.05, 0.5, 1.0])))
        with np.errstate(over="ignore"):
            arr = values.astype(dtype).reshape(shape)
    elif dtype.kind == "b":
        arr = (rng.random(n) < draw(st.floats(0, 1))).reshape(shape)
    else:
        style = draw(st.sampled_from(["full", "small"]))
        arr = _int_values(rng, n, dtype, style).reshape(shape)
    if arr.ndim >= 2 and draw(st.booleans()):
        arr = arr.T  # non-contiguous
    if arr.ndim >= 1 and draw(st.booleans()):
        arr = arr[::-1]  # negative strides
    return arr


@HYPOTHESIS
@given(arr=arrays())
def test_random_arrays_match_torch(torch, arr):
    assert_matches_torch(torch, arr)


@HYPOTHESIS
@given(
    arr=hnp.arrays(
        st.sampled_from([np.float16, np.float32, np.float64]),
        hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
        elements={"allow_subnormal": True},
    )
)
def test_elementwise_arrays_match_torch(torch, arr):
    # hypothesis' own element strategy: subnormals, huge values, signed zeros, shrinking.
    assert_matches_torch(torch, arr)


@HYPOTHESIS
@given(
    arr=arrays(),
    options=st.fixed_dictionaries(
        {},
        optional={
            "precision": st.integers(0, 10),
            "threshold": st.sampled_from([0, 1, 5, 50, 1000, math.inf]),
            "edgeitems": st.integers(0, 5),
            "linewidth": st.integers(1, 200),
            "profile": st.sampled_from(["default", "short", "full"]),
            "sci_mode": st.sampled_from([None, True, False]),
        },
    ),
)
def test_random_printoptions_match_torch(torch, arr, options):
    from torch._tensor_str import get_printoptions as torch_get_printoptions

    _reset_printoptions()
    set_printoptions(**options)
    torch.set_printoptions(**options)
    try:
        assert get_printoptions() == torch_get_printoptions()
        assert_matches_torch(torch, arr)
    finally:
        _reset_printoptions()


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16, np.complex64])
def test_gradstack_dtype_names_break_lines_where_torchs_do(torch, dtype):
    # Note [Suffixes are measured as torch spells them]: "dtype=gradstack.float64" is
    # four characters longer than torch's, and must not move a line break
    rng = np.random.default_rng(3)
    checked = 0
    for n in range(1, 40):
        for shape in [(n,), (2, n), (n, 3)]:
            arr = (rng.standard_normal(shape) * 10.0 ** rng.integers(-2, 3)).astype(dtype)
            name = arr.dtype.name
            got = format_tensor(
                arr,
                dtype_name="gradstack." + name,
                is_default_dtype=name in DEFAULT_DTYPES or name == "complex64",
                suffixes=["requires_grad=True"] if arr.dtype.kind in "fc" else [],
            )
            want = theirs(torch, arr, requires_grad=arr.dtype.kind in "fc")
            assert got.replace("gradstack.", "torch.") == want
            checked += 1
    assert checked == 117
