"""``gradstack.bfloat16`` and ``gradstack.autocast("cpu")`` against torch 2.13.

The dtype (promotion, finfo, conversions, printing, creation), the common ops bit for bit
(torch and gradstack both compute a bfloat16 op in float32 and round once: Note [bfloat16
is stored by ml_dtypes and computed in float32]), gradients, and CPU autocast: which ops
run in bfloat16 and which in float32 (Note [Autocast is a dispatch layer]), its state
functions and errors, ``custom_fwd``/``custom_bwd``, and a small MLP trained under
autocast giving torch's losses.
"""

from __future__ import annotations

import math
import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(35)
DTYPES = [
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def _bits(t) -> np.ndarray:
    """A bfloat16 tensor's values as float32 numpy (exact), for either library."""
    if isinstance(t, torch.Tensor):
        return t.detach().float().numpy()
    return t.detach().float().numpy()


def _assert_bit_equal(g, t, what=""):
    assert str(g.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    a, b = _bits(g), _bits(t)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    assert same.all(), f"{what}: {int((~same).sum())} of {same.size} differ from torch's"


# ---------------------------------------------------------------------------------------
# The dtype


def test_dtype_names_and_predicates():
    assert repr(gs.bfloat16) == "gradstack.bfloat16"
    assert gs.bfloat16.is_floating_point and not gs.bfloat16.is_complex
    assert gs.bfloat16.itemsize == torch.bfloat16.itemsize == 2
    x = gs.ones(2, dtype=gs.bfloat16)
    assert x.is_floating_point() and x.dtype is gs.bfloat16
    assert x.type() == "gradstack.BFloat16Tensor"
    assert gs.typename(x) == "torch.BFloat16Tensor"
    assert gs.BFloat16Tensor([1, 2]).dtype is gs.bfloat16


def test_finfo_is_torchs():
    g, t = gs.finfo(gs.bfloat16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(g, name) == getattr(t, name), name


@pytest.mark.parametrize("other", DTYPES)
def test_promote_types_is_torchs(other):
    g = gs.promote_types(gs.bfloat16, getattr(gs, other))
    t = torch.promote_types(torch.bfloat16, getattr(torch, other))
    assert g.name == str(t).removeprefix("torch.")
    g = gs.promote_types(getattr(gs, other), gs.bfloat16)
    assert g.name == str(t).removeprefix("torch.")


@pytest.mark.parametrize(
    "make",
    [
        lambda L, x: x + 1,
        lambda L, x: x + 1.5,
        lambda L, x: x * True,
        lambda L, x: x + L.ones(3, dtype=L.float16),
        lambda L, x: x + L.ones(3),
        lambda L, x: x + L.tensor(2.0),
        lambda L, x: x[0] + L.tensor(2.0),
        lambda L, x: x + L.ones(3, dtype=L.int64),
        lambda L, x: x.sum(dtype=L.float32),
        lambda L, x: x.float(),
        lambda L, x: x.to(L.float64),
        lambda L, x: L.ones(3).to(L.bfloat16) * x,
        lambda L, x: x > 0.5,
        lambda L, x: x.argmax(),
        lambda L, x: L.cat([x, L.ones(3)]),
        lambda L, x: L.where(x > 1, x, 0.5),
    ],
)
def test_result_dtypes_are_torchs(make):
    data = [1.0, 2.5, -3.0]
    g = make(gs, gs.tensor(data, dtype=gs.bfloat16))
    t = make(torch, torch.tensor(data, dtype=torch.bfloat16))
    assert g.dtype.name == str(t.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(g.float().numpy(), t.float().numpy())


def test_conversion_rounds_as_torch():
    # random float32 plus halfway cases, subnormals, the largest values, inf and NaN
    x = RNG.standard_normal(20000).astype(np.float32) * np.float32(3.0) ** RNG.integers(
        -30, 30, 20000
    ).astype(np.float32)
    halfway = (np.arange(1, 2000, dtype=np.uint32) << 15 | (1 << 15)).view(np.float32)
    special = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 3.3895314e38, 3.4e38, 1e-40, -1e-45, 1.0],
        dtype=np.float32,
    )
    x = np.concatenate([x, halfway, special])
    _assert_bit_equal(gs.from_numpy(x).bfloat16(), torch.from_numpy(x).bfloat16(), "to")
    _assert_bit_equal(
        gs.tensor(x.astype(np.float64), dtype=gs.bfloat16),
        torch.tensor(x.astype(np.float64), dtype=torch.bfloat16),
        "tensor(float64 data)",
    )
    g, t = gs.from_numpy(x).bfloat16(), torch.from_numpy(x).bfloat16()
    for name in ("float16", "float64", "int32"):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            finite = np.isfinite(x) & (np.abs(x) < 1e9)
            gv = g.to(getattr(gs, name)).numpy()[finite]
            tv = t.to(getattr(torch, name)).numpy()[finite]
        np.testing.assert_array_equal(gv, tv, err_msg=name)


def test_creation_functions_take_bfloat16():
    for name, args in [
        ("zeros", (2, 3)),
        ("ones", (2, 3)),
        ("empty", (2, 3)),
        ("eye", (3,)),
        ("full", ((2,), 1 / 3)),
        ("arange", (0, 2, 0.25)),
        ("linspace", (0, 1, 5)),
        ("randn", (4,)),
        ("rand", (4,)),
        ("tensor", ([0.1, 1e10, -2.7],)),
    ]:
        g = getattr(gs, name)(*args, dtype=gs.bfloat16)
        t = getattr(torch, name)(*args, dtype=torch.bfloat16)
        assert g.dtype is gs.bfloat16 and tuple(g.shape) == tuple(t.shape), name
        if name not in ("empty", "randn", "rand"):
            _assert_bit_equal(g, t, name)
    assert gs.zeros_like(gs.ones(2), dtype=gs.bfloat16).dtype is gs.bfloat16
    assert gs.ones(2).new_zeros(3, dtype=gs.bfloat16).dtype is gs.bfloat16


def test_set_default_dtype_bfloat16():
    torch.set_default_dtype(torch.bfloat16)
    gs.set_default_dtype(gs.bfloat16)
    try:
        assert gs.get_default_dtype() is gs.bfloat16
        g, t = gs.tensor([1 / 3, 2.0]), torch.tensor([1 / 3, 2.0])
        _assert_bit_equal(g, t)
        assert (gs.ones(2) * 0.1).dtype is gs.bfloat16
        assert (gs.arange(3) * 0.5).dtype is gs.bfloat16
    finally:
        torch.set_default_dtype(torch.float32)
        gs.set_default_dtype(gs.float32)


def test_printing_is_torchs():
    data = [[1 / 3, -2.5e-3, 1000.0], [float("nan"), float("inf"), 0.0]]
    g, t = gs.tensor(data, dtype=gs.bfloat16), torch.tensor(data, dtype=torch.bfloat16)
    assert repr(g) == repr(t).replace("torch.", "gradstack.")
    g.requires_grad_()
    t.requires_grad_()
    assert repr(g * 2) == repr(t * 2).replace("torch.", "gradstack.")
    assert str(g.tolist()) == str(t.tolist())
    assert g[0, 0].item() == t[0, 0].item()


def test_numpy_gives_the_bfloat16_array():
    # torch refuses (no numpy bfloat16); gradstack's storage is ml_dtypes' numpy bfloat16
    import ml_dtypes

    a = gs.ones(3, dtype=gs.bfloat16).numpy()
    assert a.dtype == ml_dtypes.bfloat16
    assert gs.from_numpy(a).dtype is gs.bfloat16


# ---------------------------------------------------------------------------------------
# Values bit for bit


X = (RNG.standard_normal((64, 300)) * 3).astype(np.float32)
Y = RNG.standard_normal((300, 50)).astype(np.float32)

BIT_EQUAL = {
    "add": lambda L, x, y: x + x.flip(0),
    "sub": lambda L, x, y: x - 0.3,
    "add_alpha": lambda L, x, y: x.add(x.flip(1), alpha=0.3),
    "rsub": lambda L, x, y: 0.3 - x,
    "add_0d": lambda L, x, y: x + L.tensor(0.3),
    "add_int": lambda L, x, y: x * 100 + 257,
    "mul": lambda L, x, y: x * 1.7,
    "div": lambda L, x, y: x / 3,
    "matmul": lambda L, x, y: x @ y,
    "mm": lambda L, x, y: L.mm(x, y),
    "exp": lambda L, x, y: x.exp(),
    "tanh": lambda L, x, y: x.tanh(),
    "sigmoid": lambda L, x, y: x.sigmoid(),
    "log": lambda L, x, y: x.abs().log(),
    "sqrt": lambda L, x, y: x.abs().sqrt(),
    "relu": lambda L, x, y: x.relu(),
    "softmax": lambda L, x, y: x.softmax(-1),
    "sum": lambda L, x, y: x.sum(),
    "sum_dim0": lambda L, x, y: x.sum(0),
    "sum_dim1": lambda L, x, y: x.sum(1),
    "mean": lambda L, x, y: x.mean(),
    "mean_dim0": lambda L, x, y: x.mean(0),
    "linear": lambda L, x, y: L.nn.functional.linear(x, y.t(), y[0]),
    "pow": lambda L, x, y: x.pow(2),
    "ones_sum": lambda L, x, y: L.ones(1000, dtype=L.bfloat16).sum(),
}


@pytest.mark.parametrize("name", sorted(BIT_EQUAL))
def test_common_ops_bit_equal_to_torch(name):
    f = BIT_EQUAL[name]
    g = f(gs, gs.from_numpy(X).bfloat16(), gs.from_numpy(Y).bfloat16())
    t = f(torch, torch.from_numpy(X).bfloat16(), torch.from_numpy(Y).bfloat16())
    _assert_bit_equal(g, t, name)


def test_inplace_ops_write_bfloat16_through_views():
    for L in (gs, torch):
        base = L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.bfloat16)
        row = base[1]
        row.mul_(1 / 3)
        base.add_(0.01)
        if L is gs:
            g = base
        else:
            t = base
    _assert_bit_equal(g, t)
    assert g._version == 2


GRAD_BIT_EQUAL = {
    "tanh_linear": lambda L, a, b: L.nn.functional.linear(a, b.t()).tanh(),
    "sigmoid": lambda L, a, b: a.sigmoid() * 2,
    "softmax": lambda L, a, b: a.softmax(-1),
    "mul_sum": lambda L, a, b: (a * a).sum(0),
    "mean": lambda L, a, b: (a @ b).mean(),
    "exp": lambda L, a, b: (a * 0.3).exp(),
    "broadcast_add": lambda L, a, b: a + b[:, :1].t()[:, :40],
}


@pytest.mark.parametrize("name", sorted(GRAD_BIT_EQUAL))
def test_gradients_bit_equal_to_torch(name):
    f = GRAD_BIT_EQUAL[name]
    x = (RNG.standard_normal((16, 40)) * 2).astype(np.float32)
    w = (RNG.standard_normal((40, 10)) * 0.3).astype(np.float32)
    v = RNG.standard_normal((16, 40)).astype(np.float32)
    grads = []
    for L in (gs, torch):
        a = L.from_numpy(x.copy()).bfloat16().requires_grad_()
        b = L.from_numpy(w.copy()).bfloat16().requires_grad_()
        out = f(L, a, b)
        g = (
            L.from_numpy(v[: out.shape[0], : out.shape[-1]].copy()).bfloat16()
            if out.dim() == 2
            else None
        )
        out.backward(g if g is not None and g.shape == out.shape else L.ones_like(out) * 0.37)
        grads.append([t.grad for t in (a, b)])
    for gg, tg in zip(*grads):
        assert (gg is None) == (tg is None)
        if gg is not None:
            assert gg.dtype is gs.bfloat16
            _assert_bit_equal(gg, tg, name)


def test_gradcheck_through_a_bfloat16_cast():
    # the cast's gradient is the identity rounded to bfloat16 (ToCopyBackward0)
    x = gs.randn(5, dtype=gs.float64, requires_grad=True)
    y = x.to(gs.bfloat16)
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y.double() * 3).sum().backward()
    assert x.grad.dtype is gs.float64
    np.testing.assert_array_equal(x.grad.numpy(), np.full(5, 3.0))


