"""``dtype=`` arguments take gradstack dtypes and Python's float/int/bool, as torch's take
torch dtypes: a string ("float32") or a numpy dtype is a TypeError everywhere (issue 11:
``sum(dtype="float32")`` was accepted).  Python's ``float`` is float64 (torch's double).
Also the function forms ``count_nonzero``, ``isnan``, ``isinf``, ``isfinite``."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

CALLS = {
    "sum": lambda L, d: L.ones(2).sum(dtype=d),
    "mean": lambda L, d: L.ones(2).mean(dtype=d),
    "prod": lambda L, d: L.ones(2).prod(dtype=d),
    "cumsum": lambda L, d: L.ones(2).cumsum(0, dtype=d),
    "softmax": lambda L, d: L.ones(2).softmax(0, dtype=d),
    "log_softmax": lambda L, d: L.ones(2).log_softmax(0, dtype=d),
    "zeros": lambda L, d: L.zeros(2, dtype=d),
    "ones": lambda L, d: L.ones(2, dtype=d),
    "empty": lambda L, d: L.empty(2, dtype=d),
    "full": lambda L, d: L.full((2,), 1.0, dtype=d),
    "tensor": lambda L, d: L.tensor([1, 2], dtype=d),
    "tensor_nested": lambda L, d: L.tensor([[1.0], [2]], dtype=d),
    "arange": lambda L, d: L.arange(3, dtype=d),
    "linspace": lambda L, d: L.linspace(0, 1, 3, dtype=d),
    "eye": lambda L, d: L.eye(2, dtype=d),
    "rand": lambda L, d: L.rand(2, dtype=d),
    "randn": lambda L, d: L.randn(2, dtype=d),
    "zeros_like": lambda L, d: L.zeros_like(L.ones(2), dtype=d),
    "full_like": lambda L, d: L.full_like(L.ones(2), 3, dtype=d),
    "as_tensor": lambda L, d: L.as_tensor(np.ones(2), dtype=d),
    "view": lambda L, d: L.ones(2).view(d),
}


@pytest.mark.parametrize("bad", ["float32", "float64", np.float32, np.dtype("float64")])
@pytest.mark.parametrize("name", list(CALLS))
def test_dtype_must_be_a_dtype(name, bad):
    with pytest.raises(TypeError) as theirs:
        CALLS[name](torch, bad)
    with pytest.raises(TypeError, match="dtype") as ours:
        CALLS[name](gt, bad)
    assert "numpy" not in str(ours.value) or "dtype" in str(theirs.value)


@pytest.mark.parametrize(
    ("name", "python_type"), [(name, t) for name in CALLS for t in (float, int, bool)]
)
def test_python_types_are_dtypes_as_in_torch(name, python_type):
    try:
        theirs = CALLS[name](torch, python_type)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            CALLS[name](gt, python_type)
        return
    ours = CALLS[name](gt, python_type)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


def test_set_default_dtype_refuses_a_name():
    for L in (gt, torch):
        with pytest.raises(TypeError):
            L.set_default_dtype("float64")
    assert gt.get_default_dtype() is gt.float32


def test_to_a_string_is_a_device_as_in_torch():
    for L in (gt, torch):
        with pytest.raises(RuntimeError):
            L.ones(2).to("float32")


X = np.array([[0.0, 1.0, np.nan], [np.inf, -np.inf, 2.0], [0.0, -0.0, 3.0]])


@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1), (1,)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_count_nonzero_matches_torch(dim, dtype):
    a = np.nan_to_num(X, nan=5.0, posinf=7.0, neginf=-7.0).astype(dtype)
    ours = gt.count_nonzero(gt.tensor(a), dim=dim)
    theirs = torch.count_nonzero(torch.tensor(a), dim=dim)
    assert ours.dtype is gt.int64 and ours.tolist() == theirs.tolist()


def test_count_nonzero_errors_and_0d():
    for L in (gt, torch):
        assert L.count_nonzero(L.tensor(3.0), dim=0).tolist() == 1
        with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
            L.count_nonzero(L.ones(2, 2), dim=(0, 0))
        with pytest.raises(IndexError, match="Dimension out of range"):
            L.count_nonzero(L.ones(2, 2), dim=2)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int64", "uint8", "bool"])
def test_isnan_isinf_isfinite_match_torch(name, dtype):
    a = X.astype(dtype) if dtype.startswith("float") else np.array([[0, 1], [2, 3]]).astype(dtype)
    ours = getattr(gt, name)(gt.tensor(a))
    theirs = getattr(torch, name)(torch.tensor(a))
    assert ours.dtype is gt.bool and ours.tolist() == theirs.tolist()


def test_count_nonzero_and_isnan_are_registered_ops():
    for name in ("count_nonzero", "isnan", "isinf", "isfinite"):
        assert name in gt.OPS and gt.OPS[name].has_kernel
