"""torch.gradient against torch 2.13: values (float32 to the bit, float64, integers) for
number, list and tensor spacings, dims, edge orders 1 and 2; gradients by gradcheck and
gradgradcheck in float64 and against torch's; torch's errors."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X3 = RNG.standard_normal((4, 5, 3))
COORDS = [np.cumsum(RNG.uniform(0.2, 1.5, n)) for n in (4, 5, 3)]


def _call(L, x, spacing, dim, edge_order, coords_dtype="float64"):
    if spacing == "coords":
        dims = range(x.ndim) if dim is None else ([dim] if isinstance(dim, int) else dim)
        spacing = [L.tensor(COORDS[d], dtype=getattr(L, coords_dtype)) for d in dims]
    kwargs = {"edge_order": edge_order}
    if spacing is not None:
        kwargs["spacing"] = spacing
    if dim is not None:
        kwargs["dim"] = dim
    return L.gradient(L.from_numpy(x), **kwargs)


CASES = [
    (None, None),
    (2.0, None),
    (3, 1),
    ([0.5, 2.0, 1.5], None),
    ([0.5, 2.0], [0, 2]),
    (None, [2, -3]),
    (None, -1),
    (0.5, [0, 1]),
    ("coords", None),
    ("coords", 1),
    ("coords", [0, 2]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_are_torchs(dtype, edge_order, case):
    spacing, dim = CASES[case]
    x = (X3 * 10).astype(dtype) if dtype == "int64" else X3.astype(dtype)
    coords_dtype = "float32" if dtype == "float32" else "float64"
    got = _call(gs, x, spacing, dim, edge_order, coords_dtype)
    want = _call(torch, x, spacing, dim, edge_order, coords_dtype)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, t in zip(got, want):
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        if dtype == "float32":
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-6, atol=1e-6)
        else:
            np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13, atol=1e-13)


def test_float32_number_spacing_is_bitwise():
    x = X3.astype(np.float32)
    for edge_order in (1, 2):
        for g, t in zip(
            gs.gradient(gs.from_numpy(x), spacing=0.3, edge_order=edge_order),
            torch.gradient(torch.from_numpy(x), spacing=0.3, edge_order=edge_order),
        ):
            np.testing.assert_array_equal(g.numpy(), t.numpy())


def test_non_contiguous_short_coordinates_and_zero_dim():
    x = X3.transpose(2, 0, 1)  # a non-contiguous view
    for g, t in zip(
        _call(gs, x, None, None, 2), _call(torch, np.ascontiguousarray(x), None, None, 2)
    ):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13)
    # a one-element coordinate difference broadcasts in torch's formula: torch's values
    short = np.array([0.0, 1.0, 3.0])
    f = X3[0]
    g = gs.gradient(gs.from_numpy(f), dim=1, spacing=[gs.from_numpy(short)])[0]
    t = torch.gradient(torch.from_numpy(f), dim=1, spacing=[torch.from_numpy(short)])[0]
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-13)
    assert gs.gradient(gs.tensor(1.0)) == ()


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", [None, 0.7, "coords"])
def test_gradcheck_and_gradients_against_torch(edge_order, spacing):
    x = X3[:, :, 0].copy()

    def f(L):
        def fn(t, c=None):
            sp = spacing if spacing != "coords" else [c]
            kwargs = {"edge_order": edge_order, "dim": 1}
            if sp is not None:
                kwargs["spacing"] = sp
            return L.gradient(t, **kwargs)[0]

        return fn

    a = gs.from_numpy(x).requires_grad_()
    c = gs.from_numpy(COORDS[1].copy()).requires_grad_()
    args = (a, c) if spacing == "coords" else (a,)
    assert gs.autograd.gradcheck(f(gs), args)
    assert gs.autograd.gradgradcheck(f(gs), args)
    w = np.linspace(-1, 2, x.size).reshape(x.shape)
    grads = []
    for L in (gs, torch):
        a = L.from_numpy(x.copy()).requires_grad_()
        c = L.from_numpy(COORDS[1].copy()).requires_grad_()
        args = (a, c) if spacing == "coords" else (a,)
        out = f(L)(*args)
        grads.append([g.numpy() for g in L.autograd.grad((out * L.from_numpy(w)).sum(), args)])
    for g, t in zip(*grads):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    return None


X = np.arange(12.0).reshape(3, 4)
ERRORS = {
    "spacing length": lambda L: L.gradient(L.from_numpy(X), spacing=[2.0]),
    "spacing and dim": lambda L: L.gradient(L.from_numpy(X), dim=(0, 1), spacing=[1.0]),
    "tensor spacing": lambda L: L.gradient(L.from_numpy(X), dim=1, spacing=L.tensor([1.0])),
    "0-d coordinates": lambda L: L.gradient(L.from_numpy(X), dim=1, spacing=[L.tensor(2.0)]),
    "2-d coordinates": lambda L: L.gradient(
        L.from_numpy(X), dim=1, spacing=[L.tensor([[0.0, 1, 3, 7]])]
    ),
    "edge order": lambda L: L.gradient(L.from_numpy(X), edge_order=3),
    "too short": lambda L: L.gradient(L.from_numpy(X[:2]), edge_order=2),
    "uint8": lambda L: L.gradient(L.from_numpy(X).to(L.uint8)),
    "dim range": lambda L: L.gradient(L.from_numpy(X), dim=2),
    "dim repeated": lambda L: L.gradient(L.from_numpy(X), dim=[1, 1]),
    "spacing str": lambda L: L.gradient(L.from_numpy(X), spacing="a"),
    "dim float": lambda L: L.gradient(L.from_numpy(X), dim=1.5),
    "list input": lambda L: L.gradient([1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_torchs(name):
    got, want = _error(lambda: ERRORS[name](gs)), _error(lambda: ERRORS[name](torch))
    assert want is not None
    assert got is not None and got[0] is want[0], (got, want)
    if want[0] is not TypeError:
        assert got[1] == want[1]