def test_torch_refusals():
    a = gs.randn(3, 3).bfloat16()
    with pytest.raises(RuntimeError, match="Low precision dtypes not supported. Got BFloat16"):
        gs.linalg.inv(a)
    with pytest.raises(NotImplementedError, match="cholesky_cpu"):
        gs.linalg.cholesky(a)
    with pytest.raises(RuntimeError, match="Unsupported dtype BFloat16"):
        gs.fft.fft(a)


# ---------------------------------------------------------------------------------------
# Autocast


def _a(L):
    return L.ones(4, 3, requires_grad=True), L.ones(3, 2), L.ones(2, 4, 3)


AUTOCAST_DTYPES = {
    "matmul": lambda L, a, b, c: a @ b,
    "mm": lambda L, a, b, c: L.mm(a, b),
    "addmm": lambda L, a, b, c: L.addmm(L.zeros(4, 2), a, b),
    "bmm": lambda L, a, b, c: L.bmm(c, b.expand(2, 3, 2)),
    "baddbmm": lambda L, a, b, c: L.baddbmm(L.zeros(2, 4, 2), c, b.expand(2, 3, 2)),
    "linear_bias": lambda L, a, b, c: L.nn.functional.linear(a, b.t(), L.ones(2)),
    "linear_3d": lambda L, a, b, c: L.nn.functional.linear(c, b.t(), L.ones(2)),
    "conv2d": lambda L, a, b, c: L.nn.functional.conv2d(c[None], L.ones(1, 2, 2, 2)),
    "mm_then_add_f32": lambda L, a, b, c: (a @ b) + L.ones(4, 2),
    "mm_then_add_float": lambda L, a, b, c: (a @ b) + 1.5,
    "softmax_of_bf16": lambda L, a, b, c: (a @ b).softmax(-1),
    "log_softmax_f32": lambda L, a, b, c: a.log_softmax(-1),
    "cross_entropy": lambda L, a, b, c: L.nn.functional.cross_entropy(
        a @ b, L.tensor([0, 1, 0, 1])
    ),
    "mse_loss": lambda L, a, b, c: L.nn.functional.mse_loss(a @ b, L.zeros(4, 2)),
    "l1_loss": lambda L, a, b, c: L.nn.functional.l1_loss(a @ b, L.zeros(4, 2)),
    "bce_logits": lambda L, a, b, c: L.nn.functional.binary_cross_entropy_with_logits(
        a @ b, L.zeros(4, 2)
    ),
    "prod": lambda L, a, b, c: (a @ b).prod(),
    "sum": lambda L, a, b, c: (a @ b).sum(),
    "relu": lambda L, a, b, c: (a @ b).relu(),
    "layer_norm": lambda L, a, b, c: L.nn.functional.layer_norm(a @ b, (2,)),
    "cat_promotes": lambda L, a, b, c: L.cat([a @ b, L.ones(4, 2)]),
    "stack_promotes": lambda L, a, b, c: L.stack([a @ b, L.ones(4, 2)]),
    "float64_stays": lambda L, a, b, c: a.double() @ b.double(),
    "mv_not_listed": lambda L, a, b, c: L.mv(a, L.ones(3)),
    "sdpa": lambda L, a, b, c: L.nn.functional.scaled_dot_product_attention(c, c, c),
}


