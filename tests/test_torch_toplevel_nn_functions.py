"""torch's top-level nn functions (``torch.conv2d``, ``torch.dropout``, ``torch.embedding``,
``torch.batch_norm`` ...: the facade's _nn_functions.py), ``cdist``, ``pdist``,
``tril_indices`` and ``triu_indices`` against torch 2.13: values, float64 gradients,
errors.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(5)
X = R.standard_normal((2, 3, 6, 5))
W = R.standard_normal((4, 3, 3, 3))
A = R.standard_normal((7, 4))
B = R.standard_normal((30, 4))
A[3] = A[1]  # a zero distance: its gradient is 0
BATCH = R.standard_normal((2, 5, 4))


def _run(lib, fn, arrays):
    ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *ts)
    res = [out.detach().numpy()]
    if out.requires_grad:
        (
            out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
        ).sum().backward()
        res += [t.grad.numpy() for t in ts if t.requires_grad]
    return res


CASES = {
    "conv2d": (lambda L, x, w: L.conv2d(x, w, None, 1, 1), [X, W]),
    "conv1d": (lambda L, x, w: L.conv1d(x, w, padding=1), [X[:, :, 0], W[:, :, 0]]),
    "dropout eval": (lambda L, x: L.dropout(x, 0.3, False), [X]),
    "alpha_dropout eval": (lambda L, x: L.alpha_dropout(x, 0.3, False), [X]),
    "embedding": (lambda L, w: L.embedding(w, L.tensor([[0, 3], [2, 3]])), [A]),
    "embedding padding": (lambda L, w: L.embedding(w, L.tensor([0, 3, 3]), 3), [A]),
    "layer_norm": (
        lambda L, x, w: L.layer_norm(x, (5,), w, None, 1e-5, True),
        [X, A[0, :1].repeat(5)],
    ),
    "group_norm": (lambda L, x: L.group_norm(x, 3, None, None, 1e-5, True), [X]),
    "batch_norm": (
        lambda L, x: L.batch_norm(
            x,
            None,
            None,
            L.zeros(3, dtype=L.float64),
            L.ones(3, dtype=L.float64),
            True,
            0.1,
            1e-5,
            True,
        ),
        [X],
    ),
    "instance_norm": (
        lambda L, x: L.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, True),
        [X],
    ),
    "cosine_similarity": (lambda L, a, b: L.cosine_similarity(a, b[:7]), [A, B]),
    "pairwise_distance": (lambda L, a, b: L.pairwise_distance(a, b[:7]), [A, B]),
    "selu": (lambda L, x: L.selu(x), [X]),
    "celu": (lambda L, x: L.celu(x, 0.5), [X]),
    "threshold": (lambda L, x: L.threshold(x, 0.1, -2.0), [X]),
    "hardshrink": (lambda L, x: L.hardshrink(x, 0.3), [X]),
    "pixel_shuffle": (lambda L, x: L.pixel_shuffle(x[:, :, :4, :4].reshape(2, 12, 2, 2), 2), [X]),
    "cdist direct": (lambda L, a, b: L.cdist(a, b[:6]), [A, B]),
    "cdist by products": (lambda L, a, b: L.cdist(a, b), [A, B]),
    "cdist forced products": (
        lambda L, a, b: L.cdist(a, b[:3], compute_mode="use_mm_for_euclid_dist"),
        [A, B],
    ),
    "cdist p=1": (lambda L, a, b: L.cdist(a, b, p=1.0), [A, B]),
    "cdist p=3": (lambda L, a, b: L.cdist(a, b[:5], p=3.0), [A, B]),
    "cdist p=inf": (lambda L, a, b: L.cdist(a, b[:5], p=float("inf")), [A, B]),
    "cdist batched": (lambda L, a, b: L.cdist(a, b), [BATCH, BATCH[:1, :3]]),
    "pdist": (lambda L, a: L.pdist(a), [A]),
    "pdist p=1": (lambda L, a: L.nn.functional.pdist(a, 1.0), [A]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    fn, arrays = CASES[name]
    ours, theirs = _run(gs, fn, arrays), _run(torch, fn, arrays)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "args", [(3, 3), (3, 3, 1), (4, 2, -1), (2, 5, 3), (0, 3), (3, 3, -5), (1, 1)]
)
def test_triangle_indices_match_torch(args):
    for name in ("tril_indices", "triu_indices"):
        ours, theirs = getattr(gs, name)(*args), getattr(torch, name)(*args)
        assert ours.tolist() == theirs.tolist() and ours.dtype.name == "int64"
    assert gs.triu_indices(3, 3, dtype=gs.int32).dtype.name == "int32"


ERRORS = {
    "cdist 1-d": (lambda L: L.cdist(L.ones(3), L.ones(2, 3)), RuntimeError),
    "cdist columns": (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 4)), RuntimeError),
    "cdist negative p": (lambda L: L.cdist(L.ones(2, 3), L.ones(2, 3), p=-1.0), RuntimeError),
    "cdist ints": (lambda L: L.cdist(L.ones(2, 3, dtype=L.int64), L.ones(2, 3)), RuntimeError),
    "pdist 3-d": (lambda L: L.pdist(L.ones(2, 3, 4)), RuntimeError),
    "tril_indices negative row": (lambda L: L.tril_indices(-1, 3), RuntimeError),
    "triu_indices float": (lambda L: L.triu_indices(3.0, 3), TypeError),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    fn, error = ERRORS[name]
    messages = []
    for lib in (gs, torch):
        with pytest.raises(error) as info:
            fn(lib)
        messages.append(str(info.value))
    if error is RuntimeError:
        assert messages[0] == messages[1]
