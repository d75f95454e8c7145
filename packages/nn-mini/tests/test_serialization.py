"""save/load: bit-exact round trips in every dtype, structures, and clear refusals."""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import OrderedDict

import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter, load, save
from gradstack_nn.serialization import SerializationError


def roundtrip(obj):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf)


def special_values(dtype):
    info = np.finfo(dtype)
    base = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.5,
            np.inf,
            -np.inf,
            info.max,
            info.min,
            info.tiny,
            info.smallest_subnormal,
            info.eps,
        ],
        dtype=dtype,
    )
    nans = np.array([np.nan, -np.nan], dtype=dtype)
    # a NaN with a payload: its bits must survive too
    bits = nans.view(f"u{np.dtype(dtype).itemsize}").copy()
    bits[1] |= 1
    return np.concatenate([base, bits.view(dtype)])


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def sample(dtype):
    rng = np.random.default_rng(0)
    if dtype.startswith("float"):
        return np.concatenate(
            [special_values(dtype), rng.standard_normal(30).astype(dtype)]
        ).reshape(-1, 1)
    if dtype == "bool":
        return rng.integers(0, 2, (4, 5)).astype(bool)
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, -1 if info.min < 0 else 2], dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_round_trip_is_bit_exact(dtype):
    arr = sample(dtype)
    t = gt.from_numpy(arr)
    out = roundtrip(t)
    assert isinstance(out, gt.Tensor) and out.dtype == t.dtype and out.shape == t.shape
    assert out.numpy().tobytes() == arr.tobytes()
    assert not out.requires_grad


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (2, 3, 4)])
def test_shapes_and_layouts(shape):
    rng = np.random.default_rng(1)
    t = gt.tensor(rng.standard_normal(shape).astype(np.float32))
    out = roundtrip(t)
    assert out.shape == t.shape and out.numpy().tobytes() == t.numpy().tobytes()
    if len(shape) == 3 and 0 not in shape:
        view = t.transpose(0, 2)[1:]  # non-contiguous
        out = roundtrip(view)
        np.testing.assert_array_equal(out.numpy(), view.numpy())


def test_structures_round_trip():
    w = gt.randn(3, 2)
    obj = {
        "model": OrderedDict([("layer.weight", w), ("layer.bias", gt.zeros(2))]),
        "again": w,  # the same tensor twice
        "list": [1, 2.5, "three", None, True, (4, 5.0)],
        3: "int key",
        2.5: "float key",
        None: "none key",
        False: "bool key",
        "floats": [math.inf, -math.inf, 0.1, -0.0, 1e-310, math.nan],
        "big": 2**100,
        "array": np.arange(6, dtype=np.uint16).reshape(2, 3),
        "nested": {"a": {"b": {"c": [gt.tensor([1, 2])]}}},
    }
    out = roundtrip(obj)
    assert list(out) == list(obj)
    assert type(out["model"]) is OrderedDict and list(out["model"]) == list(obj["model"])
    assert out["again"] is out["model"]["layer.weight"]
    assert gt.equal(out["again"], w)
    assert out["list"] == [1, 2.5, "three", None, True, (4, 5.0)]
    assert type(out["list"][-1]) is tuple and type(out["list"][1]) is float
    assert out[3] == "int key" and out[2.5] == "float key" and out[None] == "none key"
    assert out[False] == "bool key"
    floats = out["floats"]
    assert floats[:5] == [math.inf, -math.inf, 0.1, -0.0, 1e-310]
    assert math.copysign(1, floats[3]) == -1 and math.isnan(floats[5])
    assert out["big"] == 2**100
    assert out["array"].dtype == np.uint16 and out["array"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out["nested"]["a"]["b"]["c"][0].tolist() == [1, 2]


def test_parameters_and_requires_grad():
    p = Parameter(gt.tensor([1.0, 2.0]))
    frozen = Parameter(gt.tensor([3.0]), requires_grad=False)
    leaf = gt.tensor([4.0], requires_grad=True)
    out = roundtrip([p, frozen, leaf])
    assert isinstance(out[0], Parameter) and out[0].requires_grad
    assert isinstance(out[1], Parameter) and not out[1].requires_grad
    assert type(out[2]) is gt.Tensor and out[2].requires_grad and out[2].is_leaf
    (out[0] * 2).sum().backward()
    assert out[0].grad.tolist() == [2.0, 2.0]


def test_model_and_optimizer_state_dicts(tmp_path):
    gt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = nn.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(gt.randn(3, 4)).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.gsz"
    save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 7}, path)
    assert os.listdir(tmp_path) == ["checkpoint.gsz"]  # no temporary file left behind
    ckpt = load(path)
    model2 = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    model2.load_state_dict(ckpt["model"])
    opt2 = nn.optim.SGD(model2.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["optim"])
    assert ckpt["epoch"] == 7 and opt2.param_groups[0]["lr"] == 0.1
    for a, b in zip(model.parameters(), model2.parameters()):
        assert a.detach().numpy().tobytes() == b.detach().numpy().tobytes()
    buf_a = opt.state[model[0].weight]["momentum_buffer"]
    buf_b = opt2.state[model2[0].weight]["momentum_buffer"]
    assert buf_a.numpy().tobytes() == buf_b.numpy().tobytes()
    load(str(path))  # str paths work too


