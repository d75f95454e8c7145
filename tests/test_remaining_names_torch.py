"""torch names the census listed as missing, added together: ``asarray``, ``frombuffer``,
``empty_strided``, ``empty_permuted``, ``fill``, ``is_anomaly_enabled``,
``is_anomaly_check_nan_enabled``, ``hardshrink``/``prelu`` (functions and methods), and the
Tensor methods ``new``, ``new_empty_strided``, ``is_distributed``, ``apply_``, ``map_``,
``map2_``, ``resize``, ``resize_as``, ``nonzero_static``, ``as_strided_``,
``as_strided_scatter``; values, sharing of memory, gradients and errors against torch 2.13."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and words are compared
        return type(e), str(e)
    return None


def _same_error(program):
    theirs, ours = _error(lambda: program(torch)), _error(lambda: program(gs))
    assert theirs is not None and ours is not None, (theirs, ours)
    assert ours == theirs


def test_asarray_shares_memory_as_torch():
    for L in (torch, gs):
        a = np.arange(6.0).reshape(2, 3)
        t = L.asarray(a)
        a[0, 0] = 9.0
        assert t[0, 0].item() == 9.0 and t.dtype == L.float64
        assert L.asarray(a, dtype=L.float32).dtype == L.float32
        x = L.ones(3)
        assert L.asarray(x) is x and L.asarray(x, copy=True) is not x
        assert L.asarray([1, 2]).dtype == L.int64
        assert L.asarray([[1.0]], requires_grad=True).requires_grad
    _same_error(lambda L: L.asarray(np.ones(2), dtype=L.float32, copy=False))


def test_frombuffer_as_torch():
    for L in (torch, gs):
        b = bytearray(b"\x00\x00\x80?\x00\x00\x00@")
        f = L.frombuffer(b, dtype=L.float32)
        assert f.tolist() == [1.0, 2.0]
        b[0:4] = b"\x00\x00\x00@"
        assert f.tolist() == [2.0, 2.0]
        assert L.frombuffer(b, dtype=L.float32, count=1, offset=4).tolist() == [2.0]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.frombuffer(b"\x00\x00\x80?", dtype=L.float32)
        assert "The given buffer is not writable" in str(w[0].message)
    for program in (
        lambda L: L.frombuffer(bytearray(8), dtype=L.float32, count=3),
        lambda L: L.frombuffer(bytearray(), dtype=L.float32),
        lambda L: L.frombuffer(bytearray(8), dtype=L.float32, offset=9),
    ):
        _same_error(program)


def test_strided_factories_as_torch():
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)), ((2, 0), (1, 1))]:
        ours, theirs = gs.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert ours.stride() == theirs.stride() and tuple(ours.shape) == tuple(theirs.shape)
    for size, layout in [((2, 3, 4), (0, 2, 1)), ((2, 3, 4), (2, 1, 0)), ((5,), (0,))]:
        ours, theirs = gs.empty_permuted(size, layout), torch.empty_permuted(size, layout)
        assert ours.stride() == theirs.stride() and tuple(ours.shape) == tuple(theirs.shape)
    assert gs.ones(2).new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    assert gs.ones(2).new_empty_strided((2,), (1,), dtype=gs.int32).dtype == gs.int32
    _same_error(lambda L: L.empty_strided((2, 3), (1,)))
    _same_error(lambda L: L.empty_permuted((2, 3, 4), (0, 1)))
    _same_error(lambda L: L.empty_permuted((2, 3, 4), (0, 1, 1)))


def test_fill_and_anomaly_flags_as_torch():
    for L in (torch, gs):
        x = L.ones(2, requires_grad=True)
        y = L.fill(x, 3.0)
        assert y.tolist() == [3.0, 3.0] and y.requires_grad
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0]
        assert L.fill(L.ones(2), L.tensor(5.0)).tolist() == [5.0, 5.0]
        assert L.is_anomaly_enabled() is False and L.is_anomaly_check_nan_enabled() is True


def test_hardshrink_and_prelu_as_torch():
    x = np.array([[-1.0, 0.3, 0.7, -0.2], [0.5, -0.5, 2.0, 0.0]])
    w = np.array([0.1, 0.2])
    results = []
    for L in (torch, gs):
        xt, wt = L.tensor(x, requires_grad=True), L.tensor(w, requires_grad=True)
        out = [xt.hardshrink(), L.hardshrink(xt, 0.2), xt.t().prelu(wt), L.prelu(xt.t(), wt)]
        sum(o.sum() for o in out).backward()
        results.append([o.detach().numpy() for o in out] + [xt.grad.numpy(), wt.grad.numpy()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-15)


def test_legacy_new_as_torch():
    for L in (torch, gs):
        x = L.ones(2, dtype=L.float64)
        assert tuple(x.new().shape) == (0,) and tuple(x.new(2, 3).shape) == (2, 3)
        assert x.new([1, 2]).dtype == L.float64 and x.new((2, 3)).tolist() == [2.0, 3.0]
        assert tuple(x.new(L.Size([2, 1])).shape) == (2, 1)
        y = L.ones(3, dtype=L.float64, requires_grad=True)
        alias = x.new(y)
        assert alias._base is y and alias.grad_fn.name() == "AliasBackward0"
        assert x.is_distributed() is False
    with pytest.raises(TypeError):
        gs.ones(2, dtype=gs.float64).new(gs.ones(3))


def test_python_callables_as_torch():
    for L in (torch, gs):
        y = L.tensor([1.0, 2.0, 3.0])
        assert y.apply_(lambda v: v * 2).tolist() == [2.0, 4.0, 6.0]
        assert y.map_(L.tensor([1.0]), lambda a, b: a + b).tolist() == [3.0, 5.0, 7.0]
        y.map2_(L.ones(3), L.ones(3) * 2, lambda a, b, c: a * b + c)
        assert y.tolist() == [5.0, 7.0, 9.0]
        z = L.arange(6).reshape(2, 3).t()  # not contiguous
        z.apply_(lambda v: v + 10)
        assert z.tolist() == [[10, 13], [11, 14], [12, 15]]
    _same_error(lambda L: L.ones(2, requires_grad=True).apply_(lambda v: v))


def test_deprecated_resize_as_torch():
    for L in (torch, gs):
        z = L.arange(6.0, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            r = z.resize(3, 2)
        assert tuple(r.shape) == (3, 2) and tuple(z.shape) == (6,)
        (r * L.arange(6.0).reshape(3, 2)).sum().backward()
        assert z.grad.tolist() == list(range(6))
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            assert tuple(z.resize_as(L.ones(2, 3)).shape) == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda L: L.ones(6).resize(4, 2))


def test_nonzero_static_as_torch():
    for size, fill in [(3, -1), (1, -5), (0, -1), (6, 7)]:
        t = torch.tensor([[0, 1], [0, 2], [3, 0]]).nonzero_static(size=size, fill_value=fill)
        g = gs.tensor([[0, 1], [0, 2], [3, 0]]).nonzero_static(size=size, fill_value=fill)
        assert g.tolist() == t.tolist() and g.dtype == gs.int64


def test_as_strided_in_place_and_scatter_as_torch():
    for L in (torch, gs):
        a = L.arange(6.0)
        assert a.as_strided_((2, 2), (1, 2)) is a
        assert a.tolist() == [[0.0, 2.0], [1.0, 3.0]] and a.stride() == (1, 2)
        s = L.zeros(6).as_strided_scatter(L.ones(2, 2), (2, 2), (1, 2))
        assert s.tolist() == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]
