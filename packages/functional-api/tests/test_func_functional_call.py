"""``functional_call`` and ``stack_module_state``.

functional-api does not import nn-mini, so these duck-type modules: the tests use torch's
own ``nn.Module``s (the swapping logic is library-neutral) against ``torch.func``, and a
minimal module over gradstack tensors under ``vmap``/``grad``.  The facade's tests
(tests/test_func_tutorials.py) run the same with gradstack's ``nn``.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional.func import functional_call, grad, stack_module_state, vmap

torch = pytest.importorskip("torch")
import torch.func as tf  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")


def _torch_net():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    net.register_buffer("scale", torch.tensor(2.0))
    return net.double()


def _same(ours, theirs):
    assert type(ours) is type(theirs)
    if isinstance(ours, torch.Tensor):
        torch.testing.assert_close(ours, theirs)


def test_swaps_and_restores_like_torch():
    net = _torch_net()
    x = torch.randn(5, 3, dtype=torch.float64)
    new = {k: torch.randn_like(v) for k, v in net.named_parameters()}
    before = {k: v.clone() for k, v in net.state_dict().items()}
    _same(functional_call(net, new, (x,)), tf.functional_call(net, new, (x,)))
    _same(functional_call(net, new, x), tf.functional_call(net, new, x))
    partial = {"0.weight": new["0.weight"]}
    _same(functional_call(net, partial, (x,)), tf.functional_call(net, partial, (x,)))
    for k, v in net.state_dict().items():
        torch.testing.assert_close(v, before[k])
    assert all(isinstance(p, torch.nn.Parameter) for p in net.parameters())


def test_restores_after_an_exception():
    net = _torch_net()
    weight = net[0].weight
    with pytest.raises(RuntimeError):
        functional_call(
            net, {"0.weight": torch.zeros(7, 7, dtype=torch.float64)}, (torch.ones(1, 3),)
        )
    assert net[0].weight is weight


def test_dict_tuple_and_repeated_keys():
    net = _torch_net()
    x = torch.randn(2, 3, dtype=torch.float64)
    params = {k: v * 2 for k, v in net.named_parameters()}
    buffers = {"scale": torch.tensor(5.0)}
    _same(
        functional_call(net, (params, buffers), (x,)),
        tf.functional_call(net, (params, buffers), (x,)),
    )
    dup = ({"0.bias": params["0.bias"]}, {"0.bias": params["0.bias"]})
    with pytest.raises(ValueError) as theirs:
        tf.functional_call(net, dup, (x,))
    with pytest.raises(ValueError) as ours:
        functional_call(net, dup, (x,))
    assert str(ours.value) == str(theirs.value)


def test_strict():
    net = _torch_net()
    x = torch.randn(2, 3, dtype=torch.float64)
    with pytest.raises(RuntimeError) as theirs:
        tf.functional_call(net, {"0.weight": net[0].weight * 1, "nope": x}, (x,), strict=True)
    with pytest.raises(RuntimeError) as ours:
        functional_call(net, {"0.weight": net[0].weight * 1, "nope": x}, (x,), strict=True)
    for words in ("Unexpected key(s): 'nope'", "Missing key(s):", "'2.bias'"):
        assert words in str(theirs.value) and words in str(ours.value)


def test_tie_weights():
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2, bias=False)
            self.b = torch.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    net = Tied()
    x = torch.randn(3, 2)
    w = {"a.weight": torch.randn(2, 2)}
    _same(functional_call(net, w, (x,)), tf.functional_call(net, w, (x,)))
    _same(
        functional_call(net, w, (x,), tie_weights=False),
        tf.functional_call(net, w, (x,), tie_weights=False),
    )
    both = {"a.weight": torch.randn(2, 2), "b.weight": torch.randn(2, 2)}
    with pytest.raises(ValueError) as theirs:
        tf.functional_call(net, both, (x,))
    with pytest.raises(ValueError) as ours:
        functional_call(net, both, (x,))
    assert type(ours.value) is type(theirs.value)


class _Affine:
    """A minimal module over gradstack tensors (the duck-typed surface)."""

    training = True

    def __init__(self, w, b):
        self._parameters = {"w": w, "b": b}
        self._buffers = {}

    def named_parameters(self, remove_duplicate=True):
        return iter(self._parameters.items())

    def named_buffers(self, remove_duplicate=True):
        return iter(())

    def __call__(self, x):
        return (x @ self._parameters["w"] + self._parameters["b"]).tanh()


def test_per_sample_gradients_with_gradstack_tensors():
    rng = np.random.default_rng(5)
    w, b = rng.standard_normal((3, 2)), rng.standard_normal(2)
    xs, ys = rng.standard_normal((6, 3)), rng.standard_normal((6, 2))
    model = _Affine(gt.tensor(w), gt.tensor(b))

    def loss(params, x, y):
        return ((functional_call(model, params, (x,)) - y) ** 2).sum()

    ours = vmap(grad(loss), in_dims=(None, 0, 0))(
        {"w": gt.tensor(w), "b": gt.tensor(b)}, gt.tensor(xs), gt.tensor(ys)
    )

    def tloss(params, x, y):
        return (((x @ params["w"] + params["b"]).tanh() - y) ** 2).sum()

    theirs = tf.vmap(tf.grad(tloss), in_dims=(None, 0, 0))(
        {"w": torch.tensor(w), "b": torch.tensor(b)}, torch.tensor(xs), torch.tensor(ys)
    )
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(ours[k].tolist()), theirs[k].numpy(), atol=1e-12)
    assert model._parameters["w"].tolist() == w.tolist()


def test_stack_module_state_like_torch():
    rng = np.random.default_rng(6)
    ws = [(rng.standard_normal((3, 2)), rng.standard_normal(2)) for _ in range(3)]
    ours = [
        _Affine(gt.tensor(w, requires_grad=True), gt.tensor(b, requires_grad=True)) for w, b in ws
    ]
    theirs = []
    for w, b in ws:
        m = torch.nn.Linear(3, 2).double()
        m.weight, m.bias = torch.nn.Parameter(torch.tensor(w)), torch.nn.Parameter(torch.tensor(b))
        theirs.append(m)
    params, buffers = stack_module_state(ours)
    tparams, tbuffers = tf.stack_module_state(theirs)
    assert buffers == {} and tbuffers == {}
    for k, tk in (("w", "weight"), ("b", "bias")):
        np.testing.assert_array_equal(np.asarray(params[k].tolist()), tparams[tk].detach().numpy())
        assert params[k].requires_grad and params[k].grad_fn is None
    # the ensemble: one model per slice of the stacked state
    x = gt.tensor(rng.standard_normal((4, 3)))
    out = vmap(lambda p, x: functional_call(ours[0], p, (x,)), in_dims=(0, None))(params, x)
    for i, m in enumerate(ours):
        np.testing.assert_allclose(
            np.asarray(out[i].tolist()), np.asarray(m(x).tolist()), atol=1e-12
        )
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])
    other = _Affine(gt.ones(3, 2), gt.ones(2))
    other.training = False
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state([ours[0], other])
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([ours[0], type("Other", (_Affine,), {})(gt.ones(3, 2), gt.ones(2))])
    mixed = _Affine(gt.ones(3, 2), gt.ones(2))
    with pytest.raises(
        RuntimeError, match="Expected w from each model to have the same .requires_grad"
    ):
        stack_module_state([ours[0], mixed])
