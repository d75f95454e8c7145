"""``.grad`` layouts: the API page's "Default gradient layouts" rules 1-4, manual layouts,
and ``.grad`` of non-leaf tensors.
"""

from __future__ import annotations

import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest


def _leaf(array):
    """A leaf requiring grad over ``array`` (its strides are kept)."""
    return gt.from_numpy(array).requires_grad_()


def _weights(shape, seed=0):
    return gt.from_numpy(np.random.default_rng(seed).standard_normal(shape))


# ---------------------------------------------------------------------------------------
# rule 1: a non-overlapping dense param gets a .grad with its own strides


@pytest.mark.parametrize(
    "make, strides",
    [
        (lambda: np.zeros((3, 4)), (4, 1)),  # row-major
        (lambda: np.zeros((4, 3)).T, (1, 3)),  # transposed
        (lambda: np.zeros((2, 3, 4)).transpose(2, 0, 1), (1, 12, 4)),  # permuted
        (lambda: np.zeros((3, 1, 4)).transpose(1, 0, 2), (4, 4, 1)),  # size-1 dim
    ],
)
def test_rule1_grad_matches_dense_param_strides(make, strides):
    p = _leaf(make())
    assert p.stride() == strides
    w = _weights(tuple(p.shape))
    (p * w).sum().backward()
    # the stride of a size-1 dim is never used to address memory: compare the others
    shape = tuple(p.shape)
    assert [s for s, n in zip(p.grad.stride(), shape) if n != 1] == [
        s for s, n in zip(strides, shape) if n != 1
    ]
    np.testing.assert_array_equal(p.grad.numpy(), w.numpy())


@pytest.mark.parametrize("param_layout, grad_layout", [("F", "C"), ("C", "F"), ("F", "F")])
def test_rule1_also_with_create_graph(param_layout, grad_layout):
    p = _leaf(np.ones((3, 4), order=param_layout))
    v = gt.from_numpy(np.full((3, 4), 2.0, order=grad_layout)).requires_grad_()
    (p * 1).backward(v, create_graph=True)
    assert p.grad.stride() == p.stride() and p.grad.requires_grad
    np.testing.assert_array_equal(p.grad.detach().numpy(), 2 * np.ones((3, 4)))
    (g,) = ag.grad(p.grad.sum(), v)  # .grad is a differentiable copy of v
    assert g.tolist() == [[1.0] * 4] * 3
    v.detach().add_(1)
    assert p.grad.detach().tolist() == [[2.0] * 4] * 3  # not an alias of v


# ---------------------------------------------------------------------------------------
# rule 2: overlapping or non-dense params get a row-major .grad


@pytest.mark.parametrize(
    "make, param_strides",
    [
        (lambda: gt.ones(3, 1).expand(3, 4), (1, 0)),  # overlapping
        (lambda: gt.from_numpy(np.ones((4, 6))[:, ::2]), (6, 2)),  # gaps
        (lambda: gt.from_numpy(np.ones((5, 4)).T[1:4, :]), (1, 4)),  # gaps, transposed
    ],
)
def test_rule2_row_major_for_overlapping_or_non_dense(make, param_strides):
    p = make().requires_grad_()
    assert p.stride() == param_strides
    w = _weights(tuple(p.shape)).to(p.dtype)
    (p * w).sum().backward()
    shape = tuple(p.shape)
    row_major = tuple(int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
    assert p.grad.stride() == row_major and p.grad.is_contiguous()
    np.testing.assert_array_equal(p.grad.numpy(), w.numpy())


def test_new_grad_never_aliases_the_incoming_gradient():
    p = _leaf(np.zeros(3))
    v = gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64)
    (p * 1).backward(v)
    v.add_(100)  # the caller's tensor, changed afterwards
    assert p.grad.tolist() == [1.0, 2.0, 3.0]
    q = _leaf(np.zeros((2, 2)))
    q.sum().backward()  # the incoming gradient is an expanded 1
    assert q.grad.stride() == (2, 1)
    q.grad[0, 0] = 5.0
    assert q.grad.tolist() == [[5.0, 1.0], [1.0, 1.0]]


# ---------------------------------------------------------------------------------------
# rule 3: create_graph=False accumulates in place


