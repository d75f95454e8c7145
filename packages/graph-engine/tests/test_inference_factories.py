"""Tensors created by factories inside ``inference_mode()`` are inference tensors, as in
torch (every tensor allocated in inference mode is); outside it they are normal tensors
(Note [Factories in inference mode] in tensor-core's ``creation.py``)."""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

FACTORIES = {
    "zeros": lambda L: L.zeros(2),
    "ones": lambda L: L.ones(2, 3),
    "empty": lambda L: L.empty(2),
    "full": lambda L: L.full((2,), 1.5),
    "tensor": lambda L: L.tensor([1.0, 2.0]),
    "tensor_ints": lambda L: L.tensor([[1, 2]]),
    "scalar_tensor": lambda L: L.scalar_tensor(1.0),
    "as_tensor_list": lambda L: L.as_tensor([1.0]),
    "as_tensor_ndarray": lambda L: L.as_tensor(np.ones(2)),
    "from_numpy": lambda L: L.from_numpy(np.ones(2)),
    "arange": lambda L: L.arange(3),
    "linspace": lambda L: L.linspace(0, 1, 3),
    "logspace": lambda L: L.logspace(0, 1, 3),
    "eye": lambda L: L.eye(2),
    "rand": lambda L: L.rand(2),
    "randn": lambda L: L.randn(2),
    "randint": lambda L: L.randint(0, 3, (2,)),
    "randperm": lambda L: L.randperm(3),
    "zeros_like": lambda L: L.zeros_like(L.ones(2)),
    "ones_like": lambda L: L.ones_like(L.ones(2)),
    "empty_like": lambda L: L.empty_like(L.ones(2)),
    "full_like": lambda L: L.full_like(L.ones(2), 3.0),
    "rand_like": lambda L: L.rand_like(L.ones(2)),
    "randn_like": lambda L: L.randn_like(L.ones(2)),
    "randint_like": lambda L: L.randint_like(L.ones(2), 5),
    "new_zeros": lambda L: L.ones(2).new_zeros(3),
    "new_tensor": lambda L: L.ones(2).new_tensor([1.0]),
    "requires_grad": lambda L: L.zeros(2, requires_grad=True),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_make_inference_tensors_in_inference_mode(name):
    with torch.inference_mode():
        theirs = FACTORIES[name](torch)
    with ag.inference_mode():
        ours = FACTORIES[name](gt)
    assert theirs.is_inference()
    assert ours.is_inference(), name
    assert ours.requires_grad == theirs.requires_grad
    assert not FACTORIES[name](gt).is_inference()  # outside: a normal tensor


def test_inference_tensors_from_factories_follow_the_inference_rules():
    with ag.inference_mode():
        x = gt.zeros(3)
        x.add_(1)  # in place inside inference mode: allowed
    with pytest.raises(
        RuntimeError, match="Inplace update to inference tensor outside InferenceMode"
    ):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
        x.requires_grad_(True)
    with ag.inference_mode(False), ag.inference_mode():
        assert gt.ones(1).is_inference()
    with ag.inference_mode():
        with ag.inference_mode(False):
            assert not gt.ones(1).is_inference()  # inference_mode(False) inside: normal


def test_as_tensor_of_an_existing_tensor_returns_it():
    x = gt.ones(2)
    with ag.inference_mode():
        assert gt.as_tensor(x) is x and not x.is_inference()
