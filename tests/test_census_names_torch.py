"""Names the census of issue 35 (docs/census.md) found missing and cheap: torch's functions
that are a method's call (``torch.erf_``, ``torch.msort``, ``torch.is_signed`` ...),
``Tensor.H``/``mH``/``adjoint``, ``accelerator.device_index`` and the
``torch.nn.modules.<name>`` module paths, against torch 2.13: values, in-place identity,
float64 gradients (gradcheck), errors, warnings.
"""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _pair(values, dtype="float64", requires_grad=False):
    a = np.asarray(values, dtype=dtype)
    t = torch.tensor(a, requires_grad=requires_grad)
    g = gs.tensor(a, requires_grad=requires_grad)
    return g, t


def _same(g, t, exact=False):
    if isinstance(t, tuple | list):
        assert len(g) == len(t)
        for a, b in zip(g, t):
            _same(a, b, exact)
        return
    if isinstance(t, torch.Tensor):
        assert tuple(g.shape) == tuple(t.shape)
        assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        if exact:
            np.testing.assert_array_equal(g.detach().numpy(), t.detach().numpy())
        else:
            np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-6)
    else:
        assert g == t


# -- torch's functions that are a method's call -----------------------------------------

UNIT = [[0.1, -0.5, 0.7], [0.3, 0.9, -0.2]]
POSITIVE = [[1.5, 2.5, 3.0], [1.2, 4.0, 2.2]]

IN_PLACE = [
    ("arccos_", UNIT, ()),
    ("arcsin_", UNIT, ()),
    ("arctan_", UNIT, ()),
    ("arctanh_", UNIT, ()),
    ("arcsinh_", UNIT, ()),
    ("arccosh_", POSITIVE, ()),
    ("clamp_max_", UNIT, (0.2,)),
    ("clamp_min_", UNIT, (0.2,)),
    ("clip_", UNIT, (-0.1, 0.3)),
    ("conj_physical_", UNIT, ()),
    ("deg2rad_", UNIT, ()),
    ("rad2deg_", UNIT, ()),
    ("detach_", UNIT, ()),
    ("erf_", UNIT, ()),
    ("erfc_", UNIT, ()),
    ("fix_", POSITIVE, ()),
    ("frac_", POSITIVE, ()),
    ("logit_", [[0.1, 0.5, 0.7]], ()),
    ("nan_to_num_", [[float("nan"), float("inf"), -float("inf"), 1.0]], ()),
    ("negative_", UNIT, ()),
    ("sinc_", UNIT, ()),
    ("square_", UNIT, ()),
]


@pytest.mark.parametrize("name, values, args", IN_PLACE, ids=[c[0] for c in IN_PLACE])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_functions(name, values, args, dtype):
    g, t = _pair(values, dtype)
    rg = getattr(gs, name)(g, *args)
    rt = getattr(torch, name)(t, *args)
    assert rg is g and rt is t
    _same(g, t)


def test_in_place_functions_with_tensor_arguments():
    g, t = _pair(UNIT)
    calls = [
        lambda L, x: L.addmv_(L.zeros(2, dtype=L.float64), x, L.ones(3, dtype=L.float64)),
        lambda L, x: L.xlogy_(x.abs(), x.abs() + 1),
        lambda L, x: L.ldexp_(L.tensor([[1.0, 2.0]], dtype=L.float64), L.tensor([[2, 3]])),
    ]
    for call in calls:
        _same(call(gs, g.clone()), call(torch, t.clone()))
    # resize_as_: the shape (new elements are uninitialised, in both)
    assert tuple(gs.resize_as_(gs.zeros(3), g).shape) == tuple(
        torch.resize_as_(torch.zeros(3), t).shape
    )
    y = gs.zeros(2, dtype=gs.float64)
    assert gs.addmv_(y, g, gs.ones(3, dtype=gs.float64)) is y


OUT_OF_PLACE = [
    ("conj", lambda L, x: L.conj(x)),
    ("conj_physical", lambda L, x: L.conj_physical(x)),
    ("resolve_conj", lambda L, x: L.resolve_conj(x)),
    ("resolve_neg", lambda L, x: L.resolve_neg(x)),
    ("adjoint", lambda L, x: L.adjoint(x)),
    ("msort", lambda L, x: L.msort(x)),
    ("narrow_copy", lambda L, x: L.narrow_copy(x, 1, 1, 2)),
    ("split_with_sizes", lambda L, x: L.split_with_sizes(x, [1, 2], 1)),
    ("take", lambda L, x: L.take(x, L.tensor([0, 5, 2]))),
    ("ger", lambda L, x: L.ger(x[0], x[1])),
    ("real", lambda L, x: L.real(x)),
]


