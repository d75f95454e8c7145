"""Shrunk programs from the random-program fuzzer (tests/fuzz) that differed from torch,
each run by gradstack and torch: those about views (split, regenerated, created under
no_grad, leaf views, stale views, writes through aliases), with the other regressions the
same seeds found (products with zeros, pow's number base).  The earlier ones:
``test_fuzz_regressions.py``."""

from __future__ import annotations

import warnings

import gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")
from gradstack_autograd_tests_fuzz_programs import _both, _grad, _no_grad  # noqa: E402


def _agrees_with_torch(program, outcome, message=None):
    """``program`` runs (``"ok"``) or raises (``"raises"``) in both libraries, with the same
    values or error type, and gradstack's RuntimeError says ``message``."""
    ours, theirs = _both(program)
    assert ours == theirs
    assert ours[0] == outcome
    if outcome == "raises" and message is not None:
        with pytest.raises(RuntimeError, match=message):
            program(gt)


def _split_view_programs():
    def write_with_grad(lib):  # seed 6 #5342
        x, w = lib.zeros(4), lib.ones(2, requires_grad=True)
        v = x.chunk(2)[1]
        v.add_(w)
        return [v]

    def written_then_base_requires_grad(lib):  # seed 6 #18273
        x = lib.zeros(4)
        v = x.unbind(0)[1]
        v.zero_()
        x.requires_grad_()
        return [(v * 1).sum()]

    def base_written_with_grad(lib):
        x, w = lib.zeros(4), lib.ones(4, requires_grad=True)
        v = x.chunk(2)[1]
        x.add_(w)
        return [(v * 1).sum()]

    def written_after_base_requires_grad(lib):
        x = lib.zeros(4)
        v = x.unbind(0)[1]
        x.requires_grad_()
        v.zero_()
        return [v]

    def written_without_grad(lib):  # fine in torch: nothing requires grad at the write
        x, w = lib.zeros(4), lib.ones(2, requires_grad=True)
        v = x.chunk(2)[1]
        v.add_(1)
        return [(v * w).sum()]

    def unwritten_after_base_requires_grad(lib):
        x = lib.zeros(4)
        v = x.unbind(0)[1]
        x.requires_grad_()
        return [(v * 1).sum(), lib.tensor(float(v.requires_grad))]

    return [
        (write_with_grad, "raises"),
        (written_then_base_requires_grad, "raises"),
        (base_written_with_grad, "raises"),
        (written_after_base_requires_grad, "raises"),
        (written_without_grad, "ok"),
        (unwritten_after_base_requires_grad, "ok"),
    ]


