"""torch's ``torch.func`` tutorials, run with ``import gradstack as torch`` and with torch.

The code of "Per-sample-gradients", "Model ensembling" and "Jacobians, Hessians, hvp, vhp,
and more" (pytorch.org/tutorials/intermediate/*_tutorial), written once as functions of
the library namespace ``torch`` and run by both libraries on the same data and weights;
their results must agree.  Changes from the tutorials, because gradstack lacks the
feature (see packages/functional-api/README.md): MLPs stand in for the CNN (no conv
layers in nn-mini) and the ensemble's base model is not moved to the ``meta`` device.
"""

from __future__ import annotations

import copy

import gradstack
import numpy as np
import pytest

torch_ = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

RNG = np.random.default_rng(2024)


_CLASSES: dict = {}


def _mlp_class(torch):
    if torch.__name__ in _CLASSES:  # one class per library (stack_module_state checks it)
        return _CLASSES[torch.__name__]
    nn, F = torch.nn, torch.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(20, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    _CLASSES[torch.__name__] = SimpleMLP
    return SimpleMLP


def _weights():
    return {
        "fc1.weight": RNG.standard_normal((16, 20)) * 0.3,
        "fc1.bias": RNG.standard_normal(16) * 0.1,
        "fc2.weight": RNG.standard_normal((10, 16)) * 0.3,
        "fc2.bias": RNG.standard_normal(10) * 0.1,
    }


def _model(torch, weights):
    model = _mlp_class(torch)().double()
    model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
    return model


def per_sample_gradients(torch, weights, data, targets):
    F = torch.nn.functional
    model = _model(torch, weights)
    batch_size = data.shape[0]

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

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

    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad
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
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=1e-10, rtol=1e-8)
    # the pattern of the issue: only the parameters, in_dims=(None, 0, 0)
    per_sample = vmap(
        grad(lambda p, x, y: loss_fn(functional_call(model, p, (x.unsqueeze(0),)), y.unsqueeze(0))),
        in_dims=(None, 0, 0),
    )(params, data, targets)
    return ft_per_sample_grads, per_sample


def model_ensembling(torch, weights_list, data):
    vmap, functional_call = torch.func.vmap, torch.func.functional_call
    stack_module_state = torch.func.stack_module_state
    models = [_model(torch, w) for w in weights_list]
    num_models = len(models)
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [
        model(minibatch) for model, minibatch in zip(models, minibatches)
    ]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]

    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
    assert torch.allclose(
        predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-10, rtol=1e-8
    )
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-10, rtol=1e-8)
    return predictions1_vmap, predictions2_vmap, params


def jacobians_hessians(torch, weight, bias, x, x_batch):
    F = torch.nn.functional
    vmap, jacrev, jacfwd, hessian = (
        torch.func.vmap,
        torch.func.jacrev,
        torch.func.jacfwd,
        torch.func.hessian,
    )

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = x.shape[0]
    cotangents = torch.eye(D, dtype=x.dtype)
    # the manual jacobian, row by row (the tutorial's compute_jac with vjp)
    from_vjp = torch.stack(
        [
            torch.func.vjp(lambda x: predict(weight, bias, x), x)[1](c)[0]
            for c in cotangents.unbind()
        ]
    )
    jacobian = jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(jacobian, from_vjp, atol=1e-10)
    ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    jac_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(jac_fwd, jacobian, atol=1e-10)
    hess_api = hessian(predict, argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    assert torch.allclose(hess_api, hess_revrev, atol=1e-10)
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    assert torch.allclose(hess_api, hess_fwdfwd, atol=1e-10)
    batch_jacobian0 = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(
        weight, bias, x_batch
    )
    batch_hess = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))(weight, bias, x_batch)
    return jacobian, ft_jac_weight, ft_jac_bias, hess_api, hess_fwdfwd, batch_jacobian0, batch_hess


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
    weights = _weights()
    data = RNG.standard_normal((8, 20))
    targets = RNG.integers(0, 10, 8)
    ours = per_sample_gradients(
        gradstack, weights, gradstack.tensor(data), gradstack.tensor(targets)
    )
    theirs = per_sample_gradients(torch_, weights, torch_.tensor(data), torch_.tensor(targets))
    _close(ours, theirs)


def test_model_ensembling_tutorial():
    weights_list = [_weights() for _ in range(4)]
    data = RNG.standard_normal((4, 6, 20))
    ours = model_ensembling(gradstack, weights_list, gradstack.tensor(data))
    theirs = model_ensembling(torch_, weights_list, torch_.tensor(data))
    _close(ours, theirs)
    assert all(p.requires_grad for p in ours[2].values())


def test_jacobians_hessians_tutorial():
    D = 6
    w, b = RNG.standard_normal((D, D)) * 0.5, RNG.standard_normal(D)
    x, xb = RNG.standard_normal(D), RNG.standard_normal((3, D))
    ours = jacobians_hessians(gradstack, *(gradstack.tensor(a) for a in (w, b, x, xb)))
    theirs = jacobians_hessians(torch_, *(torch_.tensor(a) for a in (w, b, x, xb)))
    _close(ours, theirs)


def test_facade_exports_func():
    import gradstack.func as gf
    from gradstack_functional import func as impl

    assert gradstack.func is gf
    assert set(gf.__all__) == set(impl.__all__)
    assert set(gf.__all__) <= set(dir(torch_.func))
    for name in gf.__all__:
        assert getattr(gf, name) is getattr(impl, name)
