"""The nn modules against torch.nn: defaults, repr, state_dict keys and dtypes, default
initialisation, outputs and gradients (with torch's weights copied in), train/eval
behaviour, running statistics, lazy initialisation, containers, Unflatten, DataParallel,
and the names nn exports.  (Each family's own tests are in test_<family>_torch.py.)"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_nn as nn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import optim
from gradstack_nn_tests_oracle import assert_module_matches_torch
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")
TNN = torch.nn
RNG = np.random.default_rng(1)


def _public_attrs(m):
    return {k: v for k, v in vars(m).items() if not k.startswith("_") and k != "training"}


def _sd_layout(sd):
    return [
        (k, tuple(v.shape), (v.dtype.name if isinstance(v, gt.Tensor) else str(v.dtype)[6:]))
        for k, v in sd.items()
    ]


PAIRS = [
    ("Embedding(10, 3)", lambda M: M.Embedding(10, 3)),
    (
        "Embedding options",
        lambda M: M.Embedding(
            10, 3, padding_idx=-2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True
        ),
    ),
    ("LayerNorm(4)", lambda M: M.LayerNorm(4)),
    ("LayerNorm no affine", lambda M: M.LayerNorm([3, 4], eps=1e-6, elementwise_affine=False)),
    ("LayerNorm no bias", lambda M: M.LayerNorm(4, bias=False)),
    ("BatchNorm1d(5)", lambda M: M.BatchNorm1d(5)),
    (
        "BatchNorm1d options",
        lambda M: M.BatchNorm1d(
            5, eps=1e-3, momentum=None, affine=False, track_running_stats=False
        ),
    ),
    ("BatchNorm1d no bias", lambda M: M.BatchNorm1d(5, bias=False)),
    ("Dropout", lambda M: M.Dropout()),
    ("Dropout(0.2, True)", lambda M: M.Dropout(0.2, inplace=True)),
    ("Tanh", lambda M: M.Tanh()),
    ("Sigmoid", lambda M: M.Sigmoid()),
    ("GELU", lambda M: M.GELU()),
    ("GELU tanh", lambda M: M.GELU("tanh")),
    ("SiLU", lambda M: M.SiLU()),
    ("SiLU inplace", lambda M: M.SiLU(inplace=True)),
    ("Softmax", lambda M: M.Softmax(dim=1)),
    ("Softmax None", lambda M: M.Softmax()),
    ("LogSoftmax", lambda M: M.LogSoftmax(1)),
    ("Flatten", lambda M: M.Flatten()),
    ("Flatten(0, 2)", lambda M: M.Flatten(0, 2)),
    ("Identity", lambda M: M.Identity(3, x=2)),
    ("LeakyReLU", lambda M: M.LeakyReLU(0.2, True)),
    ("LazyLinear", lambda M: M.LazyLinear(3)),
    ("LazyLinear no bias", lambda M: M.LazyLinear(3, bias=False)),
    ("ModuleList", lambda M: M.ModuleList([M.Linear(2, 2), M.ReLU()])),
    ("ModuleDict", lambda M: M.ModuleDict({"b": M.Linear(2, 2), "a": M.ReLU()})),
    ("empty containers", lambda M: M.Sequential(M.ModuleList(), M.ModuleDict())),
    ("CrossEntropyLoss", lambda M: M.CrossEntropyLoss()),
    (
        "CrossEntropyLoss options",
        lambda M: M.CrossEntropyLoss(
            weight=ones(M, 3), ignore_index=2, reduction="sum", label_smoothing=0.1
        ),
    ),
    ("BCELoss", lambda M: M.BCELoss(weight=ones(M, 3))),
    ("BCEWithLogitsLoss", lambda M: M.BCEWithLogitsLoss(pos_weight=ones(M, 3))),
    ("L1Loss", lambda M: M.L1Loss()),
    ("SmoothL1Loss", lambda M: M.SmoothL1Loss(beta=0.5)),
    ("HuberLoss", lambda M: M.HuberLoss(delta=2.0)),
    ("NLLLoss", lambda M: M.NLLLoss()),
    ("MSELoss", lambda M: M.MSELoss(reduction="sum")),
    ("legacy reduction", lambda M: M.MSELoss(size_average=False)),
    ("DataParallel", lambda M: M.DataParallel(M.Linear(2, 3))),
]


def ones(M, n):
    return gt.ones(n) if M is nn else torch.ones(n)


@pytest.mark.parametrize("build", [p[1] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_repr_attributes_and_state_dict_layout_match_torch(build):
    with pytest.warns(UserWarning) if build is PAIRS[-2][1] else _nothing():
        g = build(nn)
    with pytest.warns(UserWarning) if build is PAIRS[-2][1] else _nothing():
        t = build(TNN)
    assert repr(g) == repr(t)
    assert _public_attrs(g).keys() == _public_attrs(t).keys()
    for key, value in _public_attrs(t).items():
        if not isinstance(value, (torch.Tensor, TNN.Module)):
            assert _public_attrs(g)[key] == value, key
    if "Lazy" not in repr(g):
        assert _sd_layout(g.state_dict()) == _sd_layout(t.state_dict())
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in g.named_buffers()] == [n for n, _ in t.named_buffers()]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_parameter_list_matches_torch():
    g = nn.ParameterList([nn.Parameter(gt.zeros(3, 4)), gt.zeros(3, dtype=gt.float64)])
    t = TNN.ParameterList([TNN.Parameter(torch.zeros(3, 4)), torch.zeros(3, dtype=torch.float64)])
    assert repr(g) == repr(t).replace("torch.", "gradstack.")
    assert isinstance(g[1], nn.Parameter) and g[1].requires_grad
    g.append(gt.ones(2))
    g.extend([nn.Parameter(gt.ones(1))])
    t.append(torch.ones(2))
    t.extend([TNN.Parameter(torch.ones(1))])
    assert len(g) == len(t) == 4
    assert list(g.state_dict()) == list(t.state_dict()) == ["0", "1", "2", "3"]
    assert g[-1].tolist() == [1.0] and len(g[1:3]) == 2
    g[0] = gt.full((2,), 5.0)
    assert isinstance(g[0], nn.Parameter) and g[0].tolist() == [5.0, 5.0]
    assert len(list(optim.SGD(g.parameters(), lr=0.1).param_groups[0]["params"])) == 4
    with pytest.raises(IndexError):
        g[4]
    single = nn.ParameterList([nn.Parameter(gt.zeros(2))])
    assert repr(single) == repr(TNN.ParameterList([TNN.Parameter(torch.zeros(2))])).replace(
        "torch.", "gradstack."
    )


def test_module_dict_operations_match_torch():
    def ops(M):
        d = M.ModuleDict([("x", M.Linear(2, 2)), ("y", M.ReLU())])
        d.update({"z": M.Tanh()})
        d["w"] = M.Linear(2, 1)
        popped = d.pop("y")
        del d["x"]
        return d, type(popped).__name__, list(d.keys()), "z" in d, len(d), list(iter(d))

    g, t = ops(nn), ops(TNN)
    assert g[1:] == t[1:]
    assert repr(g[0]) == repr(t[0])
    assert list(g[0].state_dict()) == list(t[0].state_dict())
    with pytest.raises(TypeError, match="should be called with an iterable"):
        g[0].update(3)
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        g[0].update([("a",)])


def _copy_weights(g, t):
    g.load_state_dict(
        {k: gt.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()}
    )


def _run_both(g, t, x, steps=1):
    """Forward and backward both modules on ``x`` ``steps`` times; outputs and parameter
    gradients agree with torch's every time."""
    for _ in range(steps):
        gx, tx = gt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        go, to = g(gx), t(tx)
        np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert go.grad_fn.name() == type(to.grad_fn).__name__
        v = RNG.standard_normal(tuple(to.shape))
        gp, tp = list(g.parameters()), list(t.parameters())
        gg = ag.grad(go, [gx, *gp], gt.tensor(v))
        tg = torch.autograd.grad(to, [tx, *tp], torch.tensor(v))
        for a, b in zip(gg, tg):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "build, shape",
    [
        (lambda M: M.LayerNorm(4), (5, 4)),
        (lambda M: M.LayerNorm([3, 4], elementwise_affine=False), (2, 3, 4)),
        (lambda M: M.GELU(), (5, 4)),
        (lambda M: M.GELU("tanh"), (5, 4)),
        (lambda M: M.SiLU(), (5, 4)),
        (lambda M: M.Tanh(), (5, 4)),
        (lambda M: M.Sigmoid(), (5, 4)),
        (lambda M: M.LogSoftmax(1), (5, 4)),
        (lambda M: M.Sequential(M.Linear(4, 6), M.LayerNorm(6), M.GELU(), M.Linear(6, 2)), (7, 4)),
    ],
    ids=[
        "LayerNorm",
        "LayerNorm-2d",
        "GELU",
        "GELU-tanh",
        "SiLU",
        "Tanh",
        "Sigmoid",
        "LogSoftmax",
        "MLP",
    ],
)
def test_outputs_and_gradients_with_torchs_weights(build, shape):
    t = build(TNN).double()
    g = build(nn).double()
    _copy_weights(g, t)
    x = RNG.standard_normal(shape)
    x = np.where(np.abs(x) < 0.05, 0.1, x)
    _run_both(g, t, x)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"momentum": None},
        {"affine": False},
        {"track_running_stats": False},
        {"momentum": 0.5},
        {"bias": False},
    ],
    ids=["default", "cumulative", "no-affine", "no-stats", "momentum", "no-bias"],
)
@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
def test_batchnorm1d_train_then_eval_matches_torch(kwargs, shape):
    t = TNN.BatchNorm1d(3, **kwargs).double()
    g = nn.BatchNorm1d(3, **kwargs).double()
    if kwargs.get("affine", True):
        with torch.no_grad():
            t.weight.uniform_(0.5, 1.5)
            if t.bias is not None:
                t.bias.uniform_(-0.5, 0.5)
    _copy_weights(g, t)
    for _ in range(3):
        _run_both(g, t, RNG.standard_normal(shape) * 2 + 1)
    for (name, a), b in zip(g.named_buffers(), t.buffers()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=name)
        assert a.dtype.name == str(b.dtype)[6:]
    g.eval()
    t.eval()
    _run_both(g, t, RNG.standard_normal(shape))
    if g.num_batches_tracked is not None:
        assert g.num_batches_tracked.item() == t.num_batches_tracked.item() == 3