@pytest.mark.parametrize(
    "program, outcome", _split_view_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_a_multi_output_view_of_a_base_without_grad_is_one_as_in_torch(program, outcome):
    # torch marks split/chunk/unbind outputs made with grad mode on as multi-output views
    # whether or not the base requires grad: writing one in place with a value that
    # requires grad raises, and so does using one whose base gained grad after a write
    _agrees_with_torch(program, outcome, "A view was created in no_grad mode and")


def _unregenerated_view_programs():
    def sibling_write_then_write(lib):  # raises in torch: v's grad_fn was never stored
        b, w = lib.zeros(4), lib.ones(2, requires_grad=True)
        v = b[:2]
        b[2:].copy_(w)
        v.zero_()
        return [b]

    def subview_write_then_write(lib):  # seed 6 #12499, #16318
        b, w = lib.zeros(4), lib.tensor(0.5, requires_grad=True)
        v = b[::1]
        v[:-1] = w
        v.copy_(lib.ones(4) * w)
        return [b]

    def subview_write_then_advanced_write(lib):  # seed 6 #1958, #6433
        b, w = lib.zeros(2, 3), lib.tensor(0.5, requires_grad=True)
        v = b[:, 1:]
        v[0, :] = w
        v[lib.tensor([1])] = 2.0
        return [b]

    def augmented_write_then_other_view(lib):  # seed 6 #3248
        b, w = lib.zeros(3), lib.ones(1, requires_grad=True)
        v, u = b.expand_as(b), b[:2]
        u[1:] += w
        v.round_()
        return [b]

    def subview_writes_twice(lib):  # fine: each write makes a new view of v
        b, w = lib.zeros(4), lib.tensor(0.5, requires_grad=True)
        v = b[::1]
        v[:-1] = w
        v[1:] = w * 2
        return [b]

    def used_then_written(lib):  # fine: using v regenerates its grad_fn
        b, w = lib.zeros(4), lib.ones(2, requires_grad=True)
        v = b[:2]
        b[2:].copy_(w)
        s = (v * 1).sum()
        v.zero_()
        return [b, s]

    def read_then_written(lib):  # fine: reading v.grad_fn regenerates it
        b, w = lib.zeros(4), lib.ones(2, requires_grad=True)
        v = b[:2]
        b[2:].copy_(w)
        assert v.grad_fn is not None
        v.zero_()
        return [b]

    return [
        (sibling_write_then_write, "raises"),
        (subview_write_then_write, "raises"),
        (subview_write_then_advanced_write, "raises"),
        (augmented_write_then_other_view, "raises"),
        (subview_writes_twice, "ok"),
        (used_then_written, "ok"),
        (read_then_written, "ok"),
    ]


@pytest.mark.parametrize(
    "program, outcome", _unregenerated_view_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_a_view_whose_base_gained_grad_through_another_view_as_in_torch(program, outcome):
    # torch stores a view's grad_fn lazily: until the view is read or used, an in-place op
    # on it is "a leaf Variable that requires grad is being used in an in-place operation"
    _agrees_with_torch(program, outcome, "a leaf Variable that requires grad")


def test_gradients_through_a_view_used_after_a_sibling_write_reach_the_writer():
    # the regenerated history is the one torch builds: d/dw of (v * 1).sum() + b.sum()
    def program(lib):
        b, w = lib.zeros(4, dtype=lib.float64), lib.ones(2, dtype=lib.float64, requires_grad=True)
        v = b[1:3]
        b[2:].copy_(w * 3)
        ((v * 2).sum() + b.sum()).backward()
        return [w.grad]

    ours, theirs = _both(program)
    assert ours == theirs
    assert ours == ("ok", [[9.0, 3.0]])


def test_an_advanced_write_into_an_expanded_view_of_a_base_without_grad_backpropagates():
    # seed 7 #6117: torch's CopySlices copies the gradient back through the (overlapping)
    # view only for the base's own gradient; a base that did not require grad has no edge,
    # so backward works and the written value gets its gradient
    def program(lib):
        b = lib.tensor([[0.5]], dtype=lib.float64)
        v = b.expand(-1, 3)
        w = lib.tensor([[0.5]], dtype=lib.float64, requires_grad=True)
        v[lib.tensor([0, -1])] = w
        (b * 3.0).sum().backward()
        return [w.grad]

    assert _both(program) == [("ok", [[[18.0]]])] * 2  # w broadcast to 2 x 3 positions

    def base_requires_grad(lib):  # seed 4 #2183: the copy back raises in torch
        b0 = lib.tensor([[0.5]], dtype=lib.float64, requires_grad=True)
        b = b0 * 1
        v = b.expand(-1, 3)
        v.fill_(2.0)
        b.sum().backward()
        return [b0.grad]

    assert _both(base_requires_grad) == [("raises", "RuntimeError")] * 2


def _view_creation_programs():
    def leaf_view_written(lib):  # seed 7 #10057
        v = lib.tensor([[[1.0]]]).transpose(1, -1)
        v.requires_grad_()
        v.zero_()
        return [v]

    def view_of_a_no_grad_view_written(lib):  # seed 7 #3213
        x0 = lib.full((1,), 0.5, requires_grad=True)
        v1 = lib.acos(x0)
        with _no_grad(lib):
            v2 = v1.t()
        v6 = v2.t()
        v6.floor_divide_(lib.tensor(2.0, dtype=lib.float64))
        return [v6]

    def view_of_a_split_output_written(lib):
        x = lib.ones(4, requires_grad=True) * 1
        s = x.split(2)[0][1:]
        s.mul_(2.0)
        return [s]

    def stale_split_output_retains_grad(lib):  # seed 7 #8873
        x2 = lib.zeros((1, 1), requires_grad=True)
        v3 = lib.clone(x2)
        v6 = v3.chunk(4, 1)[0]
        v3 -= x2
        v6.retain_grad()
        return [v6]

    def view_of_a_no_grad_view_read(lib):  # fine: only writing it is refused
        x0 = lib.full((2,), 0.5, requires_grad=True)
        with _no_grad(lib):
            v2 = (x0 * 1)[:1]
        return [(v2.t() * 2).sum()]

    return [
        (leaf_view_written, "raises"),
        (view_of_a_no_grad_view_written, "raises"),
        (view_of_a_split_output_written, "raises"),
        (stale_split_output_retains_grad, "raises"),
        (view_of_a_no_grad_view_read, "ok"),
    ]


@pytest.mark.parametrize(
    "program, outcome", _view_creation_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_views_of_special_views_inherit_their_creation_as_in_torch(program, outcome):
    # torch's propagate_creation_meta: a view of a no_grad or multi-output view is one too;
    # a view with requires_grad of its own over a leaf base is a view of a leaf; reading
    # the grad_fn of a stale multi-output view raises
    _agrees_with_torch(program, outcome)


def test_a_no_grad_view_written_since_refuses_use_as_in_torch():
    # fuzz seed 8 #12458: a view made under no_grad, whose base was then written through a
    # detached alias, raises when used with grad mode on (torch refuses to regenerate it)
    def written(lib):
        x0 = lib.tensor([[0.5]], requires_grad=True)
        v1 = x0.detach()
        with _no_grad(lib):
            v2 = x0.squeeze(-2)
        v1.zero_()
        return [(v2 * 2).sum()]

    def unwritten(lib):
        x0 = lib.tensor([[0.5]], requires_grad=True)
        with _no_grad(lib):
            v2 = x0.squeeze(-2)
        return [(v2 * 2).sum()]

    assert _both(written) == [("raises", "RuntimeError")] * 2
    assert _both(unwritten) == [("ok", [1.0])] * 2


def test_a_slice_step_error_comes_before_the_leaf_view_error():
    # fuzz seed 8 #7676: v[-3:0:-1] = x on a view of a leaf is torch's ValueError first
    def program(lib):
        x0 = lib.tensor([0.5, 0.5], requires_grad=True)
        v2 = lib.reshape(x0, (2,))
        v2[-3:0:-1] = lib.tensor(1.0)
        return [v2]

    assert _both(program) == [("raises", "ValueError")] * 2


def test_the_gradient_of_a_product_with_a_zero_is_computed_in_the_products_dtype():
    # fuzz seed 8 #6205: prod(dtype=float32) of a float16 input with one zero: the product
    # of the others overflowed in half (inf * 0 = NaN) where torch computes it in float32
    values = np.array([0.0] + [2.75, -3.0, 2.25, -1.5] * 6, dtype=np.float16)

    def program(lib):
        x = lib.tensor(values, requires_grad=True)
        (g,) = _grad(lib)(x.prod(dtype=lib.float32) * 0.5, [x], create_graph=True)
        return [g]

    ours, theirs = _both(program)
    assert ours == theirs
    assert not np.isnan(np.asarray(ours[1][0], dtype=float)).any()


def test_a_product_with_zeros_backpropagates_in_linear_memory_with_torchs_overflows():
    # fuzz seed 9 #7329: the first-order gradient with a zero is torch's exclusive
    # cumprods, O(n) memory (the (n, n) product asked for 4e10 elements here) and the same
    # order of products: a float16 run of 300s overflows where torch's does
    big = np.ones(200_001)
    big[7] = 0.0
    x = gt.tensor(big, requires_grad=True)
    x.prod().backward()
    assert x.grad[7].item() == 1.0 and x.grad.sum().item() == 1.0

    def program(lib):
        v1 = lib.full((300,), 300.0, dtype=lib.float16, requires_grad=True)
        v3 = lib.cat((v1, lib.tensor([0.0], dtype=lib.float16)))
        lib.prod(v3, 0, keepdim=True).sum().backward()
        return [v1.grad]

    ours, theirs = _both(program)
    np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1]))


