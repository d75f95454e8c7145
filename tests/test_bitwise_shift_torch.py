"""The shift operators against torch 2.13: ``<<``, ``>>``, ``<<=``, ``>>=`` and their
reflected forms, ``bitwise_left_shift``/``bitwise_right_shift`` (function, method, in-place
method, ``out=``), on every integer dtype, with counts outside the bit width, negative
counts and values, scalars wrapped to the tensor's type, type promotion and torch's
refusals (bool, floating-point and complex operands; Note [Shift counts outside the bit
width] in tensor-core's ``_ufuncs.pyx``).  Also ``&=``, ``|=``, ``^=`` (in place, as
torch's)."""

from __future__ import annotations

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")

DTYPES = ("int8", "uint8", "int16", "int32", "int64", "bool", "float32")
VALUES = {
    "int8": [-128, -3, -1, 0, 1, 5, 100, 127],
    "uint8": [0, 1, 5, 100, 128, 200, 253, 255],
}
SIGNED = [-(2**31), -3, -1, 0, 1, 5, 100, 2**31 - 1]
COUNTS = [
    -300,
    -70,
    -65,
    -64,
    -63,
    -9,
    -8,
    -7,
    -1,
    0,
    1,
    2,
    7,
    8,
    9,
    15,
    16,
    31,
    32,
    33,
    63,
    64,
    65,
    100,
    255,
    256,
    257,
]
SCALARS = COUNTS + [True, 1.5, 2**40]
OPERATORS = ("__lshift__", "__rshift__")
SCALAR_METHODS = (
    "__lshift__",
    "__rshift__",
    "__rlshift__",
    "__rrshift__",
    "__ilshift__",
    "__irshift__",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "bitwise_left_shift_",
    "bitwise_right_shift_",
)


def _outcome(lib, f):
    """(dtype name, values) or the exception's class (and, for torch's "not implemented
    for" refusals, the words before our hint)."""
    try:
        r = f(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        words = str(e).split(" (")[0] if isinstance(e, NotImplementedError) else ""
        return type(e).__name__, words
    return str(r.dtype).split(".")[-1], r.tolist()


def _values(L, dtype):
    if dtype in ("bool", "float32"):
        return L.tensor([True, False, True, False, True, False, True, True]).to(getattr(L, dtype))
    values = VALUES.get(dtype, SIGNED if dtype in ("int32", "int64") else VALUES["int8"])
    return L.tensor(values).to(getattr(L, dtype))


def _agree(f):
    assert _outcome(gs, f) == _outcome(torch, f)


@pytest.mark.parametrize("op", OPERATORS)
@pytest.mark.parametrize("count_dtype", DTYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_by_tensor(dtype, count_dtype, op):
    def f(L):
        counts = L.tensor(COUNTS).to(getattr(L, count_dtype)).reshape(1, -1)
        return getattr(_values(L, dtype).reshape(8, 1), op)(counts)

    _agree(f)


@pytest.mark.parametrize("method", SCALAR_METHODS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_and_python_number(dtype, method):
    for s in SCALARS:
        _agree(lambda L, s=s: getattr(_values(L, dtype), method)(s))


@pytest.mark.parametrize(
    "src",
    [
        "torch.bitwise_left_shift(3, torch.tensor([1, 2, -1, 64]))",
        "torch.bitwise_right_shift(-300, torch.tensor([1, 2, 70], dtype=torch.int16))",
        "torch.bitwise_right_shift(torch.tensor([-9, 2]), torch.tensor(1))",
        "torch.bitwise_left_shift(torch.tensor([-9, 2]), 3, out=torch.empty(2, dtype=torch.int64))",
        "torch.tensor(-5, dtype=torch.int8) << torch.tensor(2, dtype=torch.int8)",
        "torch.tensor(-5, dtype=torch.int8) >> torch.tensor(2, dtype=torch.int8)",
        "torch.tensor(1, dtype=torch.int8) << torch.tensor(257)",
        "torch.tensor([1], dtype=torch.uint8) << torch.tensor([1], dtype=torch.int8)",
        "torch.ones(2, 3, dtype=torch.int32) << torch.ones(4, dtype=torch.int32)",
        "torch.ones(2, 3) << torch.ones(4)",
        "torch.ones(2, dtype=torch.complex64) << 1",
        "torch.ones(0, 3, dtype=torch.int32) << torch.ones(3, dtype=torch.int32)",
        "torch.arange(12).reshape(3, 4).t() << torch.arange(3)",
        "torch.arange(12).reshape(3, 4)[:, ::2] >> torch.tensor([[1], [2], [70]])",
        "torch.ones(3, dtype=torch.int32).__ilshift__(torch.ones(2, 3, dtype=torch.int32))",
        "torch.ones(3, dtype=torch.int8).__ilshift__(torch.ones(3, dtype=torch.int64) * 9)",
        "torch.ones(3, dtype=torch.uint8).__irshift__(torch.ones(3, dtype=torch.int8) * -1)",
        "torch.tensor([True, False]).bitwise_left_shift(torch.tensor([True, True]))",
        "torch.tensor([3, 5]).__iand__(1)",
        "torch.tensor([3, 5]).__ior__(8)",
        "torch.tensor([True, False]).__ixor__(True)",
        "torch.ones(2).__iand__(1)",
    ],
)
def test_calls(src):
    _agree(lambda L: eval(src, {"torch": L}))


def test_in_place_operators_write_self():
    for lib in (gs, torch):
        t = lib.tensor([1, -16], dtype=lib.int16)
        alias = t
        alias <<= 2
        assert alias is t and t.tolist() == [4, -64]
        alias >>= lib.tensor([1, 70], dtype=lib.int16)
        assert alias is t and t.tolist() == [2, -1]
        alias &= 1
        alias |= 4
        alias ^= 1
        assert alias is t and t.tolist() == [5, 4]


def test_reflected_operand_that_is_no_number_is_pythons_type_error():
    for lib in (gs, torch):
        with pytest.raises(TypeError, match="unsupported operand"):
            [1] << lib.tensor([1])  # noqa: B018
        with pytest.raises(TypeError, match="unsupported operand"):
            "a" >> lib.tensor([1])  # noqa: B018


def test_not_differentiable():
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    r = x.long() << 2
    assert not r.requires_grad and r.grad_fn is None
