"""Factories under vmap (tensor-core's Note [Factories under vmap]): ``randn(3)`` and the
other random factories draw one sample's values each under ``randomness="different"``,
``rand_like(x)`` draws on a batched ``x``'s physical tensor, and ``zeros_like(x)`` and the
other ``*_like`` factories of a batched ``x`` are batched like ``x``.  Each case is
compared with torch.func.vmap after the same seed: the same values, bit for bit."""

from __future__ import annotations

import warnings

import gradstack_functional
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional.func import vmap

torch = pytest.importorskip("torch")


class _Gradstack:
    """gradstack's names as these tests use them, torch-shaped: tensor-core's functions and
    functional-api's ``func`` (this package's tests may not import the facade, a higher
    layer; dropout under vmap is tested with nn-mini in tests/test_vmap_dropout.py)."""

    func = gradstack_functional.func

    def __getattr__(self, name):
        return getattr(gt, name)


gradstack = _Gradstack()

# f(L, x) for L = torch or gradstack; x is the mapped (3, 2) float32 input
FACTORIES = {
    "rand": lambda L, x: x + L.rand(2),
    "randn": lambda L, x: x + L.randn(2),
    "randn_size_kw": lambda L, x: x + L.randn(size=(2, 2)),
    "randn_float64": lambda L, x: x + L.randn(2, dtype=L.float64),
    "randint": lambda L, x: x + L.randint(0, 10, (2,)),
    "randint_high": lambda L, x: x + L.randint(5, (2,)),
    "normal": lambda L, x: x + L.normal(1.0, 2.0, (2,)),
    "randperm": lambda L, x: x + L.randperm(2),
    "randn_0d": lambda L, x: x + L.randn(()),
    "randn_empty": lambda L, x: L.randn(0, 2).sum(0) + x,
    "rand_like": lambda L, x: L.rand_like(x),
    "randn_like": lambda L, x: L.randn_like(x),
    "randint_like": lambda L, x: L.randint_like(x, 10),
    "randint_like_low_high": lambda L, x: L.randint_like(x, 3, 9),
    "rand_like_of_view": lambda L, x: L.rand_like(L.stack([x, x, x]).mT),
    "zeros_like_copy": lambda L, x: L.zeros_like(x).copy_(x * 2) + L.ones_like(x),
    "empty_like_fill": lambda L, x: L.empty_like(x).fill_(3.0) * x,
    "full_like_add_": lambda L, x: L.full_like(x, 2.0).add_(x),
    "zeros_like_dtype": lambda L, x: L.zeros_like(x, dtype=L.float64).add_(x),
    "like_then_uniform_": lambda L, x: L.empty_like(x).uniform_(-1, 1),
}


def _run(L, name, mode, in_dims=0, x=None):
    L.manual_seed(0)
    if x is None:
        x = L.arange(6.0).reshape(3, 2) if in_dims == 0 else L.arange(6.0).reshape(2, 3)
    return L.func.vmap(lambda x: FACTORIES[name](L, x), in_dims=in_dims, randomness=mode)(x)


def _same(got, expected):
    assert tuple(got.shape) == tuple(expected.shape)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "gradstack.")
    np.testing.assert_array_equal(np.asarray(got.tolist()), np.asarray(expected.tolist()))


@pytest.mark.parametrize("mode", ["different", "same"])
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_draw_torchs_values(name, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no per-sample fallback either
        got = _run(gradstack, name, mode)
    _same(got, _run(torch, name, mode))


@pytest.mark.parametrize("name", ["rand_like", "randn_like", "randint_like", "zeros_like_copy"])
def test_like_factories_follow_the_batch_dim(name):
    _same(_run(gradstack, name, "different", in_dims=1), _run(torch, name, "different", in_dims=1))


def test_different_draws_differ_per_sample_and_same_draws_do_not():
    x = gt.zeros(4, 3)
    rows = np.asarray(vmap(lambda x: x + gt.randn(3), randomness="different")(x).tolist())
    assert np.unique(rows).size == 12
    rows = np.asarray(vmap(lambda x: x + gt.randn(3), randomness="same")(x).tolist())
    assert np.all(rows == rows[0]) and np.unique(rows).size == 3


NESTED = {
    "randn": lambda L: L.randn(2),
    "randperm": lambda L: L.randperm(3),
    "randint": lambda L: L.randint(0, 100, (2,)),
}


@pytest.mark.parametrize("outer", ["different", "same"])
@pytest.mark.parametrize("inner", ["different", "same"])
@pytest.mark.parametrize("name", sorted(NESTED))
def test_nested_vmaps_draw_torchs_values(name, inner, outer):
    def run(L):
        L.manual_seed(0)
        f = L.func.vmap(lambda x: x + NESTED[name](L), randomness=inner)
        return L.func.vmap(f, randomness=outer)(L.zeros(2, 3, 1, dtype=L.int64))

    _same(run(gradstack), run(torch))


def test_like_of_a_tensor_batched_only_at_an_outer_level():
    def run(L):
        L.manual_seed(0)
        inner = L.func.vmap(lambda y, x: L.zeros_like(x).add_(x) + y, in_dims=(0, None))
        return L.func.vmap(lambda x: inner(L.ones(4, 2), x))(L.arange(6.0).reshape(3, 2))

    _same(run(gradstack), run(torch))


def test_chunked_vmap_draws_as_one_vmap():
    def run(L, chunk_size):
        L.manual_seed(0)
        f = L.func.vmap(lambda x: x + L.randn(2), randomness="different", chunk_size=chunk_size)
        return f(L.zeros(5, 2))

    _same(run(gradstack, 2), run(torch, 2))
    _same(run(gradstack, 2), run(gradstack, None))


def test_factory_result_requires_grad_and_differentiates():
    x = gt.ones(3, 2, requires_grad=True)
    gt.manual_seed(0)
    out = vmap(lambda x: x * gt.randn(2, requires_grad=True), randomness="different")(x)
    out.sum().backward()
    gt.manual_seed(0)
    np.testing.assert_array_equal(x.grad.numpy(), gt.randn(3, 2).numpy())


@pytest.mark.parametrize("name", ["randn", "rand_like", "randint", "randperm", "randn_like"])
def test_error_mode_refuses_with_torchs_words(name):
    with pytest.raises(RuntimeError) as expected:
        _run(torch, name, "error")
    with pytest.raises(RuntimeError) as got:
        _run(gradstack, name, "error")
    assert str(got.value) == str(expected.value)


def test_factory_with_out_is_refused_under_different():
    out = gt.empty(2)
    with pytest.raises(RuntimeError, match="out="):
        vmap(lambda x: x + gt.randn(2, out=out), randomness="different")(gt.zeros(3, 2))


def test_rand_like_of_a_tensor_not_batched_at_every_different_level_is_refused():
    inner = vmap(lambda y, x: gt.rand_like(x) + y, in_dims=(0, None), randomness="different")
    f = vmap(lambda x: inner(gt.ones(4, 2), x), randomness="different")
    with pytest.raises(RuntimeError, match="rand_like of a tensor that is not batched"):
        f(gt.zeros(3, 2))


def test_factories_outside_vmap_are_untouched():
    gt.manual_seed(0)
    a = gt.randn(3, 2)
    vmap(lambda x: x + gt.randn(2), randomness="different")(gt.zeros(3, 2))
    gt.manual_seed(0)
    np.testing.assert_array_equal(gt.randn(3, 2).numpy(), a.numpy())
    assert type(gt.zeros_like(a)) is type(a)
