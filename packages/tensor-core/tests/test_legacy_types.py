"""torch's legacy tensor types (FloatTensor, LongTensor, ...), Tensor.type, equal and the
default device, compared with torch."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

NAMES = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
]


def same(g, t):
    assert str(g.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(g.shape) == tuple(t.shape)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "data", [[1, 0, 2], [[1.7, -1.7], [0.0, 3.0]], (1, 2), np.array([1.0, 0.0])]
)
def test_constructor_from_data_matches_torch(name, data):
    try:
        t = getattr(torch, name)(data)
    except RuntimeError:  # ByteTensor([-1.7]): out of range, in torch too
        with pytest.raises(RuntimeError, match="without overflow"):
            getattr(gt, name)(data)
        return
    g = getattr(gt, name)(data)
    same(g, t)
    np.testing.assert_array_equal(np.asarray(g.tolist()), t.numpy())


@pytest.mark.parametrize("name", NAMES)
def test_constructor_from_sizes_and_empty(name):
    same(getattr(gt, name)(2, 3), getattr(torch, name)(2, 3))
    same(getattr(gt, name)(gt.Size([4])), getattr(torch, name)(torch.Size([4])))
    same(getattr(gt, name)(), getattr(torch, name)())
    assert getattr(gt, name)().shape == (0,)


def test_constructor_from_a_tensor_is_that_tensor_or_a_type_error():
    a = gt.tensor([1.0, 2.0])
    assert gt.FloatTensor(a) is a
    with pytest.raises(TypeError, match="expected a tensor of dtype gradstack.float32"):
        gt.FloatTensor(gt.tensor([1, 2]))
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.tensor([1, 2]))


def test_constructor_rejects_a_scalar_and_a_gpu_device():
    with pytest.raises(TypeError):
        gt.FloatTensor(2.5)
    with pytest.raises(TypeError):
        torch.FloatTensor(2.5)
    with pytest.raises(RuntimeError, match="CPU only"):
        gt.FloatTensor([1.0], device="cuda")
    assert gt.FloatTensor([1.0], device="cpu").tolist() == [1.0]


@pytest.mark.parametrize("name", NAMES)
def test_isinstance_asks_for_the_dtype(name):
    for dt in ["float32", "float64", "int64", "bool"]:
        g = gt.ones(2, dtype=getattr(gt, dt))
        t = torch.ones(2, dtype=getattr(torch, dt))
        assert isinstance(g, getattr(gt, name)) == isinstance(t, getattr(torch, name))
    assert not isinstance([1.0], gt.FloatTensor)


@pytest.mark.parametrize("target", ["LongTensor", "DoubleTensor", "BoolTensor", "HalfTensor"])
def test_type_converts_to_a_legacy_type_or_its_name(target):
    g, t = gt.tensor([1.5, 0.0, -2.0]), torch.tensor([1.5, 0.0, -2.0])
    for arg_g, arg_t in [
        (getattr(gt, target), getattr(torch, target)),
        (f"torch.{target}", f"torch.{target}"),
    ]:
        rg, rt = g.type(arg_g), t.type(arg_t)
        same(rg, rt)
        np.testing.assert_array_equal(np.asarray(rg.tolist()), rt.numpy())
    assert g.type(f"gradstack.{target}").dtype is getattr(gt, target).dtype


def test_type_errors_match_torch():
    with pytest.raises(ValueError, match="invalid type: 'float'"):
        gt.ones(2).type("float")
    with pytest.raises(ValueError, match="invalid type"):
        torch.ones(2).type("float")
    with pytest.raises(RuntimeError, match="CUDA"):
        gt.ones(2).type("torch.cuda.FloatTensor")
    assert gt.ones(2).type(gt.int32).dtype is gt.int32
    assert gt.ones(2).type() == "gradstack.FloatTensor"


def test_set_default_tensor_type():
    try:
        gt.set_default_tensor_type(gt.DoubleTensor)
        assert gt.tensor([1.0]).dtype is gt.float64
        gt.set_default_tensor_type("torch.FloatTensor")
        assert gt.tensor([1.0]).dtype is gt.float32
        with pytest.raises(TypeError, match="floating-point"):
            gt.set_default_tensor_type(gt.LongTensor)
    finally:
        gt.set_default_dtype(gt.float32)


@pytest.mark.parametrize(
    "a, b",
    [
        ([1.0, 2.0], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, 3.0]),
        ([1.0, 2.0], [1.0]),
        ([[1.0]], [1.0]),
        ([float("nan")], [float("nan")]),
        ([], []),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_equal_matches_torch(a, b, dtype):
    ta = torch.tensor(a)
    try:
        tb = torch.tensor(b, dtype=getattr(torch, dtype))
    except RuntimeError:  # nan as int64, in torch too
        with pytest.raises(RuntimeError, match="without overflow"):
            gt.tensor(b, dtype=getattr(gt, dtype))
        return
    ga, gb = gt.tensor(a), gt.tensor(b, dtype=getattr(gt, dtype))
    assert ga.equal(gb) == ta.equal(tb)
    assert gt.equal(ga, gb) == torch.equal(ta, tb)


def test_equal_wants_tensors():
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        gt.ones(2).equal([1.0, 1.0])
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        gt.equal([1.0], gt.ones(1))


def test_default_device_is_the_cpu():
    assert str(gt.get_default_device()) == str(torch.get_default_device()) == "cpu"
    gt.set_default_device("cpu")
    gt.set_default_device(None)
    gt.set_default_device(gt.device("cpu"))
    with pytest.raises(RuntimeError, match="CPU only"):
        gt.set_default_device("cuda")
