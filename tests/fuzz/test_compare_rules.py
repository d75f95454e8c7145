"""The comparator's exceptions accept exactly what they are for (Note [Torch disagrees with
itself], Note [Bugs of the oracle] in ``gsfuzz/compare.py``): records are built by hand, so
these tests do not depend on what either library computes today."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent


def _load():
    spec = importlib.util.spec_from_file_location("gsfuzz_run", HERE / "run_fuzz.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_gsfuzz()


_load()
compare = importlib.import_module("gsfuzz.compare").compare
Event = importlib.import_module("gsfuzz.execute").Event
Program = importlib.import_module("gsfuzz.program").Program
Stmt = importlib.import_module("gsfuzz.program").Stmt


def _snap(values, dtype="float32"):
    arr = np.asarray(values, dtype=dtype)
    return ("tensor", dtype, arr.shape, arr, False)


def _program(*stmts):
    """``stmts``: (code, tag, phase) with one checked variable each, ``v0``, ``v1``..."""
    return Program(
        seed=0,
        index=0,
        stmts=[
            Stmt(code, defines=(f"v{i}",), checks=(f"v{i}",), tag=tag, phase=phase)
            for i, (code, tag, phase) in enumerate(stmts)
        ],
    )


def _events(*values):
    return [Event(i, "snap", f"v{i}", v) for i, v in enumerate(values)]


def _verdict(program, gs, torch):
    return compare(_events(*gs), _events(*torch), program)


# --- the sign of a zero from a contraction ---------------------------------------------

RECIPROCAL_OF_DOT = _program(
    ("v0 = torch.dot(a, b)", "linalg.dot", "fwd"),
    ("v1 = v0.reciprocal()", "unary.reciprocal", "fwd"),
)


def test_a_zero_sign_from_a_contraction_excuses_a_later_value():
    v = _verdict(
        RECIPROCAL_OF_DOT,
        [_snap(-0.0), _snap(-np.inf)],
        [_snap(0.0), _snap(np.inf)],
    )
    assert v.category == "oracle_divergence"
    assert "zero sign of linalg.dot at statement 0" in v.detail


def test_the_same_difference_without_a_contraction_is_a_wrong_value():
    program = _program(
        ("v0 = a * b", "binary.mul", "fwd"),
        ("v1 = v0.reciprocal()", "unary.reciprocal", "fwd"),
    )
    v = _verdict(program, [_snap(-0.0), _snap(-np.inf)], [_snap(0.0), _snap(np.inf)])
    assert v.category == "wrong_value"


def test_a_contraction_that_differs_in_more_than_zero_signs_is_a_wrong_value():
    v = _verdict(
        RECIPROCAL_OF_DOT,
        [_snap([-0.0, 2.0]), _snap([-np.inf, 0.5])],
        [_snap([0.0, 3.0]), _snap([np.inf, 1 / 3])],
    )
    assert v.category == "wrong_value" and v.stmt == 0


def test_zero_signs_do_not_excuse_a_later_dtype_shape_or_error():
    later_dtype = _verdict(
        RECIPROCAL_OF_DOT, [_snap(-0.0), _snap(1.0, "float64")], [_snap(0.0), _snap(1.0)]
    )
    assert later_dtype.category == "wrong_value" and "dtype" in later_dtype.detail
    gs = _events(_snap(-0.0), _snap(-np.inf))
    torch = [Event(0, "snap", "v0", _snap(0.0)), Event(1, "error", "", ("RuntimeError", "no"))]
    assert compare(gs, torch, RECIPROCAL_OF_DOT).category == "works_where_torch_raises"


def test_equal_zero_signs_note_nothing():
    v = _verdict(RECIPROCAL_OF_DOT, [_snap(-0.0), _snap(-np.inf)], [_snap(-0.0), _snap(np.inf)])
    assert v.category == "wrong_value"


# --- atan2's last bit ------------------------------------------------------------------

ONE = np.float32(np.pi / 4)
NEXT = np.nextafter(ONE, np.float32(1))
MAX_OF_ATAN2 = _program(
    ("v0 = torch.atan2(a, a)", "binary.atan2", "fwd"),
    ("v1 = v0.argmax(-1)", "reduce.argmax", "fwd"),
    ("v2 = v0 * 2", "binary.mul", "fwd"),
)


def test_atan2_one_ulp_apart_excuses_a_later_index():
    v = _verdict(
        MAX_OF_ATAN2,
        [_snap([ONE, ONE]), _snap(0, "int64"), _snap([2 * ONE, 2 * ONE])],
        [_snap([ONE, NEXT]), _snap(1, "int64"), _snap([2 * ONE, 2 * NEXT])],
    )
    assert v.category == "oracle_divergence"
    assert "last bit of binary.atan2" in v.detail


def test_atan2_last_bit_does_not_excuse_a_float_value():
    v = _verdict(
        MAX_OF_ATAN2,
        [_snap([ONE, ONE]), _snap(1, "int64"), _snap([2.0, 2 * ONE])],
        [_snap([ONE, NEXT]), _snap(1, "int64"), _snap([2 * ONE, 2 * NEXT])],
    )
    assert v.category == "wrong_value" and v.stmt == 2


def test_atan2_two_ulps_apart_notes_nothing():
    two = np.nextafter(NEXT, np.float32(1))
    v = _verdict(
        MAX_OF_ATAN2,
        [_snap([ONE, ONE]), _snap(0, "int64"), _snap([2 * ONE, 2 * ONE])],
        [_snap([ONE, two]), _snap(1, "int64"), _snap([2 * ONE, 2 * two])],
    )
    assert v.category == "wrong_value" and v.stmt == 1


MIN_OF_MATMUL = _program(
    ("v0 = torch.matmul(a, b)", "linalg.matmul", "fwd"),
    ("v1 = v0.abs().argmin()", "reduce.argmin", "fwd"),
)


def test_a_contraction_one_ulp_apart_excuses_a_later_index():
    # torch's blocked kernel: the same products summed to two values one ulp apart
    # (fuzz seed 2 #2978), numpy's BLAS: one value; argmin then picks another tie
    v = _verdict(
        MIN_OF_MATMUL,
        [_snap([ONE, ONE]), _snap(0, "int64")],
        [_snap([NEXT, ONE]), _snap(1, "int64")],
    )
    assert v.category == "oracle_divergence"
    assert "last bits of linalg.matmul" in v.detail


def test_a_contraction_five_ulps_apart_notes_nothing():
    five = ONE
    for _ in range(5):
        five = np.nextafter(five, np.float32(1))
    v = _verdict(
        MIN_OF_MATMUL,
        [_snap([ONE, ONE]), _snap(0, "int64")],
        [_snap([five, ONE]), _snap(1, "int64")],
    )
    assert v.category == "wrong_value" and v.stmt == 1


def test_a_contraction_last_bit_does_not_excuse_a_float_value():
    v = _verdict(
        MIN_OF_MATMUL,
        [_snap([ONE, ONE]), _snap(0.5)],
        [_snap([NEXT, ONE]), _snap(0.25)],
    )
    assert v.category == "wrong_value" and v.stmt == 1


# --- torch's gradient of x ** False ----------------------------------------------------


def _grad_program(code):
    return _program((code, "binary.pow", "fwd"), ("v1 = torch.autograd.grad(...)", "grad", "bwd1"))


@pytest.mark.parametrize("code", ["v0 = torch.pow(x, False)", "v0 = x ** False", "x.pow_(False)"])
def test_torch_nan_gradient_of_pow_false_is_torch_bug(code):
    v = _verdict(
        _grad_program(code),
        [_snap([1.0, 1.0]), _snap([0.5, 0.0])],
        [_snap([1.0, 1.0]), _snap([0.5, np.nan])],
    )
    assert v.category == "torch_bug"


@pytest.mark.parametrize(
    ("gs_grad", "torch_grad"),
    [
        ([0.5, np.nan], [0.5, 0.0]),  # gradstack's NaN
        ([0.75, 0.0], [0.5, np.nan]),  # another entry differs too
    ],
)
def test_pow_false_excuses_only_torch_nans(gs_grad, torch_grad):
    v = _verdict(
        _grad_program("v0 = torch.pow(x, False)"),
        [_snap([1.0, 1.0]), _snap(gs_grad)],
        [_snap([1.0, 1.0]), _snap(torch_grad)],
    )
    assert v.category == "wrong_grad"


def test_a_nan_gradient_without_pow_false_is_a_wrong_gradient():
    v = _verdict(
        _grad_program("v0 = torch.pow(x, 0)"),
        [_snap([1.0, 1.0]), _snap([0.5, 0.0])],
        [_snap([1.0, 1.0]), _snap([0.5, np.nan])],
    )
    assert v.category == "wrong_grad"
