"""The small names real torch programs reach (issue 35): the module constants, ``svd``
(``torch.svd``, ``Tensor.svd``, ``linalg.svd``, ``linalg.svdvals``), ``randint(high,
size=)``, ``torch.utils.data.dataloader``'s module paths, ``resize_``, the in-place view
ops, ``angle`` for real tensors and the in-place forms of the composite ops, against
torch 2.13: values, float64 gradients (gradcheck), errors.
"""

from __future__ import annotations

import math

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _message(fn, lib):
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value).__name__, str(info.value)


# -- constants and module paths ------------------------------------------------------


def test_constants_are_torch_s():
    for name in ("inf", "pi", "e"):
        assert getattr(gs, name) == getattr(torch, name)
    assert math.isnan(gs.nan) and gs.newaxis is None is torch.newaxis
    x = gs.zeros(3)
    assert tuple(x[gs.newaxis].shape) == (1, 3)
    masked = gs.tensor([1.0, 2.0]).masked_fill(gs.tensor([True, False]), -gs.inf)
    assert masked.tolist() == [-math.inf, 2.0]


def test_data_module_paths():
    from gradstack.utils.data.dataloader import DataLoader, default_collate
    from gradstack.utils.data.dataset import Dataset, TensorDataset
    from gradstack.utils.data.sampler import RandomSampler, Sampler

    assert DataLoader is gs.utils.data.DataLoader
    assert default_collate is gs.utils.data.default_collate
    assert TensorDataset is gs.utils.data.TensorDataset and Dataset is gs.utils.data.Dataset
    assert RandomSampler is gs.utils.data.RandomSampler and Sampler is gs.utils.data.Sampler


# -- randint ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.randint(3, size=(6,)),
        lambda L: L.randint(high=5, size=(2, 3)),
        lambda L: L.randint(2, 9, (4,)),
        lambda L: L.randint(7, (5,)),
    ],
)
def test_randint_forms_draw_torch_s_numbers(call):
    torch.manual_seed(0)
    expected = call(torch)
    gs.manual_seed(0)
    got = call(gs)
    assert got.tolist() == expected.tolist() and str(got.dtype)[10:] == str(expected.dtype)[6:]


# -- resize_ and the in-place view ops ----------------------------------------------------


@pytest.mark.parametrize(
    "shape, then",
    [((3, 2), None), ((6,), None), ((2,), None), ((2, 5), 6), ((0,), None), ((2, 3), None)],
)
def test_resize_keeps_the_storage_prefix(shape, then):
    out = []
    for lib in (torch, gs):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        r = x.resize_(*shape)
        assert r is x
        flat = x.reshape(-1)[: then or x.numel()].tolist()
        out.append((tuple(x.shape), x.stride(), flat, x._version, x.is_contiguous()))
    assert out[0] == out[1]


def test_resize_of_a_view_and_errors():
    for lib in (torch, gs):
        base = lib.arange(12.0)
        v = base[2:]
        v.resize_(2, 2)
        assert v.tolist() == [[2.0, 3.0], [4.0, 5.0]]
        v[0, 0] = -1.0
        assert base[2].item() == -1.0  # still the base's storage
    fn = lambda L: L.ones(2, requires_grad=True).resize_(3)  # noqa: E731
    assert _message(fn, gs) == _message(fn, torch)
    # (torch says "numel: integer multiplication overflow"; ours names the dimension)
    fn = lambda L: L.ones(2).resize_(-1)  # noqa: E731
    assert _message(fn, gs)[0] == _message(fn, torch)[0] == "RuntimeError"


@pytest.mark.parametrize(
    "method, args",
    [
        ("unsqueeze_", (0,)),
        ("unsqueeze_", (-1,)),
        ("squeeze_", ()),
        ("squeeze_", (0,)),
        ("t_", ()),
        ("transpose_", (0, 2)),
        ("swapaxes_", (1, 2)),
        ("swapdims_", (0, 1)),
    ],
)
def test_inplace_view_ops(method, args):
    out = []
    for lib in (torch, gs):
        x = lib.arange(6.0).reshape(1, 6) if method == "t_" else lib.arange(6.0).reshape(1, 2, 3)
        r = getattr(x, method)(*args)
        assert r is x
        out.append((tuple(x.shape), x.stride(), x.tolist(), x._version))
    assert out[0] == out[1]