@pytest.mark.parametrize("name, call", OUT_OF_PLACE, ids=[c[0] for c in OUT_OF_PLACE])
def test_out_of_place_functions_values_and_gradients(name, call):
    g, t = _pair(UNIT)
    _same(call(gs, g), call(torch, t), exact=True)
    x = gs.tensor(np.asarray(UNIT), requires_grad=True)

    def fn(x):
        out = call(gs, x)
        return tuple(out) if isinstance(out, tuple | list) else out

    assert gs.autograd.gradcheck(fn, (x,))
    xt = torch.tensor(np.asarray(UNIT), requires_grad=True)
    outs_g, outs_t = fn(x), call(torch, xt)
    outs_t = tuple(outs_t) if isinstance(outs_t, tuple | list) else outs_t
    if not isinstance(outs_g, tuple):
        outs_g, outs_t = (outs_g,), (outs_t,)
    sum(o.sum() * (i + 1) for i, o in enumerate(outs_g)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(outs_t)).backward()
    _same(x.grad, xt.grad)


PREDICATES = [
    ("is_conj", lambda L, x: L.is_conj(x)),
    ("is_neg", lambda L, x: L.is_neg(x)),
    ("is_inference", lambda L, x: L.is_inference(x)),
    ("is_signed", lambda L, x: L.is_signed(x)),
    ("is_signed uint8", lambda L, x: L.is_signed(x.to(L.uint8))),
    ("is_nonzero", lambda L, x: L.is_nonzero(x[0, :1])),
    ("is_same_size", lambda L, x: L.is_same_size(x, x[0])),
    ("get_device", lambda L, x: L.get_device(x)),
]


@pytest.mark.parametrize("name, call", PREDICATES, ids=[c[0] for c in PREDICATES])
def test_predicates(name, call):
    g, t = _pair(UNIT)
    assert call(gs, g) == call(torch, t)


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value)


@pytest.mark.parametrize(
    "name", ["erf_", "msort", "take", "is_signed", "adjoint", "real", "clamp_min_"]
)
def test_a_number_for_input_is_a_type_error(name):
    args = {"take": (gs.tensor([0]),), "clamp_min_": (0.0,)}.get(name, ())
    targs = {"take": (torch.tensor([0]),), "clamp_min_": (0.0,)}.get(name, ())
    assert _error(lambda: getattr(gs, name)(1.5, *args)) is TypeError
    assert _error(lambda: getattr(torch, name)(1.5, *targs)) is TypeError


def test_errors_of_the_methods_are_torch_s():
    g, t = _pair(UNIT)
    for call in (
        lambda L, x: L.is_nonzero(x),  # more than one value
        lambda L, x: L.take(x, L.tensor([6])),  # out of range
        lambda L, x: L.take(x, L.tensor([-7])),
    ):
        assert _error(lambda c=call: c(gs, g)) is _error(lambda c=call: c(torch, t))
    with pytest.raises(IndexError) as eg:
        gs.take(g, gs.tensor([0, 6]))
    with pytest.raises(IndexError) as et:
        torch.take(t, torch.tensor([0, 6]))
    assert str(eg.value) == str(et.value)
    _same(
        gs.take(g, gs.tensor([[-1, 0], [-6, 2]])), torch.take(t, torch.tensor([[-1, 0], [-6, 2]]))
    )


# -- H, mH, adjoint ------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (4, 2, 3)])
@pytest.mark.parametrize("attr", ["H", "mH", "adjoint"])
def test_conjugate_transposes(attr, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    g = gs.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)

    def get(x):
        return x.adjoint() if attr == "adjoint" else getattr(x, attr)

    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        try:
            rt = get(t)
        except RuntimeError as e:
            rt = e
    with warnings.catch_warnings(record=True) as wg:
        warnings.simplefilter("always")
        try:
            rg = get(g)
        except RuntimeError as e:
            rg = e
    if isinstance(rt, Exception):
        assert isinstance(rg, RuntimeError) and str(rg) == str(rt)
        return
    assert [str(w.message) for w in wg] == [str(w.message).split(" (Triggered")[0] for w in wt]
    _same(rg, rt, exact=True)
    if len(shape) >= 2:
        assert rg.grad_fn.name() == rt.grad_fn.name() == "TransposeBackward0"
        assert gs.autograd.gradcheck(get, (g,))


