"""nonzero, argwhere, argsort, unique, unique_consecutive, isin, searchsorted and bucketize
(searching.py) against torch: values, shapes, dtypes and errors."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

NAN = float("nan")
A = np.random.default_rng(0).standard_normal((3, 4))

PROGRAMS = {
    "nonzero": lambda L: L.nonzero(L.tensor([[0, 1], [2, 0]])),
    "nonzero_0d": lambda L: L.nonzero(L.tensor(3.0)),
    "nonzero_0d_zero": lambda L: L.tensor(0.0).nonzero(),
    "nonzero_empty": lambda L: L.nonzero(L.zeros(0, 3)),
    "nonzero_as_tuple": lambda L: L.nonzero(L.tensor([[0, 1], [2, 0]]), as_tuple=True),
    "nonzero_as_tuple_0d": lambda L: L.tensor(0).nonzero(as_tuple=True),
    "nonzero_bool": lambda L: L.tensor([True, False, True]).nonzero(),
    "argwhere": lambda L: L.argwhere(L.tensor([0.0, 1.0, 2.0])),
    "argsort_descending": lambda L: L.argsort(L.tensor([2, 1, 2, 1, 3]), descending=True),
    "argsort_dim0": lambda L: L.tensor(A).argsort(dim=0),
    "argsort_stable": lambda L: L.tensor([2.0, 1, 2, 1]).argsort(stable=True),
    "unique_nan": lambda L: L.unique(
        L.tensor([3.0, NAN, 1.0, NAN, 3.0, 2.0]), return_inverse=True, return_counts=True
    ),
    "unique_unsorted": lambda L: L.unique(L.tensor([3, 1, 3, 2]), sorted=False),
    "unique_2d_inverse": lambda L: L.tensor([[3, 1], [1, 2]]).unique(return_inverse=True),
    "unique_dim0": lambda L: L.unique(
        L.tensor([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True, return_counts=True
    ),
    "unique_dim1": lambda L: L.unique(L.tensor([[1, 1, 2], [3, 3, 4]]), dim=1, return_inverse=True),
    "unique_0d": lambda L: L.unique(L.tensor(5), return_inverse=True),
    "unique_bool": lambda L: L.unique(L.tensor([True, False, True])),
    "unique_empty": lambda L: L.unique(L.zeros(0), return_counts=True),
    "unique_consecutive": lambda L: L.unique_consecutive(
        L.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True
    ),
    "unique_consecutive_dim": lambda L: L.unique_consecutive(
        L.tensor([[1, 1, 2], [1, 1, 2]]), dim=1, return_counts=True
    ),
    "isin": lambda L: L.isin(L.tensor([1, 2, 3]), L.tensor([2, 5])),
    "isin_number_invert": lambda L: L.isin(L.tensor([1, 2, 3]), 2, invert=True),
    "isin_number_elements": lambda L: L.isin(2, L.tensor([1, 2])),
    "searchsorted": lambda L: L.searchsorted(L.tensor([1, 3, 5, 7]), L.tensor([[3, 6], [9, 0]])),
    "searchsorted_number_right": lambda L: L.searchsorted(L.tensor([1, 3, 5, 7]), 3, right=True),
    "searchsorted_rows": lambda L: L.searchsorted(L.tensor([[1, 3], [2, 4]]), L.tensor([[2], [3]])),
    "searchsorted_side_int32": lambda L: L.searchsorted(
        L.tensor([1.0, 3.0, 3.0, 5.0]), L.tensor([3.0]), side="right", out_int32=True
    ),
    "searchsorted_sorter": lambda L: L.searchsorted(
        L.tensor([5, 1, 3]), L.tensor([2, 4]), sorter=L.tensor([1, 2, 0])
    ),
    "bucketize": lambda L: L.bucketize(L.tensor([1, 3, 5, 7]), L.tensor([1, 5])),
    "bucketize_right": lambda L: L.bucketize(L.tensor([1, 3, 5, 7]), L.tensor([1, 5]), right=True),
}


def outcome(lib, name):
    try:
        r = PROGRAMS[name](lib)
    except (RuntimeError, TypeError, IndexError) as e:
        return type(e).__name__
    rs = r if isinstance(r, tuple) else (r,)
    return [
        (tuple(t.shape), str(t.dtype).split(".")[-1], np.asarray(t.tolist()).tolist()) for t in rs
    ]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(name):
    ours, theirs = outcome(gt, name), outcome(torch, name)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    for (s1, d1, v1), (s2, d2, v2) in zip(ours, theirs):
        assert (s1, d1) == (s2, d2)
        np.testing.assert_array_equal(np.asarray(v1, dtype=float), np.asarray(v2, dtype=float))


ERRORS = {
    "searchsorted_rows_mismatch": lambda L: L.searchsorted(L.ones(2, 3), L.ones(3, 1)),
    "searchsorted_opposite_sides": lambda L: L.searchsorted(
        L.tensor([1, 2]), L.tensor([1]), right=True, side="left"
    ),
    "bucketize_2d": lambda L: L.bucketize(L.tensor([1]), L.ones(2, 2)),
    "unique_dim_0d": lambda L: L.unique(L.tensor(5), dim=0),
    "nonzero_not_tensor": lambda L: L.nonzero([1, 2]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    kinds = []
    for lib in (gt, torch):
        with pytest.raises((RuntimeError, TypeError, IndexError)) as info:
            ERRORS[name](lib)
        kinds.append(info.type)
    assert kinds[0] is kinds[1]
