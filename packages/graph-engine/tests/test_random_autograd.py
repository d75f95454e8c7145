"""Random ops under autograd, compared with torch 2.13: the nodes they record
(derivatives/random_ops.py), their zero gradients (Note [Random draws have zero gradients]),
forward-mode tangents, and ``out=`` refusing tensors that require grad.  The gradchecks of
these ops run with the others in test_derivatives.py (autograd_op_db.py's entries)."""

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _fresh(L):
    return L.zeros(2, 3, requires_grad=True).clone()


NODES = {
    "bernoulli": lambda L: L.bernoulli(L.full((2, 3), 0.4, requires_grad=True)),
    "bernoulli_number": lambda L: _fresh(L).bernoulli_(0.5),
    "bernoulli_tensor_p": lambda L: _fresh(L).bernoulli_(L.full((3,), 0.5, requires_grad=True)),
    "exponential_": lambda L: _fresh(L).exponential_(),
    "random_from_to": lambda L: _fresh(L).random_(0, 3),
    "random_to": lambda L: _fresh(L).random_(3),
    "random_": lambda L: _fresh(L).random_(),
    "uniform_": lambda L: _fresh(L).uniform_(),
    "normal_": lambda L: _fresh(L).normal_(),
    "normal_both": lambda L: L.normal(
        L.zeros(2, 1, requires_grad=True), L.ones(3, requires_grad=True)
    ),
    "normal_tensor_mean": lambda L: L.normal(L.zeros(3, requires_grad=True), 2.0),
    "normal_tensor_std": lambda L: L.normal(1.0, L.ones(3, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(NODES))
def test_random_ops_record_torchs_node(name):
    torch.manual_seed(0)
    expected = NODES[name](torch)
    gt.manual_seed(0)
    got = NODES[name](gt)
    assert got.grad_fn.name() == expected.grad_fn.name()
    np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())


@pytest.mark.parametrize(
    "make",
    [
        lambda L, a, b: L.normal(a, b),
        lambda L, a, b: L.normal(a, 2.0) * b,
        lambda L, a, b: L.bernoulli(a.sigmoid()) * b,
        lambda L, a, b: (a * 1).bernoulli_(b.sigmoid()) * b,
        lambda L, a, b: (a * 1).exponential_() * b,
    ],
)
def test_gradients_through_a_draw_are_torchs(make):
    rng = np.random.default_rng(0)
    a0, b0 = rng.uniform(0.5, 1.5, (2, 3)), rng.uniform(0.5, 1.5, (3,))
    results = []
    for L, grad in ((torch, torch.autograd.grad), (gt, ag.grad)):
        a = L.tensor(a0, requires_grad=True)
        b = L.tensor(b0, requires_grad=True)
        L.manual_seed(0)
        y = make(L, a, b)
        results.append([g.numpy() for g in grad(y.sum(), (a, b))])
    for e, g in zip(*results, strict=True):
        np.testing.assert_array_equal(g, e)


def test_a_draw_has_a_zero_tangent_in_forward_mode():
    import gradstack_autograd.forward_ad as fwd

    with fwd.dual_level():
        p = fwd.make_dual(gt.full((3,), 0.5, dtype=gt.float64), gt.ones(3, dtype=gt.float64))
        y = gt.bernoulli(p)
        assert fwd.unpack_dual(y).tangent.tolist() == [0.0, 0.0, 0.0]


def test_multinomial_is_not_differentiable():
    w = gt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = gt.multinomial(w, 2)
    assert y.grad_fn is None and not y.requires_grad


def test_an_in_place_draw_on_a_leaf_that_requires_grad_is_refused():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        gt.zeros(3, requires_grad=True).bernoulli_(0.5)


def _rg(L, n=3):
    return L.ones(n, requires_grad=True)


# torch's rules: an op with a derivative refuses any argument (out too) that requires
# grad; a factory refuses only a leaf out that requires grad, named aten::<name>()
OUT_GRAD = {
    "bernoulli_out_leaf": lambda L: L.bernoulli(L.full((3,), 0.5), out=_rg(L)),
    "bernoulli_out_not_leaf": lambda L: L.bernoulli(L.full((3,), 0.5), out=_rg(L) * 1),
    "bernoulli_input": lambda L: L.bernoulli(L.full((3,), 0.5, requires_grad=True), out=L.empty(3)),
    "normal_tensor_out_not_leaf": lambda L: L.normal(L.zeros(3), 1.0, out=_rg(L) * 1),
    "normal_numbers_out_leaf": lambda L: L.normal(0.0, 1.0, (3,), out=_rg(L)),
    "normal_numbers_out_not_leaf": lambda L: L.normal(0.0, 1.0, (3,), out=_rg(L) * 1),
    "zeros_out_leaf": lambda L: L.zeros(3, out=_rg(L)),
    "zeros_out_not_leaf": lambda L: L.zeros(3, out=_rg(L) * 1),
    "rand_out_not_leaf": lambda L: L.rand(3, out=_rg(L) * 1),
    "arange_out_leaf": lambda L: L.arange(3.0, out=_rg(L)),
}


@pytest.mark.parametrize("name", sorted(OUT_GRAD))
def test_out_and_gradients_follow_torchs_rules(name):
    def outcome(L):
        try:
            out = OUT_GRAD[name](L)
        except RuntimeError as e:
            return str(e)
        return out.requires_grad, out.grad_fn is not None

    assert outcome(gt) == outcome(torch)


def test_out_is_allowed_under_no_grad():
    out = gt.ones(3, requires_grad=True)
    with ag.no_grad():
        gt.zeros(3, out=out)
    assert out.tolist() == [0.0, 0.0, 0.0]
    t = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        torch.zeros(3, out=t)
    assert t.tolist() == out.tolist()
