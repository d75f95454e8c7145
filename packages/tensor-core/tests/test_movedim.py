"""``movedim``/``moveaxis`` (function and method) against torch: shapes, values, views,
and the errors for every mix of ints and tuples."""

from __future__ import annotations

import itertools

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DIMS = [0, -1, 1, (0, 1), (1, 0), (0, 2), 3, (0, 0)]


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), ()])
def test_movedim_agrees_with_torch(shape):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    for source, destination in itertools.product(DIMS, DIMS):
        out = []
        for lib in (gt, torch):
            try:
                r = lib.tensor(x).movedim(source, destination)
                out.append((tuple(r.shape), np.asarray(r.tolist()).tolist()))
            except Exception as e:  # noqa: BLE001 - the error is the result
                out.append(type(e).__name__)
        assert out[0] == out[1], (shape, source, destination)


def test_movedim_is_a_view_and_moveaxis_its_alias():
    x = gt.zeros(2, 3, 4)
    v = gt.movedim(x, 0, -1)
    v[0, 0, 1] = 5.0
    assert x[1, 0, 0].item() == 5.0
    assert gt.moveaxis(x, (0, 1), (2, 0)).shape == x.moveaxis((0, 1), (2, 0)).shape == (3, 4, 2)
