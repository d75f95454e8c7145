"""Nested forward mode in ``gradstack_functional.func`` against ``torch.func`` (float64).

``jacfwd(jacfwd(f))``, ``jvp`` inside ``jvp``, ``jacfwd(jacrev)``, ``jacrev(jacfwd)``,
third order (``jacfwd(jacfwd(jacfwd))``, ``jacfwd(jacfwd(jacrev))``), under ``vmap``,
with ``argnums`` and ``has_aux``; ``linearize`` and ``jvp(strict=True)`` with torch's
values and errors; forward AD's public levels (torch's one-level rule) around the
transforms.
"""

from __future__ import annotations

import gradstack_autograd.forward_ad as fwAD
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional.func import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vmap,
)

torch = pytest.importorskip("torch")
import gradstack_functional_tests_func_compare as _cmp  # noqa: E402
import torch.func as tf  # noqa: E402

both = _cmp.both

pytestmark = [
    pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning"),
    # torch's linearize traces with make_fx and const-folds the graph
    pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node:UserWarning"),
]

RNG = np.random.default_rng(1515)


def close(ours, theirs, atol=1e-9):
    _cmp.close(ours, theirs, atol, rtol=1e-9)


# functions of x: (3,) -> (2,) or scalar, written once for a library namespace L; each
# uses ops whose tangents read the output (exp, tanh, sigmoid, pow), a reduction or a
# matrix product, so the mixed terms of nested levels are exercised
VECTOR = [
    ("exp_mix", lambda L, x: L.stack([(x.exp() * x[0]).sum(), (x.sin() * x.cos()).prod()])),
    ("tanh_outer", lambda L, x: (L.outer(x, x) * x.tanh()).sum(0)[:2]),
    ("pow_div", lambda L, x: L.stack([x.pow(3).sum() / (1 + x[1] ** 2), x.sigmoid().norm()])),
    ("softmax", lambda L, x: x.softmax(0)[:2] * x.logsumexp(0)),
]
SCALAR = [
    ("poly", lambda L, x: (x**3).sum() * x[0] + (x.sin() * x.cos()).sum()),
    ("trig", lambda L, x: x.tanh().prod() + x.exp().sum().log()),
    ("norm", lambda L, x: x.norm() ** 3 + (x.sigmoid() * x).sum()),
]


def _x():
    return both(RNG.standard_normal(3))


@pytest.mark.parametrize("name,fn", VECTOR, ids=[f[0] for f in VECTOR])
def test_jacfwd_of_jacfwd(name, fn):
    xg, xt = _x()
    close(jacfwd(jacfwd(lambda x: fn(gt, x)))(xg), tf.jacfwd(tf.jacfwd(lambda x: fn(torch, x)))(xt))


@pytest.mark.parametrize("name,fn", VECTOR, ids=[f[0] for f in VECTOR])
@pytest.mark.parametrize("outer,inner", [("fwd", "rev"), ("rev", "fwd"), ("rev", "rev")])
def test_mixed_jacobians(name, fn, outer, inner):
    ours = {"fwd": jacfwd, "rev": jacrev}
    theirs = {"fwd": tf.jacfwd, "rev": tf.jacrev}
    xg, xt = _x()
    close(
        ours[outer](ours[inner](lambda x: fn(gt, x)))(xg),
        theirs[outer](theirs[inner](lambda x: fn(torch, x)))(xt),
    )


@pytest.mark.parametrize("name,fn", SCALAR, ids=[f[0] for f in SCALAR])
def test_jvp_inside_jvp(name, fn):
    xg, xt = _x()
    vg, vt = _x()
    ug, ut = _x()

    def inner_ours(x):
        return jvp(lambda y: fn(gt, y), (x,), (vg,))[1]

    def inner_theirs(x):
        return tf.jvp(lambda y: fn(torch, y), (x,), (vt,))[1]

    out_o, t_o = jvp(inner_ours, (xg,), (ug,))
    out_t, t_t = tf.jvp(inner_theirs, (xt,), (ut,))
    close(out_o, out_t)  # v . grad f
    close(t_o, t_t)  # u^T H v
    # against the Hessian
    h = torch.func.hessian(lambda x: fn(torch, x))(xt)
    np.testing.assert_allclose(t_o.item(), (ut @ h @ vt).item(), rtol=1e-9)


@pytest.mark.parametrize("name,fn", SCALAR, ids=[f[0] for f in SCALAR])
def test_third_order(name, fn):
    xg, xt = _x()
    for ours, theirs in (
        (
            jacfwd(jacfwd(jacfwd(lambda x: fn(gt, x)))),
            tf.jacfwd(tf.jacfwd(tf.jacfwd(lambda x: fn(torch, x)))),
        ),
        (
            jacfwd(jacfwd(jacrev(lambda x: fn(gt, x)))),
            tf.jacfwd(tf.jacfwd(tf.jacrev(lambda x: fn(torch, x)))),
        ),
        (jacfwd(hessian(lambda x: fn(gt, x))), tf.jacfwd(tf.hessian(lambda x: fn(torch, x)))),
    ):
        close(ours(xg), theirs(xt), atol=1e-8)


