"""torch's ``torch.func`` tutorials, run with ``import gradstack as torch`` and with torch.

The code of "Per-sample-gradients", "Model ensembling" and "Jacobians, Hessians, hvp, vhp,
and more" (pytorch.org/tutorials/intermediate/*_tutorial), written once as functions of
the library namespace ``torch`` and run by both libraries on the same data and weights;
their results must agree.  The models, the transforms, ``.to('meta')`` and
``torch.utils.benchmark.Timer`` are the tutorials'; the one change is the device: the
tutorials put their data on ``'cuda'``, which neither library has here, so ``device`` is
``'cpu'``.  Batches are smaller and in float64 (the comparison is to 1e-9), and each timer
runs its statement once (the test checks that the timing API works, not the times).
"""

from __future__ import annotations

import copy
import importlib
from functools import partial

import gradstack
import numpy as np
import pytest

torch_ = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

RNG = np.random.default_rng(2024)


_CLASSES: dict = {}
DEVICE = "cpu"  # the tutorials': 'cuda'


def _classes(torch):
    """The tutorials' models, one class per library (stack_module_state checks it)."""
    if torch.__name__ in _CLASSES:
        return _CLASSES[torch.__name__]
    nn, F = torch.nn, torch.nn.functional

    class SimpleCNN(nn.Module):  # per-sample gradients
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    class SimpleMLP(nn.Module):  # model ensembling
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 128)
            self.fc2 = nn.Linear(128, 128)
            self.fc3 = nn.Linear(128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    _CLASSES[torch.__name__] = SimpleCNN, SimpleMLP
    return _CLASSES[torch.__name__]


def _weights(shapes):
    return {k: RNG.standard_normal(shape) / np.sqrt(np.prod(shape[1:]) if len(shape) > 1 else 10)
            for k, shape in shapes.items()}  # fmt: skip


CNN_SHAPES = {
    "conv1.weight": (32, 1, 3, 3), "conv1.bias": (32,), "conv2.weight": (64, 32, 3, 3),
    "conv2.bias": (64,), "fc1.weight": (128, 9216), "fc1.bias": (128,),
    "fc2.weight": (10, 128), "fc2.bias": (10,),
}  # fmt: skip
MLP_SHAPES = {
    "fc1.weight": (128, 784), "fc1.bias": (128,), "fc2.weight": (128, 128),
    "fc2.bias": (128,), "fc3.weight": (10, 128), "fc3.bias": (10,),
}  # fmt: skip


def _model(torch, cls, weights):
    model = cls().double()
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    return model.to(device=DEVICE)


def get_perf(first, first_descriptor, second, second_descriptor):
    """takes torch.benchmark objects and compares delta of second vs first."""
    second_res = second.times[0]
    first_res = first.times[0]
    gain = (first_res - second_res) / first_res
    if gain < 0:
        gain *= -1
    return gain * 100


def per_sample_gradients(torch, weights, data, targets):
    F = torch.nn.functional
    SimpleCNN, _ = _classes(torch)

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    model = _model(torch, SimpleCNN, weights)
    batch_size = data.shape[0]
    predictions = model(data)  # move the entire mini-batch through the model
    loss = loss_fn(predictions, targets)
    loss.backward()  # back propagate the 'average' gradient of this mini-batch

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """manually process each sample with per sample gradient"""
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)
    assert per_sample_grads[0].shape == (batch_size, 32, 1, 3, 3)

    from_func = importlib.import_module(f"{torch.__name__}.func")
    functional_call, vmap, grad = from_func.functional_call, from_func.vmap, from_func.grad
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=1e-10, rtol=1e-8)

    Timer = importlib.import_module(f"{torch.__name__}.utils.benchmark").Timer
    without_vmap = Timer(stmt="compute_sample_grads(data, targets)", globals=locals())
    with_vmap = Timer(
        stmt="ft_compute_sample_grad(params, buffers, data, targets)", globals=locals()
    )
    no_vmap_timing = without_vmap.timeit(1)
    with_vmap_timing = with_vmap.timeit(1)
    assert "1 measurement" in repr(with_vmap_timing)
    assert get_perf(with_vmap_timing, "vmap", no_vmap_timing, "no vmap") >= 0
    return per_sample_grads, ft_per_sample_grads, [p.grad for p in model.parameters()]


