"""``import gradstack as torch``: the namespace is torch's, and everything in it works."""

from __future__ import annotations

import builtins
import importlib
import io
import math
import subprocess
import sys

import gradstack as torch
import gradstack_autograd
import gradstack_nn
import gradstack_tensor
import numpy as np
import pytest


def test_every_tensor_core_name_is_reexported():
    for name in gradstack_tensor.__all__:
        if name == "__version__":
            continue
        assert getattr(torch, name) is getattr(gradstack_tensor, name), name
    for name in torch.__all__:
        assert hasattr(torch, name), name


def test_dtype_aliases_like_torch():
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.half is torch.float16 and torch.long is torch.int64
    assert torch.int is torch.int32 and torch.bool is not builtins.bool
    assert torch.tensor([True]).dtype is torch.bool
    assert repr(torch.float) == "gradstack.float32"
    assert torch.tensor([0.1, 1.0], dtype=torch.float).dtype is torch.float32
    assert torch.get_default_dtype() is torch.float32


def test_tensor_basics():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(t, torch.Tensor) and t.shape == torch.Size([2, 2])
    assert torch.is_tensor(t) and torch.numel(t) == 4
    assert (t @ t).tolist() == [[7.0, 10.0], [15.0, 22.0]]
    a = np.arange(3.0)
    f = torch.from_numpy(a)
    a[0] = 9
    assert f[0].item() == 9.0
    torch.set_printoptions(precision=2)
    try:
        assert repr(torch.tensor([1.23456])) == "tensor([1.23])"
    finally:
        torch.set_printoptions(profile="default")
    assert repr(torch.tensor([1.23456])) == "tensor([1.2346])"


def test_grad_modes():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert not torch.is_grad_enabled() and not (x * 2).requires_grad
        with torch.enable_grad():
            assert (x * 2).requires_grad
    with torch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    with torch.inference_mode():
        assert (x * 2).is_inference()
    assert torch.is_grad_enabled()


def test_manual_seed_reproducible():
    torch.manual_seed(123)
    a = torch.randn(5)
    torch.manual_seed(123)
    assert torch.equal(a, torch.randn(5))


def test_device_and_cuda_stubs():
    assert torch.device("cpu").type == "cpu"
    assert torch.cuda.is_available() is False and torch.cuda.device_count() == 0
    torch.cuda.manual_seed_all(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    with pytest.raises(RuntimeError, match="no CUDA"):
        torch.cuda.current_device()
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.zeros(2, device="cuda")
    assert torch.get_num_threads() >= 1


def test_autograd_namespace():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x**2).sum()
    (g,) = torch.autograd.grad(y, [x], create_graph=True)
    assert g.tolist() == [2.0, 4.0]
    torch.autograd.backward([g.sum()])
    assert x.grad.tolist() == [2.0, 2.0]
    assert torch.autograd.Variable is gradstack_autograd.Variable
    assert torch.autograd.grad_mode.no_grad is torch.no_grad
    assert callable(torch.autograd.gradcheck)  # the function, not the submodule

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return 2 * a * grad

    z = torch.tensor([3.0], requires_grad=True, dtype=torch.double)
    assert torch.autograd.gradcheck(Square.apply, (z,))
    assert isinstance(torch.autograd.function.FunctionCtx, type)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        (z * z).sum().backward()


def test_forward_ad_namespace():
    import gradstack.autograd.forward_ad as fwAD

    primal, tangent = torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0])
    with fwAD.dual_level():
        out = fwAD.make_dual(primal, tangent).sin()
        _, jvp = fwAD.unpack_dual(out)
    np.testing.assert_allclose(jvp.numpy(), [math.cos(1.0), 0.0], rtol=1e-6)


def test_functional_namespace():
    pytest.importorskip("gradstack_functional")
    jac = torch.autograd.functional.jacobian(lambda x: 2 * x.exp(), torch.tensor([0.0, 1.0]))
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 2 * math.e]), rtol=1e-6)
    import gradstack.autograd.functional as F

    assert F.hessian is torch.autograd.functional.hessian


def test_profiler_namespace():
    pytest.importorskip("gradstack_profiler")
    x = torch.ones(3, requires_grad=True)
    with torch.autograd.profiler.profile() as prof:
        (x * 2).sum().backward()
    assert "mul" in prof.key_averages().table()
    with torch.autograd.profiler.record_function("block"):
        pass


def test_nn_and_optim_namespace():
    import gradstack.nn.functional as F
    from gradstack.nn import init

    for name in set(gradstack_nn.__all__) - {
        "optim",
        "distributions",  # (torch.distributions, a top-level module: test_distributions)
        "save",
        "load",
        "serialization",
        "__version__",
    }:
        assert hasattr(torch.nn, name), name
    assert torch.nn.Module is gradstack_nn.Module and torch.nn.Linear is gradstack_nn.Linear
    assert torch.optim.SGD is gradstack_nn.optim.SGD
    assert torch.distributions.Normal is gradstack_nn.distributions.Normal
    assert F.cross_entropy is gradstack_nn.functional.cross_entropy
    assert init.kaiming_uniform_ is gradstack_nn.init.kaiming_uniform_
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.tensor([0, 1] * 4)
    first = None
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    assert loss.item() < first


def test_save_load():
    buf = io.BytesIO()
    model = torch.nn.Linear(3, 2)
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    assert torch.equal(sd["weight"], model.weight.detach())
    assert torch.save is gradstack_nn.save and torch.load is gradstack_nn.load


def test_submodules_import_like_torch():
    for name in [
        "gradstack.autograd",
        "gradstack.autograd.graph",
        "gradstack.autograd.function",
        "gradstack.autograd.grad_mode",
        "gradstack.autograd.forward_ad",
        "gradstack.autograd.anomaly_mode",
        "gradstack.autograd.variable",
        "gradstack.nn",
        "gradstack.nn.functional",
        "gradstack.nn.init",
        "gradstack.nn.parameter",
        "gradstack.optim",
        "gradstack.cuda",
    ]:
        importlib.import_module(name)
    from gradstack.autograd.graph import saved_tensors_hooks  # noqa: F401
    from gradstack.nn.parameter import Parameter

    assert Parameter is torch.nn.Parameter


def test_import_is_light():
    """``import gradstack`` loads neither functional-api nor the profiler until used."""
    code = (
        "import sys, gradstack; "
        "print(any(m.startswith(('gradstack_functional', 'gradstack_profiler')) "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_all_name_resolves():
    import gradstack.autograd
    import gradstack.nn
    import gradstack.optim

    for module in (
        torch,
        gradstack.autograd,
        gradstack.nn,
        gradstack.optim,
        torch.cuda,
        gradstack.nn.functional,
        gradstack.nn.init,
        gradstack.autograd.graph,
        gradstack.autograd.forward_ad,
        gradstack.autograd.function,
    ):
        for name in module.__all__:
            if module is torch and name == "newaxis":  # (torch.newaxis is None)
                assert torch.newaxis is None
                continue
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"
    assert set(dir(gradstack.autograd)) >= {"functional", "profiler", "forward_ad"}
