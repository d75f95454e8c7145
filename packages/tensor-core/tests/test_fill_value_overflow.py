"""Note [A fill value must fit the dtype] for float dtypes: full, full_like, new_full and
masked_fill refuse a finite number beyond float16's or float32's largest value, as torch
does (fuzz seed 3 #8800: ``new_full((3, 1), 2**40)`` on a float16 tensor gave inf); inf and
nan fit; float32 setitem checks, float16 setitem stores inf.  Each case against torch."""

from __future__ import annotations

import gradstack_tensor as gt
import pytest

torch = pytest.importorskip("torch")


def _cases(L):
    def h():
        return L.zeros(2, dtype=L.float16)

    def setitem(t, v):
        t[0] = v
        return t

    return {
        "full16": lambda: L.full((2,), 1e10, dtype=L.float16),
        "full16_inf": lambda: L.full((2,), float("inf"), dtype=L.float16),
        "full16_nan": lambda: L.full((2,), float("nan"), dtype=L.float16),
        "full16_int": lambda: L.full((2,), 70000, dtype=L.float16),
        "full16_65504": lambda: L.full((2,), 65504.0, dtype=L.float16),
        "full16_65519": lambda: L.full((2,), 65519.0, dtype=L.float16),
        "full16_negative": lambda: L.full((2,), -1e5, dtype=L.float16),
        "full32": lambda: L.full((2,), 1e300, dtype=L.float32),
        "full32_huge_int": lambda: L.full((2,), 2**200, dtype=L.float32),
        "full64": lambda: L.full((2,), 1e300, dtype=L.float64),
        "new_full": lambda: h().new_full((3, 1), 2**40),
        "full_like": lambda: L.full_like(h(), 1e10),
        "masked_fill": lambda: h().masked_fill(L.tensor([True, False]), 1e10),
        "masked_fill_": lambda: h().masked_fill_(L.tensor([True, False]), 1e10),
        "setitem16": lambda: setitem(h(), 1e10),
        "setitem32": lambda: setitem(L.zeros(2), 1e300),
        "add": lambda: h() + 1e10,  # arithmetic never checks
    }


@pytest.mark.parametrize("case", sorted(_cases(gt)))
def test_a_float_fill_value_overflows_as_in_torch(case):
    def run(L):
        try:
            return _cases(L)[case]().tolist()
        except (RuntimeError, OverflowError) as e:
            return type(e).__name__, str(e)

    got, want = run(gt), run(torch)
    assert str(got) == str(want)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (1, 1), (2,), (3,)])
@pytest.mark.parametrize("how", ["full", "full_like", "new_full", "masked_fill", "fill_"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_a_one_element_float16_fill_is_not_checked(shape, how, dtype):
    # fuzz seed 15 #6779: torch's one-element fill path stores inf for float16
    torch = pytest.importorskip("torch")

    def run(lib):
        d = getattr(lib, dtype)
        try:
            if how == "full":
                r = lib.full(shape, 1e10, dtype=d)
            elif how == "full_like":
                r = lib.full_like(lib.zeros(shape, dtype=d), 1e10)
            elif how == "new_full":
                r = lib.zeros(2, dtype=d).new_full(shape, 1e10)
            elif how == "masked_fill":
                r = lib.zeros(shape, dtype=d).masked_fill(lib.ones(shape, dtype=lib.bool), 1e10)
            else:
                r = lib.zeros(shape, dtype=d).fill_(1e10)
        except RuntimeError:
            return "RuntimeError"
        return r.tolist()

    assert run(gt) == run(torch)