def model_ensembling(torch, weights_list, data):
    _, SimpleMLP = _classes(torch)
    models = [_model(torch, SimpleMLP, w) for w in weights_list]
    num_models = len(models)
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [
        model(minibatch) for model, minibatch in zip(models, minibatches)
    ]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    from_func = importlib.import_module(f"{torch.__name__}.func")
    params, buffers = from_func.stack_module_state(models)
    functional_call = from_func.functional_call
    # a "stateless" version of one of the models: its parameters are meta tensors
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to("meta")
    assert all(p.is_meta and p.device.type == "meta" for p in base_model.parameters())

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    assert [p.size(0) for p in params.values()] == [num_models] * 6
    assert minibatches.shape == (num_models, data.shape[1], 1, 28, 28)
    vmap = torch.vmap  # the tutorial's ``from torch import vmap``
    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
    assert torch.allclose(
        predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5
    )
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)

    Timer = importlib.import_module(f"{torch.__name__}.utils.benchmark").Timer
    without_vmap = Timer(
        stmt="[model(minibatch) for model, minibatch in zip(models, minibatches)]",
        globals=locals(),
    )
    with_vmap = Timer(stmt="vmap(fmodel)(params, buffers, minibatches)", globals=locals())
    assert without_vmap.timeit(1).times[0] > 0 and with_vmap.timeit(1).times[0] > 0
    return predictions1_vmap, predictions2_vmap, params


def jacobians_hessians(torch, weight, bias, x, x_batch, x_long, tangent):
    F = torch.nn.functional
    from_func = importlib.import_module(f"{torch.__name__}.func")
    vmap, vjp, jvp, grad = from_func.vmap, from_func.vjp, from_func.jvp, from_func.grad
    jacrev, jacfwd, hessian = from_func.jacrev, from_func.jacfwd, from_func.hessian

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = x.shape[0]

    def compute_jac(xp):
        jacobian_rows = [
            torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors
        ]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D, dtype=x.dtype)
    jacobian = compute_jac(xp)
    assert jacobian.shape == (D, D)

    _, vjp_fn = vjp(partial(predict, weight, bias), x)
    (ft_jacobian,) = vmap(vjp_fn)(unit_vectors)
    assert torch.allclose(ft_jacobian, jacobian)
    ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(ft_jacobian, jacobian)

    Timer = importlib.import_module(f"{torch.__name__}.utils.benchmark").Timer
    without_vmap = Timer(stmt="compute_jac(xp)", globals=locals())
    with_vmap = Timer(stmt="jacrev(predict, argnums=2)(weight, bias, x)", globals=locals())
    assert get_perf(without_vmap.timeit(1), "without vmap", with_vmap.timeit(1), "vmap") >= 0

    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    jac_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(jac_fwd, jacobian)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    assert torch.allclose(hess_api, hess_fwdfwd) and torch.allclose(hess_api, hess_revrev)

    compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x_batch)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x_batch)
    batch_jacobian1 = batch_jacobian1.movedim(1, 0)
    assert torch.allclose(batch_jacobian0, batch_jacobian1)
    compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
    batch_hess = compute_batch_hessian(weight, bias, x_batch)

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    result = hvp(f, (x_long,), (tangent,))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x_long,), (tangent,))
    assert torch.allclose(result, result_hvp_revrev[0])
    return (jacobian, ft_jac_weight, ft_jac_bias, hess_api, batch_jacobian0, batch_hess, result)


def _close(ours, theirs, atol=1e-9):
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _close(ours[k], theirs[k], atol)
        return
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _close(o, t, atol)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(np.asarray(ours.tolist()), theirs.detach().numpy(), atol=atol)


def test_per_sample_gradients_tutorial():
    weights = _weights(CNN_SHAPES)
    data = RNG.standard_normal((4, 1, 28, 28))
    targets = RNG.integers(0, 10, 4)
    ours = per_sample_gradients(
        gradstack, weights, gradstack.tensor(data), gradstack.tensor(targets)
    )
    theirs = per_sample_gradients(torch_, weights, torch_.tensor(data), torch_.tensor(targets))
    _close(ours, theirs)


def test_model_ensembling_tutorial():
    weights_list = [_weights(MLP_SHAPES) for _ in range(4)]
    data = RNG.standard_normal((5, 6, 1, 28, 28))
    ours = model_ensembling(gradstack, weights_list, gradstack.tensor(data))
    theirs = model_ensembling(torch_, weights_list, torch_.tensor(data))
    _close(ours, theirs)
    assert all(p.requires_grad for p in ours[2].values())


def test_jacobians_hessians_tutorial():
    D = 16
    w, b = RNG.standard_normal((D, D)), RNG.standard_normal(D)
    x, xb = RNG.standard_normal(D), RNG.standard_normal((4, D))
    x_long, tangent = RNG.standard_normal(64), RNG.standard_normal(64)
    args = (w, b, x, xb, x_long, tangent)
    ours = jacobians_hessians(gradstack, *(gradstack.tensor(a) for a in args))
    theirs = jacobians_hessians(torch_, *(torch_.tensor(a) for a in args))
    _close(ours, theirs)


def test_facade_exports_func():
    import gradstack.func as gf
    from gradstack_functional import func as impl

    assert gradstack.func is gf
    # functional-api's names, and the one torch.func name that needs nn-mini's modules
    assert set(gf.__all__) == set(impl.__all__) | {"replace_all_batch_norm_modules_"}
    assert set(gf.__all__) <= set(dir(torch_.func))
    for name in impl.__all__:
        assert getattr(gf, name) is getattr(impl, name)