@pytest.mark.parametrize("name", sorted(AUTOCAST_DTYPES))
def test_autocast_result_dtypes_and_values_are_torchs(name):
    f = AUTOCAST_DTYPES[name]
    out = {}
    for L in (gs, torch):
        a, b, c = _a(L)
        a.data.mul_(L.linspace(0.1, 1.3, 12).reshape(4, 3))
        with L.autocast("cpu"):
            out[L] = f(L, a, b, c)
    g, t = out[gs], out[torch]
    assert g.dtype.name == str(t.dtype).removeprefix("torch."), name
    np.testing.assert_allclose(
        g.detach().double().numpy(), t.detach().double().numpy(), rtol=2e-2, atol=1e-2
    )


def test_autocast_gradients_are_in_the_leaves_dtype():
    grads = {}
    for L in (gs, torch):
        w = L.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()
        x = L.linspace(0, 2, 8).reshape(2, 4)
        with L.autocast("cpu"):
            y = L.nn.functional.linear(x, w)
            loss = (y * y).sum()
        assert y.dtype is L.bfloat16 and loss.dtype is L.bfloat16
        loss.backward()
        assert w.grad.dtype is L.float32
        grads[L] = w.grad
    _assert_bit_equal(grads[gs], grads[torch])


def test_autocast_caches_the_weight_cast():
    for L in (gs, torch):
        w = L.ones(3, 3, requires_grad=True)
        with L.autocast("cpu"):
            y1, y2 = L.mm(w, w), L.mm(L.ones(3, 3), w)
            same = y1.grad_fn.next_functions[0][0] is y2.grad_fn.next_functions[1][0]
        assert same, L.__name__
        with L.autocast("cpu", cache_enabled=False):
            y1, y2 = L.mm(w, w), L.mm(L.ones(3, 3), w)
            assert y1.grad_fn.next_functions[0][0] is not y2.grad_fn.next_functions[1][0]


