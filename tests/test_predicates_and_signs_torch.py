"""The small torch names of elementwise_composites.py's last section (``copysign``,
``fmax``, ``fmin``, ``isposinf``, ``isneginf``, ``isreal``, ``absolute``, ``negative``,
``rot90``, ``is_floating_point``, ``is_complex``, ``can_cast``, ``result_type``) against
torch 2.13: values with their sign bits, dtypes, float64 gradients.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

R = np.random.default_rng(3)
A = R.standard_normal((3, 4))
A[0, 0], A[0, 1], A[2, 2] = 0.0, -0.0, np.inf
B = R.standard_normal((3, 4))
B[0, 2] = B[1, 1] = np.nan
B[2, 3], B[0, 0] = A[2, 3], -0.0
AN = A.copy()
AN[1, 1] = np.nan
SPECIAL = np.array([np.inf, -np.inf, 1.0, np.nan, -0.0])


def _run(lib, fn, arrays):
    ts = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(lib, *ts)
    res = [out.detach().numpy()]
    if out.requires_grad:
        out.sum().backward()
        res += [t.grad.numpy() if t.grad is not None else None for t in ts]
    return res


CASES = {
    "copysign tensor": (lambda L, x, y: L.copysign(x, y), [A, B]),
    "copysign number": (lambda L, x: L.copysign(x, -2.0), [A]),
    "copysign ints": (
        lambda L, x, y: L.copysign(x, y),
        [np.array([1, -2, 3]), np.array([-1.0, 2, -0.0])],
    ),
    "copysign broadcast": (lambda L, x, y: x.copysign(y), [A, B[:1]]),
    "fmax": (lambda L, x, y: L.fmax(x, y), [AN, B]),
    "fmin": (lambda L, x, y: x.fmin(y), [AN, B]),
    "fmax ints": (lambda L, x, y: L.fmax(x, y), [np.array([1, 5, 3]), np.array([2, 2, 2])]),
    "isposinf": (lambda L, x: L.isposinf(x), [SPECIAL]),
    "isneginf": (lambda L, x: x.isneginf(), [SPECIAL]),
    "isneginf ints": (lambda L, x: L.isneginf(x), [np.array([1, 2])]),
    "isreal": (lambda L, x: L.isreal(x), [AN]),
    "absolute": (lambda L, x: L.absolute(x), [A]),
    "negative": (lambda L, x: L.negative(x), [A]),
    "rot90": (lambda L, x: L.rot90(x, 3, (1, 0)), [A]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_signs_and_gradients_match_torch(name):
    fn, arrays = CASES[name]
    ours, theirs = _run(gs, fn, arrays), _run(torch, fn, arrays)
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        if o is None or t is None:
            assert o is None and t is None
            continue
        assert o.dtype == t.dtype and o.shape == t.shape
        mask = np.ones(t.shape, bool)
        if name.startswith("copysign") and i == 1:
            # the gradient at an inf or NaN input: 0 here, NaN in torch (documented)
            mask = np.isfinite(np.broadcast_to(arrays[0], t.shape))
        np.testing.assert_array_equal(o[mask], t[mask])
        np.testing.assert_array_equal(np.signbit(o[mask]), np.signbit(t[mask]))


def test_copysign_gradient_at_a_non_finite_input_is_zero():
    x = gs.tensor([np.inf, np.nan, 2.0], requires_grad=True)
    gs.copysign(x, -1.0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, -1.0]


def test_dtype_questions_match_torch():
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
    for a in names:
        for b in names:
            ours = gs.can_cast(getattr(gs, a), getattr(gs, b))
            assert ours == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)
    pairs = [
        (lambda L: L.tensor([1]), lambda L: 1.0),
        (lambda L: 2, lambda L: 3.0),
        (lambda L: L.tensor(1, dtype=L.int8), lambda L: L.tensor([1], dtype=L.uint8)),
        (lambda L: L.tensor([1.0], dtype=L.float16), lambda L: L.tensor(1.0, dtype=L.float64)),
    ]
    for x, y in pairs:
        assert (
            str(gs.result_type(x(gs), y(gs))).split(".")[1]
            == str(torch.result_type(x(torch), y(torch))).split(".")[1]
        )
    assert gs.is_floating_point(gs.ones(1)) and not gs.is_floating_point(gs.ones(1, dtype=gs.int64))
    assert not gs.is_complex(gs.ones(1))
    with pytest.raises(TypeError):
        gs.can_cast(gs.float32, "float64")
    with pytest.raises(TypeError):
        gs.is_floating_point(1.0)
