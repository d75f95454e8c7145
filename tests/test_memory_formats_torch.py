"""torch's layouts and memory formats against torch 2.13: the constants (``strided``,
``contiguous_format``, ``channels_last``, ``channels_last_3d``, ``preserve_format``,
``legacy_contiguous_format``, the classes ``layout`` and ``memory_format``), and
``contiguous``/``clone``/``to``/``is_contiguous`` with ``memory_format=``: strides, values,
gradients and errors (tensor-core's ``layouts.py``)."""

from __future__ import annotations

import pickle

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

NAMES = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
         "legacy_contiguous_format")  # fmt: skip


def test_constants():
    assert repr(gs.strided) == "gradstack.strided" and gs.ones(2).layout is gs.strided
    assert isinstance(gs.strided, gs.layout)
    for name in NAMES:
        ours = getattr(gs, name)
        assert isinstance(ours, gs.memory_format)
        assert repr(ours) == repr(getattr(torch, name)).replace("torch", "gradstack")
        assert pickle.loads(pickle.dumps(ours)) is ours


def _x(L, shape):
    return L.arange(float(np.prod(shape)), dtype=L.float64).reshape(*shape)


PROGRAMS = {
    "contiguous channels_last": lambda L: _x(L, (2, 3, 4, 5)).contiguous(
        memory_format=L.channels_last
    ),
    "contiguous of a channels_last": lambda L: (
        _x(L, (2, 3, 4, 5)).contiguous(memory_format=L.channels_last).contiguous()
    ),
    "contiguous channels_last_3d": lambda L: _x(L, (2, 3, 2, 4, 5)).contiguous(
        memory_format=L.channels_last_3d
    ),
    "contiguous preserve": lambda L: _x(L, (2, 3)).contiguous(memory_format=L.preserve_format),
    "contiguous contiguous_format": lambda L: (
        _x(L, (2, 3)).t().contiguous(memory_format=L.contiguous_format)
    ),
    "clone channels_last": lambda L: _x(L, (2, 3, 4, 5)).clone(memory_format=L.channels_last),
    "clone contiguous_format of t": lambda L: (
        _x(L, (2, 3)).t().clone(memory_format=L.contiguous_format)
    ),
    "clone contiguous_format of permute": lambda L: (
        _x(L, (2, 3, 4, 5)).permute(0, 2, 3, 1).clone(memory_format=L.contiguous_format)
    ),
    "clone preserve_format of t": lambda L: (
        _x(L, (2, 3)).t().clone(memory_format=L.preserve_format)
    ),
    "clone channels_last, one channel": lambda L: _x(L, (2, 1, 4, 5)).clone(
        memory_format=L.channels_last
    ),
    "to channels_last": lambda L: _x(L, (2, 3, 4, 5)).to(memory_format=L.channels_last),
    "to dtype and channels_last": lambda L: _x(L, (2, 3, 4, 5)).to(
        L.float32, memory_format=L.channels_last
    ),
    "permuted input": lambda L: (
        _x(L, (2, 5, 4, 3)).permute(0, 3, 2, 1).contiguous(memory_format=L.channels_last)
    ),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_layout_and_values_as_torch(name):
    ours, theirs = PROGRAMS[name](gs), PROGRAMS[name](torch)
    assert ours.stride() == theirs.stride() and tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for fmt in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert ours.is_contiguous(memory_format=getattr(gs, fmt)) == theirs.is_contiguous(
            memory_format=getattr(torch, fmt)
        )


def test_is_contiguous_rules_as_torch():
    for shape in ((1, 3, 1, 1), (2, 1, 4, 5), (2, 3), (1, 1, 1, 1), (2, 3, 1, 5)):
        for L in (gs, torch):
            x = L.ones(*shape)
            y = x.permute(*range(x.dim() - 1, -1, -1))
            got = [t.is_contiguous(memory_format=L.channels_last) for t in (x, y)]
            if L is gs:
                ours = got
        assert ours == got, shape


def test_same_tensor_when_laid_out():
    for L in (gs, torch):
        y = L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last)
        assert y.contiguous(memory_format=L.channels_last) is y
        assert y.to(memory_format=L.channels_last) is y