def test_file_is_an_npz_with_a_json_manifest(tmp_path):
    path = tmp_path / "t.gsz"
    save({"w": gt.tensor([1.0, 2.0])}, path)
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("gradstack.json"))
    assert manifest["format"] == "gradstack" and manifest["version"] == 1
    with np.load(path, allow_pickle=False) as npz:
        assert npz["0"].tolist() == [1.0, 2.0]


def test_other_objects_are_pickled_and_load_through_the_allowlist():
    # Note [Pickled objects, as torch.save]: what the safe format has no node for is
    # pickled; containers of plain values import only allowlisted builtins, as torch's
    for obj in ({(1, 2): 3}, {"a": [1, {1, 2}], "b": frozenset({2}), "c": 1 + 2j}):
        buf = io.BytesIO()
        save(obj, buf)
        buf.seek(0)
        assert load(buf) == obj
        buf.seek(0)
        assert load(buf, weights_only=False) == obj
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        save({"f": lambda x: x}, io.BytesIO())  # not picklable: pickle's own error


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.head = nn.Linear(4, 2)
        self.tied = self.body  # the same module twice: one object after loading
        self.register_buffer("steps", gt.tensor(7))

    def forward(self, x):
        return self.head(self.body(x).relu())


def test_whole_module_round_trips_as_torch_save():
    gt.manual_seed(0)
    model = _TwoHeads()
    buf = io.BytesIO()
    save(model, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as err:
        load(buf)  # the safe default refuses, naming the class the file imports
    assert "test_serialization._TwoHeads" in str(err.value)
    buf.seek(0)
    again = load(buf, weights_only=False)
    assert type(again) is _TwoHeads and again.tied is again.body
    assert type(again.body.weight) is Parameter and again.body.weight.requires_grad
    assert again.steps.tolist() == 7
    x = gt.randn(5, 3)
    assert np.array_equal(again(x).detach().numpy(), model(x).detach().numpy())
    again(x).sum().backward()
    assert again.body.weight.grad is not None
    # with the weights as saved (bit for bit), and as independent copies
    assert np.array_equal(again.head.bias.detach().numpy(), model.head.bias.detach().numpy())
    again.head.bias.detach().add_(1.0)
    assert not np.array_equal(again.head.bias.detach().numpy(), model.head.bias.detach().numpy())


def test_safe_globals_allow_a_module_class_for_the_weights_only_load():
    from gradstack_nn.serialization import (
        add_safe_globals,
        clear_safe_globals,
        get_safe_globals,
        safe_globals,
    )

    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    buf = io.BytesIO()
    save(model, buf)
    classes = [nn.Sequential, nn.Linear, nn.ReLU]
    for _ in range(2):  # the block's allowlist ends with the block
        buf.seek(0)
        with safe_globals(classes):
            again = load(buf)
        assert type(again) is nn.Sequential and type(again[0].weight) is Parameter
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[Sequential\]\)"):
            load(buf)
    buf.seek(0)
    with safe_globals(classes[:2]), pytest.raises(pickle.UnpicklingError, match="ReLU"):
        load(buf)  # every global the file imports must be allowed
    add_safe_globals(classes)
    try:
        assert set(get_safe_globals()) == set(classes)
        buf.seek(0)
        assert np.array_equal(load(buf)[0].bias.detach().numpy(),
                              model[0].bias.detach().numpy())  # fmt: skip
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []
    with pytest.raises(TypeError, match="safe globals"):
        add_safe_globals([3])


def test_lazy_module_round_trips(tmp_path):
    path = tmp_path / "lazy.gs"
    save(nn.LazyLinear(3), path)
    again = load(path, weights_only=False)
    assert isinstance(again.weight, nn.UninitializedParameter)
    assert tuple(again(gt.ones(2, 5)).shape) == (2, 3)


