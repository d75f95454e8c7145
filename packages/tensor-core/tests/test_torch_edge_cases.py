"""Edge cases found by the random-program comparison with torch 2.13 (issue 11,
``/work/team/fuzz_findings.md``), in tensor-core's Python kernels: each call gives torch's
value or torch's exception type."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return type(e), str(e)
    if isinstance(r, (tuple, list)):
        return None, [(list(t.shape), str(t.dtype).split(".")[-1], t.tolist()) for t in r]
    return None, (list(r.shape), str(r.dtype).split(".")[-1], r.tolist())


def _nan_safe(v):
    return repr(v)


CALLS = {
    # TC4: Tensor-only arguments of the function forms
    "maximum_number": lambda L: L.maximum(L.ones(2), 3),
    "minimum_number_first": lambda L: L.minimum(3, L.ones(2)),
    "atan2_number": lambda L: L.atan2(L.ones(2), 2),
    "logical_and_number": lambda L: L.logical_and(L.ones(2), 1),
    "eq_number_first": lambda L: L.eq(3, L.ones(2)),
    "eq_number_second": lambda L: L.eq(L.ones(2), 1),
    "rsub_number_first": lambda L: L.rsub(3, L.ones(2)),
    "mul_number_first": lambda L: L.mul(3, L.ones(2)),
    # TC6: an expand that repeats nothing can be written in place
    "expand_same_mul_": lambda L: L.ones(2).expand(2).mul_(2),
    "expand_lead1_add_": lambda L: L.ones(2).expand(1, 2).add_(1),
    "expand_repeat_mul_": lambda L: L.ones(2).expand(3, 2).mul_(2),
    # TC15, TC29: chunk/split/unbind of empty dims and 0-d tensors
    "chunk_empty_dim": lambda L: L.ones(1, 0).chunk(4, -1),
    "chunk_0d": lambda L: L.tensor(1.0).chunk(2),
    "split_0d": lambda L: L.tensor(1.0).split(1),
    "unbind_0d": lambda L: L.tensor(1.0).unbind(),
    "narrow_0d": lambda L: L.tensor(1.0).narrow(0, 0, 1),
    # TC16: softmax of 0-d special values and of empty integer tensors
    "softmax_0d_nan": lambda L: L.softmax(L.tensor(float("nan")), -1),
    "softmax_0d_inf": lambda L: L.softmax(L.tensor(float("inf")), -1),
    "log_softmax_0d_inf": lambda L: L.log_softmax(L.tensor(float("inf")), -1),
    "log_softmax_0d": lambda L: L.log_softmax(L.tensor(2.0), 0),
    "softmax_empty_int": lambda L: L.zeros(0, dtype=L.int8).softmax(0),
    # TC18: reductions over nothing
    "max_empty": lambda L: L.zeros(0).max(),
    "amin_empty": lambda L: L.zeros(0, 2).amin(),
    "max_empty_dim": lambda L: L.zeros(0, 3).max(0),
    "amax_empty_dim": lambda L: L.zeros(0, 3).amax(0),
    "argmax_empty": lambda L: L.zeros(0).argmax(),
    "amax_nonempty_dim": lambda L: L.zeros(0, 3).amax(1),
    # TC20: integer arange of float arguments
    "arange_int32": lambda L: L.arange(0.5, 3.0, 0.5, dtype=L.int32),
    "arange_int64": lambda L: L.arange(1.5, 5, 1.5, dtype=L.int64),
    "arange_int64_neg": lambda L: L.arange(-2.5, 3, 1.5, dtype=L.int64),
    "arange_float": lambda L: L.arange(0.5, 3.0, 0.5),
    # TC22, TC23, TC30
    "setitem_extra_leading_dims": lambda L: (
        lambda x: (x.__setitem__(True, L.ones(1, 1, 1)), x)[1]
    )(L.zeros(())),
    "setitem_row_extra_dims": lambda L: (
        lambda x: (x.__setitem__((0,), L.arange(3.0).reshape(1, 1, 3)), x)[1]
    )(L.zeros(2, 3)),
    "where_uint8_minus_one": lambda L: L.where(
        L.tensor([True, False]), L.tensor([3, 4], dtype=L.uint8), -1
    ),
    "addmm_int_float_factors": lambda L: L.addmm(
        L.ones(2, 2, dtype=L.int64) * 3,
        L.ones(2, 2, dtype=L.int64),
        L.ones(2, 2, dtype=L.int64),
        beta=0.5,
        alpha=2.5,
    ),
    # TC5: partially overlapping copies
    "copy_overlap": lambda L: (lambda y: y[1:].copy_(y[:-1]))(L.arange(4.0)),
    "copy_itself": lambda L: (lambda y: y.copy_(y))(L.arange(4.0)),
    "setitem_overlap": lambda L: (lambda y: (y.__setitem__(slice(1, None), y[:-1]), y)[1])(
        L.arange(4.0)
    ),
    "setitem_disjoint_views": lambda L: (lambda y: (y.__setitem__(slice(0, 2), y[2:]), y)[1])(
        L.arange(4.0)
    ),
    "copy_overlap_not_dense": lambda L: (lambda y: y[1:, :1].copy_(y[2:, 1:]))(
        L.arange(8.0).reshape(4, 2)
    ),
    "copy_transposed_same_memory": lambda L: (lambda y: y.copy_(y.t()))(
        L.arange(4.0).reshape(2, 2)
    ),
    "copy_strided_disjoint": lambda L: (lambda y: y[::2].copy_(y[1::2]))(L.arange(4.0)),
    # TC6 through views: a view of an expand that repeats nothing is writable
    "expand_row_iadd": lambda L: (
        lambda x: (x.expand(3, 4, 1, 2)[:-2:2].add_(L.full((1, 4, 1, 2), 0.5)), x)[1]
    )(L.ones(4, 1, 2)),
    "expand_setitem_one_row": lambda L: (lambda x, v: (v.__setitem__(slice(None, 1), 5.0), x)[1])(
        *(lambda x: (x, x.expand(3, 2)))(L.ones(1, 2))
    ),
    "expand_setitem_repeated_rows": lambda L: (lambda v: v.__setitem__(slice(None, 2), 5.0))(
        L.ones(1, 2).expand(3, 2)
    ),
    "expand_index_put_writes_through": lambda L: (lambda v: (v.__setitem__([0], v.sum()), v)[1])(
        (L.tensor([0.5]) + 1.5).expand(3, -1)
    ),
    "empty_setitem": lambda L: (lambda v: (v.__setitem__(slice(-2, None, 3), False), v)[1])(
        L.zeros(1, 2, 0)
    ),
    # TC7: an empty index list
    "index_empty_list": lambda L: L.ones(3)[[]],
    "setitem_empty_list": lambda L: (lambda x: (x.__setitem__(([], None), 3.0), x)[1])(L.ones(3)),
}


@pytest.mark.filterwarnings("ignore:Use of index_put_ on expanded tensors:UserWarning")
@pytest.mark.parametrize("name", list(CALLS))
def test_matches_torch(name):
    ours = _outcome(lambda: CALLS[name](gt))
    theirs = _outcome(lambda: CALLS[name](torch))
    assert ours[0] is theirs[0], (ours, theirs)
    if theirs[0] is None:
        assert _nan_safe(ours[1]) == _nan_safe(theirs[1])
    else:
        for numpy_words in ("axis", "ufunc", "zero-size array", "tuple index out of range"):
            assert numpy_words not in ours[1]


def test_expand_that_repeats_writes_nothing():
    """A real repetition (stride 0, size > 1) is still refused, with torch's words."""
    with pytest.raises(RuntimeError, match="single memory location"):
        gt.ones(1, 2).expand(3, 2).add_(1)
    x = gt.ones(1, 2)
    y = x.expand(1, 2)
    y.add_(1)
    assert x.tolist() == [[2.0, 2.0]]  # written through the view
    assert np.shares_memory(x.numpy(), y.numpy())


def test_index_put_into_an_expanded_tensor_warns_as_torch():
    for L in (gt, torch):
        v = (L.tensor([0.5]) + 1.5).expand(3, -1)
        with pytest.warns(UserWarning, match="index_put_ on expanded tensors is deprecated"):
            v[[0]] = v.sum()
        assert v.tolist() == [[6.0], [6.0], [6.0]]  # the rows are one element