# -- accelerator.device_index and torch.nn.modules' paths --------------------------------


def test_accelerator_device_index():
    with torch.accelerator.device_index(None), gs.accelerator.device_index(None):
        pass
    with pytest.raises(RuntimeError) as et, torch.accelerator.device_index(0):
        pass
    with pytest.raises(RuntimeError) as eg, gs.accelerator.device_index(0):
        pass
    assert str(et.value) in str(eg.value)


def test_nn_modules_paths():
    from gradstack.nn.modules.activation import MultiheadAttention, ReLU
    from gradstack.nn.modules.container import ModuleList
    from gradstack.nn.modules.conv import Conv2d, LazyConv2d
    from gradstack.nn.modules.linear import Linear
    from gradstack.nn.modules.loss import _Loss
    from gradstack.nn.modules.normalization import LayerNorm
    from gradstack.nn.modules.rnn import GRU, LSTM, RNN
    from gradstack.nn.modules.transformer import TransformerEncoder

    for cls in (MultiheadAttention, ReLU, ModuleList, Conv2d, LazyConv2d, Linear, LayerNorm,
                GRU, LSTM, RNN, TransformerEncoder):  # fmt: skip
        assert getattr(gs.nn, cls.__name__) is cls
        module = {"MultiheadAttention": "activation"}.get(cls.__name__)
        if module:
            assert hasattr(getattr(torch.nn.modules, module), cls.__name__)
    assert issubclass(gs.nn.MSELoss, _Loss)
    import gradstack.nn.modules.pixelshuffle

    assert gradstack.nn.modules.pixelshuffle.PixelShuffle is gs.nn.PixelShuffle
    with pytest.raises(AttributeError):
        gradstack.nn.modules.linear.NoSuchLayer  # noqa: B018
    # every torch.nn.modules submodule's layer that gradstack.nn has is at torch's path
    import types

    for name in dir(torch.nn.modules):
        sub = getattr(torch.nn.modules, name)
        if name.startswith("_") or not isinstance(sub, types.ModuleType):
            continue
        for layer in getattr(sub, "__all__", ()):
            if hasattr(gs.nn, layer):
                mine = getattr(gs.nn.modules, name)
                assert getattr(mine, layer) is getattr(gs.nn, layer), (name, layer)


# -- select_scatter, slice_scatter, diagonal_scatter, Tensor.matrix_exp --------------------

SCATTERS = [
    ("select", (2, 3), (3,), lambda L, x, s: L.select_scatter(x, s, 0, 1)),
    ("select dim -1", (2, 3), (2,), lambda L, x, s: L.select_scatter(x, s, -1, -1)),
    ("slice", (4, 3), (2, 3), lambda L, x, s: L.slice_scatter(x, s, 0, 1, 3)),
    ("slice step", (4, 3), (2, 3), lambda L, x, s: L.slice_scatter(x, s, start=0, step=2)),
    ("slice dim 1", (4, 3), (4, 2), lambda L, x, s: L.slice_scatter(x, s, 1, 1)),
    ("slice negative", (4, 3), (1, 3), lambda L, x, s: L.slice_scatter(x, s, 0, -1)),
    ("diagonal", (3, 3), (3,), lambda L, x, s: L.diagonal_scatter(x, s)),
    ("diagonal offset", (3, 4), (3,), lambda L, x, s: L.diagonal_scatter(x, s, 1)),
    ("diagonal dims", (2, 3, 3), (2, 3), lambda L, x, s: L.diagonal_scatter(x, s, 0, 1, 2)),
    ("method", (2, 3), (3,), lambda L, x, s: x.select_scatter(s, 0, 0)),
    ("method slice", (4, 3), (2, 3), lambda L, x, s: x.slice_scatter(s, 0, 2)),
    ("method diagonal", (3, 3), (2,), lambda L, x, s: x.diagonal_scatter(s, -1)),
]


@pytest.mark.parametrize("name, xs, ss, call", SCATTERS, ids=[c[0] for c in SCATTERS])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_view_scatters(name, xs, ss, call, dtype):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(xs).astype(dtype), rng.standard_normal(ss).astype(dtype)
    _same(call(gs, gs.tensor(a), gs.tensor(b)), call(torch, torch.tensor(a), torch.tensor(b)))
    # gradients: both inputs, against torch's and by gradcheck in float64
    xg, sg = gs.tensor(a, requires_grad=True), gs.tensor(b, requires_grad=True)
    xt, st = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    w = rng.standard_normal(xs).astype(dtype)
    (call(gs, xg, sg) * gs.tensor(w)).sum().backward()
    (call(torch, xt, st) * torch.tensor(w)).sum().backward()
    _same(xg.grad, xt.grad)
    _same(sg.grad, st.grad)
    x64 = gs.tensor(a.astype("float64"), requires_grad=True)
    s64 = gs.tensor(b.astype("float64"), requires_grad=True)
    assert gs.autograd.gradcheck(lambda x, s: call(gs, x, s), (x64, s64))