@pytest.mark.parametrize("name,fn", VECTOR, ids=[f[0] for f in VECTOR])
def test_vmap_of_jacfwd_of_jacfwd(name, fn):
    xs = RNG.standard_normal((4, 3))
    xg, xt = both(xs)
    close(
        vmap(jacfwd(jacfwd(lambda x: fn(gt, x))))(xg),
        tf.vmap(tf.jacfwd(tf.jacfwd(lambda x: fn(torch, x))))(xt),
    )


def test_hessian_as_jacfwd_of_jacfwd_matches_hessian():
    xg, xt = _x()
    f = SCALAR[0][1]
    close(jacfwd(jacfwd(lambda x: f(gt, x)))(xg), tf.hessian(lambda x: f(torch, x))(xt))
    close(hessian(lambda x: f(gt, x))(xg), tf.hessian(lambda x: f(torch, x))(xt))


def test_nested_with_argnums_and_aux():
    (xg, xt), (wg, wt) = _x(), _x()

    def f(L, x, w):
        return (x.exp() * w.sin()).sum() * x[0] * w[1], x.sum()

    ours = jacfwd(jacfwd(lambda x, w: f(gt, x, w), argnums=(0, 1), has_aux=True), argnums=1)
    theirs = tf.jacfwd(
        tf.jacfwd(lambda x, w: f(torch, x, w), argnums=(0, 1), has_aux=True), argnums=1
    )
    (jo, ao), (jt, at) = ours(xg, wg), theirs(xt, wt)
    close(jo, jt)
    close(ao, at)


def test_grad_of_jvp_of_jvp():
    """Reverse over forward over forward: d/dx (u^T H(x) v) is a third derivative."""
    (xg, xt), (vg, vt), (ug, ut) = _x(), _x(), _x()
    f = SCALAR[1][1]

    def ours(x):
        return jvp(lambda y: jvp(lambda z: f(gt, z), (y,), (vg,))[1], (x,), (ug,))[1]

    def theirs(x):
        return tf.jvp(lambda y: tf.jvp(lambda z: f(torch, z), (y,), (vt,))[1], (x,), (ut,))[1]

    close(grad(ours)(xg), tf.grad(theirs)(xt), atol=1e-8)


