"""Gradients of torch-rule indexing (Note [torch selects ints first]), gather with an index
smaller than its input, and index_select, against torch 2.13: first and second order and
forward mode, in float64."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# torch's forward mode scripts helpers with the deprecated torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")


compare = importlib.import_module("gradstack_autograd_tests_torch_compare").compare

X = np.random.default_rng(3).standard_normal((3, 4, 5))
MASK4 = np.array([True, False, True, True])

KEYS = [
    (0, slice(None), [1, 1]),
    (None, 0, slice(None), [1, 2]),
    ([1, 0], None, 0),
    (Ellipsis, 0, [1, 2]),
    (1, MASK4),
    (0, True, [1]),
    (slice(None), 0, [[1], [3]]),
    ([0, 2], 1, [3, 4]),
]


def _index(L, key):
    return tuple(L.tensor(k) if isinstance(k, np.ndarray) else k for k in key)


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_gradients(key):
    compare(lambda L, x: x[_index(L, key)] ** 2, [X], tangents="auto")


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_setitem_gradients(key):
    shape = tuple(torch.tensor(X)[_index(torch, key)].shape)
    dup = any(isinstance(k, list) and len(set(map(str, k))) < len(k) for k in key)
    v = np.full(shape, 0.5) if dup else np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)

    def fn(L, x, value):
        y = x * 1
        y[_index(L, key)] = value if not dup else value.mean()
        return y**2

    compare(fn, [X, v], tangents="auto")


GATHER = [
    ("smaller", lambda L, x: L.gather(x, 0, L.tensor([[[0]], [[2]]])) ** 2),
    ("smaller_dim2", lambda L, x: L.gather(x, 2, L.tensor([[[4, 0]], [[1, 1]]])) ** 2),
    ("larger_along", lambda L, x: L.gather(x, 1, L.tensor([[[0], [3], [3], [1], [2], [0]]])) ** 2),
    ("zero_d", lambda L, x: L.gather(x.sum(), 0, L.tensor([0, 0, 0])) ** 2),
    ("index_select", lambda L, x: x.index_select(1, L.tensor([3, 0, 3])) ** 2),
    ("index_select_0d_index", lambda L, x: x.index_select(2, L.tensor(4)) ** 2),
    ("index_select_0d_input", lambda L, x: x.sum().index_select(0, L.tensor([0])) ** 2),
]


@pytest.mark.parametrize(("name", "fn"), GATHER, ids=[g[0] for g in GATHER])
def test_gather_and_index_select_gradients(name, fn):
    compare(fn, [X], tangents="auto")
