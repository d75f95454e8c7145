"""Note [The last shape is shared] (_tensor_base.pxd): the shape tuple built last is
returned again while the dims match, and only then."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np

SHAPES = [(2, 3), (2, 3), (3, 2), (2, 3, 1), (), (0,), (6,), (1, 6), (300, 2), (2, 300), (2, 3)]


def test_shapes_follow_the_dims_through_repeats_and_changes():
    for shape in SHAPES + SHAPES[::-1]:
        t = gt.zeros(shape) + 1.0  # an op's result: its shape comes from shape_of
        assert tuple(t.shape) == shape and t.size() == shape
        assert t.numpy().shape == shape


def test_large_dims_and_views_keep_their_own_shapes():
    big = gt.zeros(1).expand(2**31 + 5)
    assert tuple(big.shape) == (2**31 + 5,)
    x = gt.arange(24.0).reshape(2, 3, 4)
    for perm in [(0, 1, 2), (2, 1, 0), (1, 0, 2), (0, 1, 2)]:
        assert tuple(x.permute(*perm).shape) == tuple(np.empty((2, 3, 4)).transpose(perm).shape)
