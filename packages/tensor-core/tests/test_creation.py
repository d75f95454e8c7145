"""Creation functions: dtype inference as torch's (Python floats -> float32, ints -> int64,
bools -> bool, numpy arrays keep their dtype), sizes given every way torch accepts,
``requires_grad``, ``device``, seeded reproducibility of the random factories, and the
errors bad arguments raise.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

SUPPORTED_NUMPY = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.bool_,
]


# ---------------------------------------------------------------------------------------
# tensor / as_tensor / from_numpy

INFERENCE = [
    (1.5, "float32", ()),
    (2, "int64", ()),
    (True, "bool", ()),
    ([1.0, 2.0], "float32", (2,)),
    ([1, 2], "int64", (2,)),
    ([True, False], "bool", (2,)),
    ([1, 2.5], "float32", (2,)),  # mixed int/float -> the default float
    ([True, 1], "int64", (2,)),  # mixed bool/int -> int64
    ([[1, 2], [3, 4]], "int64", (2, 2)),
    ([[1.0], [2.0], [3.0]], "float32", (3, 1)),
    ([], "float32", (0,)),  # empty -> the default float
    ([[], []], "float32", (2, 0)),
    ((1, 2, 3), "int64", (3,)),
    (np.float64(2.0), "float64", ()),  # a numpy scalar keeps its dtype
    (np.int32(2), "int32", ()),
    ([np.float64(1.0), 2.0], "float64", (2,)),  # ... and is promoted with the rest
    ([np.int32(1), 2], "int64", (2,)),
    ([np.int32(1), np.int32(2)], "int32", (2,)),
]


@pytest.mark.parametrize(("data", "dtype", "shape"), INFERENCE)
def test_tensor_infers_dtype_like_torch(data, dtype, shape):
    t = gt.tensor(data)
    assert t.dtype.name == dtype and tuple(t.shape) == shape
    np.testing.assert_array_equal(t.numpy(), np.asarray(data))


@pytest.mark.parametrize(("data", "dtype", "shape"), INFERENCE)
def test_tensor_inference_agrees_with_torch(data, dtype, shape):
    torch = pytest.importorskip("torch")
    expected = torch.tensor(data)
    assert str(expected.dtype).removeprefix("torch.") == gt.tensor(data).dtype.name
    assert tuple(expected.shape) == tuple(gt.tensor(data).shape)


@pytest.mark.parametrize("np_dtype", SUPPORTED_NUMPY)
def test_tensor_of_numpy_array_keeps_its_dtype_and_copies(np_dtype):
    a = np.ones((2, 3), dtype=np_dtype)
    t = gt.tensor(a)
    assert t.dtype.numpy == np.dtype(np_dtype)
    assert not np.shares_memory(t.numpy(), a)
    assert gt.as_tensor(a).numpy() is a  # as_tensor does not copy
    assert gt.from_numpy(a).numpy() is a


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(2, dtype=np.complex256),
        np.zeros(2, dtype=np.longdouble),  # (uint16 is a dtype now: torch 2.13 has it)
        np.zeros(2, dtype=object),
        np.array(["a", "b"]),
        np.zeros(2, dtype="datetime64[s]"),
    ],
)
def test_unsupported_numpy_dtypes_raise_type_error(bad):
    for fn in (gt.from_numpy, gt.as_tensor, gt.tensor):
        with pytest.raises(TypeError, match="(support|dtype|type)"):
            fn(bad)


def test_tensor_with_dtype_and_requires_grad():
    t = gt.tensor([1, 2], dtype=gt.float64, requires_grad=True)
    assert t.dtype is gt.float64 and t.requires_grad and t.is_leaf
    with pytest.raises(TypeError, match="must be gradstack.dtype, not str"):  # as torch
        gt.tensor([1, 2], dtype="float32")
    assert gt.tensor([1.7, -1.7], dtype=gt.int64).tolist() == [1, -1]  # truncates
    assert gt.tensor([1, 2], dtype=float).dtype is gt.float64  # Python float is torch's double
    assert gt.tensor([1.0], dtype=int).dtype is gt.int64
    assert gt.tensor([1.0], dtype=bool).dtype is gt.bool
    with pytest.raises(RuntimeError, match="floating point"):
        gt.tensor([1, 2], requires_grad=True)


# Note [tensor() from Python numbers]: data of Python numbers only takes one
# np.array(data, dtype=...) call; anything else takes the general path.  Both must agree
# with torch and with each other.
PYTHON_NUMBERS = [
    ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32"),
    ([[1, 2, 3], [4, 5, 6]], "int64"),
    ([[True, False], [False, True]], "bool"),
    ([True, 2.5], "float32"),
    ([[1, 2], [3.5, 4]], "float32"),  # one float anywhere makes all float
    ([[True, 1], [0, False]], "int64"),
    (((1.0, 2), [3, True]), "float32"),  # tuples and lists mixed
    ([[[[[[1.0]]]]]], "float32"),
    ([float("nan"), float("inf"), -float("inf"), -0.0], "float32"),
    ([2**62, -(2**63)], "int64"),
    ([0.1, 1e-45, 3.4e38], "float32"),
    (-0.0, "float32"),
    (7, "int64"),
    (False, "bool"),
]


@pytest.mark.parametrize(("data", "dtype"), PYTHON_NUMBERS)
def test_tensor_from_python_numbers_values_and_dtype(data, dtype):
    t = gt.tensor(data)
    assert t.dtype.name == dtype
    expected = np.array(data, dtype=dtype)
    assert t.numpy().shape == expected.shape and t.numpy().flags.c_contiguous
    np.testing.assert_array_equal(t.numpy(), expected)
    assert np.signbit(t.numpy()).tolist() == np.signbit(expected).tolist()
    torch = pytest.importorskip("torch")
    ref = torch.tensor(data)
    assert str(ref.dtype).removeprefix("torch.") == dtype
    np.testing.assert_array_equal(t.numpy(), ref.numpy())


class _Int(int):
    pass


class _Float(float):
    pass


def _first_leaf_subclassed(data):
    """The same data with its first number as a subclass of its type (np.bool_ for a
    bool), which is not a plain Python number: tensor() takes the general path."""
    if isinstance(data, (list, tuple)):
        return [_first_leaf_subclassed(data[0]), *data[1:]] if data else []
    if isinstance(data, bool):
        return np.bool_(data)
    return _Float(data) if isinstance(data, float) else _Int(data)


def _outcome(data, dtype=None):
    try:
        t = gt.tensor(data, dtype=dtype)
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return ("raises", type(e), str(e))
    return (t.dtype, t.numpy().shape, t.numpy().tobytes())


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 3.4e38 as float16
@pytest.mark.parametrize(("data", "dtype"), PYTHON_NUMBERS)
def test_tensor_from_python_numbers_agrees_with_the_general_path(data, dtype):
    """Same dtype and bits, or the same error (nan as int32, 2**62 as int32 ...)."""
    general = _first_leaf_subclassed(data)
    assert _outcome(data)[0].name == dtype
    for target in (None, gt.float64, gt.float16, gt.int32, gt.int64, gt.bool):
        assert _outcome(data, target) == _outcome(general, target), target


@pytest.mark.parametrize("target", ["float64", "float16", "int32", "int8", "uint8", "bool"])
def test_tensor_from_python_numbers_with_dtype(target):
    data = [[1.5, 2.0, 0.0], [3.0, 4.25, 1e-3]]
    if target != "uint8":
        data[0][1] = -2.0
    t = gt.tensor(data, dtype=getattr(gt, target))
    assert t.dtype.name == target
    np.testing.assert_array_equal(t.numpy(), np.array(data, dtype=target))
    # floats go straight to float64, not through float32
    assert gt.tensor([0.7], dtype=gt.float64).item() == 0.7
    assert gt.tensor(0.7, dtype=gt.float64).item() == 0.7


def test_tensor_from_python_numbers_follows_the_default_dtype():
    previous = gt.get_default_dtype()
    gt.set_default_dtype(gt.float64)
    try:
        assert gt.tensor([1.0, 2]).dtype is gt.float64
        assert gt.tensor([0.1]).item() == 0.1
        assert gt.tensor([1, 2]).dtype is gt.int64
    finally:
        gt.set_default_dtype(previous)
    assert gt.tensor([1.0]).dtype is gt.float32


@pytest.mark.parametrize(
    ("data", "kwargs", "exc", "words"),
    [
        ([[1.0, 2.0], [3.0]], {}, ValueError, "same length"),
        ([[1, 2], [3]], {"dtype": gt.float64}, ValueError, "same length"),
        ([[1.0, 2.0], 3.0], {}, ValueError, "same length"),
        ([1.0, [2.0]], {}, ValueError, "same length"),
        ([1.0, None], {}, RuntimeError, "infer"),  # (torch's classes, issue 36)
        ([1.0, "a"], {}, TypeError, "str"),
        ([[1.0], ["a"]], {}, TypeError, "str"),
        ([1.0, 2.0], {"dtype": "nope"}, TypeError, "argument 'dtype' must be gradstack.dtype"),
        ([1, 2], {"requires_grad": True}, RuntimeError, "floating point"),
        ([2**64], {}, ValueError, "Overflow"),
    ],
)
def test_tensor_from_python_data_still_validates(data, kwargs, exc, words):
    with pytest.raises(exc, match=words):
        gt.tensor(data, **kwargs)


def test_tensor_huge_ints_with_a_float_dtype_like_torch():
    # an int past int64 cannot be inferred, but converts to an explicit float dtype
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        t = gt.tensor([2**64, 1], dtype=getattr(gt, dt))
        np.testing.assert_array_equal(
            t.numpy(), torch.tensor([2**64, 1], dtype=getattr(torch, dt)).numpy()
        )


def test_tensor_from_python_numbers_requires_grad_and_copies():
    data = [[1.0, 2.0], [3.0, 4.0]]
    t = gt.tensor(data, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.dtype is gt.float32
    t2 = gt.tensor(data)
    t2.add_(1)
    assert data == [[1.0, 2.0], [3.0, 4.0]] and t2.numpy().flags.writeable


def test_tensor_copies_tensors_and_lists_of_tensors():
    a = gt.tensor([1.0, 2.0])
    b = gt.tensor(a)
    assert not np.shares_memory(a.numpy(), b.numpy())
    assert gt.tensor([gt.tensor(1.0), gt.tensor(2.0)]).tolist() == [1.0, 2.0]
    assert gt.tensor([a, a]).shape == (2, 2)


@pytest.mark.parametrize(
    ("bad", "exc", "words"),
    [
        ([[1, 2], [3]], ValueError, "same length"),
        ("abc", TypeError, "str"),
        ([1, "a"], TypeError, "str"),
        ({1: 2}, RuntimeError, "infer"),  # (torch's classes, issue 36)
        (object(), RuntimeError, "infer"),
    ],
)
def test_tensor_rejects_bad_data(bad, exc, words):
    with pytest.raises(exc, match=words):
        gt.tensor(bad)


def test_as_tensor_no_copy_unless_needed():
    t = gt.tensor([1.0, 2.0])
    assert gt.as_tensor(t) is t
    assert gt.as_tensor(t, dtype=gt.float64).dtype is gt.float64
    a = np.arange(3, dtype=np.int32)
    assert gt.as_tensor(a, dtype=gt.int32).numpy() is a
    c = gt.as_tensor(a, dtype=gt.float32)
    assert c.dtype is gt.float32 and not np.shares_memory(c.numpy(), a)
    assert gt.as_tensor([1, 2]).dtype is gt.int64


def test_from_numpy_rejects_non_arrays():
    with pytest.raises(TypeError, match="ndarray"):
        gt.from_numpy([1, 2])


def test_scalar_tensor():
    assert gt.scalar_tensor(2).dtype is gt.float32 and gt.scalar_tensor(2).dim() == 0
    assert gt.scalar_tensor(2, dtype=gt.int64).item() == 2


# ---------------------------------------------------------------------------------------
# Filled factories

FILLED = {
    "zeros": (gt.zeros, 0),
    "ones": (gt.ones, 1),
    "empty": (gt.empty, None),
}


@pytest.mark.parametrize("name", list(FILLED))
@pytest.mark.parametrize(
    "size", [(2, 3), ((2, 3),), ([2, 3],), (gt.Size((2, 3)),), ((),), (0,), (0, 4), (5,), ()]
)
def test_filled_factories_take_sizes_like_torch(name, size):
    fn, value = FILLED[name]
    t = fn(*size)
    expected = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    assert tuple(t.shape) == tuple(expected)
    assert t.dtype is gt.float32 and not t.requires_grad
    if value is not None:
        assert (t.numpy() == value).all()


@pytest.mark.parametrize("name", list(FILLED))
@pytest.mark.parametrize(
    "dtype", [gt.float16, gt.float32, gt.float64, gt.int32, gt.int64, gt.uint8, gt.bool]
)
def test_filled_factories_take_dtype(name, dtype):
    t = FILLED[name][0](2, dtype=dtype)
    assert t.dtype is dtype


@pytest.mark.parametrize("name", list(FILLED))
def test_filled_factories_requires_grad(name):
    fn = FILLED[name][0]
    t = fn(2, 2, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None
    with pytest.raises(RuntimeError, match="floating point"):
        fn(2, dtype=gt.int64, requires_grad=True)


@pytest.mark.parametrize("fn", [gt.zeros, gt.ones, gt.empty, gt.rand, gt.randn])
@pytest.mark.parametrize(
    ("size", "exc", "words"),
    [
        ((-1,), RuntimeError, "negative dimension -1"),
        ((2, -3), RuntimeError, "negative dimension -3"),
        ((2.5,), TypeError, "tuple of ints.*float"),
        (("3",), TypeError, "tuple of ints.*str"),
        (((2, None),), TypeError, "tuple of ints.*NoneType"),
        ((True,), TypeError, "tuple of ints.*bool"),
    ],
)
def test_bad_sizes_raise_helpful_errors(fn, size, exc, words):
    with pytest.raises(exc, match=words) as e:
        fn(*size)
    assert fn.__name__ in str(e.value)


def test_bad_sizes_raise_like_torch():
    torch = pytest.importorskip("torch")
    for size in ((-1,), (2.5,), (2, -3)):
        with pytest.raises(Exception) as te:
            torch.zeros(*size)
        with pytest.raises(type(te.value)):
            gt.zeros(*size)


def test_full_infers_dtype_from_the_value():
    assert gt.full((2,), 1.5).dtype is gt.float32
    assert gt.full((2,), 1).dtype is gt.int64
    assert gt.full((2,), True).dtype is gt.bool
    assert gt.full((2, 2), 7, dtype=gt.float64).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert gt.full([3], gt.tensor(2.5)).tolist() == [2.5] * 3
    assert gt.full((), 3.0).dim() == 0
    assert gt.full((2,), 1.5, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="negative"):
        gt.full((-2,), 1.0)


@pytest.mark.parametrize("src_dtype", [gt.float64, gt.int32, gt.bool])
def test_like_factories_follow_the_input(src_dtype):
    src = gt.zeros(2, 3, dtype=src_dtype)
    for fn in (gt.zeros_like, gt.ones_like, gt.empty_like):
        r = fn(src)
        assert r.shape == src.shape and r.dtype is src_dtype
        assert fn(src, dtype=gt.float32).dtype is gt.float32
    assert gt.full_like(src, 1).dtype is src_dtype
    assert gt.ones_like(src).numpy().all()
    for fn in (gt.rand_like, gt.randn_like):
        r = fn(gt.zeros(4, 5, dtype=gt.float64))
        assert r.shape == (4, 5) and r.dtype is gt.float64
    r = gt.randint_like(gt.zeros(3, dtype=gt.int32), 10)
    assert r.dtype is gt.int32 and ((r.numpy() >= 0) & (r.numpy() < 10)).all()


def test_full_like_casts_the_value_like_torch():
    assert gt.full_like(gt.zeros(2, dtype=gt.int32), 2.7).tolist() == [2, 2]


def test_like_factories_reject_non_tensors():
    for fn in (gt.zeros_like, gt.ones_like, gt.empty_like, gt.rand_like):
        with pytest.raises(TypeError, match="Tensor"):
            fn(np.zeros(3))


def test_like_factories_requires_grad():
    src = gt.zeros(2)
    assert gt.zeros_like(src, requires_grad=True).requires_grad
    assert not gt.zeros_like(gt.zeros(2, requires_grad=True)).requires_grad


# ---------------------------------------------------------------------------------------
# Ranges


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((5,), {}),
        ((2, 7), {}),
        ((0, 10, 3), {}),
        ((5, 0, -1), {}),
        ((0, 1, 0.25), {}),
        ((0.0, 1.0, 0.1), {}),
        ((-1.0, 1.0, 0.5), {}),
        ((0, 5), {"dtype": gt.float64}),
        ((1, 2.5, 0.5), {}),
        ((3, 3), {}),
        ((10,), {"dtype": gt.int32}),
    ],
)
def test_arange_matches_torch(args, kwargs):
    t = gt.arange(*args, **kwargs)
    is_float = any(isinstance(a, float) for a in args)
    assert t.dtype is kwargs.get("dtype", gt.float32 if is_float else gt.int64)
    torch = pytest.importorskip("torch")
    tkw = {"dtype": getattr(torch, kwargs["dtype"].name)} if "dtype" in kwargs else {}
    e = torch.arange(*args, **tkw)
    assert t.dtype.name == str(e.dtype).removeprefix("torch.")
    np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    ("args", "words"), [((0, 5, 0), "nonzero"), ((1, 0), "step sign"), ((0, 5, -1), "step sign")]
)
def test_arange_errors(args, words):
    with pytest.raises(RuntimeError, match=words):
        gt.arange(*args)


def test_arange_requires_grad_and_tensor_bounds():
    assert gt.arange(3.0, requires_grad=True).requires_grad
    assert gt.arange(gt.tensor(3)).tolist() == [0, 1, 2]


def test_linspace_logspace_eye():
    assert gt.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert gt.linspace(0, 1, 5).dtype is gt.float32
    assert gt.linspace(0, 1, 1).tolist() == [0.0]
    assert gt.linspace(0, 1, 0).shape == (0,)
    assert gt.linspace(0, 1, 3, dtype=gt.float64).dtype is gt.float64
    np.testing.assert_allclose(gt.logspace(0, 2, 3).numpy(), [1.0, 10.0, 100.0])
    assert gt.eye(3).tolist() == np.eye(3).tolist() and gt.eye(3).dtype is gt.float32
    assert gt.eye(2, 3).shape == (2, 3)
    assert gt.eye(2, dtype=gt.int64).dtype is gt.int64
    assert gt.eye(0).shape == (0, 0)
    with pytest.raises(RuntimeError, match="non-negative"):
        gt.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="non-negative"):
        gt.eye(-1)


# ---------------------------------------------------------------------------------------
# Random factories and seeds

RANDOM = {
    "rand": lambda **kw: gt.rand(3, 4, **kw),
    "randn": lambda **kw: gt.randn(3, 4, **kw),
    "randint": lambda **kw: gt.randint(0, 10, (3, 4), **kw),
    "randint_high": lambda **kw: gt.randint(7, (5,), **kw),
    "randperm": lambda **kw: gt.randperm(10, **kw),
    "rand_like": lambda **kw: gt.rand_like(gt.zeros(2, 2), **kw),
    "randn_like": lambda **kw: gt.randn_like(gt.zeros(2, 2), **kw),
    "uniform_": lambda **kw: gt.zeros(5).uniform_(-1, 1, **kw),
    "normal_": lambda **kw: gt.zeros(5).normal_(2, 3, **kw),
}
_GEN_KW = {"rand", "randn", "randint", "randint_high", "randperm", "uniform_", "normal_"}


@pytest.mark.parametrize("name", list(RANDOM))
def test_same_seed_same_numbers(name):
    gt.manual_seed(123)
    a = RANDOM[name]().numpy().copy()
    b = RANDOM[name]().numpy().copy()
    gt.manual_seed(123)
    c = RANDOM[name]().numpy().copy()
    gt.manual_seed(124)
    d = RANDOM[name]().numpy().copy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)  # the stream advances
    assert not np.array_equal(a, d)  # another seed, other numbers


@pytest.mark.parametrize("name", sorted(_GEN_KW))
def test_generator_objects_are_independent_streams(name):
    g1 = gt.Generator().manual_seed(7)
    g2 = gt.Generator().manual_seed(7)
    gt.manual_seed(0)
    a = RANDOM[name](generator=g1).numpy().copy()
    gt.rand(10)  # the default generator does not interfere
    b = RANDOM[name](generator=g2).numpy().copy()
    np.testing.assert_array_equal(a, b)


def test_seed_state_round_trip():
    gen = gt.manual_seed(5)
    assert gen is gt.default_generator and gt.initial_seed() == 5
    state = gen.get_state()
    a = gt.rand(4).numpy().copy()
    gen.set_state(state)
    np.testing.assert_array_equal(gt.rand(4).numpy(), a)
    s = gt.seed()
    assert gt.initial_seed() == s
    with pytest.raises(RuntimeError, match="Overflow"):
        gt.manual_seed(2**70)
    with pytest.raises(TypeError, match="Generator"):
        gt.rand(2, generator=np.random.default_rng(0))


def test_random_values_have_the_right_range_dtype_and_shape():
    gt.manual_seed(0)
    r = gt.rand(1000)
    assert r.dtype is gt.float32 and ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    assert abs(r.numpy().mean() - 0.5) < 0.05
    n = gt.randn(2000, dtype=gt.float64)
    assert n.dtype is gt.float64 and abs(n.numpy().mean()) < 0.1 and abs(n.numpy().std() - 1) < 0.1
    i = gt.randint(-3, 3, (1000,))
    assert i.dtype is gt.int64 and set(np.unique(i.numpy())) == set(range(-3, 3))
    assert gt.randint(5, (2, 2), dtype=gt.int32).dtype is gt.int32
    p = gt.randperm(50)
    assert p.dtype is gt.int64 and sorted(p.tolist()) == list(range(50))
    assert gt.rand(2, 3, requires_grad=True).requires_grad
    assert gt.rand(0).shape == (0,) and gt.randn(()).dim() == 0
    assert gt.rand(2, dtype=gt.float16).dtype is gt.float16


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: gt.rand(2, dtype=gt.int64), NotImplementedError, "'Long'"),  # torch's type
        (lambda: gt.randn(2, dtype=gt.int32), NotImplementedError, "'Int'"),
        (lambda: gt.randint(3, 2, (2,)), RuntimeError, "from=3 >= to=2"),
        (lambda: gt.randint(5), TypeError, "size"),
        (lambda: gt.zeros(3, dtype=gt.int64).uniform_(), NotImplementedError, "floating-point"),
        (lambda: gt.zeros(3, dtype=gt.bool).normal_(), NotImplementedError, "floating-point"),
    ],
)
def test_random_errors(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# ---------------------------------------------------------------------------------------
# device=


@pytest.mark.parametrize(
    "factory",
    [
        lambda d: gt.zeros(2, device=d),
        lambda d: gt.ones(2, device=d),
        lambda d: gt.tensor([1], device=d),
        lambda d: gt.arange(3, device=d),
        lambda d: gt.rand(2, device=d),
        lambda d: gt.full((2,), 1, device=d),
        lambda d: gt.eye(2, device=d),
        lambda d: gt.empty(1, device=d),
        lambda d: gt.linspace(0, 1, 2, device=d),
    ],
)
def test_device_cpu_only(factory):
    assert factory("cpu").device == gt.device("cpu")
    assert factory(gt.device("cpu")).device.type == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        factory("cuda")
    with pytest.raises(RuntimeError, match="Expected one of"):
        factory("tpu")