def test_autocast_state_functions_as_torchs():
    for L in (gs, torch):
        assert not L.is_autocast_enabled("cpu") and not L.is_autocast_enabled()
        assert L.get_autocast_dtype("cpu") is L.bfloat16
        assert L.get_autocast_dtype("cuda") is L.float16
        assert L.is_autocast_cache_enabled()
        assert L.amp.is_autocast_available("cpu") and L.amp.is_autocast_available("cuda")
        assert not L.amp.is_autocast_available("meta")
        with L.autocast("cpu", dtype=L.float16):
            assert L.is_autocast_enabled("cpu") and L.get_autocast_dtype("cpu") is L.float16
            assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.float16
            with L.autocast("cpu", enabled=False):
                assert not L.is_autocast_enabled("cpu")
                assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.float32
            assert L.is_autocast_enabled("cpu")
        assert not L.is_autocast_enabled("cpu") and L.get_autocast_dtype("cpu") is L.bfloat16
        with pytest.warns(DeprecationWarning):
            assert L.get_autocast_cpu_dtype() is L.bfloat16
        with pytest.warns(DeprecationWarning):
            assert not L.is_autocast_cpu_enabled()
        assert L.autocast_increment_nesting() == 1
        assert L.autocast_decrement_nesting() == 0
        L.set_autocast_enabled("cpu", True)
        try:
            assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.bfloat16
        finally:
            L.set_autocast_enabled("cpu", False)
        assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.float32