def test_inplace_view_op_on_a_leaf_that_requires_grad():
    fn = lambda L: L.ones(2, 3, requires_grad=True).unsqueeze_(0)  # noqa: E731
    assert _message(fn, gs) == _message(fn, torch)
    x = gs.ones(2, 3, requires_grad=True)
    with gs.no_grad():
        x.t_()
    assert tuple(x.shape) == (3, 2)


# -- angle -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
def test_angle_of_real_tensors(dtype):
    vals = [-2.0, -0.0, 0.0, 3.0, math.inf, -math.inf, math.nan]
    if dtype in ("int64", "bool"):
        vals = [-2, 0, 3] if dtype == "int64" else [True, False]
    a = torch.tensor(vals, dtype=getattr(torch, dtype)).angle()
    b = gs.tensor(vals, dtype=getattr(gs, dtype)).angle()
    assert str(b.dtype)[10:] == str(a.dtype)[6:]
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_angle_gradient_is_zero():
    out = []
    for lib in (torch, gs):
        x = lib.tensor([-1.0, 0.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.angle().sum().backward()
        out.append(x.grad.tolist())
    assert out[0] == out[1] == [0.0, 0.0, 0.0]


# -- in-place forms of the composite ops ---------------------------------------------------

_F = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 0.75]])
_P = np.abs(_F) + 0.1
_INPLACE = [
    ("absolute_", _F, ()),
    ("arccos_", _F / 4, ()),
    ("arcsin_", _F / 4, ()),
    ("arctan_", _F, ()),
    ("arctan2_", _F, (lambda L: L.tensor(_P),)),
    ("divide_", _F, (lambda L: L.tensor(_P),)),
    ("true_divide_", _F, (2.0,)),
    ("multiply_", _F, (3.0,)),
    ("negative_", _F, ()),
    ("subtract_", _F, (lambda L: L.tensor(_P),)),
    ("fix_", _F, ()),
    ("greater_", _F, (0.5,)),
    ("greater_equal_", _F, (0.5,)),
    ("less_", _F, (0.5,)),
    ("less_equal_", _F, (0.5,)),
    ("not_equal_", _F, (0.5,)),
    ("conj_physical_", _F, ()),
    ("copysign_", _F, (lambda L: L.tensor(-_P),)),
    ("cumprod_", _F, (1,)),
    ("deg2rad_", _F, ()),
    ("rad2deg_", _F, ()),
    ("frac_", _F, ()),
    ("ldexp_", _F, (lambda L: L.tensor([[1, 2, 3], [0, -1, 2]]),)),
    ("logical_and_", _F, (lambda L: L.tensor(_F > 0),)),
    ("logical_or_", _F, (lambda L: L.tensor(_F > 0),)),
    ("logical_xor_", _F, (lambda L: L.tensor(_F > 0),)),
    ("logit_", _P / 4, ()),
    ("mvlgamma_", _P + 1, (2,)),
    ("nan_to_num_", np.array([math.nan, math.inf, -math.inf, 1.0]), (0.5,)),
    ("sinc_", _F, ()),
    ("xlogy_", _F, (lambda L: L.tensor(_P),)),
    ("addmm_", _F, (lambda L: L.tensor(_F), lambda L: L.tensor(_P.T[:, :3].T.T))),
    ("addmv_", _F[0, :2], (lambda L: L.tensor(_F[:, :2].T), lambda L: L.tensor(_P[:, 0]))),
    ("addr_", _F, (lambda L: L.tensor(_P[:, 0]), lambda L: L.tensor(_F[0]))),
    ("addbmm_", _F, (lambda L: L.tensor(np.stack([_F[:, :2]] * 2)),
                     lambda L: L.tensor(np.stack([_P[:2]] * 2)))),
    ("baddbmm_", np.stack([_F] * 2), (lambda L: L.tensor(np.stack([_F[:, :2]] * 2)),
                                      lambda L: L.tensor(np.stack([_P[:2]] * 2)))),
]  # fmt: skip


