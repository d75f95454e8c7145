"""The differentiation transforms of ``gradstack_functional.func`` against ``torch.func``.

Scalar and vector functions are written once for a library namespace ``L`` and
transformed by both libraries with the same arguments (argnums, has_aux, chunk_size);
values are compared in float64, alone and composed (``vmap(grad)``, ``jacrev(jacfwd)``,
``jacrev(jacrev)``, ``vmap(hessian)``, ``grad(grad)`` ...), and against finite differences.
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional.func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch = pytest.importorskip("torch")
import torch.func as tf  # noqa: E402
from gradstack_functional_tests_func_compare import both, close, same_error  # noqa: E402

# torch.func scripts helpers with the deprecated torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

RNG = np.random.default_rng(99)


# scalar functions of x: (3,), w: (3,)
SCALAR = [
    ("poly", lambda L, x, w: (x**3 * w + x * w * w).sum()),
    ("trig", lambda L, x, w: (x.sin() * w.cos()).sum() + x.tanh().prod()),
    ("softmax", lambda L, x, w: (x.softmax(0) * w).sum()),
    ("logsumexp", lambda L, x, w: (x * w).logsumexp(0) + x.norm()),
    ("matmul", lambda L, x, w: L.outer(x, w).exp().sum() / (1 + (x @ w) ** 2)),
    ("sigmoid", lambda L, x, w: (x.sigmoid() * (w * x).sigmoid()).mean()),
]
# vector functions: (3,), (3,) -> (2,)
VECTOR = [
    ("lin", lambda L, x, w: L.stack([(x * w).sum(), (x.sin() * w).sum()])),
    ("slice", lambda L, x, w: (x[:2] * w[1:]).exp()),
    ("mix", lambda L, x, w: L.stack([x.norm() * w[0], (x * w).tanh().sum()])),
]


def _pair():
    return both(RNG.standard_normal(3)), both(RNG.standard_normal(3))


@pytest.mark.parametrize("name,fn", SCALAR, ids=[f[0] for f in SCALAR])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_grad_and_value(name, fn, argnums):
    (xg, xt), (wg, wt) = _pair()
    close(
        grad(lambda x, w: fn(gt, x, w), argnums)(xg, wg),
        tf.grad(lambda x, w: fn(torch, x, w), argnums)(xt, wt),
    )
    g_o, v_o = grad_and_value(lambda x, w: fn(gt, x, w), argnums)(xg, wg)
    g_t, v_t = tf.grad_and_value(lambda x, w: fn(torch, x, w), argnums)(xt, wt)
    close(g_o, g_t)
    close(v_o, v_t)
    assert not v_o.requires_grad and not any(t.requires_grad for t in gt_leaves(g_o))


def gt_leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


def test_grad_has_aux_and_pytree_argument():
    (xg, xt), (wg, wt) = _pair()

    def f(L):
        def g(p, x):
            y = (p["a"] * x).sin().sum() + (p["b"][0] * x).sum() ** 2
            return y, {"y": y * 2, "n": [y.cos()]}

        return g

    pg, pt = {"a": wg, "b": [xg]}, {"a": wt, "b": [xt]}
    g_o, aux_o = grad(f(gt), has_aux=True)(pg, xg)
    g_t, aux_t = tf.grad(f(torch), has_aux=True)(pt, xt)
    close(g_o, g_t)
    close(aux_o["y"], aux_t["y"])
    close(aux_o["n"], aux_t["n"])
    _same_error(
        lambda: grad(lambda x: (x.sum(), 3), has_aux=True)(xg),
        lambda: tf.grad(lambda x: (x.sum(), 3), has_aux=True)(xt),
    )
    (g_o, (v_o, _)) = grad_and_value(f(gt), has_aux=True)(pg, xg)
    close(v_o, f(torch)(pt, xt)[0])


def test_grad_matches_finite_differences():
    x = np.array([0.3, -0.7, 1.1])
    f = SCALAR[1][1]
    w = gt.tensor([0.2, 0.5, -0.4], dtype=gt.float64)
    g = np.asarray(grad(lambda x: f(gt, x, w))(gt.tensor(x)).tolist())
    eps = 1e-6
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        num = (f(gt, gt.tensor(x + d), w).item() - f(gt, gt.tensor(x - d), w).item()) / (2 * eps)
        assert abs(num - g[i]) < 1e-6


@pytest.mark.parametrize("name,fn", VECTOR + SCALAR[:2], ids=[f[0] for f in VECTOR + SCALAR[:2]])
def test_vjp_and_jvp(name, fn):
    (xg, xt), (wg, wt) = _pair()
    out_o, vjp_o = vjp(lambda x, w: fn(gt, x, w), xg, wg)
    out_t, vjp_t = tf.vjp(lambda x, w: fn(torch, x, w), xt, wt)
    close(out_o, out_t)
    cg, ct = both(RNG.standard_normal(tuple(out_t.shape)))
    close(vjp_o(cg), vjp_t(ct))
    close(vjp_o(cg * 2), vjp_t(ct * 2))  # vjp_fn may be called again
    (tx_g, tx_t), (tw_g, tw_t) = _pair()
    close(
        jvp(lambda x, w: fn(gt, x, w), (xg, wg), (tx_g, tw_g)),
        tf.jvp(lambda x, w: fn(torch, x, w), (xt, wt), (tx_t, tw_t)),
    )


@pytest.mark.parametrize("name,fn", VECTOR + SCALAR, ids=[f[0] for f in VECTOR + SCALAR])
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacobians(name, fn, argnums):
    (xg, xt), (wg, wt) = _pair()
    theirs = tf.jacrev(lambda x, w: fn(torch, x, w), argnums)(xt, wt)
    close(jacrev(lambda x, w: fn(gt, x, w), argnums)(xg, wg), theirs)
    close(jacfwd(lambda x, w: fn(gt, x, w), argnums)(xg, wg), theirs)
    close(jacrev(lambda x, w: fn(gt, x, w), argnums, chunk_size=1)(xg, wg), theirs)


def test_jacobian_of_pytree_output_and_input():
    (xg, xt), (wg, wt) = _pair()

    def f(L):
        return lambda d: {"p": d["x"] * d["w"].sum(), "q": (d["x"] @ d["w"]).exp()}

    dg, dt = {"x": xg, "w": wg}, {"x": xt, "w": wt}
    theirs = tf.jacrev(f(torch))(dt)
    close(jacrev(f(gt))(dg), theirs)
    close(jacfwd(f(gt))(dg), theirs)


def test_jacobian_has_aux():
    (xg, xt), _ = _pair()
    j_o, a_o = jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(xg)
    j_t, a_t = tf.jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(xt)
    close(j_o, j_t)
    close(a_o, a_t)
    j_o, a_o = jacfwd(lambda x: (x.sin(), x.cos()), has_aux=True)(xg)
    close(j_o, j_t)
    close(a_o, a_t)


@pytest.mark.parametrize("name,fn", SCALAR, ids=[f[0] for f in SCALAR])
def test_hessian(name, fn):
    (xg, xt), (wg, wt) = _pair()
    theirs = tf.hessian(lambda x, w: fn(torch, x, w), argnums=(0, 1))(xt, wt)
    close(hessian(lambda x, w: fn(gt, x, w), argnums=(0, 1))(xg, wg), theirs)
    close(jacrev(jacrev(lambda x, w: fn(gt, x, w), (0, 1)), (0, 1))(xg, wg), theirs)
    # forward over reverse and reverse over forward agree with torch too
    close(
        jacrev(jacfwd(lambda x: fn(gt, x, wg)))(xg),
        tf.jacrev(tf.jacfwd(lambda x: fn(torch, x, wt)))(xt),
    )


def test_hessian_matches_autograd_functional():
    from gradstack_functional import hessian as af_hessian

    (xg, _), (wg, _) = _pair()
    f = SCALAR[4][1]
    h1 = hessian(lambda x: f(gt, x, wg))(xg)
    h2 = af_hessian(lambda x: f(gt, x, wg), xg)
    np.testing.assert_allclose(np.asarray(h1.tolist()), np.asarray(h2.tolist()), atol=1e-10)


def test_higher_order_grad():
    xg, xt = both(1.3)

    def f(x):
        return x.sin() * x**3

    close(grad(grad(grad(f)))(xg), tf.grad(tf.grad(tf.grad(f)))(xt))
    # a closure over the outer variable (no perturbation confusion)
    yg, yt = both(0.4)

    def outer(L, y0):
        return lambda x: (
            grad(lambda y: (x * y * y).sin())(y0)
            if L is gt
            else tf.grad(lambda y: (x * y * y).sin())(y0)
        )

    close(grad(outer(gt, yg))(xg), tf.grad(outer(torch, yt))(xt))


@pytest.mark.parametrize("name,fn", SCALAR, ids=[f[0] for f in SCALAR])
def test_vmap_of_transforms(name, fn):
    xg, xt = both(RNG.standard_normal((4, 3)))
    wg, wt = both(RNG.standard_normal(3))
    for in_dims in [(0, None), (1, None)]:
        xg_, xt_ = (xg, xt) if in_dims[0] == 0 else (xg.t().contiguous(), xt.t().contiguous())
        close(
            vmap(grad(lambda x, w: fn(gt, x, w), (0, 1)), in_dims=in_dims)(xg_, wg),
            tf.vmap(tf.grad(lambda x, w: fn(torch, x, w), (0, 1)), in_dims=in_dims)(xt_, wt),
        )
    close(
        vmap(jacrev(lambda x, w: fn(gt, x, w)), in_dims=(None, 0))(wg, xg),
        tf.vmap(tf.jacrev(lambda x, w: fn(torch, x, w)), in_dims=(None, 0))(wt, xt),
    )
    close(
        vmap(hessian(lambda x, w: fn(gt, x, w)))(xg, xg * 0.5),
        tf.vmap(tf.hessian(lambda x, w: fn(torch, x, w)))(xt, xt * 0.5),
    )
    close(
        vmap(jacfwd(lambda x, w: fn(gt, x, w), 1))(xg, xg.cos()),
        tf.vmap(tf.jacfwd(lambda x, w: fn(torch, x, w), 1))(xt, xt.cos()),
    )


def test_nested_vmap_of_grad():
    xg, xt = both(RNG.standard_normal((2, 4, 3)))
    wg, wt = both(RNG.standard_normal(3))
    f = SCALAR[0][1]
    close(
        vmap(vmap(grad(lambda x, w: f(gt, x, w), (0, 1)), in_dims=(0, None)), in_dims=(0, None))(
            xg, wg
        ),
        tf.vmap(
            tf.vmap(tf.grad(lambda x, w: f(torch, x, w), (0, 1)), in_dims=(0, None)),
            in_dims=(0, None),
        )(xt, wt),
    )


def test_grad_of_vmap_and_vjp_of_batched_cotangents():
    xg, xt = both(RNG.standard_normal((4, 3)))
    wg, wt = both(RNG.standard_normal(3))
    f = VECTOR[0][1]
    close(
        grad(lambda w: vmap(lambda x: f(gt, x, w))(xg).sum())(wg),
        tf.grad(lambda w: tf.vmap(lambda x: f(torch, x, w))(xt).sum())(wt),
    )
    _, vjp_o = vjp(lambda w: f(gt, xg[0], w), wg)
    _, vjp_t = tf.vjp(lambda w: f(torch, xt[0], w), wt)
    cg, ct = both(RNG.standard_normal((5, 2)))
    close(vmap(vjp_o)(cg), tf.vmap(vjp_t)(ct))


def test_results_compose_with_plain_autograd():
    xg = gt.tensor(RNG.standard_normal(3), requires_grad=True)
    xt = torch.tensor(xg.tolist(), dtype=torch.float64, requires_grad=True)
    g_o = grad(lambda x: (x**3).sum())(xg)
    g_t = tf.grad(lambda x: (x**3).sum())(xt)
    assert g_o.requires_grad and g_t.requires_grad
    (go,) = ag.grad(g_o.sum(), xg)
    (gt_,) = torch.autograd.grad(g_t.sum(), xt)
    close(go, gt_)


# -- errors ---------------------------------------------------------------------------


def _same_error(fn_ours, fn_theirs, exact=True):
    message = "exact" if exact else None
    same_error(fn_ours, fn_theirs, message=message, renames=[("torch.Size", "gradstack.Size")])


def test_grad_errors():
    (xg, xt), _ = _pair()
    _same_error(lambda: grad(lambda x: x * 2)(xg), lambda: tf.grad(lambda x: x * 2)(xt))
    _same_error(lambda: grad(lambda x: 3.0)(xg), lambda: tf.grad(lambda x: 3.0)(xt))
    _same_error(
        lambda: grad(lambda x: x.sum(), argnums=1)(xg),
        lambda: tf.grad(lambda x: x.sum(), argnums=1)(xt),
    )
    _same_error(
        lambda: grad(lambda x, y: x.sum(), argnums=(0, 0))(xg, xg),
        lambda: tf.grad(lambda x, y: x.sum(), argnums=(0, 0))(xt, xt),
    )
    _same_error(
        lambda: grad(lambda x: x.sum(), argnums=())(xg),
        lambda: tf.grad(lambda x: x.sum(), argnums=())(xt),
    )
    _same_error(
        lambda: grad(lambda x: x.sum(), argnums=[0])(xg),
        lambda: tf.grad(lambda x: x.sum(), argnums=[0])(xt),
    )
    _same_error(
        lambda: grad(lambda x: x.sum(), has_aux=True)(xg),
        lambda: tf.grad(lambda x: x.sum(), has_aux=True)(xt),
    )


def test_vjp_errors():
    (xg, xt), _ = _pair()
    _, fo = vjp(lambda x: (x, x * 2), xg)
    _, ft = tf.vjp(lambda x: (x, x * 2), xt)
    _same_error(lambda: fo(xg), lambda: ft(xt))
    _, fo = vjp(lambda x: x * 2, xg)
    _, ft = tf.vjp(lambda x: x * 2, xt)
    _same_error(
        lambda: fo(gt.ones(2, dtype=gt.float64)), lambda: ft(torch.ones(2, dtype=torch.float64))
    )


def test_jacrev_chunk_size_error():
    with pytest.raises(ValueError, match="chunk_size"):
        jacrev(lambda x: x, chunk_size=0)
