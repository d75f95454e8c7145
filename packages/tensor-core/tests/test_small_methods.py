"""The small Tensor methods torch programs call (casts, flags, aliases, in-place forms of
existing ops) against torch: values, shapes, dtypes and errors."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = np.random.default_rng(0).standard_normal((3, 4))

CASES = {
    "byte": lambda L, t: (t * 10).byte(),
    "char": lambda L, t: (t * 10).char(),
    "short": lambda L, t: (t * 100).short(),
    "get_device": lambda L, t: t.get_device(),
    "is_cpu": lambda L, t: t.is_cpu,
    "nbytes": lambda L, t: t.nbytes,
    "itemsize": lambda L, t: t.itemsize,
    "is_signed": lambda L, t: (t.is_signed(), t.byte().is_signed(), t.bool().is_signed()),
    "is_same_size": lambda L, t: (t.is_same_size(t.t()), t.is_same_size(t * 2)),
    "is_nonzero": lambda L, t: t[0, :1].is_nonzero(),
    "is_nonzero_of_many": lambda L, t: t.is_nonzero(),
    "flags": lambda L, t: (t.is_conj(), t.is_neg(), t.is_pinned(), t.is_shared()),
    "split_with_sizes": lambda L, t: t.split_with_sizes([1, 3], 1),
    "sum_to_size": lambda L, t: t.sum_to_size(1, 4),
    "sum_to_size_tuple": lambda L, t: t.sum_to_size((3, 1)),
    "sum_to_size_bad": lambda L, t: t.sum_to_size(2, 4),
    "narrow_copy": lambda L, t: t.narrow_copy(1, 1, 2),
    "msort": lambda L, t: t.msort(),
    "take": lambda L, t: t.take(L.tensor([[0, 11], [5, 3]])),
    "vdot": lambda L, t: t[0].vdot(t[1]),
    "rot90": lambda L, t: t.rot90(),
    "rot90_back": lambda L, t: t.rot90(3, (1, 0)),
    "rot90_twice": lambda L, t: t.rot90(2),
    "erfc": lambda L, t: t.erfc(),
    "erfc_": lambda L, t: t.clone().erfc_(),
    "cumsum_": lambda L, t: t.clone().cumsum_(1),
    "tril_": lambda L, t: t.clone().tril_(-1),
    "gt_": lambda L, t: t.clone().gt_(0),
    "ge_": lambda L, t: t.clone().ge_(0.5),
    "real_conj": lambda L, t: (t.real, t.conj(), t.resolve_conj(), t.conj_physical()),
}


def outcome(lib, name):
    try:
        v = CASES[name](lib, lib.tensor(A.copy()))
    except (RuntimeError, TypeError, ValueError) as e:
        return type(e).__name__
    items = v if isinstance(v, (tuple, list)) else (v,)
    out = []
    for x in items:
        if hasattr(x, "tolist") and not isinstance(x, (bool, int)):
            out.append((tuple(x.shape), str(x.dtype).split(".")[-1], np.asarray(x.tolist())))
        else:
            out.append(x)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    ours, theirs = outcome(gt, name), outcome(torch, name)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, tuple):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-12)
        else:
            assert a == b


@pytest.mark.parametrize(
    "dtype", [np.float16, np.float32, np.float64, np.int8, np.int64, np.uint8, np.bool_]
)
@pytest.mark.parametrize("layout", ["C", "F", "strided", "expanded", "empty"])
def test_zero_in_every_layout_writes_positive_zeros(dtype, layout):
    """Note [Zeroing a contiguous array is a memset]: +0 everywhere written, in every
    layout, and the elements a strided view skips are left alone."""
    base = (-np.ones((4, 6))).astype(dtype)
    if layout == "C":
        t = gt.from_numpy(base)
    elif layout == "F":
        t = gt.from_numpy(np.asfortranarray(base))
    elif layout == "strided":
        t = gt.from_numpy(base)[:, ::2]
    elif layout == "expanded":
        t = gt.from_numpy(base[:1]).expand(3, 6)
    else:
        t = gt.from_numpy(base[:0])
    version = t._version
    t.zero_()
    values = t.numpy()
    assert (values == 0).all() and t._version == version + 1
    if values.dtype.kind == "f":
        assert not np.signbit(values).any()
    if layout == "strided":
        assert (base[:, 1::2] == (-np.ones(1)).astype(base.dtype)[0]).all()
