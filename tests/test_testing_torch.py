"""``gradstack.testing`` against torch 2.13's ``torch.testing``: ``assert_close``'s
verdicts, exception types and messages (mismatched elements, greatest absolute and relative
differences with their indices, the item of a sequence or mapping, torch's default
tolerances per dtype, ``rtol``/``atol``, ``equal_nan``, ``check_dtype``, ``check_stride``,
``msg``), and ``make_tensor``'s values after the same seed, dtypes, layouts and errors.
"""

from __future__ import annotations

import math

import gradstack
import numpy as np
import pytest

torch = pytest.importorskip("torch")

ASSERT_CASES = [
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.5, 3.1])),
    lambda L: L.testing.assert_close(
        L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
    ),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0, 3.0]), L.tensor([1.0, 2.0])),
    lambda L: L.testing.assert_close(L.tensor([1, 2, 3]), L.tensor([1, 2, 4])),
    lambda L: L.testing.assert_close(L.tensor(1.0), L.tensor(2.0)),
    lambda L: L.testing.assert_close(L.tensor([float("nan")]), L.tensor([float("nan")])),
    lambda L: L.testing.assert_close(
        L.tensor([float("nan")]), L.tensor([float("nan")]), equal_nan=True
    ),
    lambda L: L.testing.assert_close(1.0, 1.1),
    lambda L: L.testing.assert_close([L.tensor(1.0), 2.0], [L.tensor(1.0), 2.5]),
    lambda L: L.testing.assert_close({"a": L.tensor(1.0)}, {"a": L.tensor(1.5)}),
    lambda L: L.testing.assert_close({"a": 1}, {"b": 1}),
    lambda L: L.testing.assert_close([1, 2], [1]),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0]), rtol=1e-3),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), [1.0, 2.0]),
    lambda L: L.testing.assert_close(L.tensor([True]), L.tensor([False])),
    lambda L: L.testing.assert_close(
        L.tensor([[1.0, 2.0], [3, 4]]), L.tensor([[1.0, 2.0], [3, 5]]), msg="custom"
    ),
    lambda L: L.testing.assert_close(
        L.tensor([[1.0, 2.0], [3, 4]]), L.tensor([[1.0, 2.0], [3, 5]]), msg=lambda m: "H\n" + m
    ),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0]).requires_grad_()),
    lambda L: L.testing.assert_close(
        L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-9], dtype=L.float64), check_dtype=False
    ),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.1]), atol=0.2, rtol=0),
    lambda L: L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.3]), atol=0.2, rtol=0),
    lambda L: L.testing.assert_close(L.tensor([0.0, 2.0]), L.tensor([1e-9, 2.0])),
    lambda L: L.testing.assert_close(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    lambda L: L.testing.assert_close(L.ones(2, 3), L.ones(3, 2).t(), check_stride=True),
    lambda L: L.testing.assert_close(L.tensor([1, 2]), L.tensor([1.0, 2.0])),
    lambda L: L.testing.assert_close(2, 3),
    lambda L: L.testing.assert_close(2, 2.0),
    lambda L: L.testing.assert_close(2, 2.0, check_dtype=False),
    lambda L: L.testing.assert_close(None, 1),
    lambda L: L.testing.assert_close(True, False),
    lambda L: L.testing.assert_close(np.array([1.0, 2.0]), np.array([1.0, 3.0])),
    lambda L: L.testing.assert_close(L.tensor([1.0, float("inf")]), L.tensor([1.0, float("inf")])),
    lambda L: L.testing.assert_close(L.tensor([1.0, float("inf")]), L.tensor([1.0, float("-inf")])),
    lambda L: L.testing.assert_close(
        L.tensor([1.0, 2.0], dtype=L.float16), L.tensor([1.0, 2.01], dtype=L.float16)
    ),
    lambda L: L.testing.assert_close(
        L.tensor([[1.0, 2.0], [3, 4]]).half(), L.tensor([[1.0, 2.0], [3, 4]])
    ),
    lambda L: L.testing.assert_close(
        L.tensor([[1.0, 2.0], [3, 4]]).half(), L.tensor([[1.0, 2.0], [3, 4.001]]), check_dtype=False
    ),
    lambda L: L.testing.assert_close(
        L.tensor([3, 4], dtype=L.uint8), L.tensor([5, 4], dtype=L.uint8)
    ),
    lambda L: L.testing.assert_close(L.zeros(0), L.zeros(0)),
    lambda L: L.testing.assert_close(L.tensor([[1e10, 1.0]]), L.tensor([[1.0001e10, 1.0]])),
]


def _outcome(fn, lib):
    try:
        fn(lib)
        return "ok"
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        text = str(e).replace("torch.", "LIB.").replace("gradstack.", "LIB.")
        # (the class's repr names its module: gradstack_tensor._tensor.Tensor)
        text = text.replace("<class 'gradstack_tensor._tensor.Tensor'>", "<class 'LIB.Tensor'>")
        return type(e).__name__ + ": " + text