def test_an_integer_result_of_a_stale_multi_output_view_is_fine_as_in_torch():
    # fuzz seed 9 #1028: ``v.long()`` of a stale multi-output view records nothing (no
    # float output), so torch queries no grad_fn and raises nothing
    def program(lib):
        v1 = lib.ones((1, 1), dtype=lib.float64) + 0
        v3 = v1.chunk(1, -1)[0]
        v1[[0, 0], 0:1] = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        return [v3.long()]

    assert _both(program) == [("ok", [[[1]]])] * 2


def _product_outcome(lib, op, a_spec, b_spec):
    """What ``op(a, b)`` gives, then its gradients: result shape, dtype and sum, and each
    operand's gradient dtype and sum; or the error's type."""

    def operand(shape, dtype, requires_grad):
        t = lib.ones(shape, dtype=getattr(lib, dtype))
        return t.requires_grad_() if requires_grad else t

    try:
        a, b = operand(*a_spec), operand(*b_spec)
        r = a @ b if op == "matmul" else getattr(lib, op)(a, b)
        out = [list(r.shape), str(r.dtype).split(".")[-1], r.double().sum().item()]
        if r.requires_grad:
            r.double().sum().backward()
            for t in (a, b):
                g = t.grad
                out.append(None if g is None else (str(g.dtype).split(".")[-1], g.sum().item()))
        return out
    except (RuntimeError, NotImplementedError, IndexError, TypeError, ValueError) as e:
        return type(e).__name__


@pytest.mark.parametrize(
    "op,a,b",
    [
        # seed 7 #19088, seed 10 #14202: 2-d @ batch goes through bmm, which checks no dtype
        # (nor bool) for an empty product and takes the second operand's dtype
        ("matmul", ((0, 1), "int16", False), ((1, 1, 1), "bool", False)),
        ("matmul", ((0, 0), "int32", False), ((1, 0, 1), "bool", False)),
        ("matmul", ((2, 0), "float32", False), ((3, 0, 4), "bool", False)),
        ("matmul", ((3, 0, 2), "bool", False), ((3, 2, 4), "int32", False)),
        ("bmm", ((3, 2, 0), "bool", False), ((3, 0, 4), "bool", False)),
        # ... but a folded batch runs mm/mv, which check the dtype and say no to bool only
        # when there is something to compute
        ("matmul", ((3, 2, 2), "float32", False), ((2, 0), "float64", False)),
        ("matmul", ((3, 0, 2), "bool", False), ((2, 2), "bool", False)),
        ("matmul", ((2, 2), "bool", False), ((2, 0), "bool", False)),
        ("matmul", ((3, 2, 0), "bool", False), ((0,), "bool", False)),
        ("matmul", ((2, 2), "bool", False), ((3, 2, 2), "bool", False)),
        ("matmul", ((0,), "bool", False), ((0,), "bool", False)),
        # shape errors come before the bool error
        ("matmul", ((2, 0), "bool", False), ((3, 2, 2), "bool", False)),
        ("bmm", ((3, 2, 2), "bool", False), ((2, 2, 2), "bool", False)),
        ("mv", ((), "float32", False), ((2,), "int64", False)),
        # an operand that requires grad changes the path: a batch of one is squeezed and
        # folded into mm (which checks dtypes); an integer result cannot carry a gradient
        ("matmul", ((3, 0, 2), "float64", False), ((1, 2, 2), "float32", True)),
        ("matmul", ((3, 0, 2), "float64", True), ((1, 2, 2), "float32", False)),
        ("matmul", ((3, 0, 2), "float64", True), ((3, 2, 2), "int32", False)),
        ("bmm", ((3, 0, 2), "float64", True), ((3, 2, 2), "int32", False)),
        ("matmul", ((0, 2), "float64", True), ((3, 2, 2), "float32", False)),
        ("matmul", ((0, 2), "float64", False), ((3, 2, 2), "float32", True)),
    ],
)
def test_an_empty_product_checks_what_torch_checks(op, a, b):
    assert _product_outcome(gt, op, a, b) == _product_outcome(torch, op, a, b)