def test_autocast_as_decorator_and_its_errors():
    for L in (gs, torch):

        @L.autocast("cpu")
        def product(a, b):
            return a @ b

        assert product(L.ones(2, 2), L.ones(2, 2)).dtype is L.bfloat16
        assert not L.is_autocast_enabled("cpu")
        assert L.amp.autocast is L.autocast
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            L.autocast(3)
        with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable"):
            L.autocast("cpu")(3)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            L.get_autocast_dtype("foo")
        with pytest.raises(TypeError, match="must be bool, not int"):
            L.set_autocast_enabled("cpu", 1)
        with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported"):
            with L.autocast(device_type="cuda"):
                assert not L.is_autocast_enabled("cuda")
                assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.float32
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of"):
            with L.autocast("cpu", dtype=L.float32):
                assert not L.is_autocast_enabled("cpu")


def test_autocast_is_unregistered_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with gs.autocast("cpu"):
            1 / 0  # noqa: B018
    assert not gs.is_autocast_enabled("cpu")
    assert not any(type(layer).__name__ == "_AutocastLayer" for layer in gs.registered_layers())


def test_custom_fwd_and_custom_bwd_as_torchs():
    seen = {}
    for lib in (gs, torch):
        _custom_fwd_case(lib, seen)
    for key in ("fwd", "bwd", "plain_bwd", "y", "z"):
        g, t = seen[gs, key], seen[torch, key]
        assert str(g).replace("gradstack.", "torch.") == str(t), key


