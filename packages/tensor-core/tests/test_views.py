"""Views, storage sharing and the version counter.

A view shares its base's storage and version counter, and ``_base`` names the tensor
whose storage it aliases (the root, for a view of a view).  Advanced indexing and
reshapes that cannot be views copy.  Every in-place op and ``__setitem__`` bumps the
version that a tensor and all its views share; ``detach`` shares it too; ``.data`` does
not.  ``stride()``, ``storage_offset()`` and ``is_contiguous()`` follow torch.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest


def base(shape=(4, 6), dtype=np.float32):
    return gt.from_numpy(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))


def assert_view_of(v, b):
    """``v`` aliases ``b``'s storage and shares its version counter."""
    root = b._base if b._base is not None else b
    assert v._base is root
    assert v._is_view()
    if v.numel():
        assert np.shares_memory(v.numpy(), b.numpy())
    before = v._version
    b.add_(1)
    assert v._version == b._version == before + 1
    v.mul_(1) if v.numpy().flags.writeable else v._bump_version()
    assert b._version == v._version == before + 2


VIEWS = {
    "view": lambda t: t.view(6, 4),
    "view_-1": lambda t: t.view(-1),
    "view_as": lambda t: t.view_as(gt.zeros(2, 12)),
    "reshape_viewable": lambda t: t.reshape(2, 3, 4),
    "transpose": lambda t: t.transpose(0, 1),
    "swapaxes": lambda t: t.swapaxes(1, 0),
    "permute": lambda t: t.permute(1, 0),
    "t": lambda t: t.t(),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "squeeze": lambda t: t.unsqueeze(0).squeeze(),
    "squeeze_dim": lambda t: t.view(1, 4, 6).squeeze(0),
    "unsqueeze": lambda t: t.unsqueeze(1),
    "expand": lambda t: t[:1].expand(3, 6),
    "expand_as": lambda t: t[:, :1].expand_as(t),
    "flatten_contiguous": lambda t: t.flatten(),
    "ravel": lambda t: t.ravel(),
    "narrow": lambda t: t.narrow(1, 2, 3),
    "select": lambda t: t.select(1, -1),
    "split": lambda t: t.split(2)[1],
    "split_sizes": lambda t: t.split([1, 5], dim=1)[1],
    "chunk": lambda t: t.chunk(3, dim=1)[2],
    "unbind": lambda t: t.unbind(1)[3],
    "getitem_int": lambda t: t[1],
    "getitem_neg_int": lambda t: t[-1, 2],
    "getitem_slice": lambda t: t[1:3],
    "getitem_step": lambda t: t[::2, 1::3],
    "getitem_none": lambda t: t[None, :, None],
    "getitem_ellipsis": lambda t: t[..., 1],
    "getitem_all": lambda t: t[...],
    "getitem_mixed": lambda t: t[1:, None, ..., 2],
    "getitem_int_tensor_0d": lambda t: t[gt.tensor(1)],
    "alias_of_view": lambda t: t[1:].view(-1),
    "to_same_dtype_view": lambda t: t.view(t.dtype),
    "T_of_slice": lambda t: t[:, 1:].T,
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_views_share_storage_and_version(name):
    b = base()
    v = VIEWS[name](b)
    assert_view_of(v, b)


@pytest.mark.parametrize("name", list(VIEWS))
def test_writes_through_a_view_reach_the_base(name):
    b = base()
    v = VIEWS[name](b)
    if not v.numpy().flags.writeable:
        pytest.skip("expanded views are read-only")
    v.fill_(-7)
    assert (b.numpy() == -7).sum() == len(np.unique(_addresses(v)))
    b.zero_()
    assert (v.numpy() == 0).all()


def _addresses(v):
    """The distinct memory offsets the view reads (a view may repeat none here)."""
    a = v.numpy()
    if a.ndim == 0:
        return [0]
    idx = np.indices(a.shape).reshape(a.ndim, -1).T
    return [int(np.dot(i, a.strides)) for i in idx]


def test_view_of_a_view_has_the_root_as_base():
    b = base()
    v = b.t()[1:].unsqueeze(0)[0]
    assert v._base is b
    assert b._base is None and not b._is_view()


def test_sibling_views_see_each_others_versions():
    b = base()
    v1, v2, v3 = b[0], b.t(), b.view(-1)
    v1.add_(1)
    assert b._version == v1._version == v2._version == v3._version == 1
    v2[0, 0] = 5.0
    assert b._version == v3._version == 2
    assert v3[0].item() == 5.0


INPLACE = {
    "add_": lambda t: t.add_(1),
    "sub_": lambda t: t.sub_(1, alpha=2),
    "mul_": lambda t: t.mul_(2),
    "div_": lambda t: t.div_(2),
    "pow_": lambda t: t.pow_(2),
    "iadd": lambda t: t.__iadd__(1),
    "isub": lambda t: t.__isub__(1),
    "imul": lambda t: t.__imul__(2),
    "itruediv": lambda t: t.__itruediv__(2),
    "ipow": lambda t: t.__ipow__(1),
    "zero_": lambda t: t.zero_(),
    "fill_": lambda t: t.fill_(3),
    "copy_": lambda t: t.copy_(gt.ones(t.shape)),
    "clamp_": lambda t: t.clamp_(0, 1),
    "sin_": lambda t: t.sin_(),
    "neg_": lambda t: t.neg_(),
    "abs_": lambda t: t.abs_(),
    "exp_": lambda t: t.exp_(),
    "sqrt_": lambda t: t.sqrt_(),
    "relu_": lambda t: t.relu_(),
    "sigmoid_": lambda t: t.sigmoid_(),
    "tanh_": lambda t: t.tanh_(),
    "masked_fill_": lambda t: t.masked_fill_(t > 3, 0.0),
    "uniform_": lambda t: t.uniform_(),
    "normal_": lambda t: t.normal_(),
    "setitem_int": lambda t: t.__setitem__(0, 1.0),
    "setitem_slice": lambda t: t.__setitem__((slice(None), 1), gt.tensor(2.0)),
    "setitem_mask": lambda t: t.__setitem__(t > 2, 0.0),
    "setitem_index": lambda t: t.__setitem__(gt.tensor([0]), 9.0),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_ops_bump_the_shared_version(name):
    b = base()
    v = b[1:]
    other = b.t()
    unrelated = b.clone()
    r = INPLACE[name](v)
    if r is not None:
        assert r is v
    assert b._version == v._version == other._version == 1
    assert unrelated._version == 0
    INPLACE[name](b)
    assert v._version == other._version == 2


def test_out_of_place_ops_do_not_bump_versions():
    b = base()
    for fn in (
        lambda t: t + 1,
        lambda t: t.sin(),
        lambda t: t.sum(),
        lambda t: t[gt.tensor([0])],
        lambda t: t.clone(),
        lambda t: t.reshape(-1),
        lambda t: t.t().contiguous(),
    ):
        fn(b)
    assert b._version == 0


# ---------------------------------------------------------------------------------------
# Copies


COPIES = {
    "index_tensor": lambda t: t[gt.tensor([0, 2])],
    "index_list": lambda t: t[[1, 3]],
    "index_mask": lambda t: t[t > 5],
    "index_bool_tensor": lambda t: t[gt.tensor([True, False, True, False])],
    "index_mixed": lambda t: t[1:, gt.tensor([0, 1])],
    "index_2_tensors": lambda t: t[gt.tensor([0, 1]), gt.tensor([2, 3])],
    "reshape_transposed": lambda t: t.t().reshape(-1),
    "flatten_transposed": lambda t: t.t().flatten(),
    "contiguous_of_transposed": lambda t: t.t().contiguous(),
    "clone": lambda t: t.clone(),
    "to_other_dtype": lambda t: t.to(gt.float64),
    "float_of_int": lambda t: t.int().float(),
    "cat": lambda t: gt.cat([t, t]),
    "stack": lambda t: gt.stack([t]),
    "flip": lambda t: t.flip(0),
    "repeat": lambda t: t.repeat(1, 1),
    "masked_fill": lambda t: t.masked_fill(t > 1, 0.0),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_copies_do_not_share_storage(name):
    b = base()
    c = COPIES[name](b)
    assert c._base is None
    assert not np.shares_memory(c.numpy(), b.numpy())
    b.add_(1)
    assert c._version == 0
    c.zero_()
    assert b.sum().item() != 0


def test_reshape_is_a_view_when_it_can_be():
    b = base()
    assert b.reshape(24)._base is b
    assert b[:, ::2].reshape(4, 3)._base is b  # same strides: a view
    assert b.t().reshape(24)._base is None  # needs a copy
    assert b.t().reshape(6, 4)._base is b  # already this shape


def test_contiguous_returns_self_when_contiguous():
    b = base()
    assert b.contiguous() is b
    t = b.t()
    c = t.contiguous()
    assert c is not t and c.is_contiguous() and c._base is None
    np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_to_same_dtype_returns_self():
    b = base()
    assert b.to(gt.float32) is b and b.float() is b
    assert b.to(gt.float32, copy=True) is not b


# ---------------------------------------------------------------------------------------
# detach, .data, from_numpy, numpy()


def test_detach_shares_storage_and_version_but_is_not_a_view():
    b = base()
    d = b.detach()
    assert np.shares_memory(d.numpy(), b.numpy())
    assert d._base is None and not d._is_view()  # as torch: not a view
    d.add_(1)
    assert b._version == d._version == 1
    b.mul_(2)
    assert d._version == 2
    assert d[0, 0].item() == 2.0


def test_detach_of_a_view_shares_the_views_version():
    b = base()
    v = b[1]
    d = v.detach()
    d.zero_()
    assert b._version == v._version == d._version == 1
    assert (b[1].numpy() == 0).all()


def test_data_shares_storage_not_version():
    b = base()
    d = b.data
    assert np.shares_memory(d.numpy(), b.numpy())
    d.add_(1)
    assert d._version == 1 and b._version == 0  # hidden from version checks, as torch
    assert b[0, 0].item() == 1.0


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float64)
    t = gt.from_numpy(a)
    a[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t[1, 2] = 7.0
    assert a[1, 2] == 7.0
    assert t.numpy() is a
    assert t.dtype is gt.float64


@pytest.mark.parametrize(
    "dtype",
    [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_],
)
def test_from_numpy_keeps_every_supported_dtype(dtype):
    a = np.ones(3, dtype=dtype)
    t = gt.from_numpy(a)
    assert t.dtype.numpy == np.dtype(dtype)
    assert np.shares_memory(t.numpy(), a)


def test_from_numpy_of_strided_and_flipped_arrays():
    a = np.arange(12.0).reshape(3, 4)
    f = gt.from_numpy(a[::-1, ::2])
    assert f.shape == (3, 2) and not f.is_contiguous()
    assert f.tolist() == a[::-1, ::2].tolist()
    a[2, 0] = -1.0
    assert f[0, 0].item() == -1.0
    assert (f + 0).is_contiguous()
    assert (f * 2).tolist() == (a[::-1, ::2] * 2).tolist()


def test_numpy_and_array_share_memory():
    b = base()
    assert np.shares_memory(b.numpy(), np.asarray(b))
    assert np.asarray(b, dtype=np.float64).dtype == np.float64


def test_expanded_views_refuse_inplace_writes():
    b = gt.zeros(1, 3)
    e = b.expand(4, 3)
    for fn in (
        lambda: e.add_(1),
        lambda: e.copy_(gt.ones(4, 3)),
        lambda: e.__setitem__(slice(None), 1.0),
        lambda: e.sin_(),
        lambda: e.clamp_(0, 1),
    ):
        with pytest.raises(RuntimeError, match="clone"):
            fn()
    assert b._version == 0
    # as torch: a fill writes one value everywhere, so zero_ and fill_ are allowed
    e.fill_(2.0)
    assert b.tolist() == [[2.0, 2.0, 2.0]] and b._version == 1
    e.zero_()
    assert b.tolist() == [[0.0, 0.0, 0.0]] and b._version == 2
    assert e.clone().add_(1).sum().item() == 12.0
    # one row of it repeats nothing: torch writes it (into the shared row), so do we
    e[0] = 1.0
    assert b.tolist() == [[1.0, 1.0, 1.0]] and b._version == 3
    e[1:2].add_(1)
    assert b.tolist() == [[2.0, 2.0, 2.0]]


# ---------------------------------------------------------------------------------------
# strides, offsets and contiguity against torch


LAYOUTS = {
    "plain": lambda t: t,
    "t": lambda t: t.t(),
    "slice_rows": lambda t: t[1:3],
    "slice_cols": lambda t: t[:, 1:4],
    "step": lambda t: t[::2, ::3],
    "select": lambda t: t[2],
    "select_col": lambda t: t[:, 2],
    "unsqueeze": lambda t: t.unsqueeze(1),
    "unsqueeze_t": lambda t: t.t().unsqueeze(0),
    "expand": lambda t: t[:1].expand(5, 6),
    "expand_new_dim": lambda t: t[0].expand(2, 3, 6),
    "view3": lambda t: t.view(2, 2, 6),
    "permute3": lambda t: t.view(2, 2, 6).permute(2, 0, 1),
    "narrow": lambda t: t.narrow(1, 1, 2),
    "squeeze": lambda t: t[:, :1].squeeze(1),
    "split": lambda t: t.split(2, dim=1)[1],
    "empty_slice": lambda t: t[2:2],
    "one_row": lambda t: t[1:2],
    "one_col_t": lambda t: t[:, 1:2].t(),
    "getitem_none": lambda t: t[None, 1:, None],
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_strides_offsets_and_contiguity_match_torch(name):
    torch = pytest.importorskip("torch")
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    g = LAYOUTS[name](gt.from_numpy(a))
    t = LAYOUTS[name](torch.from_numpy(a.copy()))
    assert tuple(g.shape) == tuple(t.shape)
    assert g.is_contiguous() == t.is_contiguous(), (g.stride(), t.stride())
    if g.numel() > 1:
        assert _canonical(g.shape, g.stride()) == _canonical(t.shape, t.stride())
    if g.numel():
        assert g.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(g.numpy(), t.numpy())


def _canonical(shape, strides):
    """Strides of the dims that matter (torch and numpy may differ on size-1 dims)."""
    return tuple(s for n, s in zip(shape, strides) if n != 1)


def test_stride_and_is_contiguous_by_hand():
    b = base((2, 3, 4))
    assert b.stride() == (12, 4, 1) and b.stride(-1) == 1 and b.is_contiguous()
    t = b.transpose(0, 2)
    assert t.stride() == (1, 4, 12) and not t.is_contiguous()
    assert b[:, 1].stride() == (12, 1)
    assert b.expand(2, 2, 3, 4).stride() == (0, 12, 4, 1)
    assert gt.tensor(1.0).stride() == () and gt.tensor(1.0).is_contiguous()
    with pytest.raises(IndexError, match="Dimension out of range"):
        b.stride(3)


def test_int_and_bool_views_share_version():
    for dtype in (np.int64, np.int32, np.bool_):
        b = gt.from_numpy(np.zeros((3, 3), dtype=dtype))
        v = b[1:, :2]
        v.fill_(1)
        assert b._version == v._version == 1
        assert b.numpy().sum() == 4


@pytest.mark.parametrize(
    "shape, target",
    [
        ((), (16, 10)),
        ((3,), (2, 3)),
        ((1, 3), (4, 3)),
        ((2, 1), (2, 5)),
        ((2, 3), (2, 3)),
        ((1,), (0,)),
        ((0,), (2, 0)),
        ((1, 1, 1), (2, 1, 3)),
        ((2, 1, 2), (3, 2, 1, 2)),
    ],
)
@pytest.mark.parametrize("strided", [False, True])
def test_broadcast_view_is_numpys_broadcast_to(shape, target, strided):
    """Note [A broadcast view built in C]: shape, strides, dtype, values, read-only, and the
    storage of ``x``."""
    from gradstack_tensor._shapes import broadcast_view

    rng = np.random.default_rng(0)
    x = rng.standard_normal(tuple(2 * d for d in shape) if strided else shape)
    if strided and shape:
        x = x[tuple(slice(None, None, 2) for _ in shape)]
    want, got = np.broadcast_to(x, target), broadcast_view(x, target)
    assert (got.shape, got.strides, got.dtype) == (want.shape, want.strides, want.dtype)
    assert not got.flags.writeable and np.shares_memory(got, x) or got.size == 0
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", [(3,), (3, 3), (2, -1)])
def test_broadcast_view_refuses_what_numpy_refuses(target):
    from gradstack_tensor._shapes import broadcast_view

    with pytest.raises(ValueError, match="broadcast_view"):
        broadcast_view(np.zeros((2, 3)), target)


def test_an_expanded_tensor_keeps_its_storage_alive():
    import gc

    t = gt.tensor([1.0, 2.0]).expand(3, 2)
    gc.collect()
    assert t.tolist() == [[1.0, 2.0]] * 3