def test_view_scatters_cast_src_and_leave_input_alone():
    x, s = gs.zeros(2, 3), gs.ones(3, dtype=gs.float64)
    out = gs.select_scatter(x, s, 0, 1)
    ref = torch.select_scatter(torch.zeros(2, 3), torch.ones(3, dtype=torch.float64), 0, 1)
    _same(out, ref)
    assert x.tolist() == [[0.0] * 3] * 2  # a new tensor


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.select_scatter(L.zeros(2, 3), L.ones(2), 0, 1),
        lambda L: L.slice_scatter(L.zeros(4, 3), L.ones(3, 3), 0, 1, 3),
        lambda L: L.diagonal_scatter(L.zeros(3, 3), L.ones(2)),
        lambda L: L.select_scatter(L.zeros(2, 3), 1.0, 0, 1),
        lambda L: L.select_scatter([0.0], L.ones(3), 0, 1),
        lambda L: L.select_scatter(L.zeros(2, 3), L.ones(3), 0, 5),
    ],
)
def test_view_scatter_errors(call):
    with pytest.raises(Exception) as et:
        call(torch)
    with pytest.raises(Exception) as eg:
        call(gs)
    assert type(eg.value) is type(et.value)
    if type(et.value) is RuntimeError:
        assert str(eg.value) == str(et.value)


def test_tensor_matrix_exp():
    a = np.array([[[0.0, 1.0], [-1.0, 0.0]], [[0.5, 0.2], [0.1, -0.3]]])
    _same(gs.tensor(a).matrix_exp(), torch.tensor(a).matrix_exp())
    x = gs.tensor(a, requires_grad=True)
    assert gs.autograd.gradcheck(lambda x: x.matrix_exp(), (x,))


# -- torch's top-level forms of nn functions ----------------------------------------------

NN_FORMS = [
    ("conv3d", (1, 2, 4, 4, 4), lambda L, x: L.conv3d(x, L.ones(3, 2, 2, 2, 2, dtype=x.dtype))),
    (
        "conv_transpose3d",
        (1, 2, 3, 3, 3),
        lambda L, x: L.conv_transpose3d(x, L.ones(2, 3, 2, 2, 2, dtype=x.dtype), stride=2),
    ),
    ("channel_shuffle", (1, 4, 2, 2), lambda L, x: L.channel_shuffle(x, 2)),
    ("prelu", (2, 3, 4), lambda L, x: L.prelu(x, L.full((3,), 0.25, dtype=x.dtype))),
    ("rms_norm", (2, 3, 4), lambda L, x: L.rms_norm(x, (4,), eps=1e-6)),
    ("max_pool1d", (2, 3, 8), lambda L, x: L.max_pool1d(x, 2)),
    ("max_pool1d stride", (2, 3, 8), lambda L, x: L.max_pool1d(x, 3, 2, 1, 1, True)),
    ("max_pool2d", (2, 3, 6, 6), lambda L, x: L.max_pool2d(x, (2, 3))),
    ("max_pool3d", (1, 2, 4, 4, 4), lambda L, x: L.max_pool3d(x, 2, stride=1)),
    ("avg_pool1d", (2, 3, 8), lambda L, x: L.avg_pool1d(x, 3, 2, 1, False, False)),
    ("adaptive_avg_pool1d", (2, 3, 8), lambda L, x: L.adaptive_avg_pool1d(x, 3)),
    ("adaptive_max_pool1d", (2, 3, 8), lambda L, x: L.adaptive_max_pool1d(x, 3)),
]


@pytest.mark.parametrize("name, shape, call", NN_FORMS, ids=[c[0] for c in NN_FORMS])
def test_top_level_nn_forms(name, shape, call):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    _same(call(gs, gs.tensor(a)), call(torch, torch.tensor(a)))
    x = gs.tensor(a, requires_grad=True)

    def fn(x):
        out = call(gs, x)
        return out[0] if isinstance(out, tuple) else out

    assert gs.autograd.gradcheck(fn, (x,))


