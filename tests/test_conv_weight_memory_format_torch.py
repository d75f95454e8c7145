"""``nn.utils.convert_conv2d_weight_memory_format`` and ``convert_conv3d_weight_memory_format``
against torch 2.13: which modules' weights change layout (strides), that values, shapes and
the parameters' identity stay, the model still computing torch's output, and the errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _model(L):
    L.manual_seed(0)
    nn = L.nn
    return nn.Sequential(
        nn.Conv2d(3, 4, 3),
        nn.Sequential(nn.ConvTranspose2d(4, 2, 2), nn.Conv1d(2, 2, 1)),
        nn.Conv3d(2, 2, 1),
        nn.ConvTranspose3d(2, 2, 2),
        nn.ConvTranspose1d(2, 2, 1),
        nn.Linear(2, 2),
    )


def _strides(net):
    return [tuple(p.stride()) for p in net.parameters()]


@pytest.mark.parametrize(
    "which, fmt",
    [("2d", "channels_last"), ("2d", "contiguous_format"), ("3d", "channels_last_3d"),
     ("3d", "contiguous_format")],
)  # fmt: skip
def test_strides_and_values_as_torch(which, fmt):
    results = []
    for L in (gs, torch):
        net = _model(L)
        before = [p.detach().numpy().copy() for p in net.parameters()]
        ids = [id(p) for p in net.parameters()]
        convert = getattr(L.nn.utils, f"convert_conv{which}_weight_memory_format")
        out = convert(net, getattr(L, fmt))
        assert out is net
        assert [id(p) for p in net.parameters()] == ids
        for b, p in zip(before, net.parameters()):
            np.testing.assert_array_equal(b, p.detach().numpy())
        assert all(isinstance(p, L.nn.Parameter) for p in net.parameters())
        results.append(_strides(net))
    assert results[0] == results[1]


def test_channels_last_then_contiguous_round_trip_and_forward():
    outs = []
    for L in (gs, torch):
        net = _model(L)[0]
        L.nn.utils.convert_conv2d_weight_memory_format(net, L.channels_last)
        assert net.weight.is_contiguous(memory_format=L.channels_last)
        x = L.arange(2 * 3 * 5 * 5, dtype=L.float32).reshape(2, 3, 5, 5) / 50
        y = net(x)
        y.sum().backward()
        outs.append((y.detach().numpy(), net.weight.grad.numpy()))
        L.nn.utils.convert_conv2d_weight_memory_format(net, L.contiguous_format)
        assert net.weight.is_contiguous()
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "which, fmt",
    [("2d", "channels_last_3d"), ("3d", "channels_last"), ("2d", "preserve_format"),
     ("3d", "preserve_format")],
)  # fmt: skip
def test_wrong_rank_format_errors_as_torch(which, fmt):
    errors = []
    for L in (gs, torch):
        convert = getattr(L.nn.utils, f"convert_conv{which}_weight_memory_format")
        module = L.nn.Conv2d(1, 1, 1) if which == "2d" else L.nn.Conv3d(1, 1, 1)
        with pytest.raises(RuntimeError) as info:
            convert(module, getattr(L, fmt))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_not_a_memory_format_errors_as_torch():
    errors = []
    for L in (gs, torch):
        with pytest.raises(TypeError) as info:
            L.nn.utils.convert_conv2d_weight_memory_format(L.nn.Conv2d(1, 1, 1), "nhwc")
        errors.append(str(info.value).replace("gradstack", "torch"))
    assert errors[0] == errors[1]
