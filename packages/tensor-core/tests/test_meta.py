"""Meta tensors (Note [Meta tensors carry no data]): made by ``.to('meta')``, with torch's
shape, dtype, device and repr, no memory, and every op or read of values refused."""

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
        lambda m: m + 1,
        lambda m: m.sum(),
        lambda m: m[0],
        lambda m: gt.cat([m, m]),
        lambda m: m.view(-1),
        lambda m: m.clone(),
        lambda m: m.tolist(),
        lambda m: m.item(),
        lambda m: m.numpy(),
        lambda m: np.asarray(m),
        lambda m: np.add(data_of(m), 1),
        lambda m: m.to("cpu"),
        lambda m: m.cpu(),
        lambda m: m.to(gt.float64),
    ],
)
def test_meta_tensors_refuse_ops_and_reads(use):
    m = gt.ones(2, 2).to("meta")
    with pytest.raises(NotImplementedError, match="meta"):
        use(m)


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
    with pytest.raises(NotImplementedError):
        x * 2


@pytest.mark.parametrize("name", ["gradstack_tensor.meta", "gradstack_tensor._impl_windows"])
def test_module_examples_run(name):
    import doctest
    import importlib

    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    result = doctest.testmod(importlib.import_module(name), optionflags=flags, report=False)
    assert result.attempted > 0 and result.failed == 0
