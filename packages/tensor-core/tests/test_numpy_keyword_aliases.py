"""torch accepts numpy's keyword names on reductions: ``axis`` for ``dim`` and ``keepdims``
for ``keepdim`` (method and function forms), compared with torch."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

CALLS = [
    ("sum", {"axis": 1, "keepdims": True}),
    ("sum", {"axis": (0, 2)}),
    ("mean", {"axis": (0, 2)}),
    ("prod", {"axis": 1}),
    ("amax", {"axis": 1}),
    ("amin", {"axis": (0, 1), "keepdims": True}),
    ("max", {"axis": 2, "keepdims": True}),
    ("min", {"axis": 0}),
    ("argmax", {"axis": 0}),
    ("argmin", {"axis": 2, "keepdims": True}),
    ("std", {"axis": 1, "keepdims": True}),
    ("var", {"axis": 1}),
    ("logsumexp", {"axis": 1}),
    ("softmax", {"axis": 2}),
    ("log_softmax", {"axis": 0}),
    ("cumsum", {"axis": 1}),
    ("all", {"axis": 1}),
    ("any", {"axis": 1, "keepdims": True}),
    ("count_nonzero", {"axis": 1}),
]


def _values(r):
    r = r[0] if isinstance(r, tuple) else r
    return np.asarray(r.tolist())


@pytest.mark.parametrize("name, kwargs", CALLS)
@pytest.mark.parametrize("form", ["method", "function"])
def test_numpy_names_give_torch_s_result(name, kwargs, form):
    x = np.arange(24.0).reshape(2, 3, 4) - 5
    got, want = [
        getattr(lib.tensor(x), name)(**kwargs)
        if form == "method"
        else getattr(lib, name)(lib.tensor(x), **kwargs)
        for lib in (gt, torch)
    ]
    np.testing.assert_allclose(_values(got), _values(want), rtol=1e-6)
    assert tuple(_values(got).shape) == tuple(_values(want).shape)


@pytest.mark.parametrize("lib", [gt, torch], ids=["gradstack", "torch"])
def test_a_name_and_its_alias_together_or_no_dim_is_a_type_error(lib):
    with pytest.raises(TypeError):
        lib.ones(2, 3).sum(dim=1, axis=1)
    with pytest.raises(TypeError):
        lib.ones(2, 3).sum(1, keepdim=True, keepdims=True)
    with pytest.raises(TypeError):
        lib.ones(2, 3).cumsum()
    with pytest.raises(TypeError):  # torch's norm is a Python function: no aliases
        lib.ones(2, 3).norm(axis=1)
