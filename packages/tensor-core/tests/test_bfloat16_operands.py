"""A number or 0-d tensor operand of a bfloat16 op counts as its bfloat16 rounding where
torch 2.13's does (Note [bfloat16 ops round their other operands] in ``_bfloat16.py``):
fmod, remainder, atan2 and pow, and the first operand of mul and div."""

from __future__ import annotations

import operator

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

S = 0.7978845834732056  # sqrt(2 / pi): the tanh GELU's constant, 0.796875 in bfloat16


def _pair(n=4096, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    t = torch.randn(n, generator=g) * 2
    if positive:
        t = t.abs() + 0.1
    t = t.bfloat16()
    return t, gt.tensor(t.float().numpy()).to(gt.bfloat16)


def _same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


@pytest.mark.parametrize("name", ["fmod", "remainder", "atan2", "pow", "mul", "div"])
@pytest.mark.parametrize("other_dtype", ["float32", "float64"])
@pytest.mark.parametrize("first", [True, False])
def test_zero_dim_operand(name, other_dtype, first):
    t, x = _pair(positive=name == "pow")
    s_t = torch.tensor(S, dtype=getattr(torch, other_dtype))
    s_g = gt.tensor(S, dtype=getattr(gt, other_dtype))
    f_t, f_g = getattr(torch, name), getattr(gt, name)
    if first:
        _same(f_g(s_g, x), f_t(s_t, t))
    else:
        _same(f_g(x, s_g), f_t(t, s_t))


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_number_operand(name):
    t, x = _pair(seed=1)
    _same(getattr(gt, name)(x, S), getattr(torch, name)(t, S))


def test_number_base_and_operators():
    t, x = _pair(seed=2)
    _same(S**x, S**t)
    _same(gt.tensor(S) * x, torch.tensor(S) * t)
    _same(x * gt.tensor(S), t * torch.tensor(S))
    _same(gt.tensor(S) / x, torch.tensor(S) / t)
    _same(operator.mul(S, x), operator.mul(S, t))


def test_tanh_gelu_composite():
    t, x = _pair(n=3000, seed=3)

    def gelu(lib, a):
        c = lib.sqrt(lib.tensor(2.0 / math_pi))
        return 0.5 * a * (1 + lib.tanh(c * (a + 0.044715 * lib.pow(a, 3))))

    _same(gelu(gt, x), gelu(torch, t))


math_pi = 3.141592653589793


def test_in_place_and_non_contiguous():
    t, x = _pair(n=64, seed=4)
    tv, xv = t.reshape(8, 8).t(), x.reshape(8, 8).t()
    _same(gt.fmod(xv, gt.tensor(S)), torch.fmod(tv, torch.tensor(S)))
    a, b = t.clone(), x.clone()
    a.fmod_(S)
    b.fmod_(S)
    _same(b, a)
    empty = gt.fmod(gt.zeros(0, dtype=gt.bfloat16), S)
    assert tuple(empty.shape) == (0,) and empty.dtype == gt.bfloat16


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("kind", ["number", "0-d float32", "0-d float64", "0-d first"])
def test_comparisons(name, kind):
    values = [0.796875, 0.80078125, 0.79296875, 1.0, -S, float("nan")]
    t = torch.tensor(values).bfloat16()
    x = gt.tensor(values).to(gt.bfloat16)
    f_t, f_g = getattr(torch, name), getattr(gt, name)
    if kind == "number":
        want, got = f_t(t, S), f_g(x, S)
    elif kind == "0-d first":
        want, got = f_t(torch.tensor(S), t), f_g(gt.tensor(S), x)
    else:
        dt = kind.split()[1]
        want = f_t(t, torch.tensor(S, dtype=getattr(torch, dt)))
        got = f_g(x, gt.tensor(S, dtype=getattr(gt, dt)))
    assert got.dtype == gt.bool
    assert got.tolist() == want.tolist()


def test_comparison_in_place():
    values = [0.796875, 0.80078125, 1.0]
    t = torch.tensor(values).bfloat16()
    x = gt.tensor(values).to(gt.bfloat16)
    t.eq_(S)
    x.eq_(S)
    _same(x, t)