@pytest.mark.parametrize("method, data, args", _INPLACE, ids=[c[0] for c in _INPLACE])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inplace_forms(method, data, args, dtype):
    if method == "addmm_":
        args = (lambda L: L.tensor(_F[:, :2]), lambda L: L.tensor(_P[:2]))
    out = []
    for lib in (torch, gs):
        x = lib.tensor(data, dtype=getattr(lib, dtype))
        a = [arg(lib) if callable(arg) else arg for arg in args]
        a = [
            t.to(getattr(lib, dtype))
            if hasattr(t, "is_floating_point") and t.is_floating_point()
            else t
            for t in a
        ]
        r = getattr(x, method)(*a)
        assert r is x
        out.append((x.numpy().copy(), x._version > 0 or method == "conj_physical_"))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6, atol=1e-6)
    assert out[0][1] == out[1][1]


@pytest.mark.parametrize(
    "fn",
    [
        lambda L: L.ones(2, dtype=L.int64).deg2rad_(),
        lambda L: L.ones(2).float_power_(2),
        lambda L: L.ones(2, dtype=L.int64).sinc_(),
        lambda L: L.ones(2).xlogy_(L.ones(3, 2)),
    ],
)
def test_inplace_form_errors(fn):
    assert _message(fn, gs) == _message(fn, torch)


def test_inplace_form_on_a_leaf_that_requires_grad():
    fn = lambda L: L.ones(2, requires_grad=True).deg2rad_()  # noqa: E731
    kind, text = _message(fn, gs)
    assert kind == _message(fn, torch)[0] == "RuntimeError"
    assert text.startswith("a leaf Variable that requires grad is being used in an in-place")


def test_inplace_form_gradient_through_a_clone():
    out = []
    for lib in (torch, gs):
        x = lib.tensor(_F, dtype=lib.float64, requires_grad=True)
        y = x.clone()
        y.deg2rad_().multiply_(x).nan_to_num_().sum().backward()
        out.append(x.grad.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


# -- svd -------------------------------------------------------------------------------

_R = np.random.default_rng(5)
_SHAPES = [(4, 3), (3, 4), (3, 3), (2, 5, 3), (1, 1)]


def _column_signs(u_torch, u_ours):
    """The per-column sign that takes ours to torch's (Note [SVD's signs are LAPACK's])."""
    dots = (u_torch * u_ours).sum(-2, keepdims=True)
    return np.where(dots < 0, -1.0, 1.0)


@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("full", [True, False])
def test_linalg_svd_values(shape, full):
    a = _R.standard_normal(shape)
    tu, ts, tvh = (t.numpy() for t in torch.linalg.svd(torch.tensor(a), full_matrices=full))
    u, s, vh = (t.numpy() for t in gs.linalg.svd(gs.tensor(a), full_matrices=full))
    assert u.shape == tu.shape and s.shape == ts.shape and vh.shape == tvh.shape
    np.testing.assert_allclose(s, ts, rtol=1e-12, atol=1e-12)
    k = s.shape[-1]
    signs = _column_signs(tu[..., :k], u[..., :k])
    np.testing.assert_allclose(u[..., :k] * signs, tu[..., :k], atol=1e-10)
    np.testing.assert_allclose(
        vh[..., :k, :] * np.swapaxes(signs, -1, -2), tvh[..., :k, :], atol=1e-10
    )
    r = gs.linalg.svd(gs.tensor(a), full_matrices=full)
    assert type(r).__name__ == "linalg_svd" and r._fields == ("U", "S", "Vh")


def test_svd_float32_and_legacy_forms():
    a = _R.standard_normal((5, 3)).astype(np.float32)
    tu, ts, tv = torch.svd(torch.tensor(a))
    u, s, v = gs.svd(gs.tensor(a))
    assert tuple(u.shape) == (5, 3) and tuple(v.shape) == (3, 3) and s.dtype is gs.float32
    np.testing.assert_allclose(s.numpy(), ts.numpy(), rtol=1e-5)
    np.testing.assert_allclose((u @ gs.diag(s) @ v.mT).numpy(), a, atol=1e-5)
    u2, s2, v2 = gs.tensor(a).svd(some=False)
    assert tuple(u2.shape) == (5, 5) and tuple(v2.shape) == (3, 3)
    z = gs.svd(gs.tensor(a), compute_uv=False)
    tz = torch.svd(torch.tensor(a), compute_uv=False)
    assert z.U.tolist() == tz.U.tolist() and z.V.tolist() == tz.V.tolist()
    np.testing.assert_allclose(z.S.numpy(), tz.S.numpy(), rtol=1e-5)
    np.testing.assert_allclose(
        gs.linalg.svdvals(gs.tensor(a)).numpy(),
        torch.linalg.svdvals(torch.tensor(a)).numpy(),
        rtol=1e-5,
    )


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_of_empty_matrices(shape, full):
    t = torch.linalg.svd(torch.zeros(shape), full_matrices=full)
    g = gs.linalg.svd(gs.zeros(shape), full_matrices=full)
    for a, b in zip(t, g):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize(
    "fn",
    [
        lambda L: L.linalg.svd(L.ones(3)),
        lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.int64)),
        lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.float16)),
        lambda L: L.svd(L.ones(3)),
    ],
)
def test_svd_errors(fn):
    assert _message(fn, gs) == _message(fn, torch)


