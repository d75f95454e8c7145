"""vmap of every op of graph-engine's op database, against ``torch.func.vmap``.

Each sample of ``packages/graph-engine/tests/autograd_op_db.py`` is drawn three times (three
seeds: the same shapes, other values), its inputs are stacked into a batch of three, and
the sample's call runs under gradstack's ``vmap`` and under torch's: the values and shapes
must agree.  So an op's batching rule (its entry's ``batch=``, or for a pointwise row the
kind its ``elementwise`` row gives it) is checked as soon as the op has samples there; ops
that run once per sample (``batching.FALLBACK``) are left to their own tests, and a sample
that torch's vmap refuses is skipped.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gs = pytest.importorskip("gradstack")
batching = pytest.importorskip("gradstack_autograd.derivatives.batching")

_DB = Path(__file__).resolve().parents[1] / "packages" / "graph-engine" / "tests"
_spec = importlib.util.spec_from_file_location("autograd_op_db", _DB / "autograd_op_db.py")
db = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("autograd_op_db", db)  # (its dataclasses look their module up)
_spec.loader.exec_module(db)

# gradstack's vmap raises where torch's computes: found by this test, not yet fixed (the
# in-place indexed writes into a batched ``self`` with an unbatched index)
KNOWN = {
    ("index_add_", "alpha -2"),
    ("index_add_", "repeat"),
    ("index_copy_", "rows 2, 0"),
    ("index_fill_", "number"),
    ("index_fill_", "0-d tensor"),
    ("scatter_", "scatter src"),
    ("scatter_", "scatter value"),
    ("scatter_add_", "scatter_add"),
    ("scatter_add_", "repeats"),
    *(
        (name + "_", f"{reduce} include_self={include_self}")
        for name, reduces in (
            ("scatter_reduce", ("sum", "prod", "mean", "amax", "amin")),
            ("index_reduce", ("prod", "mean", "amax", "amin")),
        )
        for reduce in reduces
        for include_self in (True, False)
    ),
}


def _cases():
    out = []
    for name, op in sorted(db.GRAD_OPS.items()):
        if name in batching.FALLBACK:
            continue
        for i, sample in enumerate(op.samples(np.random.default_rng(0))):
            marks = [pytest.mark.xfail(strict=True)] if (name, sample.desc) in KNOWN else []
            out.append(pytest.param(name, i, id=f"{name}-{i}-{sample.desc}", marks=marks))
    return out


def _outputs(r):
    r = r if isinstance(r, (tuple, list)) else (r,)
    return [o.detach().numpy() for o in r if hasattr(o, "shape")]


@pytest.mark.parametrize("name,index", _cases())
def test_vmap_matches_torch(name, index):
    draws = [db.GRAD_OPS[name].samples(np.random.default_rng(seed))[index] for seed in (0, 1, 2)]
    sample = draws[0]
    batch = [np.stack([d.inputs[j] for d in draws]) for j in range(len(sample.inputs))]
    torch_fn = sample.torch_fn or sample.fn
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = torch.func.vmap(lambda *xs: torch_fn(torch, *xs))(
                *[torch.from_numpy(a.copy()) for a in batch]
            )
    except (RuntimeError, AttributeError) as e:
        pytest.skip(f"torch's vmap refuses this call: {e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (an op run once per sample warns)
        got = gs.func.vmap(lambda *xs: sample.fn(gs, *xs))(
            *[gs.from_numpy(a.copy()) for a in batch]
        )
    got, want = _outputs(got), _outputs(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-9, equal_nan=True)
