"""``grad_fn._saved_<name>``: the values each built-in node saved, under torch's names.

Each case runs the same program on gradstack and on torch 2.13 and compares, per node,
``[a for a in dir(grad_fn) if a.startswith("_saved_")]`` and every attribute's value
(tensors by value, other values as they are).  Where gradstack saves a value in another
form than torch the case lists it in ``FORM``; the nodes whose *names* differ are listed,
with the reason, in the comment after ``FORM``.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

A = np.array([[0.5, -1.25, 2.0], [1.5, 0.75, -0.5]])
B = np.array([[1.5, 2.0, -0.75], [0.25, -1.0, 3.0]])
M = np.array([[1.0, -2.0, 0.5, 1.5], [0.25, 3.0, -1.0, 2.0], [2.0, 0.5, 1.0, -0.5]])


def _nodes(out, depth):
    nodes, node = [], out.grad_fn
    for _ in range(depth):
        nodes.append(node)
        node = node.next_functions[0][0]
    return nodes


CASES = {
    "add": (lambda L, x, y, m: x + y, 1),
    "add_scalar": (lambda L, x, y, m: x + 2, 1),
    "add_alpha": (lambda L, x, y, m: L.add(x, y, alpha=3), 1),
    "sub": (lambda L, x, y, m: x - y, 1),
    "mul": (lambda L, x, y, m: x * y, 1),
    "mul_no_grad_other": (lambda L, x, y, m: x * y.detach(), 1),
    "div": (lambda L, x, y, m: x / y, 1),
    "pow_scalar": (lambda L, x, y, m: x.pow(2), 1),
    "pow_tensor": (lambda L, x, y, m: x.abs().pow(y), 1),
    "exp": (lambda L, x, y, m: x.exp(), 1),
    "log": (lambda L, x, y, m: x.abs().log(), 1),
    "sin": (lambda L, x, y, m: x.sin(), 1),
    "cos": (lambda L, x, y, m: x.cos(), 1),
    "sqrt": (lambda L, x, y, m: x.abs().sqrt(), 1),
    "abs": (lambda L, x, y, m: x.abs(), 1),
    "neg": (lambda L, x, y, m: -x, 1),
    "relu": (lambda L, x, y, m: x.relu(), 1),
    "sigmoid": (lambda L, x, y, m: x.sigmoid(), 1),
    "tanh": (lambda L, x, y, m: x.tanh(), 1),
    "maximum": (lambda L, x, y, m: L.maximum(x, y), 1),
    "clamp": (lambda L, x, y, m: x.clamp(0, 1), 1),
    "where": (lambda L, x, y, m: L.where(x > 0, x, y), 1),
    "sum_dim": (lambda L, x, y, m: x.sum(1), 1),
    "amax": (lambda L, x, y, m: x.amax(1), 1),
    "var": (lambda L, x, y, m: x.var(1), 1),
    "std": (lambda L, x, y, m: x.std(1), 1),
    "var_all": (lambda L, x, y, m: x.var(), 1),  # correction None: torch's var.correction
    "std_all_unbiased": (lambda L, x, y, m: x.std(unbiased=False), 1),
    "var_correction_2": (lambda L, x, y, m: L.var(x, 0, correction=2), 1),
    "logsumexp": (lambda L, x, y, m: x.logsumexp(1), 1),
    "prod_dim": (lambda L, x, y, m: x.prod(1), 1),
    "softmax": (lambda L, x, y, m: x.softmax(1), 1),
    "log_softmax": (lambda L, x, y, m: x.log_softmax(1), 1),
    "cumsum": (lambda L, x, y, m: x.cumsum(1), 1),
    "mm": (lambda L, x, y, m: x.mm(m), 1),
    "addmm": (lambda L, x, y, m: L.addmm(m[0], x, m), 1),
    "bmm": (lambda L, x, y, m: x[None].bmm(m[None]), 1),
    "dot": (lambda L, x, y, m: x[0].dot(y[0]), 1),
    "mv": (lambda L, x, y, m: m.t().mv(x[0]), 1),
    "view": (lambda L, x, y, m: x.view(3, 2), 1),
    "reshape": (lambda L, x, y, m: x.reshape(6), 1),
    "flatten": (lambda L, x, y, m: x.flatten(), 1),
    "transpose": (lambda L, x, y, m: x.transpose(0, 1), 1),
    "t": (lambda L, x, y, m: x.t(), 1),
    "permute": (lambda L, x, y, m: x.permute(1, 0), 1),
    "unsqueeze": (lambda L, x, y, m: x.unsqueeze(0), 1),
    "expand": (lambda L, x, y, m: x[:1].expand(2, 3), 1),
    "select": (lambda L, x, y, m: x.select(1, 0), 1),
    "repeat": (lambda L, x, y, m: x.repeat(2, 1), 1),
    "flip": (lambda L, x, y, m: x.flip(0), 1),
    "index_select": (lambda L, x, y, m: x.index_select(1, L.tensor([0, 2])), 1),
    "cat": (lambda L, x, y, m: L.cat([x, y]), 1),
    "stack": (lambda L, x, y, m: L.stack([x, y]), 1),
    "clone": (lambda L, x, y, m: x.clone(), 1),
    "mse_loss": (lambda L, x, y, m: L.nn.functional.mse_loss(x, y), 1),
    "sum_all": (lambda L, x, y, m: x.sum(), 1),
    "sum_empty_dims": (lambda L, x, y, m: x.sum(()), 1),
    "sum_negative_dim": (lambda L, x, y, m: x.sum(-1, keepdim=True), 1),
    "mean_all": (lambda L, x, y, m: x.mean(), 1),
    "mean_dim": (lambda L, x, y, m: x.mean((0, -1)), 1),
    "prod_all": (lambda L, x, y, m: x.prod(), 1),
    "max_all": (lambda L, x, y, m: x.max(), 1),
    "max_dim": (lambda L, x, y, m: x.max(1).values, 1),
    "min_dim_keepdim": (lambda L, x, y, m: x.min(-1, keepdim=True).values, 1),
    "norm": (lambda L, x, y, m: x.norm(), 1),
    "norm_p3_dim": (lambda L, x, y, m: x.norm(p=3, dim=-1), 1),
    "amin_negative": (lambda L, x, y, m: x.amin(-1), 1),
    "softmax_negative": (lambda L, x, y, m: x.softmax(-1), 1),
    "cumsum_negative": (lambda L, x, y, m: x.cumsum(-1), 1),
    "unsqueeze_negative": (lambda L, x, y, m: x.unsqueeze(-1), 1),
    "transpose_negative": (lambda L, x, y, m: x.transpose(-1, 0), 1),
    "select_negative": (lambda L, x, y, m: x.select(-1, 0), 1),
    "squeeze_all": (lambda L, x, y, m: x[None].squeeze(), 1),
    "squeeze_dim": (lambda L, x, y, m: x[None].squeeze(-3), 1),
    "squeeze_dims": (lambda L, x, y, m: x[None, :, None].squeeze((0, 2)), 1),
    "narrow": (lambda L, x, y, m: x.narrow(1, -2, 2), 1),
    "split": (lambda L, x, y, m: x.split(2, 1)[0], 1),
    "split_sizes": (lambda L, x, y, m: x.split([1, 2], -1)[1], 1),
    "trace": (lambda L, x, y, m: x.trace(), 1),
    "smooth_l1_loss": (lambda L, x, y, m: L.nn.functional.smooth_l1_loss(x, y), 1),
    "huber_loss": (lambda L, x, y, m: L.nn.functional.huber_loss(x, y, reduction="sum"), 1),
    "bce": (
        lambda L, x, y, m: L.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
        1,
    ),
    "cross_entropy": (
        lambda L, x, y, m: L.nn.functional.cross_entropy(x, L.tensor([0, 2])),
        2,  # NllLossBackward0, LogSoftmaxBackward0
    ),
    "nll_loss_weighted": (
        lambda L, x, y, m: L.nn.functional.nll_loss(
            x.log_softmax(1), L.tensor([0, 2]), weight=L.tensor([1.0, 2.0, 3.0], dtype=L.float64)
        ),
        1,
    ),
    "nll_loss_ignored_sum": (
        lambda L, x, y, m: L.nn.functional.nll_loss(
            x.log_softmax(1), L.tensor([0, 2]), ignore_index=2, reduction="sum"
        ),
        1,
    ),
    "nll_loss_none": (
        lambda L, x, y, m: L.nn.functional.nll_loss(
            x.log_softmax(1), L.tensor([1, 2]), reduction="none"
        ),
        1,
    ),
    "cross_entropy_label_smoothing": (
        lambda L, x, y, m: L.nn.functional.cross_entropy(x, L.tensor([0, 2]), label_smoothing=0.1),
        2,  # AddBackward0, MulBackward1 (a C++ Scalar product in torch)
    ),
    "cross_entropy_probabilities": (
        lambda L, x, y, m: L.nn.functional.cross_entropy(x, y.detach().softmax(1)),
        3,  # DivBackward1 (a C++ Scalar quotient in torch), NegBackward0, SumBackward0
    ),
}

# values gradstack shows in another form than torch (the names are the same): none since
# the entries say how torch shows them (Note [Saved values as torch shows them])
FORM: dict = {}

# Nodes whose saved *names* differ from torch's (not compared above), and why:
# - mul/div by a number: torch wraps the number in a 0-d tensor (_saved_other is a tensor);
# - matmul saves self/other where torch decomposes it into mm (mat2);
# - mm/addmm have no _saved_*_sym_strides (no formula reads strides): compared without;
# - getitem: torch records select/slice/index nodes with their own arguments;
# - gather: torch also saves sparse_grad;
# - var(None)/std(None), the dim given as None: torch's ``unbiased`` overload shows
#   correction 1, gradstack None (it cannot tell the call from ``var()``).

_MM_STRIDES = {"_saved_self_sym_strides", "_saved_mat2_sym_strides", "_saved_mat1_sym_strides"}


def _saved(node):
    return {a: getattr(node, a) for a in dir(node) if a.startswith("_saved_")}


def _run(L, fn, depth):
    x, y, m = (L.tensor(v, requires_grad=True) for v in (A, B, M))
    return _nodes(fn(L, x, y, m), depth)


@pytest.mark.parametrize("case", sorted(CASES))
def test_saved_attributes_match_torch(case):
    fn, depth = CASES[case]
    for ours, theirs in zip(_run(gs, fn, depth), _run(torch, fn, depth), strict=True):
        assert type(ours).__name__ == type(theirs).__name__
        got, want = _saved(ours), _saved(theirs)
        if case in ("mm", "addmm"):
            want = {k: v for k, v in want.items() if k not in _MM_STRIDES}
        assert sorted(got) == sorted(want), type(ours).__name__
        for name, value in want.items():
            mine = got[name]
            if isinstance(value, torch.Tensor):
                assert isinstance(mine, gs.Tensor), name
                np.testing.assert_allclose(mine.detach().numpy(), value.detach().numpy())
            elif (case, name) in FORM:
                assert (mine, value) == FORM[(case, name)], name
            else:
                assert mine == value and type(mine) is type(value), (name, mine, value)


def test_a_freed_saved_tensor_raises_torchs_error():
    x = gs.tensor(A, requires_grad=True)
    out = x.exp()
    out.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = out.grad_fn._saved_result
    # values that are not tensors stay readable, as in torch
    assert x.sum(1).grad_fn._saved_dim == (1,)
    s = x.sum(1)
    s.sum().backward()
    assert s.grad_fn._saved_keepdim is False and s.grad_fn._saved_self_sym_sizes == (2, 3)


def test_a_saved_tensor_modified_in_place_raises_the_version_error():
    x = gs.tensor(A, requires_grad=True)
    y = x * 1.0
    out = y.sin()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _ = out.grad_fn._saved_self


def test_built_in_nodes_expose_no_saved_tensors():
    x = gs.tensor(A, requires_grad=True)
    node = (x * 2).grad_fn
    for name in ("saved_tensors", "_saved_tensors"):
        assert not hasattr(node, name)
        assert not hasattr((torch.tensor(A, requires_grad=True) * 2).grad_fn, name)
    with pytest.raises(AttributeError, match="_saved_nothing"):
        _ = node._saved_nothing


def test_unsaved_values_read_none_as_in_torch():
    # mul saves self only for other's gradient (Note [Save what a gradient needs])
    x, y = gs.tensor(A, requires_grad=True), gs.tensor(B)
    node = (x * y).grad_fn
    assert node._saved_self is None and node._saved_other is not None
    tnode = (torch.tensor(A, requires_grad=True) * torch.tensor(B)).grad_fn
    assert tnode._saved_self is None and tnode._saved_other is not None


def _raw_saved_hooks_program(L):
    """The saved-tensor-hooks tutorial's ``_raw_saved_*`` part, with the errors around it."""
    out = []
    x = L.arange(1.0, 6.0, requires_grad=True)
    y = x.pow(2)
    calls = []

    def pack(t):
        calls.append("pack")
        return t * 4

    def unpack(p):
        calls.append("unpack")
        return p / 4

    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    out.append(list(calls))  # packed at once
    out.append((y.grad_fn._saved_self.tolist(), list(calls)))  # unpacked at every read
    y.sum().backward(retain_graph=True)
    out.append((x.grad.tolist(), list(calls)))
    for freed in (False, True):  # a second pair, then after the graph was freed
        try:
            y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
        except RuntimeError as e:
            out.append(str(e)[:60])
        if not freed:
            y.sum().backward()
    z = x.exp()
    z.grad_fn._raw_saved_result.register_hooks(lambda t: t.tolist(), lambda p: L.tensor(p))
    x.grad = None
    z.sum().backward()
    out.append(np.round(x.grad.numpy(), 5).tolist())
    out.append(
        (
            hasattr(x.sum(dim=0).grad_fn, "_raw_saved_dim"),
            "_raw_saved_self" in dir(x.mul(x).grad_fn),
        )
    )
    try:  # mul by a number saves no self: torch's SavedTensor of None
        (x * 3).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    except RuntimeError as e:
        out.append(str(e)[:55])
    return out


def test_raw_saved_tensors_take_hooks_as_in_torch():
    assert _raw_saved_hooks_program(gs) == _raw_saved_hooks_program(torch)