# Sign-invariant functions of the factors: their gradients are the same whichever signs
# LAPACK picks, so they are compared with torch's and gradchecked.
_SIGN_FREE = {
    "S": lambda L, a: L.linalg.svd(a, full_matrices=False).S,
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "U_S_Vh": lambda L, a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.Vh)(
        L.linalg.svd(a, full_matrices=False)
    ),
    "U_Ut": lambda L, a: (lambda r: r.U @ r.U.mT)(L.linalg.svd(a, full_matrices=False)),
    "V_Vt": lambda L, a: (lambda r: r.Vh.mT @ r.Vh)(L.linalg.svd(a, full_matrices=False)),
    "legacy_U_V": lambda L, a: (lambda r: r.U @ r.V.mT)(L.svd(a)),
    "U_abs_full": lambda L, a: L.linalg.svd(a, full_matrices=True).U[..., :1].abs(),
    "Vh_abs": lambda L, a: L.linalg.svd(a, full_matrices=False).Vh.abs(),
}


@pytest.mark.parametrize("name", list(_SIGN_FREE))
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 4, 3)])
def test_svd_gradients_against_torch_and_gradcheck(name, shape):
    f = _SIGN_FREE[name]
    a = _R.standard_normal(shape)
    grads = []
    for lib in (torch, gs):
        x = lib.tensor(a, requires_grad=True)
        out = f(lib, x)
        w = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
        (g,) = lib.autograd.grad((out * w).sum(), x)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8, atol=1e-9)
    x = gs.tensor(a, requires_grad=True)
    assert gs.autograd.gradcheck(lambda t: f(gs, t), (x,))


def test_svd_second_order():
    a = _R.standard_normal((4, 3))
    x = gs.tensor(a, requires_grad=True)
    assert gs.autograd.gradgradcheck(lambda t: gs.linalg.svdvals(t), (x,))


def test_svd_node_name():
    x = gs.ones(3, 2, requires_grad=True) + gs.eye(3, 2)
    assert gs.linalg.svd(x).U.grad_fn.name() == "LinalgSvdBackward0"


# -- dist, vdot, norm_except_dim, matrix_exp, householder_product ------------------------


@pytest.mark.parametrize("p", [2, 1, 0, 3.5, math.inf, -math.inf])
def test_dist_values_and_gradients(p):
    a = _R.standard_normal((3, 4))
    b = _R.standard_normal(4)
    out = []
    for lib in (torch, gs):
        x = lib.tensor(a, requires_grad=True)
        d = lib.dist(x, lib.tensor(b), p) if p != 3.5 else x.dist(lib.tensor(b), p)
        d.backward()
        out.append((d.item(), None if x.grad is None else x.grad.numpy().copy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
    if p == 0:  # (torch's p=0 norm passes no gradient: .grad stays None)
        assert out[0][1] is None and out[1][1] is None
    else:
        np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-10, atol=1e-12)
    fn = lambda L: L.dist(L.tensor([1, 2]), L.tensor([1, 2]))  # noqa: E731
    assert _message(fn, gs) == _message(fn, torch)


def test_vdot_and_norm_except_dim():
    a, b = _R.standard_normal(5), _R.standard_normal(5)
    assert gs.vdot(gs.tensor(a), gs.tensor(b)).item() == pytest.approx(
        torch.vdot(torch.tensor(a), torch.tensor(b)).item(), rel=1e-14
    )
    w = _R.standard_normal((3, 4, 2))
    for dim in (0, 1, 2, -1):
        got = gs.norm_except_dim(gs.tensor(w), 2, dim)
        want = torch.norm_except_dim(torch.tensor(w), 2, dim)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (5, 5)])