def test_batchnorm1d_checks_its_input():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(gt.zeros(2, 3, 2, 2))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(gt.zeros(1, 3))
    bn = nn.BatchNorm1d(3).eval()
    assert bn(gt.zeros(1, 3)).shape == (1, 3)  # eval: running statistics, one sample is fine


def test_embedding_with_torchs_weights():
    t = TNN.Embedding(7, 3, padding_idx=1, scale_grad_by_freq=True).double()
    g = nn.Embedding(7, 3, padding_idx=1, scale_grad_by_freq=True).double()
    _copy_weights(g, t)
    idx = np.array([[1, 2, 2], [6, 0, 2]])
    go, to = g(gt.tensor(idx)), t(torch.tensor(idx))
    np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy())
    v = RNG.standard_normal(tuple(to.shape))
    go.backward(gt.tensor(v))
    to.backward(torch.tensor(v))
    np.testing.assert_allclose(g.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-12)
    assert g.weight.grad.numpy()[1].tolist() == [0.0, 0.0, 0.0]
    assert go.grad_fn.name() == "EmbeddingBackward0"
    pre = torch.tensor(RNG.standard_normal((4, 2)))
    gp = nn.Embedding.from_pretrained(gt.tensor(pre.numpy()))
    tp = TNN.Embedding.from_pretrained(pre)
    assert repr(gp) == repr(tp) and gp.weight.requires_grad is tp.weight.requires_grad is False
    with pytest.raises(RuntimeError, match="sparse"):
        nn.Embedding(3, 2, sparse=True)