IN_PLACE_NN = [
    ("selu_", lambda L, x: L.selu_(x)),
    ("celu_", lambda L, x: L.celu_(x, 0.5)),
    ("threshold_", lambda L, x: L.threshold_(x, 0.1, -2.0)),
    ("rrelu_", lambda L, x: L.rrelu_(x, 0.1, 0.3, False)),
]


@pytest.mark.parametrize("name, call", IN_PLACE_NN, ids=[c[0] for c in IN_PLACE_NN])
def test_top_level_nn_in_place_forms(name, call):
    g, t = _pair(UNIT)
    assert call(gs, g) is g and call(torch, t) is t
    _same(g, t)


# -- nn.init.dirac_, nn.utils.rnn.invert_permutation, nn.utils' fusion ---------------------


@pytest.mark.parametrize(
    "shape, groups", [((3, 4, 5), 1), ((4, 2, 3, 3), 2), ((2, 3, 3, 3, 3), 1), ((6, 4, 2, 2), 3)]
)
def test_dirac(shape, groups):
    g, t = gs.empty(*shape), torch.empty(*shape)
    assert gs.nn.init.dirac_(g, groups) is g
    torch.nn.init.dirac_(t, groups)
    _same(g, t, exact=True)
    w = gs.nn.Parameter(gs.ones(*shape))
    gs.nn.init.dirac_(w, groups)
    assert w.requires_grad and w.grad_fn is None


def test_dirac_errors():
    for lib in (gs, torch):
        with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions"):
            lib.nn.init.dirac_(lib.empty(2, 2))
        with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
            lib.nn.init.dirac_(lib.empty(3, 2, 2), 2)


def test_invert_permutation():
    from gradstack.nn.utils.rnn import invert_permutation
    from torch.nn.utils.rnn import invert_permutation as t_invert

    assert invert_permutation(None) is None is t_invert(None)
    p = [3, 0, 2, 1]
    _same(invert_permutation(gs.tensor(p)), t_invert(torch.tensor(p)), exact=True)


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn(transpose, bias):
    torch.manual_seed(0)
    if transpose:
        tc, gc = (
            torch.nn.ConvTranspose2d(2, 3, 3, bias=bias),
            gs.nn.ConvTranspose2d(2, 3, 3, bias=bias),
        )
    else:
        tc, gc = torch.nn.Conv2d(2, 3, 3, bias=bias), gs.nn.Conv2d(2, 3, 3, bias=bias)
    tb, gb = torch.nn.BatchNorm2d(3), gs.nn.BatchNorm2d(3)
    tb(torch.randn(4, 3, 2, 2) * 3 + 1)  # running statistics
    for t, g in ((tc, gc), (tb, gb)):
        g.load_state_dict({k: gs.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
        t.eval()
        g.eval()
    ft = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    fg = gs.nn.utils.fuse_conv_bn_eval(gc, gb, transpose)
    assert type(fg.weight) is gs.nn.Parameter and fg is not gc
    _same(fg.weight, ft.weight)
    _same(fg.bias, ft.bias)
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5)).astype("float32")
    np.testing.assert_allclose(
        fg(gs.tensor(x)).detach().numpy(),
        ft(torch.tensor(x)).detach().numpy(),
        rtol=1e-5,
        atol=1e-5,
    )
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        gs.nn.utils.fuse_conv_bn_eval(gc.train(), gb)