# -------------------------------------------------------------------------------------
# refusals


def good_bytes():
    buf = io.BytesIO()
    save({"w": gt.arange(100, dtype=gt.float32), "n": 3}, buf)
    return buf.getvalue()


def load_bytes(data):
    return load(io.BytesIO(data))


class _Boom:
    executed = False

    def __reduce__(self):
        return (_set_executed, ())


def _set_executed():
    _Boom.executed = True
    return "boom"


def test_refuses_a_pickle_without_running_it():
    data = pickle.dumps({"w": _Boom()})
    with pytest.raises(SerializationError, match="pickle.*never unpickles"):
        load_bytes(data)
    assert not _Boom.executed


def test_refuses_a_torch_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(SerializationError, match="PyTorch checkpoint"):
        load(path)
    legacy = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(SerializationError, match="pickle"):
        load(legacy)


def test_refuses_an_object_array_inside_the_archive():
    """A hand-made archive whose .npy holds a pickled object array: never unpickled."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(
            "gradstack.json",
            json.dumps({"format": "gradstack", "version": 1, "root": {"t": "ndarray", "id": 0}}),
        )
        npy = io.BytesIO()
        np.lib.format.write_array(npy, np.array([_Boom()], dtype=object), allow_pickle=True)
        zf.writestr("0.npy", npy.getvalue())
    with pytest.raises(SerializationError, match="Python objects"):
        load_bytes(buf.getvalue())
    assert not _Boom.executed


@pytest.mark.parametrize("cut", [0.1, 0.5, 0.9, 0.99])
def test_truncated_files(cut):
    data = good_bytes()
    with pytest.raises(SerializationError, match="corrupt or truncated|not a gradstack"):
        load_bytes(data[: int(len(data) * cut)])


def test_corrupted_bytes_are_caught_by_the_checksums():
    data = bytearray(good_bytes())
    offset = data.index(b"\x93NUMPY") + 200  # inside the array's values
    data[offset] ^= 0xFF
    with pytest.raises(SerializationError, match="corrupt"):
        load_bytes(bytes(data))


@pytest.mark.parametrize(
    "data,match",
    [
        (b"", "is empty"),
        (b"hello world, this is text", "not a ZIP archive"),
        (b"\x93NUMPY\x01\x00" + b" " * 60, "single numpy .npy"),
    ],
)
def test_foreign_files(data, match):
    with pytest.raises(SerializationError, match=match):
        load_bytes(data)


def rezip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buf.getvalue()


def test_tampered_archives():
    with zipfile.ZipFile(io.BytesIO(good_bytes())) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    with pytest.raises(SerializationError, match="no gradstack.json"):
        load_bytes(rezip({"0.npy": members["0.npy"]}))
    with pytest.raises(SerializationError, match="manifest is corrupt"):
        load_bytes(rezip({**members, "gradstack.json": b"{not json"}))
    with pytest.raises(SerializationError, match="missing"):
        load_bytes(rezip({"gradstack.json": members["gradstack.json"]}))
    manifest = json.loads(members["gradstack.json"])
    manifest["version"] = 99
    with pytest.raises(SerializationError, match="format version 99"):
        load_bytes(rezip({**members, "gradstack.json": json.dumps(manifest)}))
    manifest["version"] = 1
    manifest["root"] = {"t": "exec", "v": "import os"}
    with pytest.raises(SerializationError, match="unknown node type"):
        load_bytes(rezip({**members, "gradstack.json": json.dumps(manifest)}))
    manifest["root"] = {"t": "tensor", "id": 0}
    bad = io.BytesIO()
    np.lib.format.write_array(bad, np.array(["a", "b"]))
    with pytest.raises(SerializationError, match="unsupported dtype"):
        load_bytes(rezip({"gradstack.json": json.dumps(manifest), "0.npy": bad.getvalue()}))
    with pytest.raises(SerializationError, match="not a gradstack manifest"):
        load_bytes(rezip({**members, "gradstack.json": b"[1, 2]"}))


def test_load_arguments():
    data = good_bytes()
    assert load(io.BytesIO(data), map_location="cpu")["n"] == 3
    with pytest.raises(RuntimeError, match="CPU only"):
        load(io.BytesIO(data), map_location="cuda:0")
    assert load(io.BytesIO(data), pickle_module=pickle)["n"] == 3
    with pytest.raises(ValueError, match="pickle module only"):
        load(io.BytesIO(data), pickle_module=json)
    with pytest.raises(ValueError, match="pickle module only"):
        save({}, io.BytesIO(), pickle_module=json)
