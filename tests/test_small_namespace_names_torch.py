"""Names of torch's smaller namespaces the census listed as missing, against torch 2.13:
``profiler.DeviceType``/``kineto_available``, ``nn.utils.skip_init``,
``func.replace_all_batch_norm_modules_``/``debug_unwrap``, and
``utils.checkpoint``'s ``CheckpointFunction``, ``check_backward_validity`` and
``set_checkpoint_debug_enabled``."""

from __future__ import annotations

import warnings

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def test_profiler_device_types_are_torch_s():
    for name in torch.profiler.DeviceType.__members__:
        assert int(getattr(gs.profiler.DeviceType, name)) == int(
            getattr(torch.profiler.DeviceType, name)
        )
    assert str(gs.profiler.DeviceType.CPU) == str(torch.profiler.DeviceType.CPU)
    assert gs.profiler.kineto_available() is False  # gradstack's events are its own


def test_skip_init_makes_the_module_without_drawing():
    gs.manual_seed(0)
    before = gs.rand(3)
    gs.manual_seed(0)
    m = gs.nn.utils.skip_init(gs.nn.Linear, 5, 2, bias=False)
    assert tuple(m.weight.shape) == (2, 5) and m.weight.device.type == "cpu" and m.bias is None
    assert gs.rand(3).tolist() == before.tolist()  # no initialiser drew numbers
    with pytest.raises(RuntimeError, match="Expected a Module"):
        gs.nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        gs.nn.utils.skip_init(gs.nn.ReLU)


def test_replace_all_batch_norm_modules_as_torch():
    for L in (torch, gs):
        net = L.nn.Sequential(
            L.nn.Linear(3, 3), L.nn.BatchNorm1d(3), L.nn.BatchNorm1d(3, affine=False)
        )
        out = L.func.replace_all_batch_norm_modules_(net)
        assert out is net
        assert [sorted(m.state_dict()) for m in net] == [
            ["bias", "weight"],
            ["bias", "weight"],
            [],
        ]
        assert not net[1].track_running_stats and net[1].running_mean is None


def test_debug_unwrap_as_torch():
    shapes = {}
    for L in (torch, gs):
        seen = []

        def f(x, L=L, seen=seen):
            seen.append(tuple(L.func.debug_unwrap(x).shape))
            seen.append(tuple(L.func.debug_unwrap(x, recurse=False).shape))
            return x

        L.func.vmap(L.func.vmap(f))(L.ones(2, 3, 4))
        seen.append(tuple(L.func.debug_unwrap(L.ones(2)).shape))
        shapes[L.__name__] = seen
    assert shapes["gradstack"] == shapes["torch"]


def test_checkpoint_names_as_torch():
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    y = gs.utils.checkpoint.CheckpointFunction.apply(lambda t: (t * t).sum(), True, x)
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0]
    for L in (torch, gs):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.utils.checkpoint.check_backward_validity((L.ones(2),))
        assert "None of the inputs have requires_grad=True" in str(w[0].message)
        with L.utils.checkpoint.set_checkpoint_debug_enabled(True):
            z = L.utils.checkpoint.checkpoint(lambda t: t.sin(), L.ones(2, requires_grad=True),
                                              use_reentrant=False)  # fmt: skip
        z.sum().backward()