def test_fuse_linear_bn():
    torch.manual_seed(1)
    tl, gl = torch.nn.Linear(4, 3), gs.nn.Linear(4, 3)
    tb, gb = torch.nn.BatchNorm1d(3), gs.nn.BatchNorm1d(3)
    tb(torch.randn(8, 3) * 2 - 1)
    for t, g in ((tl, gl), (tb, gb)):
        g.load_state_dict({k: gs.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
        t.eval()
        g.eval()
    ft, fg = torch.nn.utils.fuse_linear_bn_eval(tl, tb), gs.nn.utils.fuse_linear_bn_eval(gl, gb)
    _same(fg.weight, ft.weight)
    _same(fg.bias, ft.bias)
    w, b = gs.nn.utils.fuse_linear_bn_weights(
        gl.weight, None, gb.running_mean, gb.running_var, gb.eps, gb.weight, gb.bias
    )
    wt, bt = torch.nn.utils.fuse_linear_bn_weights(
        tl.weight, None, tb.running_mean, tb.running_var, tb.eps, tb.weight, tb.bias
    )
    _same(w, wt)
    _same(b, bt)
    assert b.requires_grad == bt.requires_grad


def test_distributed_probes(monkeypatch):
    import gradstack.distributed as gd
    import torch.distributed as td

    assert gd.is_gloo_available() is False  # gradstack's one backend is MPI
    assert gd.is_nccl_available() is td.is_nccl_available() is False
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert gd.is_torchelastic_launched() is td.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
    assert gd.is_torchelastic_launched() is td.is_torchelastic_launched() is True


# -- linalg.vander, linalg.diagonal -------------------------------------------------------


@pytest.mark.parametrize(
    "values", [[1.0, 2.0, 3.0], [[1, 2], [3, 4]], [[0.5, -1.0, 2.0], [3.0, 0.0, 1.5]]]
)
@pytest.mark.parametrize("N", [None, 2, 4])
def test_linalg_vander(values, N):
    a = np.asarray(values)
    _same(gs.linalg.vander(gs.tensor(a), N=N), torch.linalg.vander(torch.tensor(a), N=N), True)
    if a.dtype.kind == "f":
        x = gs.tensor(a, requires_grad=True)
        assert gs.autograd.gradcheck(lambda x: gs.linalg.vander(x, N=N), (x,))


def test_linalg_vander_errors():
    for call in (
        lambda L: L.linalg.vander(L.tensor([True, False])),
        lambda L: L.linalg.vander(L.tensor([1.0, 2.0]), N=1),
        lambda L: L.linalg.vander(L.tensor(1.0)),
    ):
        with pytest.raises(RuntimeError) as et:
            call(torch)
        with pytest.raises(RuntimeError) as eg:
            call(gs)
        assert str(eg.value) == str(et.value)


def test_linalg_diagonal():
    a = np.arange(24.0).reshape(2, 3, 4)
    for kwargs in ({}, {"offset": 1}, {"offset": -1, "dim1": 0, "dim2": 2}):
        _same(
            gs.linalg.diagonal(gs.tensor(a), **kwargs),
            torch.linalg.diagonal(torch.tensor(a), **kwargs),
            True,
        )
    x = gs.tensor(a, requires_grad=True)
    assert gs.autograd.gradcheck(lambda x: gs.linalg.diagonal(x, offset=1), (x,))
    with pytest.raises(IndexError):
        torch.linalg.diagonal(torch.ones(3))
    with pytest.raises(IndexError):
        gs.linalg.diagonal(gs.ones(3))


def test_set_multithreading_enabled():
    import threading

    for lib in (gs, torch):
        ag = lib.autograd
        assert ag.is_multithreading_enabled() is True
        with ag.set_multithreading_enabled(False):
            assert ag.is_multithreading_enabled() is False
            seen: list = []
            other = threading.Thread(
                target=lambda a=ag, seen=seen: seen.append(a.is_multithreading_enabled())
            )
            other.start()
            other.join()
            assert seen == [True]  # per thread
        assert ag.is_multithreading_enabled() is True

        @ag.set_multithreading_enabled(False)
        def inside(a=ag):
            return a.is_multithreading_enabled()

        # torch's quirk, kept: the decorator's construction switches it off at once
        assert inside() is False and ag.is_multithreading_enabled() is False
        ag.set_multithreading_enabled(True)
        assert ag.is_multithreading_enabled() is True
    # backward runs and gives the same gradient with the switch off
    x = gs.tensor([1.0, 2.0], requires_grad=True)
    with gs.autograd.set_multithreading_enabled(False):
        (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_checkpoint_noop_context_fn_and_early_stop():
    import gradstack.utils.checkpoint as gc
    import torch.utils.checkpoint as tc

    for mod in (gc, tc):
        f, r = mod.noop_context_fn()
        with f, r:
            pass
    w = gs.tensor([[2.0]], requires_grad=True)
    wt = torch.tensor([[2.0]], requires_grad=True)
    for enable in (False, True):
        with gc.set_checkpoint_early_stop(enable):
            out = gc.checkpoint(
                lambda x: (x @ w).tanh(),
                gs.ones(3, 1),
                use_reentrant=False,
                context_fn=gc.noop_context_fn,
            )
        with tc.set_checkpoint_early_stop(enable):
            outt = tc.checkpoint(
                lambda x: (x @ wt).tanh(),
                torch.ones(3, 1),
                use_reentrant=False,
                context_fn=tc.noop_context_fn,
            )
        out.sum().backward()
        outt.sum().backward()
        _same(w.grad, wt.grad)