def _history_apart_from_base_programs():
    def base_written_after(lib):  # seed 7 #4454
        x0 = lib.tensor([[[0.5]]])
        v3 = x0.transpose(1, -3)
        v3.requires_grad_()
        v7 = v3[0]
        x0.sub_(lib.tensor(2, dtype=lib.int8))
        (v7 * lib.ones(2, 3)).sum().backward()
        return [
            lib.tensor(v3.grad is None),
            lib.tensor(type(v7.grad_fn).__name__ == "AsStridedBackward0"),
        ]

    def base_not_written(lib):
        y = lib.zeros(2, 2)
        w = y.t()
        w.requires_grad_()
        (w[0] * 3).sum().backward()
        return [w.grad]

    def written_through_the_view_under_no_grad(lib):
        y = lib.zeros(2, 2)
        w = y.t()
        w.requires_grad_()
        u = w[0]
        with _no_grad(lib):
            w.add_(1)
        (u * 3).sum().backward()
        return [lib.tensor(w.grad is None)]

    def written_then_view_written_in_place(lib):
        y = lib.zeros(2, 2)
        w = y.t()
        w.requires_grad_()
        u = w[0]
        y.add_(1)
        u.mul_(2)
        return [u]

    return [
        (base_written_after, "ok"),
        (base_not_written, "ok"),
        (written_through_the_view_under_no_grad, "ok"),
        (written_then_view_written_in_place, "raises"),
    ]


@pytest.mark.parametrize(
    "program,outcome",
    _history_apart_from_base_programs(),
    ids=lambda p: getattr(p, "__name__", p),
)
def test_a_view_whose_history_does_not_pass_through_its_base(program, outcome):
    # Note [A view whose history does not pass through its base]: a write into the base
    # that autograd did not record gives the view torch's regenerated grad_fn, which
    # feeds nothing
    _agrees_with_torch(program, outcome)


def _seed_11_programs():
    def augmented_setitem_of_a_sliced_view(lib):  # seed 11 #4769
        # ``v3[-1:,] += x5`` writes v3[-1:] (a view, though it covers the whole dim), then
        # sets it back: torch's indexing returns the tensor itself only for a slice written
        # as [0:length or more], so v3 itself is not written
        v1 = lib.full((1, 1, 1, 1, 1, 1), 1.0).prod(-3, keepdim=True)
        v3 = v1[:0, -2:-1, -1::3]
        x5 = lib.tensor(0.5, requires_grad=True)
        v3[-1:,] += x5
        return [lib.tensor(v3.shape), lib.tensor(v3.requires_grad)]

    def whole_slice_of_a_stale_view_is_the_view(lib):
        # the same write through [0:] writes the view itself: torch's leaf error
        b = lib.zeros(2, 3)
        v = b[:, :2]
        w = lib.ones(1, requires_grad=True)
        b[:, 2:].copy_(w.expand(2, 1))
        v[0:] = 1.0
        return [v]

    def no_gradient_arrives_at_a_node_whose_save_was_written(lib):  # seed 11 #12062
        # norm(p=0)'s gradient is undefined, yet torch's atan2 node still unpacks the
        # operand that atan2_ saved and then wrote
        x0 = lib.ones(2, dtype=lib.float64, requires_grad=True)
        v5 = x0.clamp(min=0.25, max=2)
        v5.atan2_(v5)
        (2 - v5).norm(p=0).backward()
        return [x0.grad]

    def saved_view_is_differentiated_as_the_view(lib):  # seed 10 #15210
        # Note [A saved view takes its history from the view]
        x0 = lib.full((3, 2), 0.5, requires_grad=True)
        v2 = x0 * 1
        v5 = v2[-2::2]
        v5.relu_()
        gr = _grad(lib)(v5.sum() + v2.sum(), [x0, v5], create_graph=True)
        return list(_grad(lib)(gr[0].sin().sum(), [x0, v5]))

    return [
        (augmented_setitem_of_a_sliced_view, "ok"),
        (whole_slice_of_a_stale_view_is_the_view, "raises"),
        (no_gradient_arrives_at_a_node_whose_save_was_written, "raises"),
        (saved_view_is_differentiated_as_the_view, "ok"),
    ]