def test_gradient_flows_through_the_layout_change():
    grads = []
    for L in (gs, torch):
        w = _x(L, (2, 3, 4, 5)).requires_grad_()
        weight = _x(L, (2, 3, 4, 5)) * 0.5
        (w.contiguous(memory_format=L.channels_last) * weight).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(*grads)


ERRORS = [
    lambda L: L.ones(2, 3).contiguous(memory_format=L.channels_last),
    lambda L: L.ones(2, 3, 4, 5).contiguous(memory_format=L.channels_last_3d),
    lambda L: L.ones(2, 3).contiguous(memory_format="channels_last"),
    lambda L: L.ones(2, 3).clone(memory_format=1),
    lambda L: L.ones(2, 3).t().contiguous(memory_format=L.preserve_format),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_as_torch(call):
    outcomes = []
    for L in (gs, torch):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the class is compared
            call(L)
        outcomes.append((type(info.value), str(info.value).split(":")[0]))
    assert outcomes[0] == outcomes[1]


# -- clone(memory_format=contiguous_format) and resize_(..., memory_format=) -----------------

RESTRIDES = {
    "clone contiguous of channels_last": lambda L: (
        _x(L, (2, 3, 4, 5)).contiguous(memory_format=L.channels_last)
        .clone(memory_format=L.contiguous_format)
    ),
    "resize_ same size to channels_last": lambda L: _x(L, (2, 3, 4, 5)).resize_(
        (2, 3, 4, 5), memory_format=L.channels_last
    ),
    "resize_ channels_last to contiguous": lambda L: (
        _x(L, (2, 3, 4, 5)).contiguous(memory_format=L.channels_last)
        .resize_((2, 3, 4, 5), memory_format=L.contiguous_format)
    ),
    "resize_ smaller to channels_last_3d": lambda L: _x(L, (2, 3, 2, 4, 5)).resize_(
        (1, 3, 2, 2, 5), memory_format=L.channels_last_3d
    ),
    "resize_ channels_last to channels_last": lambda L: (
        _x(L, (2, 3, 4, 5)).contiguous(memory_format=L.channels_last)
        .resize_((2, 3, 4, 5), memory_format=L.channels_last)
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", RESTRIDES)
def test_restrided_layouts_as_torch(name):
    ours, theirs = RESTRIDES[name](gs), RESTRIDES[name](torch)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_clone_contiguous_gradient_and_node_as_torch():
    for L in (gs, torch):
        x = _x(L, (2, 3, 4, 5)).contiguous(memory_format=L.channels_last).requires_grad_()
        y = x.clone(memory_format=L.contiguous_format)
        assert type(y.grad_fn).__name__ == "CloneBackward0"
        (y * y).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())


@pytest.mark.parametrize(
    "call",
    [lambda L: L.zeros(2, 3).resize_(2, 3, memory_format=L.preserve_format),
     lambda L: L.zeros(2, 3).resize_(2, 3, memory_format=L.channels_last),
     lambda L: L.zeros(2, 3).resize_(2, 3, memory_format="channels_last")],
)  # fmt: skip
def test_resize_memory_format_errors_as_torch(call):
    errors = []
    for L in (gs, torch):
        with pytest.raises((RuntimeError, TypeError)) as info:
            call(L)
        errors.append((info.type, str(info.value).replace("gradstack", "torch")))
    assert errors[0] == errors[1]


def test_clone_contiguous_format_of_a_transposed_tensor_views_and_records_clone():
    out = []
    for L in (gs, torch):
        x = _x(L, (3, 4)).requires_grad_()
        y = x.t().clone(memory_format=L.contiguous_format)
        (y.view(-1) * L.arange(12.0)).sum().backward()  # a view needs the row-major copy
        out.append((y.grad_fn.name(), x.grad.numpy().tolist()))
    assert out[0] == out[1]
