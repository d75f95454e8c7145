"""Type promotion on mixed operands: torch's rules, not numpy's (Note [Torch's promotion,
not numpy's] in dtypes.py).

* hand-written expectations that run without torch;
* every pair of dtypes, tensor with tensor, 0-d with n-d, and tensor with Python scalars,
  compared with torch's result dtype and values when torch is installed;
* ``promote_types`` / ``result_type`` against ``torch.promote_types`` / ``torch.result_type``;
* in-place ops: the result dtype must fit the written tensor;
* hypothesis: random broadcastable shapes and dtypes give numpy's broadcast shape, the
  promoted dtype and the values numpy computes in that dtype.
"""

from __future__ import annotations

import itertools
import operator
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import dtypes as gdt
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
SCALARS = [True, False, 3, -2, 0, 2.5, -0.5]
OPS = {
    "add": operator.add,
    "mul": operator.mul,
    "div": operator.truediv,
    "maximum": lambda a, b: a.maximum(b) if isinstance(a, gt.Tensor) else b.maximum(a),
    "eq": operator.eq,
    "lt": operator.lt,
}


def gs_dtype(name):
    return getattr(gdt, "bool_" if name == "bool" else name)


def values(dtype, shape=(2, 3), seed=0):
    """Small values every dtype holds exactly (no overflow, no 0 divisors)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    return np.asarray(rng.integers(1, 5, size=shape)).astype(dtype)


# ---------------------------------------------------------------------------------------
# Hand-written expectations (no torch needed)

EXPECTED = [
    # (a, b, op, result dtype)
    (("int64", 1), ("float32", 1), "add", "float32"),  # numpy: float64
    (("int32", 1), ("float16", 1), "mul", "float16"),
    (("int64", 1), ("int32", 1), "add", "int64"),
    (("uint8", 1), ("int8", 1), "add", "int16"),
    (("bool", 1), ("int8", 1), "add", "int8"),
    (("bool", 1), ("bool", 1), "add", "bool"),
    (("float32", 1), ("float64", 0), "add", "float32"),  # a 0-d tensor does not upcast
    (("int32", 1), ("int64", 0), "add", "int32"),
    (("int32", 1), ("float64", 0), "add", "float64"),  # ... but a higher category wins
    (("int32", 1), ("float16", 0), "add", "float16"),
    (("bool", 1), ("int64", 0), "mul", "int64"),
    (("float16", 0), ("float64", 0), "add", "float64"),  # both 0-d: normal promotion
    (("int64", 1), ("int64", 1), "div", "float32"),  # true division of integers
    (("int32", 1), ("bool", 1), "div", "float32"),
    (("float64", 1), ("int64", 1), "div", "float64"),
    (("int64", 1), ("float32", 1), "eq", "bool"),
]

SCALAR_EXPECTED = [
    # (tensor dtype, scalar, op, result dtype)
    ("float32", 2.5, "add", "float32"),  # a Python float keeps the tensor's float dtype
    ("float16", 1e3, "mul", "float16"),
    ("float64", 2, "mul", "float64"),
    ("int32", 2, "add", "int32"),  # a Python int keeps the tensor's int dtype
    ("int8", 100, "add", "int8"),
    ("uint8", 3, "mul", "uint8"),
    ("int64", 2.5, "add", "float32"),  # ... a float raises it to the default float
    ("int32", 0.5, "mul", "float32"),
    ("bool", 2, "add", "int64"),
    ("bool", 2.5, "mul", "float32"),
    ("bool", True, "add", "bool"),
    ("int64", True, "add", "int64"),
    ("int16", 3, "div", "float32"),
    ("float16", 2, "div", "float16"),
    ("int64", 2.5, "lt", "bool"),
]


@pytest.mark.parametrize(("a", "b", "op", "expected"), EXPECTED)
def test_tensor_tensor_expectations(a, b, op, expected):
    (da, na), (db, nb) = a, b
    x = gt.from_numpy(values(da, (2,) * na))
    y = gt.from_numpy(values(db, (2,) * nb, seed=1))
    for r in (OPS[op](x, y), OPS[op](y, x) if op not in ("div", "lt") else None):
        if r is not None:
            assert r.dtype is gs_dtype(expected), (a, b, op)


@pytest.mark.parametrize(("dtype", "scalar", "op", "expected"), SCALAR_EXPECTED)
def test_tensor_scalar_expectations(dtype, scalar, op, expected):
    x = gt.from_numpy(values(dtype))
    assert OPS[op](x, scalar).dtype is gs_dtype(expected)
    if op in ("add", "mul"):
        assert OPS[op](scalar, x).dtype is gs_dtype(expected)  # reflected


def test_scalar_values_are_computed_in_the_result_dtype():
    # numpy would compute int64 + 2.5 in float64; torch (and gradstack) in float32
    x = gt.tensor([16777217])  # 2**24 + 1 is not a float32
    r = x + 0.5
    assert r.dtype is gt.float32
    assert r.item() == float(np.float32(16777217) + np.float32(0.5))
    # uint8 wraps as torch does; a Python int does not widen it
    assert (gt.tensor([250], dtype=gt.uint8) + 10).tolist() == [4]


def test_default_dtype_governs_float_scalars():
    x = gt.tensor([1, 2])
    gt.set_default_dtype(gt.float64)
    try:
        assert (x * 0.5).dtype is gt.float64
        assert (x / 2).dtype is gt.float64
        assert gt.tensor([1.5]).dtype is gt.float64
    finally:
        gt.set_default_dtype(gt.float32)
    assert (x * 0.5).dtype is gt.float32


def test_promote_types_table():
    assert gt.promote_types(gt.int64, gt.float16) is gt.float16
    assert gt.promote_types(gt.uint8, gt.int8) is gt.int16
    assert gt.promote_types(gt.bool, gt.uint8) is gt.uint8
    assert gt.promote_types(gt.float16, gt.float32) is gt.float32
    for d in map(gs_dtype, DTYPES):
        assert gt.promote_types(d, d) is d
        assert gt.promote_types(d, gt.bool) is d


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations_with_replacement(DTYPES, 2)))
def test_promote_types_is_symmetric(a, b):
    assert gt.promote_types(gs_dtype(a), gs_dtype(b)) is gt.promote_types(gs_dtype(b), gs_dtype(a))


@pytest.mark.parametrize(
    ("op", "dtype", "other", "ok"),
    [
        ("add_", "int64", 1.5, False),  # float result into an int tensor
        ("mul_", "int32", 0.5, False),
        ("add_", "bool", 2, False),  # int result into a bool tensor
        ("div_", "int64", 2, False),  # true division of ints is float
        ("add_", "int64", ("float32", 1), False),
        ("add_", "int32", ("int64", 1), True),  # same category: cast back, as torch
        ("mul_", "float32", ("float64", 1), True),
        ("add_", "float16", ("float32", 0), True),
        ("add_", "int64", True, True),
        ("mul_", "float32", 3, True),
    ],
)
def test_inplace_result_must_fit_the_tensor(op, dtype, other, ok):
    """int += float raises, as torch; float32 += float64 stays float32."""
    x = gt.from_numpy(values(dtype))
    y = gt.from_numpy(values(other[0], (3,) * other[1])) if isinstance(other, tuple) else other
    if ok:
        r = getattr(x, op)(y)
        assert r is x and r.dtype is gs_dtype(dtype) and x._version == 1
    else:
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(x, op)(y)
        assert x._version == 0


# ---------------------------------------------------------------------------------------
# Against torch


def _torch():
    return pytest.importorskip("torch")


def _check_against_torch(r, e, what):
    assert r.dtype.name == str(e.dtype).removeprefix("torch."), (
        f"{what}: {r.dtype.name} != torch's {e.dtype}"
    )
    assert tuple(r.shape) == tuple(e.shape), what
    rn, en = r.numpy(), e.numpy()
    if rn.dtype.kind == "f":
        np.testing.assert_allclose(
            rn.astype(np.float64),
            en.astype(np.float64),
            rtol=1e-3 if rn.dtype == np.float16 else 1e-6,
            err_msg=what,
        )
    else:
        np.testing.assert_array_equal(rn, en, err_msg=what)


def _torch_op(torch, op):
    if op == "maximum":
        return torch.maximum
    return OPS[op]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize(("na", "nb"), [(1, 1), (0, 1), (1, 0), (0, 0)])
def test_all_dtype_pairs_against_torch(op, na, nb):
    """Tensor with tensor over all 81 dtype pairs, 0-d and n-d, against torch."""
    torch = _torch()
    for da, db_ in itertools.product(DTYPES, DTYPES):
        a = values(da, (2, 3)[: 2 * na] if na else ())
        b = values(db_, (3,) if nb else (), seed=1)
        what = f"{op}({da}{list(a.shape)}, {db_}{list(b.shape)})"
        x, y = gt.from_numpy(a), gt.from_numpy(b)
        tx, ty = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
        try:
            e = _torch_op(torch, op)(tx, ty)
        except (RuntimeError, TypeError):
            with pytest.raises((RuntimeError, TypeError)):
                OPS[op](x, y)
            continue
        _check_against_torch(OPS[op](x, y), e, what)


@pytest.mark.parametrize("op", ["add", "mul", "div", "eq", "lt", "sub", "pow", "remainder"])
def test_tensor_scalar_against_torch(op):
    torch = _torch()
    fns = {"sub": operator.sub, "pow": operator.pow, "remainder": operator.mod}
    fn = fns.get(op, OPS.get(op))
    for dtype, scalar, reflected, ndim in itertools.product(DTYPES, SCALARS, (False, True), (0, 1)):
        if op in ("pow", "remainder") and (
            isinstance(scalar, bool) or scalar == 0 or (isinstance(scalar, int) and scalar < 0)
        ):
            continue  # torch's pow(bool, True) takes an exponent-1 shortcut; x % 0 raises
        a = values(dtype, (2, 3) if ndim else ())
        x, tx = gt.from_numpy(a), torch.from_numpy(a.copy())
        args, targs = ((scalar, x), (scalar, tx)) if reflected else ((x, scalar), (tx, scalar))
        shown = tuple(type(v).__name__ if isinstance(v, gt.Tensor) else v for v in args)
        what = f"{op}{shown} {dtype}"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e = fn(*targs)
        except (RuntimeError, TypeError):
            with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
                fn(*args)
            continue
        _check_against_torch(fn(*args), e, what)


def test_promote_types_against_torch():
    torch = _torch()
    for a, b in itertools.product(DTYPES, DTYPES):
        r = gt.promote_types(gs_dtype(a), gs_dtype(b))
        assert r.name == str(
            torch.promote_types(getattr(torch, a), getattr(torch, b))
        ).removeprefix("torch."), (a, b)


def test_result_type_against_torch():
    torch = _torch()
    for a, b, na, nb in itertools.product(DTYPES, DTYPES, (0, 1), (0, 1)):
        r = gdt.result_type([(gs_dtype(a), na), (gs_dtype(b), nb)])
        ta = torch.zeros((2,) * na, dtype=getattr(torch, a))
        tb = torch.zeros((2,) * nb, dtype=getattr(torch, b))
        assert r.name == str(torch.result_type(ta, tb)).removeprefix("torch."), (a, na, b, nb)
    for a, s in itertools.product(DTYPES, SCALARS):
        r = gdt.result_type([(gs_dtype(a), 1), s])
        assert r.name == str(
            torch.result_type(torch.zeros(2, dtype=getattr(torch, a)), s)
        ).removeprefix("torch."), (a, s)


def test_where_and_clamp_promote_like_torch():
    torch = _torch()
    cond = np.array([True, False, True])
    for da, db_ in itertools.product(DTYPES, DTYPES):
        a, b = values(da, (3,)), values(db_, (3,), seed=1)
        e = torch.where(torch.from_numpy(cond), torch.from_numpy(a), torch.from_numpy(b))
        r = gt.where(gt.from_numpy(cond), gt.from_numpy(a), gt.from_numpy(b))
        _check_against_torch(r, e, f"where({da}, {db_})")
    for da, bound in itertools.product(DTYPES, (1, 2.5, True)):
        a = values(da, (3,))
        try:
            e = torch.clamp(torch.from_numpy(a.copy()), min=bound)
        except RuntimeError:
            continue
        _check_against_torch(gt.clamp(gt.from_numpy(a), min=bound), e, f"clamp({da}, {bound})")


def test_cat_promotes_like_torch():
    torch = _torch()
    for da, db_ in itertools.product(DTYPES, DTYPES):
        a, b = values(da, (2,)), values(db_, (3,), seed=1)
        e = torch.cat([torch.from_numpy(a), torch.from_numpy(b)])
        _check_against_torch(gt.cat([gt.from_numpy(a), gt.from_numpy(b)]), e, f"cat({da}, {db_})")


# ---------------------------------------------------------------------------------------
# Property tests


PROP_DTYPES = ["float32", "float64", "int32", "int64", "bool"]
NUMPY_OPS = {
    "add": np.add,
    "mul": np.multiply,
    "maximum": np.maximum,
    "eq": np.equal,
    "lt": np.less,
}


@st.composite
def broadcast_operands(draw):
    shapes = draw(
        hnp.mutually_broadcastable_shapes(
            num_shapes=2, min_dims=0, max_dims=4, min_side=0, max_side=4
        )
    )
    da = draw(st.sampled_from(PROP_DTYPES))
    db_ = draw(st.sampled_from(PROP_DTYPES))
    elems = {
        "bool": st.booleans(),
        "int32": st.integers(-50, 50),
        "int64": st.integers(-50, 50),
        "float32": st.floats(-100, 100, width=32),
        "float64": st.floats(-100, 100),
    }
    a = draw(hnp.arrays(da, shapes.input_shapes[0], elements=elems[da]))
    b = draw(hnp.arrays(db_, shapes.input_shapes[1], elements=elems[db_]))
    layout = draw(st.sampled_from(["c", "T", "flip"]))
    if layout == "T" and a.ndim >= 2:
        a = np.ascontiguousarray(a.T).T  # same values, transposed strides
    elif layout == "flip" and a.ndim >= 1:
        a = np.flip(np.flip(a, 0).copy(), 0)  # same values, negative stride
    return a, b, shapes.result_shape


@settings(max_examples=150, deadline=None)
@given(broadcast_operands(), st.sampled_from(list(NUMPY_OPS)))
def test_broadcast_shape_dtype_and_values(operands, op):
    a, b, shape = operands
    x, y = gt.from_numpy(a), gt.from_numpy(b)
    r = OPS[op](x, y)
    res = gdt.result_type([(x.dtype, x.dim()), (y.dtype, y.dim())])
    assert tuple(r.shape) == tuple(shape)
    assert r.dtype is (gt.bool if op in ("eq", "lt") else res)
    expected = NUMPY_OPS[op](a.astype(res.numpy), b.astype(res.numpy))
    np.testing.assert_array_equal(r.numpy(), expected)


@settings(max_examples=100, deadline=None)
@given(broadcast_operands())
def test_division_promotes_integers_to_the_default_float(operands):
    a, b, shape = operands
    x, y = gt.from_numpy(a), gt.from_numpy(b)
    r = x / y
    res = gdt.result_type([(x.dtype, x.dim()), (y.dtype, y.dim())])
    assert tuple(r.shape) == tuple(shape)
    assert r.dtype is (res if res.is_floating_point else gt.float32)


@settings(max_examples=100, deadline=None)
@given(
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    st.sampled_from(PROP_DTYPES),
    st.one_of(st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False)),
)
def test_scalar_only_raises_the_category(shape, dtype, scalar):
    x = gt.from_numpy(values(dtype, shape))
    r = x * scalar
    d = gs_dtype(dtype)
    cat = 0 if isinstance(scalar, bool) else 1 if isinstance(scalar, int) else 2
    own = 0 if d is gt.bool else 2 if d.is_floating_point else 1
    expected = d if cat <= own else (gt.int64 if cat == 1 else gt.float32)
    assert r.dtype is expected and tuple(r.shape) == shape
    assert (scalar * x).dtype is expected


@settings(max_examples=60, deadline=None)
@given(broadcast_operands())
def test_promotion_matches_torch_property(operands):
    torch = pytest.importorskip("torch")
    a, b, _ = operands
    x, y = gt.from_numpy(a), gt.from_numpy(b)
    tx, ty = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    for fn in (operator.add, operator.mul, operator.truediv, operator.ge):
        _check_against_torch(
            fn(x, y), fn(tx, ty), f"{fn.__name__} {a.dtype}{a.shape} {b.dtype}{b.shape}"
        )


# ---------------------------------------------------------------------------------------
# Python ints that do not fit the tensor's integer dtype (Note [Python ints wrap like torch's])

WRAPS = {
    "add": lambda lib, t: t + 300,
    "add_neg": lambda lib, t: t + (-1),
    "lt_neg": lambda lib, t: t < -2,
    "iadd": lambda lib, t: t.clone().add_(-1),
    "fill_": lambda lib, t: t.clone().fill_(-1),
    "setitem": lambda lib, t: _set(t.clone(), 0, -1),
    "masked_fill": lambda lib, t: t.masked_fill(t > 1, -4),
    "full": lambda lib, t: lib.full((2,), -1, dtype=t.dtype),
    "clamp": lambda lib, t: t.clamp(-1, 2),
}


def _set(t, key, value):
    t[key] = value
    return t


@pytest.mark.parametrize("name", list(WRAPS))
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_python_ints_wrap_like_torch(name, dtype):
    a = np.array([1, 2, 200 if dtype == "uint8" else 100], dtype=dtype)
    r = WRAPS[name](gt, gt.from_numpy(a.copy()))
    torch = pytest.importorskip("torch")
    e = WRAPS[name](torch, torch.from_numpy(a.copy()))
    _check_against_torch(r, e, f"{name} {dtype}")


def test_ints_beyond_64_bits_raise():
    with pytest.raises(RuntimeError, match="Overflow"):
        gt.tensor([1, 2]) + 2**64
    with pytest.raises(RuntimeError, match="overflow"):
        gt.zeros(2, dtype=gt.int64).fill_(2**64)
    assert (gt.zeros(2) + 2**70).dtype is gt.float32  # fine for a float tensor