@pytest.mark.parametrize("scale", [0.1, 3.0])
def test_matrix_exp_values_and_gradients(shape, scale):
    a = _R.standard_normal(shape) * scale
    w = _R.standard_normal(shape)
    out = []
    for lib in (torch, gs):
        x = lib.tensor(a, requires_grad=True)
        y = lib.linalg.matrix_exp(x)
        (y * lib.tensor(w)).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    scale_y = np.abs(out[0][0]).max()
    np.testing.assert_allclose(out[1][0], out[0][0], atol=1e-13 * scale_y)
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-12 * max(scale_y, 1))
    f32 = gs.matrix_exp(gs.tensor(a.astype(np.float32)))
    want = torch.matrix_exp(torch.tensor(a.astype(np.float32)))
    np.testing.assert_allclose(f32.numpy(), want.numpy(), rtol=1e-5, atol=1e-6 * scale_y)
    x = gs.tensor(a[..., :2, :2].copy(), requires_grad=True)
    assert gs.autograd.gradgradcheck(gs.linalg.matrix_exp, (x,))


@pytest.mark.parametrize("shape, k", [((5, 3), 3), ((4, 4), 2), ((2, 4, 3), 3)])
def test_householder_product(shape, k):
    a = _R.standard_normal(shape)
    tau = _R.random(shape[:-2] + (k,))
    want = torch.linalg.householder_product(torch.tensor(a), torch.tensor(tau))
    got = gs.linalg.householder_product(gs.tensor(a), gs.tensor(tau))
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-13)
    x = gs.tensor(a, requires_grad=True)
    t = gs.tensor(tau, requires_grad=True)
    assert gs.autograd.gradcheck(gs.linalg.householder_product, (x, t))


# -- as_strided ------------------------------------------------------------------------

_AS_STRIDED = [
    lambda L, x: x.as_strided((2, 2), (1, 2)),
    lambda L, x: x.as_strided((2, 2), (1, 2), 3),
    lambda L, x: x.as_strided((3, 3), (2, 2)),
    lambda L, x: x.as_strided((2,), (-1,)),
    lambda L, x: x.as_strided((2, 2), (1, 2), -1),
    lambda L, x: x[2:].as_strided((2,), (1,)),
    lambda L, x: x.as_strided((3, 2), (0, 1)),
    lambda L, x: x.as_strided((0, 4), (1, 1)),
    lambda L, x: x.view(2, 3).t().as_strided((2, 3), (3, 1)),
    lambda L, x: x.as_strided((2, 2), (1, 2), 2),
    lambda L, x: L.as_strided(x, (2,), (2,), 1),
    lambda L, x: x.as_strided((2,), (1, 2)),
    lambda L, x: x.as_strided((6,), (1,), 0).as_strided((2, 3), (1, 2), 0),
]


@pytest.mark.parametrize("case", range(len(_AS_STRIDED)))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_as_strided_views_and_errors(case, dtype):
    out = []
    for lib in (torch, gs):
        x = lib.arange(6).to(getattr(lib, dtype))
        try:
            t = _AS_STRIDED[case](lib, x)
            out.append((t.tolist(), t.stride(), t.storage_offset()))
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]


def test_as_strided_writes_reach_the_base():
    out = []
    for lib in (torch, gs):
        y = lib.zeros(4)
        v = y.as_strided((2,), (2,))
        v.add_(1)
        out.append((y.tolist(), y._version, v._version))
    assert out[0] == out[1]


def test_as_strided_under_autograd_is_refused_not_wrong():
    x = gs.arange(6.0, requires_grad=True)
    with pytest.raises(NotImplementedError, match="as_strided"):
        x.as_strided((2,), (1,))
    with gs.no_grad():
        assert x.as_strided((2,), (2,)).tolist() == [0.0, 2.0]


def test_numpy_axis_alias_of_the_joins_and_squeeze_as_torch():
    for L in (gs, torch):
        x = L.ones(2, 3)
        assert tuple(L.cat([x, x], axis=1).shape) == (2, 6)
        assert tuple(L.concat([x, x], axis=0).shape) == (4, 3)
        assert tuple(L.stack([x, x], axis=2).shape) == (2, 3, 2)
        assert tuple(x.unsqueeze(0).squeeze(axis=0).shape) == (2, 3)
    with pytest.raises(TypeError, match="axis"):
        gs.cat([gs.ones(2)], 1, axis=0)