@pytest.mark.parametrize(
    "program,outcome", _seed_11_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_seed_11_programs_agree_with_torch(program, outcome):
    _agrees_with_torch(program, outcome)


def _seed_12_13_programs():
    def stale_split_output_without_grad_fn_retains_grad(lib):  # seed 12 #18855
        # torch's retain_grad tests the stored grad_fn: a multi-output view made before its
        # base required grad is a leaf there (using it raises, retaining its grad does not)
        x0 = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        x1 = lib.tensor([[0.5, 0.5]], dtype=lib.float16)
        v6 = x1.view_as(x1)
        v9 = x1.chunk(3, -1)[0]
        v6[0, -2] = x0.sum()
        v9.retain_grad()
        return [lib.tensor(v9.requires_grad)]

    def floor_divide_node_raises_without_a_gradient(lib):  # seed 12 #8075
        x0 = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
        v3 = lib.floor_divide(lib.tensor([[0.5]], dtype=lib.float64), x0.amin())
        lib.add(v3, 1.5).norm(p=0, dim=(0,)).sum().backward()
        return [x0.grad]

    def masked_fill_value_must_fit(lib):  # seed 13 #13403
        x0 = lib.tensor([5, 6], dtype=lib.uint8)
        x0[lib.tensor([True, True])] = lib.tensor(-2.5, dtype=lib.float64)
        return [x0]

    def masked_fill_value_that_fits(lib):
        x0 = lib.tensor([5, 6], dtype=lib.int8)
        x0[lib.tensor([True, False])] = lib.tensor(-2.5, dtype=lib.float64)
        return [x0]

    return [
        (stale_split_output_without_grad_fn_retains_grad, "ok"),
        (floor_divide_node_raises_without_a_gradient, "raises"),
        (masked_fill_value_must_fit, "raises"),
        (masked_fill_value_that_fits, "ok"),
    ]


@pytest.mark.parametrize(
    "program,outcome", _seed_12_13_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_seed_12_13_programs_agree_with_torch(program, outcome):
    _agrees_with_torch(program, outcome)


def _seed_14_programs():
    def zero_repeat_gradient_is_a_constant(lib):  # seed 14 #18009
        # torch's repeat_backward returns fresh zeros for a zero repeat: under create_graph
        # the gradient does not require grad
        x0 = lib.ones((2, 2), requires_grad=True)
        v = x0.repeat(0, 2)
        loss = lib.logsumexp(v, 1).sum() + (x0 * 0.5).sum()
        (g,) = _grad(lib)(loss, [x0], create_graph=True)
        return [g, lib.tensor(g.requires_grad)]

    def float16_prod_with_a_zero_under_create_graph(lib):  # seed 14 #18785
        # torch's exclusive cumprods overflow in half before they meet the zero
        vals = [3.0] * 12 + [0.0] + [3.0] * 3  # 3 ** 11 is inf in half: inf * 0 at [11]
        x = lib.tensor(vals, dtype=lib.float16, requires_grad=True)
        (g,) = _grad(lib)(x.prod(), [x], create_graph=True)
        return [g.isnan(), g.masked_fill(g.isnan(), 7.0)]  # (NaN == NaN is False in lists)

    return [
        (zero_repeat_gradient_is_a_constant, "ok"),
        (float16_prod_with_a_zero_under_create_graph, "ok"),
    ]


@pytest.mark.parametrize(
    "program,outcome", _seed_14_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_seed_14_programs_agree_with_torch(program, outcome):
    _agrees_with_torch(program, outcome)


def _seed_15_programs():
    def index_put_into_an_empty_slice_of_an_expanded_view(lib):  # seed 15 #22408
        # torch applies the slice first: the write goes into an empty view, so copying the
        # gradient back through it overlaps nothing
        x4 = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        v11 = (x4 * 1).expand(1, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v11[3::3, lib.tensor([[1, 0], [-2, -3]])] = v11.sum()
        (g,) = _grad(lib)((v11 * lib.ones(2, 3, dtype=lib.float64)).sum(), [x4])
        return [g]

    def index_put_into_a_repeating_slice(lib):
        # the slice itself repeats the base element: backward refuses, as torch
        x4 = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        v11 = (x4 * 1).expand(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v11[0:, lib.tensor([1])] = x4 * 2
        (g,) = _grad(lib)(v11.sum(), [x4])
        return [g]

    return [
        (index_put_into_an_empty_slice_of_an_expanded_view, "ok"),
        (index_put_into_a_repeating_slice, "raises"),
    ]


@pytest.mark.parametrize(
    "program,outcome", _seed_15_programs(), ids=lambda p: getattr(p, "__name__", p)
)
def test_seed_15_programs_agree_with_torch(program, outcome):
    _agrees_with_torch(program, outcome)


def test_a_0d_bool_index_writes_a_new_view():
    # seed 15 #21865: torch unsqueezes for a 0-d bool index and writes that new view, so
    # the indexed view keeps no grad_fn and refuses a later in-place op as a leaf
    def program(lib):
        x6 = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        v11 = x6.detach().transpose(0, 0)
        v11[lib.tensor(True)] = x6.sum()
        v11 -= 0.5
        return [v11]

    _agrees_with_torch(program, "raises", "leaf Variable")


def _leaf_view_program(write, base_requires_grad, no_grad_write=False, base_off=False):
    """A view given requires_grad_() of its own, its base written and made to require
    grad in some order (fuzz seed 19 #4116); returns what backward gave."""

    def program(lib):
        x0 = lib.tensor([[1.0, 2.0]])
        v1 = x0[0]
        v1.requires_grad_()
        if no_grad_write:
            x0.requires_grad_()
            with _no_grad(lib):
                x0.mul_(2)
        if write:
            x0.mul_(2)
        if base_requires_grad:
            x0.requires_grad_()
        if base_off:
            x0.requires_grad_(False)
        (v1 * 3).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (v1.grad of a non-leaf)
            grads = [g if g is not None else lib.zeros(()) for g in (x0.grad, v1.grad)]
        return [*grads, lib.tensor(float(v1.is_leaf))]

    return program


@pytest.mark.parametrize(
    "case",
    [
        dict(write=False, base_requires_grad=False),
        dict(write=False, base_requires_grad=True),
        dict(write=True, base_requires_grad=False),
        dict(write=True, base_requires_grad=True),  # #4116: gradients reach the base
        dict(write=False, base_requires_grad=False, no_grad_write=True),
        dict(write=True, base_requires_grad=True, base_off=True),
    ],
)
def test_a_leaf_view_written_since_takes_its_base_history_when_used(case):
    gs, th = _both(_leaf_view_program(**case))
    assert gs == th


def test_seed_19_4116_float16_remainder():
    def program(lib):
        x0 = lib.tensor([[1.0]], dtype=lib.float16)
        v1 = x0.squeeze(1)
        v1.requires_grad_()
        x0.fill_(lib.tensor(1.5))
        x0.requires_grad_()
        x5 = lib.tensor([[0.5]], dtype=lib.float16)
        (v1 % x5).sum().backward()
        return [x0.grad]

    gs, th = _both(program)
    assert gs == th and gs[0] == "ok"


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_seed_21_11001_a_retained_view_follows_its_regenerated_grad_fn(dtype):
    # the view's grad_fn is regenerated after its base is written; retain_grad() must move
    # to the new node (the old one still runs, for the written value: it gave 1.25 x 8)
    def program(lib):
        x0 = lib.tensor([[[1.0]]], dtype=getattr(lib, dtype), requires_grad=True)
        v3 = lib.clone(x0)
        v5 = v3.expand(2, 2, 2)
        v5.retain_grad()
        v3[..., :, :] = v5.sum()
        g = lib.tensor([[[2.0, 0.5], [2.0, 2.0]], [[2.0, 0.5], [2.0, -1.0]]])
        v5.log().backward(gradient=g.to(getattr(lib, dtype)))
        return [x0.grad, v5.grad]

    gs, th = _both(program)
    assert gs == th and gs[0] == "ok"


def test_a_retained_slice_follows_its_regenerated_grad_fn():
    def program(lib):
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        v = b[:2]
        v.retain_grad()
        b[2:] = v.sum()
        (v * lib.tensor([3.0, 5.0])).sum().backward()
        return [v.grad]

    gs, th = _both(program)
    assert gs == th and gs[0] == "ok"


def test_a_write_under_no_grad_regenerates_the_views():
    # Note [A write under no_grad regenerates the views] (fuzz seed 22 #7763, seed 24 #17187)
    def program(lib):
        x0 = lib.full((2, 1), 0.5, dtype=lib.float64, requires_grad=True)
        v8 = lib.clone(x0)[:]
        x10 = lib.tensor([[0.5]], dtype=lib.float64, requires_grad=True)
        v11 = lib.cat([v8, x10], -2)
        seen = []
        v8.register_hook(lambda g: seen.append(1))
        with _no_grad(lib):
            v8.div_(2.0)
        gx, gv = _grad(lib)((v11 * 0.5).sum(), [x0, v8], allow_unused=True)
        # the hook stays on the old node, which v11's graph holds: it runs (torch's
        # update_tensor_hooks_on_new_gradfn leaves it there)
        assert gv is None and seen == [1]
        assert type(v8.grad_fn).__name__ == "AsStridedBackward0"
        (v8 * 3).sum().backward()
        return [gx, x0.grad, lib.tensor(float(len(seen)))]

    ours, theirs = _both(program)
    assert ours == theirs
    assert ours == ("ok", [[[0.5], [0.5]], [[3.0], [3.0]], 1.0])  # (not for the new node)


def test_a_parameter_update_under_no_grad_keeps_its_views_gradients():
    def program(lib):
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        wt = w.t()
        with _no_grad(lib):
            w.sub_(0.5)
        (wt * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return [w.grad, wt]

    ours, theirs = _both(program)
    assert ours == theirs


STALE_VIEW_USES = {
    "gt": lambda L, v: v > 0,
    "eq": lambda L, v: v == 0,
    "argmax": lambda L, v: v.argmax(),
    "isnan": lambda L, v: L.isnan(v),
    "detach": lambda L, v: v.detach(),
    "logical_not": lambda L, v: L.logical_not(v),
    "int": lambda L, v: v.int(),
    "float": lambda L, v: v.float(),
    "bitwise_and": lambda L, v: v & L.tensor(0),
    "mul": lambda L, v: v * 2,
    "sum": lambda L, v: v.sum(),
    "double": lambda L, v: v.double(),
    "add_unbroadcastable": lambda L, v: v + L.ones(3),
    "matmul_bad_shape": lambda L, v: v @ L.ones(2, 2),
}


@pytest.mark.parametrize("name", sorted(STALE_VIEW_USES))
def test_a_stale_split_view_fails_or_works_as_in_torch(name):
    # Note [A stale view's error comes before the kernel's] (fuzz seeds 20 #15542, 26 #6106)
    def program(lib):
        x0 = lib.tensor([[0.5, 0.5, 0.5]], requires_grad=True)
        v2 = x0 * 1
        view = v2.split(2, -1)[1]
        v2.floor_()
        out = STALE_VIEW_USES[name](lib, view)
        return [out.detach() if out.requires_grad else out]

    ours, theirs = _both(program)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours == theirs


@pytest.mark.parametrize("base", [2.0, 0.0, -2.0, 1099511627776, 0.5, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_number_base_of_pow_stays_a_double_in_the_gradient(base, dtype):
    # fuzz seed 27 #3684: 2**40 ** b in float16 had an inf gradient (the base was made a
    # float16 tensor); torch keeps the Scalar base a double
    def program(lib):
        b = lib.tensor([-1.0, 0.0, 0.5, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
        y = base**b
        return [y.detach(), *_grad(lib)(y.sum(), [b])]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _both(program)
    assert ours[0] == theirs[0] == "ok"
    np.testing.assert_array_equal(np.array(ours[1][1]), np.array(theirs[1][1]))


NO_GRAD_VIEW_WRITES = {
    "setitem": lambda v, x: v.__setitem__(0, x),
    "setitem_advanced": lambda v, x: v.__setitem__([-3, -4], x),
    "setitem_mask": lambda v, x: v.__setitem__(v > 10, x),
    "copy_": lambda v, x: v.copy_(x.expand_as(v)),
    "mul_": lambda v, x: v.mul_(x),
    "masked_fill_": lambda v, x: v.masked_fill_(v > 10, x.reshape(())),
    "view_of_it_add_": lambda v, x: v[1:].add_(x),
}


@pytest.mark.parametrize("name", sorted(NO_GRAD_VIEW_WRITES))
def test_a_no_grad_view_of_a_base_without_grad_refuses_a_recorded_write(name):
    # fuzz seed 29 #5675: torch marks every view made under no_grad, whatever its base;
    # writing a value that requires grad into it with grad mode on is refused
    def program(lib):
        x1 = lib.tensor([[[1.0, 1.0, 1.0, 1.0]]], dtype=lib.float64)
        with _no_grad(lib):
            v3 = x1.permute(2, 1, 0)
        x5 = lib.tensor([[[0.5]]], dtype=lib.float64, requires_grad=True)
        NO_GRAD_VIEW_WRITES[name](v3, x5)
        return [v3.detach()]

    ours, theirs = _both(program)
    assert [ours, theirs] == [("raises", "RuntimeError")] * 2


def test_a_no_grad_view_of_a_base_without_grad_still_takes_plain_writes():
    def program(lib):
        x = lib.zeros(3)
        with _no_grad(lib):
            v = x[:2]
        v.add_(1)  # nothing requires grad: allowed
        w = lib.ones(3, requires_grad=True)
        y = lib.zeros(3)
        with _no_grad(lib):
            u = y[:2]
            u.copy_(w[:2])  # under no_grad: allowed, records nothing
        x.mul_(w)  # the base itself is no view: recorded
        return [x.detach(), y, lib.tensor([u.requires_grad, x.requires_grad])]

    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ok"


def test_a_no_grad_view_given_requires_grad_is_its_own_leaf():
    # fuzz seed 30 #12903: a view made under no_grad of a base without grad, then given
    # requires_grad_(), receives its gradient (the no_grad mark of seed 29 #5675 made it
    # feed nothing, as a view of a base that requires grad does)
    def program(lib):
        t = lib.tensor(0.25)
        with _no_grad(lib):
            v = t.reshape(1)
        v.requires_grad_()
        (g,) = _grad(lib)((v.acos() * 0.5).sum(), [v])
        return [g]

    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ok"


def test_an_int_out_of_bounds_before_a_negative_step_is_an_index_error():
    # fuzz seed 30 #14936: torch applies the index item by item
    for lib in (gt, torch):
        x = lib.tensor([[0.5]])
        with pytest.raises(IndexError, match="out of bounds"):
            x[3, ::-1]
        with pytest.raises(ValueError, match="step must be greater than zero"):
            x[0, ::-1]


def _stale_no_grad_view_message(lib, use):
    try:
        use(lib)
    except RuntimeError as e:
        return str(e).split(" is ")[0] if str(e).startswith("Output") else str(e)[:40]
    return "ok"


STALE_NO_GRAD_VIEWS = {
    # a view made with grad mode on of a no_grad view inherits its mark: once the base is
    # written (through detach(), or under no_grad), using it raises (fuzz seed 33 #16437)
    "inherited, written through detach": lambda lib: _stale_view_of_no_grad_view(
        lib, lambda x: x.detach().add_(1)
    ),
    "inherited, written under no_grad": lambda lib: _stale_view_of_no_grad_view(
        lib, lambda x: _under_no_grad(lib, lambda: x.add_(1))
    ),
    "inherited, not written": lambda lib: _stale_view_of_no_grad_view(lib, lambda x: None),
    # a no_grad view of a base without grad, given requires_grad_(), is its own leaf: the
    # base's write leaves it usable; a view of it made with grad mode on is refused
    "own leaf": lambda lib: _own_leaf_view(lib)[0] * 2,
    "view of own leaf": lambda lib: _own_leaf_view(lib)[1] * 2,
}


def _under_no_grad(lib, fn):
    with _no_grad(lib):
        fn()


def _stale_view_of_no_grad_view(lib, write):
    x = lib.zeros(3, requires_grad=True)
    with _no_grad(lib):
        v = x[:]
    w = lib.permute(v[1:], (0,))
    write(x)
    return (w * 2).sum()


def _own_leaf_view(lib):
    b = lib.zeros(3)
    with _no_grad(lib):
        v = b[:]
    v.requires_grad_()
    w = v.t()  # made with grad mode on: inherits v's no_grad mark
    b.add_(1)
    return v, w


@pytest.mark.parametrize("name", sorted(STALE_NO_GRAD_VIEWS))
def test_a_view_of_a_stale_no_grad_view_is_refused_as_in_torch(name):
    use = STALE_NO_GRAD_VIEWS[name]
    ours, theirs = (_stale_no_grad_view_message(lib, use) for lib in (gt, torch))
    assert ours == theirs


def test_a_node_whose_inputs_take_no_gradient_still_runs_as_in_torch():
    # torch runs every node it reaches, also one whose inputs all lost their edges (a view
    # made under no_grad of a leaf): its NotImplemented node raises (fuzz seed 33 #23729),
    # and any other node unpacks its saved tensors, written in place since (seed 32 #8839)
    def floor_divide(lib):
        x = lib.tensor(1.0, dtype=lib.float64, requires_grad=True)
        with _no_grad(lib):
            v = x.view(1)
        (lib.tensor(1.0, dtype=lib.float64) // v).sum().backward()
        return [x]

    def written_saved_output(lib):
        x = lib.tensor([1.0], requires_grad=True)
        with _no_grad(lib):
            v = x.unsqueeze(-1)
        w = v.log_softmax(0).select(-1, -1)
        w.log2_()
        w.sum().backward()
        return [x]

    def unwritten_saved_output(lib):
        x = lib.tensor([1.0], requires_grad=True)
        with _no_grad(lib):
            v = x.unsqueeze(-1)
        w = v.log_softmax(0).select(-1, -1)
        (w * 2).sum().backward()
        return [lib.tensor(x.grad is None)]

    for program in (floor_divide, written_saved_output):
        ours, theirs = _both(program)
        assert ours == theirs == ("raises", "RuntimeError")
    ours, theirs = _both(unwritten_saved_output)
    assert ours == theirs and ours[0] == "ok"


@pytest.mark.parametrize("write", ["empty_slice", "add_", "under_no_grad"])
def test_a_write_through_a_detached_alias_regenerates_the_views(write):
    # fuzz seed 37 #13651: ``x.detach()`` shares x's version counter, so torch regenerates
    # the views of x's base after a write through it (an empty one too): a view's new
    # grad_fn is an AsStridedBackward0 over the base, and grad() of a loss made from a
    # view of a view gives None for the view in between; the leaf's gradient is the same
    def program(lib):
        x0 = lib.tensor([[0.5], [0.5], [0.5]], requires_grad=True)
        v3 = lib.clip(x0, min=-0.5, max=1)
        v9 = v3[...].T
        v10 = v9.detach()
        v11 = v9.reshape(3, -1)
        if write == "empty_slice":
            v10[1:2:2, :0:2] = 2
        elif write == "add_":
            v10.add_(1)
        else:
            with _no_grad(lib):
                v10.add_(1)
        loss = (v11 * lib.tensor([[0.5, 0.5]] * 3)).sum()
        g = _grad(lib)(loss, [x0, v9], allow_unused=True)
        regenerated = type(v9.grad_fn).__name__ == "AsStridedBackward0"
        return [g[0], lib.tensor(g[1] is None), lib.tensor(regenerated)]

    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ok"
    assert ours[1][1:] == [True, True]


def test_a_write_through_data_leaves_the_views_alone():
    # ``.data`` has a version counter of its own (torch's too): its writes regenerate nothing
    def program(lib):
        a = lib.ones(3, requires_grad=True)
        b = a * 2
        c = b[:2]
        b.data.add_(1)
        return [lib.tensor(type(c.grad_fn).__name__ == "SliceBackward0"), lib.tensor(b._version)]

    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ok" and ours[1] == [True, 0]


def test_a_write_through_a_detached_alias_reaches_the_views_of_every_base_sharing_it():
    # two tensors over one storage and one version counter (b and b.detach(), given
    # requires_grad_()), each with a view: a write through a third alias regenerates both
    def program(lib):
        a = lib.ones(4, requires_grad=True)
        b = a * 2
        c = b.detach().requires_grad_()
        v, w = b[:2], c[2:]
        with _no_grad(lib):
            b.detach().add_(1)
        return [lib.tensor([type(t.grad_fn).__name__ == "AsStridedBackward0" for t in (v, w)])]

    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ok"
