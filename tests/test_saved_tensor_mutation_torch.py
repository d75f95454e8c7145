"""``autograd.graph.allow_mutation_on_saved_tensors``, ``region_activation_memory_budget``
and ``autograd.enforce_grad_layout_policy`` against torch 2.13: gradients after in-place
writes of saved tensors (inputs and outputs, several writes, aliases, views), the block's
errors (backward outside it, nesting), saved-tensor hooks without the version check, the
budget's checks, and the strides of a new ``.grad`` under each layout policy."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


def _mutations(L):
    x = L.tensor(X, requires_grad=True)
    return {
        "input sin_": lambda: _run(lambda: (lambda b: ((b**2).sum(), b.sin_()))(x.clone())),
        "output mul_": lambda: _run(lambda: (lambda y: ((y * y).sum(), y.mul_(0)))(x.exp())),
        "copy_": lambda: _run(
            lambda: (lambda b: ((b * b).sum(), b.copy_(L.ones(2, 3))))(x.clone())
        ),
        "zero_ and fill_": lambda: _run(
            lambda: (lambda b: (b.tanh().sum() + (b * b).sum(), b.zero_(), b.fill_(3.0)))(x.clone())
        ),
        "setitem": lambda: _run(
            lambda: (lambda b: ((b.exp() * b).sum(), b.__setitem__(0, 9.0)))(x.clone())
        ),
        "saved twice, written twice": lambda: _run(
            lambda: (lambda b: ((b * b).sum() + b.sigmoid().sum(), b.add_(1), b.mul_(2)))(x.clone())
        ),
        "written through an alias": lambda: _run(
            lambda: (lambda b: ((b.cos()).sum(), b.view(6).add_(1)))(x.clone())
        ),
    }, x


def _run(program):
    loss = program()[0]
    loss.backward()


@pytest.mark.parametrize("name", list(_mutations(gs)[0]))
def test_gradients_after_writes_as_torch(name):
    grads = []
    for L in (gs, torch):
        programs, x = _mutations(L)
        with L.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
            programs[name]()
        assert len(ctx.original) == 0 and len(ctx.cloned) == 0  # cleared on exit
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_without_the_block_the_write_is_an_error_as_torch():
    for L in (gs, torch):
        b = L.tensor(X, requires_grad=True).clone()
        loss = (b**2).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_backward_outside_the_block_and_nesting_as_torch():
    errors = []
    for L in (gs, torch):
        x = L.tensor(X, requires_grad=True)
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            z = (x * 3).sin()
        with pytest.raises(AssertionError) as outside:
            z.sum().backward()
        with pytest.raises(RuntimeError) as nested:
            with L.autograd.graph.allow_mutation_on_saved_tensors():
                with L.autograd.graph.allow_mutation_on_saved_tensors():
                    pass
        errors.append((str(outside.value), str(nested.value)))
    assert errors[0] == errors[1]
    assert gs.autograd.graph.allow_mutation_on_saved_tensors  # usable again after both
    with gs.autograd.graph.allow_mutation_on_saved_tensors():
        pass


def test_layer_and_hooks_removed_after_the_block():
    import gradstack_tensor as gt

    before = gt.registered_layers()
    with pytest.raises(ValueError):
        with gs.autograd.graph.allow_mutation_on_saved_tensors():
            assert len(gt.registered_layers()) == len(before) + 1
            raise ValueError
    assert gt.registered_layers() == before
    b = gs.tensor(X, requires_grad=True).clone()
    loss = (b**2).sum()
    b.sin_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_hooked_saved_tensors_are_not_version_checked_as_torch():
    grads = []
    for L in (gs, torch):
        store: dict = {}

        def pack(t, store=store):
            store[len(store)] = t.clone()
            return len(store) - 1

        a = L.tensor(X, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, store.__getitem__):
            b = a.clone()
            out = (b**2).sum()
            b.sin_()
        out.backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("budget", [0.0, 0.5, 1, -0.1, 1.5, True, "0.5", None])
def test_region_activation_memory_budget_as_torch(budget):
    errors = []
    for L in (gs, torch):
        with pytest.raises(Exception) as info:
            L.autograd.graph.region_activation_memory_budget(budget)
        errors.append((info.type, str(info.value)))
    assert errors[0] == errors[1]


# -- enforce_grad_layout_policy ------------------------------------------------------------


def _layouts(L):
    def permuted():
        p = L.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_()
        (p * 2).sum().backward()
        return p

    def transposed_gradient():
        p = L.zeros(3, 4).requires_grad_()
        (p.t() * 2).t().sum().backward()
        return p

    def column_major_parameter():
        p = L.zeros(3, 4).t().requires_grad_()
        (p.t().contiguous() * 2).t().sum().backward()
        return p

    def user_gradient():
        p = L.zeros(3, 4).requires_grad_()
        (p * 1).backward(L.ones(4, 3).t())
        return p

    def accumulated():
        p = L.zeros(3, 4).requires_grad_()
        (p.t() * 2).t().sum().backward()
        (p.t() * 3).t().sum().backward()
        return p

    return [permuted, transposed_gradient, column_major_parameter, user_gradient, accumulated]


@pytest.mark.parametrize("enable", [True, False])
@pytest.mark.parametrize("index", range(5))
def test_new_grad_strides_under_the_policy_as_torch(enable, index):
    out = []
    for L in (gs, torch):
        with L.autograd.enforce_grad_layout_policy(enable):
            p = _layouts(L)[index]()
        out.append((p.grad.stride(), p.grad.numpy().tolist()))
    assert out[0] == out[1]


def test_policy_as_call_block_and_decorator():
    from gradstack_autograd._node import is_grad_layout_enforcement_enabled as enabled

    gs.autograd.enforce_grad_layout_policy(False)
    assert not enabled()
    gs.autograd.enforce_grad_layout_policy(True)
    assert enabled()
    with gs.autograd.enforce_grad_layout_policy(False):
        assert not enabled()
    assert enabled()

    @gs.autograd.enforce_grad_layout_policy(False)
    def f():
        return enabled()

    assert enabled() and f() is False and enabled()


def test_an_out_argument_write_is_cloned_first_as_torch():
    grads = []
    for L in (gs, torch):
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = L.tensor(X, requires_grad=True)
            b = a.clone()
            loss = (b**3).sum()
            with L.no_grad():
                L.sin(L.ones(2, 3), out=b)
                L.add(b, 1.0, out=b)
            loss.backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_a_write_the_block_cannot_see_raises_instead_of_a_wrong_gradient():
    # torch does not clone (a view starting elsewhere has another data_ptr) and
    # differentiates the written values: gradstack refuses
    for write in (lambda b: b[0, 1:].add_(7.0), lambda b: b.view(-1)[3:].mul_(2.0)):
        with gs.autograd.graph.allow_mutation_on_saved_tensors():
            a = gs.tensor(X, requires_grad=True)
            b = a.clone()
            loss = (b**2).sum()
            write(b)
            b.sin_()  # (b's own version has moved on: no clone either)
            with pytest.raises(RuntimeError, match="did not see before it happened"):
                loss.backward()


def test_the_out_write_observer_is_removed_after_the_block():
    from gradstack_tensor import _out

    before = list(_out._out_write_observers)
    with gs.autograd.graph.allow_mutation_on_saved_tensors():
        assert len(_out._out_write_observers) == len(before) + 1
    assert _out._out_write_observers == before