@pytest.mark.parametrize("case", range(len(ASSERT_CASES)))
def test_assert_close_like_torch(case):
    fn = ASSERT_CASES[case]
    assert _outcome(fn, gradstack) == _outcome(fn, torch)


def test_assert_close_reports_the_first_failing_item_of_nested_containers():
    fn = lambda L: L.testing.assert_close(  # noqa: E731
        {"x": [L.tensor(1.0), (2, L.tensor([1.0, 2.0]))]},
        {"x": [L.tensor(1.0), (2, L.tensor([1.0, 2.5]))]},
    )
    out = _outcome(fn, gradstack)
    assert out == _outcome(fn, torch)
    assert out.endswith("The failure occurred for item ['x'][1][1]")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_default_tolerances_are_torch_s(dtype):
    # an element just inside and one just outside torch's default tolerance of the dtype
    rtol, atol = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}[
        dtype
    ]
    for scale in (0.5, 3.0):
        e = np.array([1.0, 100.0])
        a = e + scale * (atol + rtol * e)
        verdicts = [
            _outcome(
                lambda L, a=a, e=e: L.testing.assert_close(
                    L.tensor(a, dtype=getattr(L, dtype)), L.tensor(e, dtype=getattr(L, dtype))
                ),
                L,
            )
            for L in (torch, gradstack)
        ]
        assert verdicts[0] == verdicts[1]


def test_assert_allclose_is_deprecated_and_loose():
    for lib in (torch, gradstack):
        with pytest.warns(FutureWarning):
            lib.testing.assert_allclose(lib.tensor([1.0]), [1.00001])


MAKE_CASES = [
    lambda L: L.testing.make_tensor(3, 4, dtype=L.float32, device="cpu"),
    lambda L: L.testing.make_tensor((3, 4), dtype=L.float64, device="cpu", low=-1, high=1),
    lambda L: L.testing.make_tensor(5, dtype=L.int64, device="cpu"),
    lambda L: L.testing.make_tensor(5, dtype=L.uint8, device="cpu"),
    lambda L: L.testing.make_tensor(5, dtype=L.bool, device="cpu"),
    lambda L: L.testing.make_tensor(2, 3, dtype=L.float32, device="cpu", noncontiguous=True),
    lambda L: L.testing.make_tensor(
        2, 3, dtype=L.int32, device="cpu", exclude_zero=True, low=-1, high=2
    ),
    lambda L: L.testing.make_tensor(2, 3, dtype=L.float16, device="cpu", requires_grad=True),
    lambda L: L.testing.make_tensor(4, dtype=L.float32, device="cpu", low=-1e39, high=1e39),
    lambda L: L.testing.make_tensor(4, dtype=L.int8, device="cpu", low=-1000, high=1000),
    lambda L: L.testing.make_tensor(4, dtype=L.int64, device="cpu", requires_grad=True),
    lambda L: L.testing.make_tensor(4, dtype=L.float32, device="cpu", low=2, high=1),
    lambda L: L.testing.make_tensor(4, dtype=L.float32, device="cpu", low=float("nan")),
    lambda L: L.testing.make_tensor(4, dtype=L.int8, device="cpu", low=200, high=300),
    lambda L: L.testing.make_tensor((), dtype=L.float32, device="cpu"),
    lambda L: L.testing.make_tensor(0, 3, dtype=L.float32, device="cpu", noncontiguous=True),
]


def _made(fn, lib):
    lib.manual_seed(0)
    try:
        t = fn(lib)
    except Exception as e:  # noqa: BLE001
        return (
            type(e).__name__ + ": " + str(e).replace("torch.", "LIB.").replace("gradstack.", "LIB.")
        )
    stride = t.stride() if t.numel() else None  # (an empty tensor's strides differ)
    return (
        t.tolist(),
        str(t.dtype).split(".")[-1],
        tuple(t.shape),
        stride,
        t.requires_grad,
        t.is_contiguous(),
    )


@pytest.mark.parametrize("case", range(len(MAKE_CASES)))
def test_make_tensor_like_torch(case):
    fn = MAKE_CASES[case]
    assert _made(fn, gradstack) == _made(fn, torch)


def test_make_tensor_exclude_zero_for_floats():
    t = gradstack.testing.make_tensor(
        1000, dtype=gradstack.float16, device="cpu", low=-1, high=1, exclude_zero=True
    )
    assert not bool((t == 0).any())


def test_make_tensor_refuses_another_device():
    with pytest.raises(RuntimeError, match="CPU only"):
        gradstack.testing.make_tensor(2, dtype=gradstack.float32, device="cuda")


def test_the_math_module_is_used():
    assert math.isfinite(
        gradstack.testing.make_tensor((), dtype=gradstack.float64, device="cpu").item()
    )
