"""The factories' torch keywords: ``out=`` (gradstack_tensor._out), ``size=``, the
``*_like`` factories keeping a dense input's strides; each compared with torch 2.13."""

import warnings

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _same(a, b):
    a, b = a.numpy(), b.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(b, a)


def _into(L, f, *args, out=None, **kwargs):
    out = L.empty(0) if out is None else out(L)
    result = f(L)(*args, out=out, **kwargs)
    assert result is out
    return out


OUT_CASES = {
    "zeros": lambda L: _into(L, lambda L: L.zeros, 2, 3),
    "ones_int64": lambda L: _into(
        L, lambda L: L.ones, 2, 3, out=lambda L: L.empty(0, dtype=L.int64)
    ),
    "empty_shape": lambda L: _into(L, lambda L: L.empty, 2, 3).shape and L.zeros(1),
    "full": lambda L: _into(L, lambda L: L.full, (2, 3), 1.5),
    "arange": lambda L: _into(L, lambda L: L.arange, 5),
    "arange_long": lambda L: _into(
        L, lambda L: L.arange, 5, out=lambda L: L.empty(0, dtype=L.int64)
    ),
    "linspace": lambda L: _into(L, lambda L: L.linspace, 0, 1, 5),
    "logspace": lambda L: _into(L, lambda L: L.logspace, 0, 2, 3),
    "eye": lambda L: _into(L, lambda L: L.eye, 3),
    "rand_resized": lambda L: (
        L.manual_seed(0),
        _into(L, lambda L: L.rand, 2, 2, out=lambda L: L.ones(5)),
    )[1],
    "randn": lambda L: (L.manual_seed(0), _into(L, lambda L: L.randn, 20))[1],
    "randint": lambda L: (
        L.manual_seed(0),
        _into(L, lambda L: L.randint, 0, 5, (4,), out=lambda L: L.empty(0, dtype=L.int64)),
    )[1],
    "randperm": lambda L: (
        L.manual_seed(0),
        _into(L, lambda L: L.randperm, 7, out=lambda L: L.empty(0, dtype=L.int64)),
    )[1],
    "normal": lambda L: (L.manual_seed(0), _into(L, lambda L: L.normal, 1.0, 2.0, (5,)))[1],
    "bernoulli": lambda L: (
        L.manual_seed(0),
        _into(L, lambda L: L.bernoulli, L.full((5,), 0.5)),
    )[1],
    "multinomial": lambda L: (
        L.manual_seed(0),
        _into(L, lambda L: L.multinomial, L.ones(5), 3, out=lambda L: L.empty(0, dtype=L.int64)),
    )[1],
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_gets_torchs_values(name):
    _same(OUT_CASES[name](torch), OUT_CASES[name](gt))


def test_a_factory_resizes_out_silently_and_bumps_its_version():
    out = gt.ones(5)
    v = out._version
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's factories do not warn when they resize
        gt.zeros(2, 3, out=out)
    assert out.shape == (2, 3) and out._version > v


OUT_ERRORS = {
    "dtype_mismatch": lambda L: L.zeros(2, 3, dtype=L.float64, out=L.empty(0)),
    "out_not_a_tensor": lambda L: L.zeros(2, out=[1.0, 2.0]),
    "multinomial_float_out": lambda L: L.multinomial(L.ones(3), 2, out=L.empty(0)),
}  # with gradients: graph-engine's test_random_autograd.py


@pytest.mark.parametrize("name", sorted(OUT_ERRORS))
def test_out_errors_have_torchs_type_and_words(name):
    with pytest.raises(Exception) as expected:
        OUT_ERRORS[name](torch)
    with pytest.raises(type(expected.value)) as got:
        OUT_ERRORS[name](gt)
    if name != "out_not_a_tensor":  # torch lists its overloads there
        assert str(got.value) == str(expected.value)


SIZE_CASES = {
    "zeros": lambda L: L.zeros(size=(2, 3)),
    "ones_list": lambda L: L.ones(size=[2, 3], dtype=L.int32),
    "empty": lambda L: L.empty(size=(2, 3)).zero_(),
    "rand_int_size": lambda L: (L.manual_seed(0), L.rand(size=(4,)))[1],
    "randn": lambda L: (L.manual_seed(0), L.randn(size=(4, 5)))[1],
}


@pytest.mark.parametrize("name", sorted(SIZE_CASES))
def test_size_keyword(name):
    _same(SIZE_CASES[name](torch), SIZE_CASES[name](gt))


def test_size_keyword_errors():
    with pytest.raises(TypeError):
        torch.zeros(2, size=(2, 3))
    with pytest.raises(TypeError, match="size"):
        gt.zeros(2, size=(2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        gt.zeros(sizes=(2, 3))


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.ones(3, 4).t(),
        lambda L: L.ones(2, 3, 4).permute(2, 0, 1),
        lambda L: L.ones(3, 4)[:, ::2],  # not dense: C-contiguous result
        lambda L: L.ones(3, 4),
    ],
)
@pytest.mark.parametrize("like", ["zeros_like", "ones_like", "empty_like", "rand_like"])
def test_like_factories_keep_a_dense_inputs_strides(make, like):
    a = getattr(torch, like)(make(torch))
    b = getattr(gt, like)(make(gt))
    assert b.stride() == a.stride() and b.shape == a.shape and b.dtype == gt.float32


def test_full_like_and_the_like_factories_values():
    _same(torch.full_like(torch.ones(3, 4).t(), 7), gt.full_like(gt.ones(3, 4).t(), 7))
    _same(torch.zeros_like(torch.ones(3, 4).t()), gt.zeros_like(gt.ones(3, 4).t()))
    _same(
        torch.ones_like(torch.ones(2, dtype=torch.int32)), gt.ones_like(gt.ones(2, dtype=gt.int32))
    )