def test_nested_jvp_against_finite_differences():
    x = RNG.standard_normal(3)
    v, u = RNG.standard_normal(3), RNG.standard_normal(3)

    def f_np(x):
        return np.sum(np.exp(x) * np.sin(x)) * x[0]

    def f(x):
        return (x.exp() * x.sin()).sum() * x[0]

    def d1(x):
        return jvp(f, (x,), (gt.tensor(v),))[1]

    _, second = jvp(d1, (gt.tensor(x),), (gt.tensor(u),))
    eps = 1e-4

    def fd_v(x):
        return (f_np(x + eps * v) - f_np(x - eps * v)) / (2 * eps)

    fd = (fd_v(x + eps * u) - fd_v(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(second.item(), fd, rtol=1e-5)


# -------------------------------------------------------------------------------------
# jvp(strict=True), linearize


def _same_error(fn_ours, fn_theirs):
    _cmp.same_error(fn_ours, fn_theirs, renames=[("torch.", "gradstack.")])


def test_jvp_strict():
    (xg, xt), (vg, vt) = _x(), _x()
    close(
        jvp(lambda x: x.exp(), (xg,), (vg,), strict=True),
        tf.jvp(lambda x: x.exp(), (xt,), (vt,), strict=True),
    )
    _same_error(
        lambda: jvp(lambda x: gt.ones(2, dtype=gt.float64), (xg,), (vg,), strict=True),
        lambda: tf.jvp(lambda x: torch.ones(2, dtype=torch.float64), (xt,), (vt,), strict=True),
    )
    # without strict: zeros
    close(
        jvp(lambda x: gt.ones(2, dtype=gt.float64), (xg,), (vg,)),
        tf.jvp(lambda x: torch.ones(2, dtype=torch.float64), (xt,), (vt,)),
    )


def test_jvp_has_aux_nested():
    (xg, xt), (vg, vt), (ug, ut) = _x(), _x(), _x()

    def ours(x):
        _, t, aux = jvp(lambda y: (y.sin() * y, y.cos()), (x,), (vg,), has_aux=True)
        return t.sum(), aux

    def theirs(x):
        _, t, aux = tf.jvp(lambda y: (y.sin() * y, y.cos()), (x,), (vt,), has_aux=True)
        return t.sum(), aux

    close(jvp(ours, (xg,), (ug,), has_aux=True), tf.jvp(theirs, (xt,), (ut,), has_aux=True))


@pytest.mark.parametrize("name,fn", VECTOR, ids=[f[0] for f in VECTOR])
def test_linearize(name, fn):
    (xg, xt), (vg, vt), (ug, ut) = _x(), _x(), _x()
    out_o, jvp_o = linearize(lambda x: fn(gt, x), xg)
    out_t, jvp_t = tf.linearize(lambda x: fn(torch, x), xt)
    close(out_o, out_t)
    close(jvp_o(vg), jvp_t(vt))
    close(jvp_o(ug), jvp_t(ut))  # called again, another direction
    vs = RNG.standard_normal((5, 3))
    close(vmap(jvp_o)(gt.tensor(vs)), tf.vmap(jvp_t)(torch.tensor(vs)))


def test_linearize_several_primals_and_errors():
    (xg, xt), (wg, wt) = _x(), _x()

    def f(x, w):
        return (x * w.exp(), (x + w).sum())

    out_o, jvp_o = linearize(f, xg, wg)
    out_t, jvp_t = tf.linearize(f, xt, wt)
    close(out_o, out_t)
    close(jvp_o(wg, xg), jvp_t(wt, xt))
    _same_error(
        lambda: jvp_o(gt.ones(2, dtype=gt.float64), xg),
        lambda: jvp_t(torch.ones(2, dtype=torch.float64), xt),
    )
    _same_error(lambda: jvp_o(xg.to(gt.float32), xg), lambda: jvp_t(xt.to(torch.float32), xt))
    with pytest.raises(RuntimeError, match="same argspec"):
        jvp_o(xg)
    with pytest.raises(RuntimeError, match="same argspec"):
        jvp_t(xt)


# -------------------------------------------------------------------------------------
# forward AD's public levels around the transforms (torch's rules)


def test_user_dual_level_and_transforms():
    (xg, xt), (vg, vt) = _x(), _x()
    import torch.autograd.forward_ad as tfw

    # a transform's jvp inside a user's dual level: torch refuses (one public level)
    with tfw.dual_level():
        with pytest.raises(RuntimeError) as theirs:
            tf.jvp(lambda x: x.sin(), (xt,), (vt,))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError) as ours:
            jvp(lambda x: x.sin(), (xg,), (vg,))
    assert str(ours.value) == str(theirs.value)
    # a user's dual level inside a transform's jvp: refused too
    with pytest.raises(RuntimeError) as theirs:
        tf.jvp(lambda x: (tfw.enter_dual_level(), x)[1], (xt,), (vt,))
    with pytest.raises(RuntimeError) as ours:
        jvp(lambda x: (fwAD.enter_dual_level(), x)[1], (xg,), (vg,))
    assert str(ours.value) == str(theirs.value)
    assert fwAD._current is None


# -------------------------------------------------------------------------------------
# jacfwd by batched tangents (Note [jacfwd by batched tangents]): torch.func's flags


@pytest.mark.parametrize("requires_grad", [False, True])
def test_results_require_grad_as_torch(requires_grad):
    (xg, xt), (vg, vt) = _x(), _x()
    xg.requires_grad_(requires_grad)
    xt.requires_grad_(requires_grad)

    def f(L, x):
        return (x.sin() ** 2).sum()

    def g(L, x):
        return x.sin() * x

    pairs = [
        (jvp(lambda x: g(gt, x), (xg,), (vg,))[1], tf.jvp(lambda x: g(torch, x), (xt,), (vt,))[1]),
        (jacfwd(lambda x: g(gt, x))(xg), tf.jacfwd(lambda x: g(torch, x))(xt)),
        (hessian(lambda x: f(gt, x))(xg), tf.hessian(lambda x: f(torch, x))(xt)),
        (jacrev(lambda x: g(gt, x))(xg), tf.jacrev(lambda x: g(torch, x))(xt)),
    ]
    for ours, theirs in pairs:
        assert ours.requires_grad == theirs.requires_grad == requires_grad
        close(ours, theirs)
    if requires_grad:  # differentiable through the transform, as torch's
        (go,) = torch.autograd.grad(pairs[2][1].sum(), xt)
        import gradstack_autograd as ag

        (gg,) = ag.grad(pairs[2][0].sum(), xg)
        close(gg, go)


def test_jacfwd_randomness():
    xg, xt = _x()
    _same_error(
        lambda: jacfwd(lambda x: x * gt.rand(3, dtype=gt.float64))(xg),
        lambda: tf.jacfwd(lambda x: x * torch.rand(3, dtype=torch.float64))(xt),
    )
    _same_error(
        lambda: jacfwd(lambda x: x, randomness="bad")(xg),
        lambda: tf.jacfwd(lambda x: x, randomness="bad")(xt),
    )
    # "same": one draw shared by every direction (the Jacobian is diag of that draw)
    gt.manual_seed(3)
    jac = jacfwd(lambda x: x * gt.rand(3, dtype=gt.float64), randomness="same")(xg)
    gt.manual_seed(3)
    draw = gt.rand(3, dtype=gt.float64)
    np.testing.assert_array_equal(jac.numpy(), np.diag(draw.numpy()))
    # draws outside the function are not refused, and nothing stays open afterwards
    assert gt.rand(2).shape == (2,)


def test_jacfwd_reads_the_primal_as_torch():
    """torch's duals keep the primal unbatched: .item() and control flow on it work."""
    xg, xt = _x()
    for f in (
        lambda x: x * x.sum().item(),
        lambda x: x.exp() if x.sum() > 0 else x.sin(),
        lambda x: x * x.tolist()[0],
    ):
        close(jacfwd(f)(xg), tf.jacfwd(f)(xt))
