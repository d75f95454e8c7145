"""Shrunk programs from the random-program fuzzer (tests/fuzz) that differed from torch,
each run by gradstack and torch: gradients (or the error) must agree."""

from __future__ import annotations

import math
import warnings

import gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import derivatives

torch = pytest.importorskip("torch")
from gradstack_autograd_tests_fuzz_programs import _both, _grad, _no_grad  # noqa: E402


def test_pow_by_a_number_saves_no_output_so_writing_it_is_fine():
    # seed 1 #308: v3 = x0 ** False; v3.zero_(); backward raised "modified by an inplace
    # operation": pow saved its output, which only the exponent's gradient reads
    def program(lib):
        x0 = lib.tensor(0.5, requires_grad=True)
        v3 = x0**False
        v3.zero_()
        (v3 * 0.5).sum().backward()
        y = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        z = y**3
        z.mul_(2)
        z.sum().backward()
        return [x0.grad, y.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("exponent_requires_grad", [True, False])
def test_pow_with_a_tensor_exponent_still_saves_its_output(exponent_requires_grad):
    # seed 20261201 #1167: torch's pow(Tensor, Tensor) saves its result even when the
    # exponent needs no gradient, so a later in-place write raises at backward
    def program(lib):
        a = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([1.5, 3.0], dtype=lib.float64, requires_grad=exponent_requires_grad)
        out = a**b
        out.mul_(2)
        out.sum().backward()
        return [a.grad]

    got, want = _both(program)
    assert got == want == ("raises", "RuntimeError")


def test_permute_of_a_0d_tensor_backward_and_forward():
    # seed 1 #689: torch.permute(v, ()) then backward: "permute() missing ... dims"
    def program(lib):
        x = lib.tensor(0.3, dtype=lib.float64, requires_grad=True)
        y = lib.permute(x.asin(), ()).clamp(min=0.1)
        y.backward()
        return [x.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_div_gradient_of_the_divisor_is_torch_s_order(dtype):
    # seed 1 #6226: float16 x / x gave grad 1/300 where torch gives 0: -grad * a / (b * b)
    # overflows in b * b; torch computes -grad * ((a / b) / b)
    def program(lib):
        a = lib.tensor([300.0, 1e-3, 7.0], dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor([300.0, 3.0, 1e3], dtype=getattr(lib, dtype), requires_grad=True)
        (a / b).sum().backward()
        x = lib.full((5,), 300.0, dtype=getattr(lib, dtype), requires_grad=True)
        x.div(x).sum().backward()
        return [a.grad, b.grad, x.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_writing_a_value_that_requires_grad_into_an_integer_tensor_records_nothing():
    # seed 1 #3444: bool_t.copy_(x) made the bool tensor require grad
    flags = []
    for lib in (gt, torch):
        x = lib.ones(2, requires_grad=True) * 2
        b = lib.zeros(2, dtype=lib.bool)
        b.copy_(x)
        i = lib.zeros(2, dtype=lib.int64)
        i.copy_(x * 1.5)
        j = lib.zeros(2, dtype=lib.int64)
        j[0] = x[1]
        flags.append([(t.tolist(), t.requires_grad, t.grad_fn is None) for t in (b, i, j)])
    assert flags[0] == flags[1]


def test_cat_with_a_legacy_empty_input_differentiates_as_torch():
    # seed 1 #2915: the empty input's gradient was a slice of grad (requires_grad under
    # create_graph); torch gives it a new empty tensor.  cat along dim 1 of a (0,) input
    # that requires grad raised IndexError in the node's bookkeeping.
    results = []
    for lib in (gt, torch):
        grad = gradstack_autograd.grad if lib is gt else torch.autograd.grad
        a = lib.ones(2, 3, requires_grad=True)
        e = lib.zeros(0, requires_grad=True)
        r = lib.cat([a, e], 1)
        ga, ge = grad((r * r).sum(), [a, e], create_graph=True)
        f = lib.zeros(0, requires_grad=True)
        (gf,) = grad(
            lib.cat([f, lib.ones(3, requires_grad=True) * 1]).sum(), [f], create_graph=True
        )
        results.append([(tuple(g.shape), g.requires_grad, g.tolist()) for g in (ga, ge, gf)])
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_float16_softmax_gradients_computed_in_float32(name):
    # seed 1 #49651: half-precision arithmetic in the formula gave -0.019 where torch's
    # kernel (float32 inside, rounded once) gives 0.0; from torch's own output the
    # formulas must agree exactly
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 40)).astype(np.float16)
    w = rng.standard_normal((3, 40)).astype(np.float16)
    tx = torch.tensor(x, requires_grad=True)
    out = getattr(torch, name)(tx, 1)
    (out * torch.tensor(w)).sum().backward()
    # gradstack's formula, fed torch's forward output (the forwards may differ in the last
    # float16 bit: numpy's exp is not torch's vectorised exp)
    g = gt.tensor(out.detach().numpy())
    inner = getattr(derivatives.reductions, f"_{name}_formula")
    got = derivatives.reductions._in_float32(gt.tensor(w), g, lambda a, o: inner(a, o, 1))
    np.testing.assert_array_equal(np.asarray(got.tolist()), tx.grad.numpy())


def test_remainder_saves_its_operands_only_for_the_divisor_gradient():
    # seed 1 #7724: an in-place write (under no_grad) into the dividend failed a backward
    # that never reads it
    def program(lib):
        x = lib.tensor([1.5, 2.5], dtype=lib.float64, requires_grad=True)
        a = x.log2()
        r = a % lib.tensor(-1.25, dtype=lib.float64)
        with _no_grad(lib):
            a.expm1_()
        r.sum().backward()
        return [x.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_outer_of_an_integer_and_a_float_vector_differentiates():
    # seed 1 #4454: "addmv input tensors must have the same dtype" in backward
    def program(lib):
        i = lib.tensor([2, 3])
        x = lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64, requires_grad=True)
        i.outer(x).sum().backward()
        y = lib.tensor([1.5], dtype=lib.float64, requires_grad=True)
        lib.outer(y, i).sum().backward()
        return [x.grad, y.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_backward_through_a_view_made_under_no_grad_reaches_nothing():
    # seed 1 #6602: TypeError inside the formula; torch runs it and accumulates nothing
    def program(lib):
        x = lib.tensor([[[0.5]]], requires_grad=True)
        with _no_grad(lib):
            v = x.permute(2, 1, 0)
        v.sum().backward()
        return [lib.tensor([x.grad is None, v.grad is None])]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("targets", ["v", "xv", "vx", "xvw"])
def test_grad_of_a_hooked_non_leaf_is_captured_where_torch_captures_it(targets):
    # seed 1 #6451: grad(loss, [x6, v7]) with a hook on v7 returned v7's gradient hooked;
    # torch captures it before the tensor hooks when v7's node runs anyway (x6 is wanted
    # through it), after them when v7 is only a capture point
    def program(lib):
        x = lib.tensor(1.0, requires_grad=True)
        v = x * lib.ones(2)
        v.register_hook(lambda g: g * 2)
        w = lib.stack([v[0], lib.tensor(3.0)], 0) * 1
        w.register_hook(lambda g: g * 3)
        loss = (w * lib.tensor([1.0, 0.5])).sum()
        ins = [{"v": v, "x": x, "w": w}[c] for c in targets]
        return list(_grad(lib)(loss, ins, allow_unused=True))

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("case", ["unwritten", "written_before", "written_under_no_grad", "unset"])
def test_a_view_follows_its_base_s_requires_grad_(case):
    # seed 1 #5020: v7 = v6.view_as(v6); v7.sqrt_(); v6.requires_grad_(): torch's v7
    # requires grad and (written since it was made) sends its gradient to v6; gradstack's
    # v7 did not require grad
    def program(lib):
        b = lib.tensor([[4.0, 1.0]])
        v = b[0]
        w = b.view_as(b)
        if case == "written_before":
            v.sqrt_()
        b.requires_grad_()
        if case == "written_under_no_grad":
            with _no_grad(lib):
                b.mul_(2)
        if case == "unset":
            b.requires_grad_(False)
        out = [lib.tensor([v.requires_grad, w.requires_grad])]
        if b.requires_grad:
            ((v * 2).sum() + (w * 3).sum()).backward()
            out.append(b.grad if b.grad is not None else lib.tensor(-1.0))
            try:
                v.add_(1)
            except RuntimeError as e:
                out.append(lib.tensor(["a view of a leaf" in str(e)]))
        return out

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_with_a_zero_over_one_element_passes_grad_through(dim):
    # seed 1 #15350: narrow(0, 1, 1).prod(-2) of a zero under create_graph: torch's
    # prod_safe_zeros_backward returns grad itself for a slice of one element (no graph)
    def program(lib):
        x = lib.tensor([[-2.25], [0.0]], requires_grad=True)
        v = x.narrow(0, 1, 1)
        p = v.prod() if dim is None else v.prod(dim)
        (g,) = _grad(lib)((p * 0.5).sum() + (v * 0.5).sum(), [x], create_graph=True)
        return [g, lib.tensor([g.requires_grad])]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_setitem_with_an_ellipsis_is_a_copy_whose_self_gradient_is_fresh_zeros():
    # seed 1 #9954, #27501: torch's x[...] = v is x.copy_(v), whose gradient for the old
    # x is zeros_like(grad): no graph under create_graph (gradstack's select kept one)
    def program(lib):
        x0 = lib.tensor([1.0, 2.0], requires_grad=True)
        x6 = lib.tensor([0.5, 0.25], dtype=lib.float64, requires_grad=True)
        v4 = x0.to(dtype=lib.float64)
        v5 = v4[0::2]
        v4[...] = x6
        v5.asin_()
        w = x0 * 1
        w[:] = x6.float()
        loss = (v5 * 0.5).sum() + (w * w).sum()
        gr = _grad(lib)(loss, [x0, x6], create_graph=True)
        return list(gr) + [lib.tensor([g.requires_grad for g in gr])]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_logical_not_on_a_view_gives_the_base_s_views_a_new_history():
    # seed 1 #16016: after v12.logical_not_() (recorded nothing) torch regenerates the
    # views' grad_fn over the base: the gradient w.r.t. v12 is None, not v12's old one
    def program(lib):
        x = lib.tensor([[0.5, 2.0]], requires_grad=True)
        v10 = x * 2
        v12 = v10.transpose(-1, -2)
        v15 = v12[0]
        v12.logical_not_()
        gr = _grad(lib)((v15 * 2).sum(), [x, v12, v10], allow_unused=True)
        return [g if g is not None else lib.tensor(-1.0) for g in gr]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("number", [2, 0.0, True])
def test_a_number_divided_by_a_tensor_saves_the_reciprocal_not_the_tensor(number):
    # seed 1 #17589, #17732: ``2 / v6`` then ``v6[:, :] = ...``: torch's __rdiv__ is
    # v6.reciprocal() * 2, so the write does not touch a saved tensor; gradstack's
    # DivBackward0 saved v6 and backward raised "modified by an inplace operation"
    def program(lib):
        x = lib.tensor([[0.5, -2.0]], requires_grad=True)
        v = x.clip(min=-0.5, max=2)
        w = number / v
        v[:, :] = lib.tensor([[1.0, 3.0]])
        w.sum().backward()
        return [w.detach(), x.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("shapes", [((1, 4), (4, 2)), ((4,), (4,)), ((2, 3, 4), (4, 2))])
@pytest.mark.parametrize("wanted", ["a", "b"])
def test_matmul_saves_each_operand_only_for_the_other_s_gradient(shapes, wanted):
    # seed 1 #22073: v6 = v1.matmul(x5); v1.sub_(v1) with x5 needing no gradient: torch's
    # MmBackward0 did not save v1, gradstack's raised "modified by an inplace operation"
    def program(lib):
        x = lib.ones(shapes[0], dtype=lib.float64, requires_grad=wanted == "a")
        y = lib.full(shapes[1], 0.5, dtype=lib.float64, requires_grad=wanted == "b")
        a, b = x * 2, y * 3
        out = a.matmul(b)
        (a if wanted == "a" else b).sub_(1)  # the one whose own gradient reads the other
        out.sum().backward()
        return [x.grad if wanted == "a" else y.grad]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


@pytest.mark.parametrize("wanted", ["mat1", "mat2"])
def test_addmm_saves_each_factor_only_for_the_other_s_gradient(wanted):
    # seed 1 #29685: addmm(x7, v3, x5); v3.atan2_(v3) with x5 needing no gradient: torch's
    # AddmmBackward0 did not save v3, gradstack's raised "modified by an inplace operation"
    def program(lib):
        x = lib.arange(4.0, dtype=lib.float64).reshape(1, 4).requires_grad_(wanted == "mat1")
        y = lib.arange(8.0, dtype=lib.float64).reshape(2, 4).t()
        y.requires_grad_(wanted == "mat2")
        a, b = x * 1, y * 1
        out = lib.addmm(lib.ones(2, dtype=lib.float64), a, b, beta=0.5, alpha=2)
        (a if wanted == "mat1" else b).atan2_(lib.tensor(2.0, dtype=lib.float64))
        out.sum().backward()
        g = x.grad if wanted == "mat1" else y.grad
        return [g, lib.tensor(list(g.stride()))]

    got, want = _both(program)
    assert got == want and got[0] == "ok"


def test_a_view_with_no_elements_gives_its_base_fresh_zeros_under_create_graph():
    # seed 1 #29405: ``v3[...] += x4`` on an empty advanced-index result, then a matmul:
    # torch's as_strided_backward returns zeros with no graph for an empty view, so the
    # gradients of x2 and x4 do not require grad; gradstack's scatter kept the graph
    def program(lib):
        x2 = lib.tensor([[[[1.0]]]], requires_grad=True)
        v3 = x2[lib.tensor([0, 0, 0]), :-2:2]
        x4 = lib.full((1, 0, 1, 1), 1.0, requires_grad=True)
        v3[...] += x4
        x21 = lib.tensor([[1.0]], requires_grad=True)
        gr = _grad(lib)(lib.matmul(v3, x21).sum(), [x2, x4, x21], create_graph=True)
        return list(gr) + [lib.tensor([g.requires_grad for g in gr])]

    got, want = _both(program)
    assert got == want and got[0] == "ok"
    assert got[1][-1] == [False, False, True]


@pytest.mark.parametrize("view", ["narrow", "slice", "whole"])
def test_floor_divide_into_a_view_does_not_connect_the_divisor(view):
    # seed 1 #45403: v6 = v3.narrow(0, 0, 1); v6.floor_divide_(w): torch's NotImplemented
    # node has an edge only for w, which CopySlices drops as self's: w's gradient is None
    # and grad() works; gradstack ran the NotImplemented formula and raised.  On the tensor
    # itself (no view) both raise.
    def program(lib):
        w = lib.tensor([[0.5]], requires_grad=True)
        x = lib.tensor([[0.5]], requires_grad=True)
        v3 = lib.tensor([[1.0]]).clone()
        v6 = {"narrow": lambda: v3.narrow(0, 0, 1), "slice": lambda: v3[0:1], "whole": lambda: v3}
        v6 = v6[view]()
        v6.floor_divide_(w)
        gr = _grad(lib)((v6 * 0.5).sum() + x.sum(), [w, x], allow_unused=True)
        return [lib.tensor([gr[0] is None]), gr[1]]

    got, want = _both(program)
    assert got == want
    assert got[0] == ("raises" if view == "whole" else "ok")


@pytest.mark.parametrize(
    ("shape", "other", "view", "works"),
    [
        ((2, 2, 1, 2, 2), (2, 1), "mT", True),  # folded to 2-d: reshape(-1, n) copies
        ((2, 2, 1, 2, 2), (2,), "mT", True),  # folded to an mv
        ((3, 2, 2, 3), (2, 3, 3, 1), "t01", True),  # batched: the reshape copies
        ((2, 3, 2), (2, 3, 1), "mT", False),  # batched, the reshape views: torch raises
        ((2, 3, 2), (2, 1), "none", False),  # folded as a view: torch raises
    ],
)
def test_matmul_saves_the_folded_copy_torch_makes(shape, other, view, works):
    # seed 1 #49746: v6 = v1.mT; v8 = v6.matmul(x7); v6[...] = ...; torch's matmul saved
    # v6.reshape(-1, n), a copy for a transposed v6, so the write did not touch it;
    # gradstack saved v6 and raised "modified by an inplace operation"
    def program(lib):
        v1 = lib.arange(float(np.prod(shape)), dtype=lib.float64).reshape(shape)
        v6 = {"mT": lambda: v1.mT, "t01": lambda: v1.transpose(0, 1), "none": lambda: v1}[view]()
        x7 = lib.full(other, 0.5, dtype=lib.float64, requires_grad=True)
        v8 = v6.matmul(x7)
        v6[:1] = 3.0
        gr = _grad(lib)((v8 * v8).sum(), [x7], create_graph=True)
        gg = _grad(lib)(gr[0].sum(), [x7])
        return [gr[0], gg[0]]

    got, want = _both(program)
    assert got == want
    assert got[0] == ("ok" if works else "raises")


def test_matmul_of_an_empty_batched_operand_saves_a_view_of_it():
    # seed 20261201 #566: torch folds an empty operand with a view (reshape(16, 0)), so a
    # later write into it fails backward's version check; gradstack's fold test asked numpy
    # for reshape(-1, 0), which is ambiguous, and saved a copy
    def program(lib):
        v5 = lib.ones(2, 1, 4, 1, 2, 0)
        x7 = lib.ones((0, 1), requires_grad=True)
        v8 = v5.matmul(x7)
        with _no_grad(lib):
            v5.expm1_()
        v8.sum().backward()
        return [x7.grad]

    got, want = _both(program)
    assert got == want and got[0] == "raises"


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_write_through_an_expanded_view_overwrites_every_alias(create_graph):
    """seed 2 #18356 (and seed 1 #37787): ``v[0, ..., -1] = 2`` on ``v = b.expand(...)``
    overwrites the base elements themselves, so none of their aliases passes the old
    gradient on (Note [Writing through a view that repeats elements]); a partial write
    leaves the other base elements' gradients alone, and the written value gets the
    gradient of the one position it was written to."""

    def program(lib):
        x = lib.ones((2, 1, 2, 2, 1), requires_grad=True)
        v = lib.neg((-0.75 - x).swapaxes(1, 0)).expand(2, 2, 2, 2, 2)
        w = lib.arange(32.0).reshape(2, 2, 2, 2, 2)
        v[0, ..., -1] = 2
        (gx,) = lib.autograd.grad((v * w).sum(), x, create_graph=create_graph)
        x2 = lib.ones((2, 1, 2, 2, 1), requires_grad=True)
        v2 = lib.neg((-0.75 - x2).swapaxes(1, 0)).expand(2, 2, 2, 2, 2)
        y = lib.full((2, 2), 3.0, requires_grad=True)
        v2[1, 0, :, :, 1] = y
        gx2, gy = lib.autograd.grad((v2 * w).sum(), (x2, y), create_graph=create_graph)
        return [t.detach().numpy() for t in (gx, gx2, gy)]

    got = program(_TensorCoreAndAutograd)
    for mine, want in zip(got, program(torch), strict=True):
        np.testing.assert_array_equal(mine, want)
    assert not got[0].any()  # every alias overwritten: no gradient


class _TensorCoreAndAutograd:
    """The torch names the program above uses, from tensor-core and graph-engine."""

    ones, neg, arange, full = gt.ones, gt.neg, gt.arange, gt.full

    class autograd:
        grad = staticmethod(gradstack_autograd.grad)


@pytest.mark.parametrize("base_requires_grad", [False, True])
def test_an_in_place_op_on_a_view_saves_an_output_that_requires_grad(base_requires_grad):
    """seed 2 #10361: ``x[:].pow_(e)`` saved its output before the view's history was
    rebased, as a tensor without grad, so under create_graph the exponent's gradient
    (``grad * out * log(x)``) did not require grad; torch's does, and its second
    derivative is ``grad * out * log(x) ** 2``."""

    def program(lib, tensor, grad):
        e = tensor([0.5, 2.0], requires_grad=True)
        x = tensor([0.5, 3.0], requires_grad=base_requires_grad)
        b = x * 1.0
        b[:].pow_(e)
        (g,) = grad(b.sum(), e, create_graph=True)
        (gg,) = grad(g.sum(), e)
        return g.requires_grad, g.detach().numpy(), gg.numpy()

    mine = program(gt, gt.tensor, gradstack_autograd.grad)
    want = program(torch, torch.tensor, torch.autograd.grad)
    assert mine[0] is want[0] is True
    np.testing.assert_allclose(mine[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(mine[2], want[2], rtol=1e-6)


@pytest.mark.parametrize(
    "op",
    [
        lambda y: y.max(1).values,
        lambda y: y.min(1, keepdim=True).values,
        lambda y: y.max(),
        lambda y: y.gather(1, _index(y)),
    ],
    ids=["max_dim", "min_dim_keepdim", "max_all", "gather"],
)
def test_writing_the_input_after_a_selection_fails_backward_as_torch(op):
    """torch's MaxBackward0/MinBackward0 keep the indices they chose, not ``self``, so an
    in-place write to the input before backward is fine; MaxBackward1 (over everything)
    and GatherBackward0 save ``self``, so the same write raises the version error (seed 2
    #2950)."""

    def program(lib):
        x = lib.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], requires_grad=True)
        y = x * 1
        v = op(y)
        y.add_(1)
        grad = torch.autograd.grad if lib is torch else gradstack_autograd.grad
        try:
            (g,) = grad(v.sum(), x)
        except RuntimeError as e:
            return "modified by an inplace operation" in str(e)
        return g.numpy().tolist()

    assert program(gt) == program(torch)


def _index(y):
    return (gt if isinstance(y, gt.Tensor) else torch).tensor([[0], [2]])


@pytest.mark.parametrize("reduce", ["max", "min"])
def test_writing_the_result_of_a_full_max_fails_backward_as_torch(reduce):
    """seed 2 #3112, #5870: torch's MaxBackward1 reads its saved result (its gradient goes
    to the elements equal to it), so ``v = y.max(); v.relu_()`` then backward raises the
    version error; along a dim the values may be written (only the indices are kept)."""

    def program(lib, grad):
        x = lib.tensor([[1.0, 3.0], [4.0, 0.5]], requires_grad=True)
        out = []
        for full in (True, False):
            v = getattr(x * 1, reduce)() if full else getattr(x * 1, reduce)(1).values
            v.relu_()
            try:
                (g,) = grad(v.sum(), x)
                out.append(g.numpy().tolist())
            except RuntimeError as e:
                out.append("modified by an inplace operation" in str(e))
        return out

    got = program(gt, gradstack_autograd.grad)
    assert got == program(torch, torch.autograd.grad)
    assert got[0] is True and isinstance(got[1], list)


def test_a_bool_exponent_is_not_zero_for_the_gradient():
    """fuzz seed 3 #8483: torch's pow_backward tests its Scalar exponent with equal(0.0),
    false for ``False``, so ``pow(False)`` differentiates as ``0 * x**-1`` (NaN at 0, a graph
    under create_graph) where ``pow(0)`` gives zeros (Note [A bool exponent is not zero])."""

    def program(lib, grad):
        out = []
        for e in (False, 0, 0.0, True):
            x = lib.tensor([0.0, 2.0], requires_grad=True)
            for inplace in (False, True):
                y = x * 1
                y = y.pow_(e) if inplace else y.pow(e)
                (g,) = grad(y.sum(), x, create_graph=True)
                out.append((str(g.tolist()), g.requires_grad))
        return out

    got = program(gt, gradstack_autograd.grad)
    assert got[0] == ("[nan, 0.0]", True) and got[2] == ("[0.0, 0.0]", False)
    assert got == program(torch, torch.autograd.grad)


@pytest.mark.parametrize(
    ("sa", "sb", "transposed", "a_grad"),
    [
        ((1, 2), (2, 2, 3), False, True),  # seed 3 #17680: b.mT folded is a copy
        ((2,), (2, 2, 3), False, True),
        ((1, 2), (2, 2, 3), True, True),  # b.mT is contiguous: folded is a view
        ((3, 2), (2, 2, 4), False, True),  # a copy, and torch's CloneBackward0
        ((3, 2), (2, 2, 4), False, False),  # b's gradient: not folded (bmm)
        ((2, 2), (0, 2, 3), False, True),
    ],
)
def test_matmul_of_a_matrix_by_a_batch_saves_torchs_folded_copy(sa, sb, transposed, a_grad):
    """Note [matmul saves its folded operand], the mirror case: ``a @ b`` with a 1-d/2-d
    ``a`` that requires grad folds ``b.mT`` into a matrix, a copy unless ``b.mT`` is
    contiguous, so writing ``b`` in place afterwards fails backward exactly when torch's."""

    def program(lib, no_grad):
        a = lib.tensor(np.full(sa, 0.5), requires_grad=a_grad)
        shape = sb[:-2] + (sb[-1], sb[-2]) if transposed else sb
        b0 = lib.tensor(np.arange(math.prod(sb), dtype=float).reshape(shape))
        b0.requires_grad_(not a_grad)
        b = b0.mT if transposed else b0
        out = lib.matmul(a, b)
        with no_grad():
            b0.neg_()
        try:
            out.sum().backward()
        except RuntimeError as e:
            return type(out.grad_fn).__name__, "modified by an inplace operation" in str(e)
        return type(out.grad_fn).__name__, (a.grad if a_grad else b0.grad).tolist()

    assert program(gt, gradstack_autograd.no_grad) == program(torch, torch.no_grad)


def test_a_view_made_under_no_grad_is_no_root_for_backward():
    """fuzz seed 3 #2988: a view of a leaf made under no_grad reports requires_grad (through
    its base) but feeds no gradient: torch's backward from it raises, it does not fill the
    view's .grad; ops on it still run and send nothing."""

    def program(lib, no_grad):
        x = lib.ones(2, requires_grad=True)
        with no_grad():
            v = x.view_as(x)
        out = [v.requires_grad, v.grad_fn is None]
        try:
            v.backward(lib.ones(2))
        except RuntimeError as e:
            out.append(str(e))
        (v * 2 + x).sum().backward()
        out.append((x.grad.tolist(), v.grad))
        return out

    got = program(gt, gradstack_autograd.no_grad)
    assert got == program(torch, torch.no_grad)
    assert "does not require grad and does not have a grad_fn" in got[2]


def _setitem_cases(lib):
    def c1():
        x = lib.tensor([[[[[0.5, 0.5]]]]], requires_grad=True)
        v = x[..., 2::3, 1]
        v[lib.tensor([[-1, 1]]), -1, [0], lib.tensor([0, 0, 0])] = 3.0

    def c2():
        x = lib.tensor([[[[[[0.5], [0.5]]]]]], dtype=lib.float64, requires_grad=True)
        v = x[:0, 0::3, 2:-3]
        v[lib.tensor([0, 0]), 0, 0:, ::3, -2] = v.sum()

    def c3():
        lib.ones(2, 3, requires_grad=True)[lib.tensor([0]), 5] = 1.0

    def c4():
        lib.ones(2, 3, requires_grad=True)[lib.tensor([7]), 1] = 1.0

    def c5():
        lib.ones(2, 3, requires_grad=True)[5] = 1.0

    return [c1, c2, c3, c4, c5]


def test_an_advanced_index_error_comes_after_the_leaf_error_as_in_torch():
    """Note [Which index errors come before the leaf error] (fuzz seed 3 #5788, #191):
    a basic index out of range is an IndexError before the leaf check, advanced indices
    that do not broadcast or are out of bounds come after it (the leaf's RuntimeError)."""

    def kinds(lib):
        out = []
        for case in _setitem_cases(lib):
            try:
                case()
                out.append(None)
            except (RuntimeError, IndexError) as e:
                out.append(type(e).__name__)
        return out

    got = kinds(gt)
    assert got == kinds(torch)
    assert got == ["RuntimeError", "RuntimeError", "IndexError", "RuntimeError", "IndexError"]


@pytest.mark.parametrize(
    "write",
    ["setitem_elem", "setitem_col", "setitem_mask", "fill_", "masked_fill_", "col_fill_"],
)
def test_backward_through_a_write_into_overlapping_memory_raises_as_torch(write):
    """Note [Backward through a write into overlapping memory] (fuzz seed 4 #2183): torch
    runs fill_/masked_fill_ on an expanded view that requires grad, and its backward
    refuses the overlapping write; one element written through it (``v[0, 0] = 2``) is
    fine, a whole column is refused at once."""

    def program(lib):
        x = lib.ones(1, 1, dtype=lib.float64, requires_grad=True)
        v = (x * 1).expand(2, 3)
        writes = {
            "setitem_elem": lambda: v.__setitem__((0, 0), 2.0),
            "setitem_col": lambda: v.__setitem__((slice(None), 0), 2.0),
            "setitem_mask": lambda: v.__setitem__(v > 100, 2.0),
            "fill_": lambda: v.fill_(2.0),
            "masked_fill_": lambda: v.masked_fill_(v > 0, 2.0),
            "col_fill_": lambda: v[:, 0].fill_(2.0),
        }
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # masked_fill_'s deprecation warning
                writes[write]()
        except RuntimeError as e:
            return "forward", "single memory location" in str(e)
        try:
            v.sum().backward()
        except RuntimeError as e:
            return "backward", "single memory location" in str(e)
        return "ok", x.grad.tolist()

    assert program(gt) == program(torch)


@pytest.mark.parametrize("mode", ["floor", "trunc"])
def test_a_rounding_division_checks_its_saved_operands_as_torch(mode):
    """fuzz seed 4 #2573: torch's DivBackward2 saves self (for other's gradient) and other
    (for either) as div does, and reads them in backward, so an operand written in place
    after the division fails backward, though both gradients are zeros."""

    def program(lib, grad, no_grad):
        out = []
        for other_requires_grad in (False, True):
            for written in ("self", "other"):
                x = lib.tensor([3.0, 5.0], requires_grad=True)
                o = lib.tensor([2.0, 2.0], requires_grad=other_requires_grad)
                a, b = x * 1, o * 1
                r = a.div(b, rounding_mode=mode)
                with no_grad():
                    (a if written == "self" else b).add_(1)
                try:
                    g = grad(r.sum(), [x] + ([o] if other_requires_grad else []))
                    out.append([t.tolist() for t in g])
                except RuntimeError as e:
                    out.append("modified by an inplace operation" in str(e))
        return out

    got = program(gt, gradstack_autograd.grad, gradstack_autograd.no_grad)
    assert got == program(torch, torch.autograd.grad, torch.no_grad)
    assert got == [[[0.0, 0.0]], True, True, True]


def test_a_multi_output_view_written_through_a_detached_alias_raises_as_torch():
    """fuzz seed 4 #11584: ``v = x.unbind(0)[0]; v.detach().mul_(2)`` moves the version the
    view shares with its base; torch then refuses to use ``v`` with grad mode on (it cannot
    rebuild a multi-output view's grad_fn), as after a write through the base."""

    def program(lib, no_grad):
        out = []
        for case in range(4):
            x = lib.tensor([0.5, 1.0], requires_grad=True)
            v, w = x.unbind(0) if case != 2 else (x * 1).split(1)
            if case == 1:
                with no_grad():
                    v.mul_(2)
            else:
                (w if case == 3 else v).detach().mul_(2)
            try:
                out.append((v * 2).tolist())
            except RuntimeError as e:
                out.append("is a view and its base or another view" in str(e))
        with no_grad():
            out.append((v * 2).tolist())  # without grad it is a plain tensor
        return out

    got = program(gt, gradstack_autograd.no_grad)
    assert got == program(torch, torch.no_grad)
    assert got[:4] == [True] * 4


_MATMUL_SHAPES_A = {1: (2,), 2: (3, 2), 3: (4, 3, 2), 4: (2, 4, 3, 2)}
_MATMUL_SHAPES_B = {1: (2,), 2: (2, 3), 3: (4, 2, 3), 4: (2, 4, 2, 3)}


def _late_operand_reached(lib, da, db, late, transposed_b):
    """``x @ w`` where one operand requires grad only after the product: whether double
    backward (through the other operand's gradient) reaches it."""
    r = np.random.default_rng(da * 10 + db)
    a = lib.tensor(r.random(_MATMUL_SHAPES_A[da]))
    b = lib.tensor(r.random(_MATMUL_SHAPES_B[db]))
    if transposed_b and db >= 2:
        b = b.mT.contiguous().mT
    early, late_t = (b, a) if late == "a" else (a, b)
    early.requires_grad_()
    y = lib.matmul(a, b)
    late_t.requires_grad_()
    (g,) = _grad(lib)(y.sin().sum(), [early], create_graph=True)
    if g.grad_fn is None:
        return False, None
    (gg,) = _grad(lib)(g.sum(), [late_t], allow_unused=True)
    return True, None if gg is None else gg.tolist()


@pytest.mark.parametrize("transposed_b", [False, True])
@pytest.mark.parametrize("late", ["a", "b"])
@pytest.mark.parametrize("db", [1, 2, 3, 4])
@pytest.mark.parametrize("da", [1, 2, 3, 4])
def test_matmul_operand_that_requires_grad_later_is_reached_as_in_torch(da, db, late, transposed_b):
    # seed 6 #781: vec @ batch ran as bmm in torch, which saved a view of vec made before
    # vec.requires_grad_(); the double backward must not reach vec (gradstack reached it)
    ours = _late_operand_reached(gt, da, db, late, transposed_b)
    theirs = _late_operand_reached(torch, da, db, late, transposed_b)
    assert ours[0] == theirs[0]
    assert (ours[1] is None) == (theirs[1] is None)
    if ours[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_an_index_error_comes_before_the_multi_output_view_error():
    # seed 6 #7057: v = x.split(3, -1)[0]; v[5:-3, ::2, 1, 1::2] = 1.0 on a 3-d v is torch's
    # IndexError (the index is resolved first), not the multi-output-view RuntimeError
    def program(lib):
        x = lib.tensor([[[0.5]]], dtype=lib.float64, requires_grad=True)
        v = x.split(3, -1)[0]
        v[5:-3, ::2, 1, 1::2] = 1.0
        return [v]

    assert _both(program) == [("raises", "IndexError")] * 2

    def valid_index(lib):
        x = lib.tensor([[[0.5]]], dtype=lib.float64, requires_grad=True)
        v = x.split(3, -1)[0]
        v[0] = 1.0
        return [v]

    assert _both(valid_index) == [("raises", "RuntimeError")] * 2
