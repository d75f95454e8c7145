"""Indexing with a Python ``range`` (a sequence index, as torch reads it): values, writes and
gradients compared with torch."""

from __future__ import annotations

import gradstack_autograd  # noqa: F401 - the autograd layer
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

KEYS = [
    lambda: range(2),
    lambda: range(0),
    lambda: range(3, 0, -1),
    lambda: (range(2), range(1, 3)),
    lambda: (slice(None), range(2)),
    lambda: (0, range(3)),
]


@pytest.mark.parametrize("make_key", KEYS)
def test_range_index_reads_and_differentiates_as_torch(make_key):
    data = np.arange(16.0).reshape(4, 4)
    x = gt.tensor(data, dtype=gt.float64, requires_grad=True)
    tx = torch.tensor(data, requires_grad=True)
    y, ty = x[make_key()], tx[make_key()]
    assert tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    w = np.random.default_rng(0).standard_normal(tuple(ty.shape))
    (y * gt.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("make_key", KEYS)
def test_range_index_writes_as_torch(make_key):
    x, tx = gt.zeros(4, 4), torch.zeros(4, 4)
    x[make_key()] = 7.0
    tx[make_key()] = 7.0
    np.testing.assert_array_equal(x.numpy(), tx.numpy())