def test_default_initialisations_follow_torchs_distributions():
    gt.manual_seed(0)
    emb = nn.Embedding(2000, 50)
    w = emb.weight.detach().numpy()
    assert abs(w.mean()) < 0.01 and abs(w.std() - 1.0) < 0.01  # N(0, 1), as torch
    assert nn.Embedding(5, 2, padding_idx=3).weight[3].tolist() == [0.0, 0.0]
    ln = nn.LayerNorm(6)
    assert ln.weight.tolist() == [1.0] * 6 and ln.bias.tolist() == [0.0] * 6
    bn = nn.BatchNorm1d(4)
    assert bn.weight.tolist() == [1.0] * 4 and bn.running_var.tolist() == [1.0] * 4
    assert bn.num_batches_tracked.dtype == gt.int64
    lazy = nn.LazyLinear(300)
    lazy(gt.zeros(2, 400))
    bound = 1 / 400**0.5
    w = lazy.weight.detach().numpy()
    assert w.min() >= -bound and w.max() <= bound and w.max() > 0.95 * bound
    # the same seed gives the same weights (gradstack's generator, not torch's stream)
    gt.manual_seed(5)
    a = nn.Embedding(4, 3).weight.detach().numpy()
    gt.manual_seed(5)
    assert (nn.Embedding(4, 3).weight.detach().numpy() == a).all()


