"""jacobian, hessian, vjp, jvp, vhp, hvp: numbers against analytic results, every option
and nesting, float32 and float64, and the validation of every argument."""

from __future__ import annotations

import math

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional import forward_ad, functional, hessian, hvp, jacobian, jvp, vhp, vjp

DTYPES = [gt.float32, gt.float64]
TOL = {gt.float32: dict(rtol=1e-5, atol=1e-6), gt.float64: dict(rtol=1e-12, atol=1e-13)}
JACOBIAN_MODES = [
    dict(),
    dict(vectorize=True),
    dict(vectorize=True, strategy="forward-mode"),
]
HESSIAN_MODES = [
    dict(),
    dict(vectorize=True),
    dict(vectorize=True, outer_jacobian_strategy="forward-mode"),
]


def _np(t):
    return t.detach().numpy()


def _close(got, want, dtype=gt.float64):
    np.testing.assert_allclose(_np(got), want, **TOL[dtype])


def _t(a, dtype=gt.float64, requires_grad=False):
    return gt.tensor(np.asarray(a).tolist(), dtype=dtype, requires_grad=requires_grad)


# -------------------------------------------------------------------------------------
# the tutorial's examples


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


@pytest.mark.parametrize("mode", JACOBIAN_MODES, ids=["default", "vectorize", "forward"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("n", [1, 3])
def test_exp_adder_jacobian(n, dtype, mode):
    rng = np.random.default_rng(n)
    xn, yn = rng.random(n), rng.random(n)
    jx, jy = jacobian(exp_adder, (_t(xn, dtype), _t(yn, dtype)), **mode)
    assert tuple(jx.shape) == (n, n) and tuple(jy.shape) == (n, n)
    assert jx.dtype == dtype and jy.dtype == dtype
    _close(jx, np.diag(2 * np.exp(xn.astype(dtype.numpy))), dtype)
    _close(jy, 3 * np.eye(n), dtype)


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_do_some_doubling_vjp(dtype):
    xn = np.array([0.3, -1.2, 0.8])
    factor = 2
    while np.linalg.norm(xn * factor) < 1000:
        factor *= 2
    v = _t([0.1, 1.0, 0.0001], dtype)
    out, g = vjp(do_some_doubling, _t(xn, dtype), v=v)
    _close(out, xn * factor, dtype)
    _close(g, np.array([0.1, 1.0, 0.0001]) * factor, dtype)
    assert g.dtype == dtype and not g.requires_grad


def sin_cos_cube(x):
    return (x.sin() * x.cos()).sum() + (x**3).sum()


@pytest.mark.parametrize("mode", HESSIAN_MODES, ids=["default", "vectorize", "forward"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_hessian_of_sin_cos_plus_cube(dtype, mode):
    xn = np.linspace(-1.5, 1.5, 7)
    h = hessian(sin_cos_cube, _t(xn, dtype), **mode)
    assert tuple(h.shape) == (7, 7) and h.dtype == dtype
    # d2/dx2 [sin x cos x + x^3] = -2 sin 2x + 6x, and nothing off the diagonal
    _close(h, np.diag(-2 * np.sin(2 * xn) + 6 * xn), dtype)


@pytest.mark.parametrize("mode", HESSIAN_MODES, ids=["default", "vectorize", "forward"])
def test_hessian_of_polynomials_in_two_inputs(mode):
    xn, yn = np.array([1.0, -2.0, 0.5]), np.array([3.0, 0.25, -1.0])

    def f(x, y):  # sum x^2 y + y^3 + x0 x1
        return (x**2 * y).sum() + (y**3).sum() + x[0] * x[1]

    (hxx, hxy), (hyx, hyy) = hessian(f, (_t(xn), _t(yn)), **mode)
    pair = np.zeros((3, 3))
    pair[0, 1] = pair[1, 0] = 1.0
    _close(hxx, np.diag(2 * yn) + pair)
    _close(hxy, np.diag(2 * xn))
    _close(hyx, np.diag(2 * xn))
    _close(hyy, np.diag(6 * yn))


def test_hessian_of_a_matrix_polynomial():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    xn = np.array([[0.5, -1.0], [2.0, 0.25]])

    def f(x):  # sum (x A)^2 + sum x^4
        return ((x @ _t(a)) ** 2).sum() + (x**4).sum()

    h = hessian(f, _t(xn))
    assert tuple(h.shape) == (2, 2, 2, 2)
    want = np.zeros((2, 2, 2, 2))
    for i in range(2):
        # d2/dx_ij dx_ik of sum_l (sum_m x_im A_ml)^2 = 2 (A A^T)_jk, within the same row i
        want[i, :, i, :] += 2 * a @ a.T
        for j in range(2):
            want[i, j, i, j] += 12 * xn[i, j] ** 2
    _close(h, want)


# -------------------------------------------------------------------------------------
# products against the full matrices


def _matrix_function(x, y):
    return (x.sin() * y).sum() * x + y.exp().sum() * 0.5 * (x**2)


def _scalar_function(x, y):
    return ((x * y.tanh()) ** 2).sum() + (x.exp() * y).sum() + (y**3).sum()


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_jvp_and_vjp_are_products_with_the_jacobian(dtype):
    rng = np.random.default_rng(1)
    x, y = _t(rng.standard_normal(4), dtype), _t(rng.standard_normal(4), dtype)
    vx, vy = _t(rng.standard_normal(4), dtype), _t(rng.standard_normal(4), dtype)
    u = _t(rng.standard_normal(4), dtype)
    jx, jy = jacobian(_matrix_function, (x, y))
    out, t = jvp(_matrix_function, (x, y), (vx, vy))
    _close(out, _np(_matrix_function(x, y)), dtype)
    _close(t, _np(jx) @ _np(vx) + _np(jy) @ _np(vy), dtype)
    out, (gx, gy) = vjp(_matrix_function, (x, y), u)
    _close(gx, _np(u) @ _np(jx), dtype)
    _close(gy, _np(u) @ _np(jy), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_hvp_and_vhp_are_products_with_the_hessian(dtype):
    rng = np.random.default_rng(2)
    x, y = _t(rng.standard_normal(3), dtype), _t(rng.standard_normal(3), dtype)
    vx, vy = _t(rng.standard_normal(3), dtype), _t(rng.standard_normal(3), dtype)
    (hxx, hxy), (hyx, hyy) = hessian(_scalar_function, (x, y))
    full = np.block([[_np(hxx), _np(hxy)], [_np(hyx), _np(hyy)]])
    v = np.concatenate([_np(vx), _np(vy)])
    out, (rx, ry) = hvp(_scalar_function, (x, y), (vx, vy))
    _close(out, _np(_scalar_function(x, y)), dtype)
    np.testing.assert_allclose(np.concatenate([_np(rx), _np(ry)]), full @ v, **TOL[dtype])
    out, (rx, ry) = vhp(_scalar_function, (x, y), (vx, vy))
    np.testing.assert_allclose(np.concatenate([_np(rx), _np(ry)]), v @ full, **TOL[dtype])


@pytest.mark.parametrize("min_elements", [0, 1 << 16], ids=["transposed", "rows"])
def test_forward_and_reverse_jacobians_agree_on_a_tall_function(monkeypatch, min_elements):
    monkeypatch.setattr(functional, "_TALL_MIN_ELEMENTS", min_elements)
    x = _t(np.linspace(0.1, 1.0, 3))

    def tall(x):  # 3 inputs -> 3 x 4 x 2 outputs
        return (x.unsqueeze(-1) * _t(np.arange(8.0).reshape(1, 8))).sin().reshape(3, 4, 2)

    rev = jacobian(tall, x)
    fwd = jacobian(tall, x, vectorize=True, strategy="forward-mode")
    assert tuple(rev.shape) == tuple(fwd.shape) == (3, 4, 2, 3)
    _close(fwd, _np(rev))


# -------------------------------------------------------------------------------------
# nesting of inputs and outputs


def _f(n_in, n_out):
    def f(*xs):
        s = sum((x**2).sum() for x in xs)
        outs = tuple((s * (k + 1)) * xs[0].sin() for k in range(n_out))
        return outs if n_out != 1 else outs[0]

    return f


def _tuple_f(n_in):
    def f(*xs):
        return (_f(n_in, 1)(*xs),)

    return f


INPUT_SHAPES = [(2,), (2, 3)]


@pytest.mark.parametrize("in_tuple", [False, True], ids=["tensor_in", "tuple_in"])
@pytest.mark.parametrize("out_kind", ["tensor", "tuple1", "tuple2"])
@pytest.mark.parametrize("mode", JACOBIAN_MODES, ids=["default", "vectorize", "forward"])
def test_jacobian_nesting(in_tuple, out_kind, mode):
    xs = tuple(_t(np.linspace(0.1, 0.9, math.prod(s)).reshape(s)) for s in INPUT_SHAPES)
    inputs = xs if in_tuple else xs[0]
    n_in = len(xs) if in_tuple else 1
    f = {"tensor": _f(n_in, 1), "tuple1": _tuple_f(n_in), "tuple2": _f(n_in, 2)}[out_kind]
    outs = f(*(xs if in_tuple else (xs[0],)))
    outs = outs if isinstance(outs, tuple) else (outs,)
    jac = jacobian(f, inputs, **mode)
    if out_kind == "tensor" and not in_tuple:
        assert isinstance(jac, gt.Tensor)
        assert tuple(jac.shape) == tuple(outs[0].shape) + INPUT_SHAPES[0]
        return
    if out_kind == "tensor":
        rows = (jac,)
    else:
        assert isinstance(jac, tuple) and len(jac) == len(outs)
        rows = jac
    for i, row in enumerate(rows):
        row = row if in_tuple else (row,)
        assert isinstance(row, tuple) and len(row) == n_in
        for j, block in enumerate(row):
            assert isinstance(block, gt.Tensor)
            assert tuple(block.shape) == tuple(outs[i].shape) + INPUT_SHAPES[j]


@pytest.mark.parametrize("in_tuple", [False, True], ids=["tensor_in", "tuple_in"])
def test_hessian_nesting(in_tuple):
    xs = tuple(_t(np.linspace(0.1, 0.9, math.prod(s)).reshape(s)) for s in INPUT_SHAPES)

    def f(*inp):
        return sum(((x**3).sum() for x in inp), inp[0].sum() * 0)

    h = hessian(f, xs if in_tuple else xs[0])
    if not in_tuple:
        assert isinstance(h, gt.Tensor) and tuple(h.shape) == INPUT_SHAPES[0] * 2
        return
    assert isinstance(h, tuple) and all(isinstance(r, tuple) and len(r) == 2 for r in h)
    for i in range(2):
        for j in range(2):
            assert tuple(h[i][j].shape) == INPUT_SHAPES[i] + INPUT_SHAPES[j]


@pytest.mark.parametrize("in_tuple", [False, True], ids=["tensor_in", "tuple_in"])
@pytest.mark.parametrize("out_kind", ["tensor", "tuple1", "tuple2"])
def test_vjp_and_jvp_nesting(in_tuple, out_kind):
    xs = tuple(_t(np.linspace(0.1, 0.9, math.prod(s)).reshape(s)) for s in INPUT_SHAPES)
    inputs = xs if in_tuple else xs[0]
    n_in = len(xs) if in_tuple else 1
    f = {"tensor": _f(n_in, 1), "tuple1": _tuple_f(n_in), "tuple2": _f(n_in, 2)}[out_kind]
    outs = f(*(xs if in_tuple else (xs[0],)))
    v_out = tuple(gt.ones_like(o) for o in outs) if isinstance(outs, tuple) else gt.ones_like(outs)
    v_in = tuple(gt.ones_like(x) for x in xs) if in_tuple else gt.ones_like(xs[0])
    out, g = vjp(f, inputs, v_out)
    assert type(out) is type(outs) and type(g) is type(inputs)
    out, t = jvp(f, inputs, v_in)
    assert type(out) is type(outs) and type(t) is type(outs)
    if isinstance(outs, tuple):
        assert all(tuple(a.shape) == tuple(b.shape) for a, b in zip(t, outs))


@pytest.mark.parametrize("fn", [vhp, hvp], ids=["vhp", "hvp"])
@pytest.mark.parametrize("in_tuple", [False, True], ids=["tensor_in", "tuple_in"])
def test_vhp_hvp_nesting(fn, in_tuple):
    xs = tuple(_t(np.linspace(0.1, 0.9, math.prod(s)).reshape(s)) for s in INPUT_SHAPES)

    def f(*inp):
        return sum(((x**3).sum() for x in inp), inp[0].sum() * 0)

    v = tuple(gt.ones_like(x) for x in xs) if in_tuple else gt.ones_like(xs[0])
    out, r = fn(f, xs if in_tuple else xs[0], v)
    assert isinstance(out, gt.Tensor) and out.numel() == 1
    if in_tuple:
        assert isinstance(r, tuple) and len(r) == 2
        for x, ri in zip(xs, r):
            _close(ri, 6 * _np(x))
    else:
        _close(r, 6 * _np(xs[0]))


def test_v_may_be_omitted_for_single_elements():
    out, g = vjp(lambda x: (x**2).sum(), _t([3.0, 1.0]))
    assert g.tolist() == [6.0, 2.0]
    _, t = jvp(lambda x: x**2, _t([3.0]))
    assert t.tolist() == [6.0]
    assert hvp(lambda x: (x**3).sum(), _t([2.0]))[1].tolist() == [12.0]
    assert vhp(lambda x: (x**3).sum(), _t([2.0]))[1].tolist() == [12.0]


# -------------------------------------------------------------------------------------
# create_graph


@pytest.mark.parametrize("mode", JACOBIAN_MODES, ids=["default", "vectorize", "forward"])
def test_jacobian_create_graph_differentiates_again(mode):
    x = _t([0.5, 2.0], requires_grad=True)
    j = jacobian(lambda x: x**3, x, create_graph=True, **mode)  # diag(3 x^2)
    assert j.requires_grad
    (g,) = ag.grad(j.sum(), x)
    assert g.tolist() == [3.0, 12.0]  # 6 x
    assert not jacobian(lambda x: x**3, x, **mode).requires_grad


@pytest.mark.parametrize("mode", HESSIAN_MODES, ids=["default", "vectorize", "forward"])
def test_hessian_create_graph_gives_third_derivatives(mode):
    x = _t([0.5, 2.0], requires_grad=True)
    h = hessian(lambda x: (x**4).sum(), x, create_graph=True, **mode)  # diag(12 x^2)
    assert h.requires_grad
    (g,) = ag.grad(h.sum(), x)
    np.testing.assert_allclose(g.numpy(), [12.0, 48.0])  # 24 x


@pytest.mark.parametrize("fn", [vjp, jvp, vhp, hvp], ids=["vjp", "jvp", "vhp", "hvp"])
def test_products_create_graph(fn):
    x = _t([0.5, 2.0], requires_grad=True)
    v = _t([1.0, -1.0])
    f = (lambda x: (x**4).sum()) if fn in (vhp, hvp) else (lambda x: x**4)
    out, r = fn(f, x, v, create_graph=True)
    assert out.requires_grad and r.requires_grad
    (g,) = ag.grad(r.sum(), x)
    if fn in (vhp, hvp):
        np.testing.assert_allclose(g.numpy(), [24 * 0.5, -24 * 2.0])  # d/dx 12 x^2 v
    else:
        np.testing.assert_allclose(g.numpy(), [12 * 0.25, -12 * 4.0])  # d/dx 4 x^3 v
    out, r = fn(f, x, v)
    assert not out.requires_grad and not r.requires_grad


def test_create_graph_keeps_the_callers_graph():
    w = _t([1.0, 2.0], requires_grad=True)
    x = w * 3  # a non-leaf input
    j = jacobian(lambda x: x**2, x, create_graph=True)
    (g,) = ag.grad(j.sum(), w)
    assert g.tolist() == [6.0, 6.0]  # d/dw sum 2 (3 w) = 6


# -------------------------------------------------------------------------------------
# strict


def test_strict_jacobian_names_the_independent_pair():
    def f(x, y):
        return x * 2, (x * y).sum()

    x, y = _t([1.0, 2.0]), _t([3.0, 4.0])
    with pytest.raises(
        RuntimeError, match="Output 0 of the user-provided function is independent of input 1"
    ):
        jacobian(f, (x, y), strict=True)
    (jxx, jxy), (jyx, jyy) = jacobian(f, (x, y))
    assert jxy.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert jyy.tolist() == [1.0, 2.0]


def test_strict_rejects_outputs_that_do_not_require_grad():
    with pytest.raises(
        RuntimeError, match="Output 1 of the user-provided function does not require gradients"
    ):
        jacobian(lambda x: (x * 2, gt.ones(2)), _t([1.0, 2.0]), strict=True)
    (j0, j1) = jacobian(lambda x: (x * 2, gt.ones(2)), _t([1.0, 2.0]))
    assert j1.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_strict_with_create_graph_rejects_linear_functions():
    with pytest.raises(
        RuntimeError,
        match="jacobian of output 0 with respect to input 0 does not depend on the inputs",
    ):
        jacobian(lambda x: x * 2, _t([1.0, 2.0]), strict=True, create_graph=True)


def test_strict_hessian():
    with pytest.raises(
        RuntimeError,
        match="jacobian of the user-provided function with "
        "respect to input 0 is independent of the input",
    ):
        hessian(lambda x: (x * 2).sum(), _t([1.0, 2.0]), strict=True)

    def f(x, y):
        return (x**2).sum() + (y**2).sum()

    with pytest.raises(RuntimeError, match=r"hessian block \[0\]\[1\] is zero"):
        hessian(f, (_t([1.0]), _t([2.0])), strict=True)
    (_, h01), _ = hessian(f, (_t([1.0]), _t([2.0])))
    assert h01.tolist() == [[0.0]]


def test_strict_products():
    def f(x, y):
        return x * 2

    x, y = _t([1.0, 2.0]), _t([3.0, 4.0])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        vjp(f, (x, y), gt.ones(2), strict=True)
    assert vjp(f, (x, y), gt.ones(2))[1][1].tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jvp(f, (x, y), (gt.ones(2), gt.ones(2)), strict=True)
    c = _t([1.0, 1.0], requires_grad=True)
    with pytest.raises(
        RuntimeError, match="Output 1 of the user-provided function is independent of the inputs"
    ):
        jvp(lambda x: (x * 2, c * 3), x, gt.ones(2), strict=True)

    def g(x, y):
        return (x**3).sum()

    with pytest.raises(RuntimeError, match="independent of input 1"):
        vhp(g, (x, y), (gt.ones(2), gt.ones(2)), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        hvp(g, (x, y), (gt.ones(2), gt.ones(2)), strict=True)
    assert hvp(g, (x, y), (gt.ones(2), gt.ones(2)))[1][1].tolist() == [0.0, 0.0]


# -------------------------------------------------------------------------------------
# validation: every argument, before any work


def _never_called(*args):
    raise AssertionError("func ran although an argument was invalid")


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda: jacobian(42, _t([1.0])), TypeError, "func must be a callable"),
        (lambda: jacobian(_never_called, [_t([1.0])]), TypeError, "pass a tuple, not a list"),
        (
            lambda: jacobian(_never_called, (_t([1.0]), 3.0)),
            TypeError,
            "inputs given to jacobian must be either a Tensor or a tuple of Tensors but the value "
            "at index 1 has type float",
        ),
        (
            lambda: jacobian(_never_called, gt.tensor([1, 2])),
            TypeError,
            r"jacobian\(\): inputs has dtype gradstack.int64",
        ),
        (
            lambda: hessian(_never_called, (_t([1.0]), gt.tensor([1]))),
            TypeError,
            r"inputs\[1\] has dtype gradstack.int64",
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), create_graph=1),
            TypeError,
            "create_graph must be True or False",
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), strict="yes"),
            TypeError,
            "strict must be True or False",
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), strategy="sideways"),
            ValueError,
            'strategy must be "forward-mode" or "reverse-mode"',
        ),
        (
            lambda: hessian(_never_called, _t([1.0]), outer_jacobian_strategy="x"),
            ValueError,
            "outer_jacobian_strategy must be",
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), strict=True, vectorize=True),
            RuntimeError,
            "strict=True and vectorize=True are not supported together",
        ),
        (
            lambda: hessian(_never_called, _t([1.0]), strict=True, vectorize=True),
            RuntimeError,
            "strict=True and vectorize=True are not supported together",
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), strategy="forward-mode"),
            NotImplementedError,
            'strategy="forward-mode" requires vectorize=True',
        ),
        (
            lambda: hessian(_never_called, _t([1.0]), outer_jacobian_strategy="forward-mode"),
            NotImplementedError,
            'outer_jacobian_strategy="forward-mode" requires vectorize=True',
        ),
        (
            lambda: jacobian(_never_called, _t([1.0]), strict=True, strategy="forward-mode"),
            NotImplementedError,
            "requires vectorize=True",
        ),
        (
            lambda: jvp(_never_called, _t([1.0, 2.0])),
            RuntimeError,
            "v can only be None if the input to the user-provided function is a single Tensor "
            "with a single element",
        ),
        (
            lambda: jvp(_never_called, _t([1.0, 2.0]), _t([1.0])),
            RuntimeError,
            r"v has invalid size: should be \[2\]",
        ),
        (
            lambda: jvp(_never_called, (_t([1.0]), _t([2.0])), (_t([1.0]),)),
            RuntimeError,
            "v is a tuple of invalid length: should be 2",
        ),
        (
            lambda: hvp(_never_called, (_t([1.0]), _t([2.0])), (_t([1.0]), _t([1.0, 2.0]))),
            RuntimeError,
            r"Entry 1 in v has invalid size: should be \[1\]",
        ),
        (
            lambda: vhp(_never_called, _t([1.0]), gt.tensor([1])),
            TypeError,
            "v must be floating point",
        ),
        (lambda: vjp(_never_called, _t([1.0]), [1.0]), TypeError, "The v given to vjp"),
    ],
)
def test_arguments_are_validated_before_running_func(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize(
    "call,match",
    [
        (
            lambda: vjp(lambda x: x * 2, _t([1.0, 2.0])),
            "v can only be None if the "
            "user-provided function returns a single Tensor with a single element",
        ),
        (lambda: vjp(lambda x: x * 2, _t([1.0, 2.0]), _t([1.0])), r"v has invalid size"),
        (
            lambda: vjp(lambda x: (x, x), _t([1.0, 2.0]), _t([1.0, 1.0])),
            "should contain a single|tuple of invalid length|single Tensor",
        ),
        (lambda: hessian(lambda x: x * 2, _t([1.0, 2.0])), "should contain a single element"),
        (lambda: hessian(lambda x: (x.sum(),), _t([1.0, 2.0])), "should return a single Tensor"),
        (lambda: vhp(lambda x: x, _t([1.0, 2.0]), _t([1.0, 1.0])), "single element"),
        (
            lambda: jacobian(lambda x: [x], _t([1.0])),
            "outputs of the user-provided function "
            "given to jacobian must be either a Tensor or a tuple of Tensors",
        ),
    ],
)
def test_output_checks(call, match):
    with pytest.raises((RuntimeError, TypeError), match=match):
        call()


# -------------------------------------------------------------------------------------
# paths: chunks, row-by-row fallback, edge cases


def test_chunked_rows_give_the_same_jacobian(monkeypatch):
    x = _t(np.linspace(-1, 1, 6).reshape(2, 3))
    f = _matrix_function
    y = _t(np.linspace(0.5, 1.5, 6).reshape(2, 3))
    whole = jacobian(f, (x, y))
    monkeypatch.setattr(functional, "_MAX_BATCH_ELEMENTS", 40)  # 40 // 18 = 2 rows
    chunked = jacobian(f, (x, y))
    for a, b in zip(whole, chunked):
        _close(b, _np(a))
    chunked_h = hessian(_scalar_function, (x, y))
    monkeypatch.setattr(functional, "_MAX_BATCH_ELEMENTS", 1 << 22)
    for ra, rb in zip(hessian(_scalar_function, (x, y)), chunked_h):
        for a, b in zip(ra, rb):
            _close(b, _np(a))


class _Cube(ag.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x**2


def test_custom_function_runs_row_by_row_with_the_same_result():
    x = _t([0.5, 1.0, 2.0])
    j = jacobian(lambda x: _Cube.apply(x).sin(), x)
    xn = np.array([0.5, 1.0, 2.0])
    _close(j, np.diag(np.cos(xn**3) * 3 * xn**2))


def test_identity_and_constant_functions():
    x = _t([1.0, 2.0])
    assert jacobian(lambda x: x, x).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert jacobian(lambda x: x, x, vectorize=True, strategy="forward-mode").tolist() == [
        [1.0, 0.0],
        [0.0, 1.0],
    ]
    assert jacobian(lambda x: gt.zeros(3), x).tolist() == [[0.0, 0.0]] * 3
    assert hessian(lambda x: x.sum(), x).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_zero_element_output_and_input():
    x = _t([1.0, 2.0])
    j = jacobian(lambda x: x[:0] * 2, x)
    assert tuple(j.shape) == (0, 2)
    jx, je = jacobian(lambda x, e: x * 2, (x, gt.zeros(0, dtype=gt.float64)))
    assert tuple(je.shape) == (2, 0) and jx.tolist() == [[2.0, 0.0], [0.0, 2.0]]


def test_inputs_are_not_modified_and_not_attached():
    x = _t([1.0, 2.0])
    jacobian(lambda x: x**2, x)
    hvp(lambda x: (x**3).sum(), x, gt.ones(2, dtype=gt.float64))
    assert not x.requires_grad and x.grad_fn is None and x.tolist() == [1.0, 2.0]
    assert forward_ad.unpack_dual(x).tangent is None


def test_works_under_no_grad():
    with ag.no_grad():
        j = jacobian(lambda x: x**2, _t([1.0, 3.0]))
        h = hessian(lambda x: (x**3).sum(), _t([1.0]))
    assert j.tolist() == [[2.0, 0.0], [0.0, 6.0]] and h.tolist() == [[6.0]]
    assert ag.is_grad_enabled()


def test_functions_with_other_arguments_through_a_lambda():
    const = _t([1.0, 10.0])

    def f(x, c, scale=1.0):
        return x * c * scale

    j = jacobian(lambda x: f(x, const, scale=2.0), _t([3.0, 4.0]))
    assert j.tolist() == [[2.0, 0.0], [0.0, 20.0]]


# -------------------------------------------------------------------------------------
# tall jacobians: the transposed pass (Note [Tall jacobians by the transposed pass])


def _tall(x, y, e):
    w = _t(np.linspace(-1.0, 1.0, 2 * 24).reshape(2, 24), dtype=x.dtype)
    a = (x @ w).tanh()  # depends on x only
    b = (y.sum() * a + x[0] * y[1]).reshape(4, 6)  # on both
    return a, b, gt.ones(5, dtype=x.dtype), e * 0.0 + (x**2).sum()


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
def test_tall_jacobian_equals_the_row_by_row_one(monkeypatch, dtype, create_graph):
    x = _t([0.3, -0.7], dtype, requires_grad=create_graph)
    y = _t([1.5, 0.5], dtype, requires_grad=create_graph)
    e = _t([2.0], dtype)
    monkeypatch.setattr(functional, "_TALL_MIN_ELEMENTS", 0)  # the transposed pass
    transposed = jacobian(_tall, (x, y, e), create_graph=create_graph)
    monkeypatch.setattr(functional, "_TALL_FACTOR", 10**9)  # one row per output
    plain = jacobian(_tall, (x, y, e), create_graph=create_graph)
    for row_t, row_p in zip(transposed, plain):
        for a, b in zip(row_t, row_p):
            assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
            _close(a, _np(b), dtype)
    assert transposed[0][1].tolist() == [[0.0, 0.0]] * 24  # a is independent of y
    if create_graph:
        (g1,) = ag.grad(
            sum(b.sum() for row in transposed for b in row if b.requires_grad), x, allow_unused=True
        )
        (g2,) = ag.grad(
            sum(b.sum() for row in plain for b in row if b.requires_grad), x, allow_unused=True
        )
        _close(g1, _np(g2), dtype)


def test_tall_jacobian_with_a_custom_function_takes_the_rows(monkeypatch):
    monkeypatch.setattr(functional, "_TALL_MIN_ELEMENTS", 0)
    x = _t([0.5, 1.0])
    w = _t(np.linspace(-1.0, 1.0, 20).reshape(2, 10))
    j = jacobian(lambda x: _Cube.apply(x) @ w, x)
    np.testing.assert_allclose(_np(j), (3 * np.array([0.5, 1.0]) ** 2)[None, :] * _np(w).T)


@pytest.mark.parametrize("mode", HESSIAN_MODES, ids=["default", "vectorize", "forward"])
def test_hessian_through_an_inplace_op_on_a_view(mode):
    def f(x):  # x0^3 + (x0 x1)^3 + (x1 x2)^3
        y = x * 1.0
        y[1:].mul_(x[:2])
        return (y**3).sum()

    a, b, c = 0.5, 1.0, 2.0
    want = np.array(
        [
            [6 * a + 6 * a * b**3, 9 * a**2 * b**2, 0.0],
            [9 * a**2 * b**2, 6 * a**3 * b + 6 * b * c**3, 9 * b**2 * c**2],
            [0.0, 9 * b**2 * c**2, 6 * b**3 * c],
        ]
    )
    x, v = _t([a, b, c]), _t([1.0, -1.0, 0.5])
    _close(hessian(f, x, **mode), want)
    _close(hvp(f, x, v)[1], want @ _np(v))
    _close(vhp(f, x, v)[1], _np(v) @ want)


def test_hessian_through_relu_has_no_nan():
    # issue 11: relu's gradient masks with where, so the Hessian has no 0 * inf = NaN
    import gradstack_tensor as gt
    from gradstack_functional import hessian

    h = hessian(lambda t: t.relu().pow(3).sum(), gt.tensor([-1.0, 2.0], dtype=gt.float64))
    assert h.tolist() == [[0.0, 0.0], [0.0, 12.0]]