def _custom_fwd_case(L, seen):

    class Square(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
        def forward(ctx, x):
            seen[L, "fwd"] = (x.dtype, L.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen[L, "bwd"] = L.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    class Plain(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            return x @ x

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen[L, "plain_bwd"] = L.is_autocast_enabled("cpu")
            return grad

    x = L.ones(2, 2, requires_grad=True)
    with L.autocast("cpu"):
        y = Square.apply(x @ x)
        z = Plain.apply(x)
    seen[L, "y"] = y.dtype
    seen[L, "z"] = z.dtype
    y.sum().backward()
    z.sum().backward()
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        L.amp.custom_fwd(device_type=None)


# ---------------------------------------------------------------------------------------
# A training loop


def _mlp_losses(L, steps=30):
    gen = np.random.default_rng(7)
    w1 = gen.standard_normal((32, 10)).astype(np.float32) * 0.3
    b1 = gen.standard_normal(32).astype(np.float32) * 0.1
    w2 = gen.standard_normal((3, 32)).astype(np.float32) * 0.3
    b2 = gen.standard_normal(3).astype(np.float32) * 0.1
    x = gen.standard_normal((64, 10)).astype(np.float32)
    y = gen.integers(0, 3, 64)
    model = L.nn.Sequential(L.nn.Linear(10, 32), L.nn.ReLU(), L.nn.Linear(32, 3))
    with L.no_grad():
        for p, v in zip(model.parameters(), (w1, b1, w2, b2)):
            p.copy_(L.from_numpy(v))
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xs, ys = L.from_numpy(x), L.from_numpy(y)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with L.autocast(device_type="cpu", dtype=L.bfloat16):
            out = model(xs)
            loss = L.nn.functional.cross_entropy(out, ys)
        assert out.dtype is L.bfloat16 and loss.dtype is L.float32
        loss.backward()
        assert model[0].weight.grad.dtype is L.float32
        opt.step()
        losses.append(loss.item())
    return losses


def test_autocast_mlp_training_gives_torchs_losses():
    g, t = _mlp_losses(gs), _mlp_losses(torch)
    # bfloat16 keeps 8 significant bits: the losses agree to its precision
    np.testing.assert_allclose(g, t, rtol=2e-2, atol=2e-3)
    assert t[-1] < t[0] * 0.6 and g[-1] < g[0] * 0.6
    assert not math.isnan(g[-1])


@pytest.mark.parametrize("n", [5, 32, 96])
def test_random_draws_are_torchs_after_the_same_seed(n):
    # drawn in float32 and rounded, as torch's; randn of a length that is not a multiple of
    # 16 differs in its last values, as float16's (Note [float16 normal_ with a tail])
    for name in ("rand", "randn"):
        torch.manual_seed(3)
        gs.manual_seed(3)
        g, t = (
            getattr(gs, name)(n, dtype=gs.bfloat16),
            getattr(torch, name)(n, dtype=torch.bfloat16),
        )
        _assert_bit_equal(g, t, name)
    torch.manual_seed(4)
    gs.manual_seed(4)
    _assert_bit_equal(
        gs.empty(n, dtype=gs.bfloat16).uniform_(-2, 3),
        torch.empty(n, dtype=torch.bfloat16).uniform_(-2, 3),
        "uniform_",
    )


def test_module_bfloat16_save_and_load(tmp_path):
    import io

    model = gs.nn.Linear(3, 2).bfloat16()
    assert model.weight.dtype is gs.bfloat16 and model.bias.dtype is gs.bfloat16
    out = model(gs.ones(1, 3, dtype=gs.bfloat16))
    assert out.dtype is gs.bfloat16
    buf = io.BytesIO()
    gs.save(model.state_dict(), buf)
    buf.seek(0)
    state = gs.load(buf)
    assert state["weight"].dtype is gs.bfloat16
    _assert_bit_equal(
        state["weight"], torch.from_numpy(model.weight.detach().float().numpy()).bfloat16()
    )
    reference = torch.nn.Linear(3, 2).bfloat16()
    assert reference.weight.dtype is torch.bfloat16