def test_lazy_linear_lifecycle_matches_torch():
    g, t = nn.LazyLinear(3), TNN.LazyLinear(3)
    assert isinstance(g.weight, nn.UninitializedParameter) and repr(g.weight) == repr(t.weight)
    assert g.in_features == t.in_features == 0 and g.has_uninitialized_params()
    opt = optim.Adam(g.parameters(), lr=0.1)  # built before the first call, as people do
    y = g(gt.ones(2, 5))
    t(torch.ones(2, 5))
    assert type(g).__name__ == type(t).__name__ == "Linear" and repr(g) == repr(t)
    assert g.in_features == 5 and tuple(g.weight.shape) == (3, 5)
    assert type(g.weight) is nn.Parameter and y.grad_fn.name() == "AddmmBackward0"
    before = g.weight.detach().numpy().copy()
    y.sum().backward()
    opt.step()
    assert not np.allclose(g.weight.detach().numpy(), before)  # the optimiser saw them
    seq_g = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    seq_t = TNN.Sequential(TNN.LazyLinear(4), TNN.ReLU(), TNN.LazyLinear(2))
    assert repr(seq_g) == repr(seq_t)
    seq_g(gt.ones(1, 7))
    seq_t(torch.ones(1, 7))
    assert repr(seq_g) == repr(seq_t)
    d = nn.LazyLinear(2).double()
    d(gt.ones(1, 3, dtype=gt.float64))
    assert d.weight.dtype == gt.float64
    # loading a state dict materialises the parameters with the loaded shapes, as torch
    g2, t2 = nn.LazyLinear(3), TNN.LazyLinear(3)
    g2.load_state_dict({"weight": gt.zeros(3, 6), "bias": gt.ones(3)})
    t2.load_state_dict({"weight": torch.zeros(3, 6), "bias": torch.ones(3)})
    assert tuple(g2.weight.shape) == tuple(t2.weight.shape) == (3, 6)
    assert g2.bias.tolist() == [1.0, 1.0, 1.0] and repr(g2) == repr(t2)
    assert g2(gt.ones(1, 6)).tolist() == [[1.0, 1.0, 1.0]]


def test_lazy_state_dict_holds_uninitialized_parameters_as_torch():
    g, t = nn.LazyLinear(3), TNN.LazyLinear(3)
    sd_g, sd_t = g.state_dict(), t.state_dict()
    assert repr(sd_g) == repr(sd_t)  # OrderedDict([('weight', <UninitializedParameter>), ...
    assert all(isinstance(v, nn.UninitializedParameter) for v in sd_g.values())
    # a lazy dict loaded into a lazy module leaves it lazy; into an initialised one it raises
    g2, t2 = nn.LazyLinear(3), TNN.LazyLinear(3)
    assert str(g2.load_state_dict(sd_g)) == str(t2.load_state_dict(sd_t))
    assert repr(g2.weight) == repr(t2.weight) == "<UninitializedParameter>"
    assert g2.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="uninitialized parameter") as eg:
        nn.Linear(4, 3).load_state_dict(sd_g)
    with pytest.raises(RuntimeError) as et:
        TNN.Linear(4, 3).load_state_dict(sd_t)
    assert str(eg.value) == str(et.value)
    # keep_vars and an initialised module are as before: detached tensors
    g(gt.ones(1, 2))
    assert type(g.state_dict()["weight"]) is gt.Tensor