@pytest.mark.parametrize("make", [lambda: np.zeros((3, 4)), lambda: np.zeros((4, 3)).T])
def test_rule3_in_place_accumulation_keeps_identity_and_strides(make):
    p = _leaf(make())
    w1, w2 = _weights(tuple(p.shape), 1), _weights(tuple(p.shape), 2)
    (p * w1).sum().backward()
    grad, strides, version = p.grad, p.grad.stride(), p.grad._version
    data_ptr = grad.data_ptr()
    (p * w2).sum().backward()
    assert p.grad is grad and p.grad.stride() == strides and p.grad.data_ptr() == data_ptr
    assert p.grad._version == version + 1  # an in-place write
    np.testing.assert_allclose(p.grad.numpy(), w1.numpy() + w2.numpy(), rtol=1e-15)


def test_zeroing_keeps_the_layout():
    p = _leaf(np.zeros((4, 3)).T)
    (p * 2).sum().backward()
    grad = p.grad
    p.grad.zero_()  # optimizer.zero_grad() without set_to_none
    (p * 3).sum().backward()
    assert p.grad is grad and p.grad.stride() == (1, 3)
    assert p.grad.tolist() == [[3.0] * 4] * 3
    p.grad = None  # reset: recreated by rule 1
    (p * 4).sum().backward()
    assert p.grad is not grad and p.grad.stride() == (1, 3)


# ---------------------------------------------------------------------------------------
# rule 4: create_graph=True replaces .grad with a new tensor


def test_rule4_create_graph_makes_a_new_tensor():
    p = _leaf(np.array([1.0, 2.0]))
    (p * p).sum().backward(create_graph=True)
    first = p.grad
    assert first.requires_grad
    (p * p * p).sum().backward(create_graph=True)
    assert p.grad is not first
    np.testing.assert_allclose(
        p.grad.detach().numpy(), 2 * np.array([1.0, 2.0]) + 3 * np.array([1.0, 4.0])
    )
    assert first.detach().tolist() == [2.0, 4.0]  # the old tensor is untouched
    # the new .grad is differentiable: d/dp sum(2p + 3p^2) = 2 + 6p
    (g,) = ag.grad(p.grad.sum(), p)
    assert g.tolist() == [8.0, 14.0]


def test_rule4_attempts_to_keep_strides():
    p = _leaf(np.ones((4, 3)).T)
    (p * p).sum().backward(create_graph=True)
    (p * p).sum().backward(create_graph=True)
    assert p.grad.stride() == (1, 3)  # "attempts (but does not guarantee)"


# ---------------------------------------------------------------------------------------
# manual layouts


def test_manual_layout_is_preserved():
    p = _leaf(np.zeros((3, 4)))  # row-major param
    manual = gt.from_numpy(np.zeros((4, 3)).T)  # column-major zeros, assigned by hand
    p.grad = manual
    w = _weights((3, 4))
    for _ in range(3):
        (p * w).sum().backward()
    assert p.grad is manual and p.grad.stride() == (1, 3)
    np.testing.assert_allclose(p.grad.numpy(), 3 * w.numpy(), rtol=1e-15)


def test_manual_layout_likely_preserved_with_create_graph():
    p = _leaf(np.zeros((3, 4)))
    p.grad = gt.from_numpy(np.zeros((4, 3)).T)
    (p * p).sum().backward(create_graph=True)
    assert p.grad.stride() == (1, 3)


def test_assigned_grad_is_checked():
    p = _leaf(np.zeros((3, 4)))
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        p.grad = gt.zeros(4, 3, dtype=gt.float64)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        p.grad = gt.zeros(3, 4)


# ---------------------------------------------------------------------------------------
# .grad of non-leaf tensors


def test_non_leaf_grad_is_none_with_a_warning():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    c = x * 2
    (c * c).sum().backward()
    with pytest.warns(
        UserWarning,
        match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
    ):
        assert c.grad is None
    assert x.grad.tolist() == [8.0, 16.0]


def test_retain_grad_keeps_a_non_leaf_grad_without_warning():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    c = x * 2
    c.retain_grad()
    assert c.retains_grad and not x.retains_grad
    (c * c).sum().backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.grad.tolist() == [4.0, 8.0]
    (c * c).sum().backward()  # accumulates like a leaf's .grad
    assert c.grad.tolist() == [8.0, 16.0]
    assert x.retain_grad() is None and x.grad.tolist() == [16.0, 32.0]  # no-op on leaves
    with pytest.raises(
        RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"
    ):
        gt.ones(2).retain_grad()


def test_leaf_without_grad_has_none_and_no_warning():
    x = gt.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None
        assert gt.ones(2).grad is None
