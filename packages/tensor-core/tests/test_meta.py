"""Meta tensors (Note [Meta tensors carry no data]): made by ``.to('meta')``, the factories'
``device='meta'`` and ``with device('meta'):``, with torch's shape, dtype, device and repr,
no memory; ops give meta tensors of torch's shapes and dtypes, and reads of values are
refused."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor.extension import data_of

torch = pytest.importorskip("torch")


def test_to_meta_keeps_shape_dtype_and_takes_no_memory():
    m = gt.ones(1000, 1000, dtype=gt.float64).to("meta")
    assert m.is_meta and m.device == gt.device("meta") and m.device.type == "meta"
    assert m.shape == (1000, 1000) and m.dtype == gt.float64
    assert data_of(m).strides == (0, 0)  # one element behind the broadcast view
    assert not gt.ones(2).is_meta and gt.ones(2).device.type == "cpu"


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.ones(2, 3).to("meta"),
        lambda L: L.ones(2, dtype=L.float64).to("meta"),
        lambda L: L.ones((), dtype=L.int64).to("meta"),
        lambda L: L.ones(3).to("meta", L.float16),
        lambda L: L.ones(3).to(device="meta", dtype=L.float64),
    ],
)
def test_meta_repr_and_attributes_match_torch(make):
    ours, theirs = make(gt), make(torch)
    assert repr(ours) == repr(theirs).replace("torch.", "gradstack.")
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.requires_grad == theirs.requires_grad
    assert str(ours.device) == str(theirs.device) == "meta"


@pytest.mark.parametrize(
    "use",
    [
        lambda m: m.tolist(),
        lambda m: m.item(),
        lambda m: m.numpy(),
        lambda m: np.asarray(m),
        lambda m: np.add(data_of(m), 1),
        lambda m: m.to("cpu"),
        lambda m: m.cpu(),
    ],
)
def test_meta_tensors_refuse_reads(use):
    m = gt.ones(2, 2).to("meta")
    with pytest.raises(NotImplementedError, match="meta"):
        use(m)


def _m(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32).to("meta")


def test_meta_shape_errors_are_errors():
    with pytest.raises(RuntimeError, match="size of tensor"):
        _m(gt, 2, 3) + _m(gt, 4)
    with pytest.raises(RuntimeError, match="not on the expected device meta"):
        _m(gt, 2, 3) * gt.ones(3)  # a real operand must be 0-d, as torch's
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        _m(gt, 2, 3).add_(_m(gt, 2, 2, 3))
    with pytest.raises(RuntimeError):
        _m(gt, 2, 3) @ _m(gt, 4, 5)


def test_writes_into_meta_tensors_write_nothing_and_draw_nothing():
    m = _m(gt, 3, 4)
    version = m._version
    gt.manual_seed(0)
    expected = gt.rand(3).tolist()
    gt.manual_seed(0)
    assert m.uniform_(-1, 1) is m and m.normal_() is m and m.add_(1) is m and m.zero_() is m
    assert m.is_meta and m._version > version
    assert gt.rand(3).tolist() == expected  # the generator did not move
    with pytest.raises(NotImplementedError, match="meta"):
        gt.ones(3, 4).copy_(m)  # out of meta into real memory: no data to copy


def test_factories_on_meta_match_torch():
    for make in (
        lambda L: L.empty(2, 3, device="meta"),
        lambda L: L.zeros((4,), dtype=L.float64, device="meta"),
        lambda L: L.ones(2, device="meta", requires_grad=True),
        lambda L: L.full((2, 2), 7, device="meta"),
        lambda L: L.randn(3, 2, device="meta"),
        lambda L: L.rand(3, device=L.device("meta")),
        lambda L: L.arange(5, device="meta"),
        lambda L: L.tensor([1.0, 2.0], device="meta"),
        lambda L: L.eye(3, device="meta"),
        lambda L: L.randint(0, 5, (2, 2), device="meta"),
        lambda L: L.zeros_like(L.ones(2, 3).to("meta")),
        lambda L: L.empty_like(L.ones(2, 3), device="meta"),
        lambda L: L.ones(3).to("meta").new_zeros(4),
        lambda L: L.ones(3).to("meta").new_full((2,), 1.5),
    ):
        ours, theirs = make(gt), make(torch)
        assert ours.is_meta and theirs.is_meta
        assert repr(ours) == repr(theirs).replace("torch.", "gradstack.")
        assert ours.requires_grad == theirs.requires_grad
    gt.manual_seed(0)
    expected = gt.rand(2).tolist()
    gt.manual_seed(0)
    gt.randn(100, device="meta"), gt.randint(0, 9, (9,), device="meta")
    assert gt.rand(2).tolist() == expected
    with pytest.raises(RuntimeError, match="not available"):
        gt.zeros(2, device="cuda")


def test_device_context_and_default_device():
    with gt.device("meta"):
        assert gt.empty(2).is_meta and gt.get_default_device() == gt.device("meta")
        with gt.device("cpu"):
            assert not gt.zeros(2).is_meta
        assert gt.ones(1).is_meta
    assert not gt.empty(2).is_meta and gt.get_default_device() == gt.device("cpu")
    gt.set_default_device("meta")
    try:
        assert gt.randn(3).is_meta
    finally:
        gt.set_default_device(None)
    assert not gt.randn(3).is_meta
    with pytest.raises(RuntimeError, match="not available"):
        with gt.device("cuda"):
            pass


def test_meta_copy_of_a_tensor_that_requires_grad_is_a_leaf():
    # torch records ToCopyBackward0; no op runs on gradstack's meta tensors, so the copy is
    # a leaf that requires grad (what Module.to('meta') makes of a parameter either way)
    m = gt.ones(4, requires_grad=True).to("meta")
    assert m.requires_grad and m.is_leaf and m.is_meta


def test_real_tensors_are_unaffected_after_a_meta_tensor_exists():
    gt.ones(2).to("meta")
    x = gt.arange(4.0)
    assert (x * 2 + 1).tolist() == [1.0, 3.0, 5.0, 7.0]
    assert x.to("cpu") is x and x.to("meta").to("meta").is_meta


def test_a_tensor_given_meta_data_becomes_meta():
    x = gt.ones(3)
    x.data = gt.zeros(3).to("meta")
    assert x.is_meta and x.device.type == "meta"
    assert (x * 2).is_meta
    with pytest.raises(NotImplementedError):
        x.tolist()


@pytest.mark.parametrize("name", ["gradstack_tensor.meta", "gradstack_tensor._impl_windows"])
def test_module_examples_run(name):
    import doctest
    import importlib

    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testmod(importlib.import_module(name), optionflags=flags, report=False)
    assert result.attempted > 0 and result.failed == 0