def test_dropout_module_train_and_eval():
    gt.manual_seed(0)
    m = nn.Dropout(0.25)
    x = gt.ones(4000)
    y = m(x)
    assert 0.73 < (y.numpy() != 0).mean() < 0.77
    m.eval()
    assert m(x) is x


def test_loss_modules_match_torch():
    x, y = RNG.standard_normal((5, 3)), RNG.uniform(0, 1, (5, 3))
    t_idx = np.array([0, 2, 1, 1, 2])
    w = np.array([1.0, 2.0, 0.5])
    cases = [
        (lambda M, L: M.CrossEntropyLoss(weight=L.tensor(w), label_smoothing=0.1), x, t_idx),
        (lambda M, L: M.NLLLoss(weight=L.tensor(w), ignore_index=1), x, t_idx),
        (lambda M, L: M.BCELoss(weight=L.tensor(w)), 1 / (1 + np.exp(-x)), y),
        (lambda M, L: M.BCEWithLogitsLoss(weight=L.tensor(w), pos_weight=L.tensor(w)), x, y),
        (lambda M, L: M.SmoothL1Loss(beta=0.5, reduction="sum"), x, y),
        (lambda M, L: M.HuberLoss(delta=0.7, reduction="none"), x, y),
        (lambda M, L: M.L1Loss(), x, y),
        (lambda M, L: M.MSELoss(), x, y),
    ]
    for build, a, b in cases:
        gm, tm = build(nn, gt), build(TNN, torch)
        ga, ta = gt.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        go, to = gm(ga, gt.tensor(b)), tm(ta, torch.tensor(b))
        np.testing.assert_allclose(go.detach().numpy(), to.detach().numpy(), rtol=1e-10)
        assert go.grad_fn.name() == type(to.grad_fn).__name__
        go.sum().backward()
        to.sum().backward()
        np.testing.assert_allclose(ga.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-14)
    bad = nn.MSELoss(reduction="avg")  # as torch: reported by the call
    with pytest.raises(ValueError, match="avg is not a valid value for reduction"):
        bad(gt.zeros(2), gt.zeros(2))


def test_data_parallel_is_a_pass_through():
    inner = nn.Linear(3, 2)
    g, t = (
        nn.DataParallel(inner, device_ids=[0]),
        TNN.DataParallel(TNN.Linear(3, 2), device_ids=[0]),
    )
    assert g.device_ids == t.device_ids == [] and g.module is inner
    x = gt.ones(4, 3)
    assert gt.equal(g(x), inner(x))
    assert list(g.state_dict()) == list(t.state_dict()) == ["module.weight", "module.bias"]
    g2 = nn.DataParallel(nn.Linear(3, 2))
    g2.load_state_dict(g.state_dict())
    assert gt.equal(g2(x), g(x))
    with pytest.raises(TypeError, match="DataParallel expects a Module"):
        nn.DataParallel(3)


def test_unflatten_matches_torch():
    x = np.random.default_rng(0).uniform(-5, 5, (2, 3, 5, 6))
    assert_module_matches_torch("Unflatten", (1, (3, 1)), lambda L: L.tensor(x, dtype=L.float32))


def test_names_are_exported():
    for name in ("Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
                 "AdaptiveMaxPool3d", "EmbeddingBag"):  # fmt: skip
        assert name in gs.nn.__all__ and name in gs.nn.modules.__all__
    for name in ("affine_grid", "grid_sample", "conv3d", "conv_transpose3d", "max_pool3d",
                 "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d",
                 "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "gumbel_softmax",
                 "embedding_bag"):  # fmt: skip
        assert name in gs.nn.functional.__all__
        assert hasattr(torch.nn.functional, name)


def test_every_exported_name_resolves():
    """``gradstack_nn.__all__`` (the families' lists) names what its star imports bound."""
    for module in (gs.nn, gs.nn.modules, gs.nn.functional, gs.nn.optim, gs.nn.optim.lr_scheduler):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"
