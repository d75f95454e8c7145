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


# --- an in-place op that reads what it writes ------------------------------------------

execute = importlib.import_module("gsfuzz.execute").execute

READS_WHAT_IT_WRITES = Program(  # fuzz seed 11 #1713
    seed=0,
    index=0,
    stmts=[
        Stmt(
            "x0 = torch.tensor([[[0.5], [0.5], [0.5]]] * 4, dtype=torch.float64)\n"
            "v2 = torch.cat([x0, x0 * 2, x0], 2)\nv3 = v2[-3:, -3]",
            defines=("v2", "v3"),
            checks=("v3",),
            tag="getitem.basic",
            phase="fwd",
        ),
        Stmt("v2.remainder_(v3)", defines=(), checks=("v2",), tag="binary_.remainder", phase="fwd"),
        Stmt("v4 = v2 + 1", defines=("v4",), checks=("v4",), tag="binary.add", phase="fwd"),
    ],
)


def test_torch_reading_what_it_wrote_marks_the_statement():
    torch = pytest.importorskip("torch")
    events = execute(torch, READS_WHAT_IT_WRITES, final=False)
    assert [e.aliased for e in events] == [False, True, False]
    # torch wrote zeros into v3 (a part of v2) before reading it: 0 % 0 is NaN
    assert np.isnan(events[1].value[3]).any()


def test_an_operand_that_is_the_target_or_a_copy_marks_nothing():
    torch = pytest.importorskip("torch")
    program = Program(
        seed=0,
        index=0,
        stmts=[
            Stmt("v0 = torch.arange(4.) + 1\nv1 = v0.clone()", ("v0", "v1"), ("v0",), "x", "fwd"),
            Stmt("v0.mul_(v0)", (), ("v0",), "binary_.mul", "fwd"),
            Stmt("v0.mul_(v1)", (), ("v0",), "binary_.mul", "fwd"),
            Stmt("v2 = v0.expand(2, 4)\nv0.uniform_()", ("v2",), ("v0",), "random_.uniform", "fwd"),
        ],
    )
    assert not any(e.aliased for e in execute(torch, program, final=False))


def test_after_an_aliasing_a_different_value_is_torch_disagreeing_with_itself():
    nan = float("nan")
    aliased = [
        Event(0, "snap", "v0", _snap([0.0, 1.0])),
        Event(1, "snap", "v1", _snap([nan, 0.0]), True),
    ]
    ours = [Event(0, "snap", "v0", _snap([0.0, 1.0])), Event(1, "snap", "v1", _snap([0.0, 0.0]))]
    program = _program(("v0 = x", "x", "fwd"), ("v1.remainder_(v0)", "binary_.remainder", "fwd"))
    assert compare(ours, aliased, program).category == "oracle_divergence"
    # the same difference without the mark is a wrong value
    aliased[1].aliased = False
    assert compare(ours, aliased, program).category == "wrong_value"


def test_torch_internal_assert_on_a_bool_base_is_torch_bug():
    # fuzz seed 10 #5337: the gradient of ``True ** x``
    message = (
        'RuntimeError: false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/c10/core/'
        'Scalar.cpp":42, please report a bug to PyTorch. unknown ivalue tag 4'
    )
    program = _program(("v0 = True ** x", "binary.pow", "fwd"), ("v1 = grad(v0)", "grad", "bwd1"))
    ours = _events(_snap([1.0]), _snap([0.0]))
    theirs = [
        Event(0, "snap", "v0", _snap([1.0])),
        Event(1, "error", "", ("RuntimeError", message)),
    ]
    assert compare(ours, theirs, program).category == "torch_bug"
    other = (
        "RuntimeError",
        'false INTERNAL ASSERT FAILED at "x/Other.cpp":1, unknown ivalue tag 4',
    )
    theirs[1] = Event(1, "error", "", other)
    assert compare(ours, theirs, program).category == "works_where_torch_raises"


def test_a_hook_torch_called_with_none_is_torch_bug():
    # fuzz seed 11 #7101: torch hands a hook None for norm(p=0)'s undefined gradient
    message = "AttributeError: 'NoneType' object has no attribute 'clamp'"
    hooked = _program(
        ("v0 = x.norm(p=0)\nx.register_hook(lambda g: g.clamp(-1, 1))", "reduce.norm", "fwd"),
        ("v1 = grad(v0)", "backward", "bwd1"),
    )
    ours = _events(_snap([1.0]), _snap([0.0]))
    theirs = [
        Event(0, "snap", "v0", _snap([1.0])),
        Event(1, "error", "", ("AttributeError", message)),
    ]
    assert compare(ours, theirs, hooked).category == "torch_bug"
    # without a hook in the program, or in a forward statement, it is gradstack's failure
    plain = _program(
        ("v0 = x.norm(p=0)", "reduce.norm", "fwd"), ("v1 = grad(v0)", "backward", "bwd1")
    )
    assert compare(ours, theirs, plain).category == "works_where_torch_raises"
    forward = _program(
        ("v0 = x.norm(p=0)\nx.register_hook(lambda g: g.clamp(-1, 1))", "reduce.norm", "fwd"),
        ("v1 = v0.f()", "unary.f", "fwd"),
    )
    assert compare(ours, theirs, forward).category == "works_where_torch_raises"


def test_a_last_bit_of_any_op_excuses_a_later_index():
    # fuzz seed 12 #5654: torch's exp2 of nine equal values gives two values one ulp apart
    ours_v = [1.4142135623730951] * 9
    theirs_v = [1.414213562373095] * 8 + [1.4142135623730951]
    program = _program(
        ("v0 = torch.exp2(x)", "unary.exp2", "fwd"), ("v1 = v0.argmax()", "reduce.argmax", "fwd")
    )
    ours = _events(_snap(ours_v, "float64"), _snap(0, "int64"))
    theirs = _events(_snap(theirs_v, "float64"), _snap(8, "int64"))
    assert compare(ours, theirs, program).category == "oracle_divergence"
    # equal values in torch too: the same index difference is a wrong value
    theirs = _events(_snap(ours_v, "float64"), _snap(8, "int64"))
    assert compare(ours, theirs, program).category == "wrong_value"
    # two ulps apart is not a kernel's tail
    far = [1.4142135623730951] * 8 + [1.4142135623730951 + 2 * 2.220446049250313e-16]
    theirs = _events(_snap(far, "float64"), _snap(8, "int64"))
    assert compare(ours, theirs, program).category == "wrong_value"
