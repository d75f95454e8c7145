"""Edge cases found by the random-program comparison with torch 2.13 (issue 11,
``/work/team/fuzz_findings.md``) in tensor-core's Cython core and Tensor methods: in-place
binary ops (partial overlap, the operand's shape, the order of torch's checks), sum's
accumulator, "not implemented for" dtypes, Tensor-only arguments, integer powers and
divisions, all/any of uint8, mT, flatten, permute, setitem's checks.  Each call gives
torch's value (shape, dtype, numbers) or torch's exception type, never in numpy's words."""

from __future__ import annotations

import math
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return type(e), str(e)
    if isinstance(r, (tuple, list)):
        return None, [(list(t.shape), str(t.dtype).split(".")[-1], t.tolist()) for t in r]
    return None, (list(r.shape), str(r.dtype).split(".")[-1], r.tolist())


def _then(fn, result):
    """``fn()`` for its effect, then ``result()`` (a lambda cannot hold two statements)."""
    fn()
    return result()


CALLS = {
    # TC5: an in-place operand that partly overlaps the written tensor
    "mul_overlap": lambda L: (lambda y: y[:3].mul_(y[1:]))(L.ones(4) * 2),
    "add_overlap_reversed": lambda L: (lambda y: y[1:].add_(y[:3]))(L.arange(4.0)),
    "mul_itself": lambda L: (lambda y: y.mul_(y))(L.arange(4.0)),
    "div_disjoint_views": lambda L: (lambda y: y[:2].div_(y[2:]))(L.arange(1.0, 5.0)),
    "mul_transposed_same_memory": lambda L: (lambda y: y.mul_(y.t()))(L.arange(4.0).reshape(2, 2)),
    "mul_overlap_not_dense": lambda L: (lambda y: y[::2].mul_(y[1:3]))(L.arange(6.0)),
    "pow_overlap": lambda L: (lambda y: y[1:].pow_(y[:-1]))(L.arange(4.0)),
    # the operand broadcasts to the written tensor's shape, checked before the dtype
    "add_operand_more_dims": lambda L: L.ones(2).add_(L.ones(1, 2)),
    "add_operand_larger": lambda L: L.ones(1, 2).add_(L.ones(3, 2)),
    "add_operand_not_broadcastable": lambda L: L.ones(2).add_(L.ones(3)),
    "add_operand_broadcasts": lambda L: L.zeros(2, 3).add_(L.arange(3.0)),
    "bitwise_and_0d_shape_first": lambda L: L.tensor(3).bitwise_and_(L.ones(1)),
    "add_int_float_shape_first": lambda L: L.tensor(3).add_(L.ones(2)),
    "add_int_float": lambda L: L.tensor([3]).add_(L.ones(1)),
    # the operand and the tensor in the result dtype: a uint8 remainder_ by a 0-d -2
    "remainder_uint8_negative_0d": lambda L: L.tensor([1, 2, 3], dtype=L.uint8).remainder_(
        L.tensor(-2)
    ),
    "add_float16_float32": lambda L: L.full((3,), 0.1, dtype=L.float16).add_(L.full((3,), 1e-4)),
    # sum's accumulator (float16 in float32) and dtype=bool
    "sum_float16": lambda L: L.full((4000,), 0.1, dtype=L.float16).sum(),
    "sum_float16_dim": lambda L: L.full((4000, 2), 0.1, dtype=L.float16).sum(0),
    "sum_float16_keepdim": lambda L: L.full((4000, 2), 0.1, dtype=L.float16).sum(
        (0, 1), keepdim=True
    ),
    "sum_dtype_float16": lambda L: L.full((4000,), 0.1).sum(dtype=L.float16),
    "sum_float16_overflow": lambda L: L.full((3,), 60000.0, dtype=L.float16).sum(),
    "sum_dtype_bool": lambda L: L.tensor([0.0, 2.0, 0.0]).sum(dtype=L.bool),
    "sum_dtype_bool_zeros": lambda L: L.zeros(2, 3).sum(1, dtype=L.bool),
    "sum_bool": lambda L: L.tensor([True, True, False]).sum(),
    "sum_dtype_int32": lambda L: L.tensor([True, True]).sum(dtype=L.int32),
    "sum_dtype_uint8_wraps": lambda L: L.full((3,), 100, dtype=L.int64).sum(0, dtype=L.uint8),
    "sum_dtype_int16_dim": lambda L: L.ones(2, 3).sum(1, dtype=L.int16),
    # TC8: kernels torch does not have for a dtype
    "bitwise_xor_float": lambda L: L.ones(2) ^ L.ones(2),
    "bitwise_and_float": lambda L: L.ones(2).bitwise_and(L.ones(2)),
    "bitwise_or_int_float": lambda L: L.ones(2, dtype=L.int64) | L.ones(2),
    "bitwise_and_int_float_number": lambda L: L.ones(2, dtype=L.int64) & 1.5,
    "invert_float": lambda L: ~L.ones(2),
    "bitwise_not_float": lambda L: L.ones(2).bitwise_not(),
    "abs_bool": lambda L: L.tensor([True]).abs(),
    "floor_bool": lambda L: L.tensor([True]).floor(),
    "round_bool": lambda L: L.tensor([True]).round(),
    "relu_bool": lambda L: L.tensor([True]).relu(),
    "pow_bool": lambda L: L.tensor([True]) ** L.tensor([True]),
    "pow_bool_scalar_true": lambda L: L.tensor([True, False]) ** True,
    "pow_bool_scalar_false": lambda L: L.tensor([True, False]) ** False,
    "floor_divide_bool": lambda L: L.tensor([True]) // L.tensor([True]),
    "remainder_bool": lambda L: L.tensor([True]).remainder(L.tensor([True])),
    "trace_bool_1d": lambda L: L.ones(2, dtype=L.bool).trace(),
    "trace_1d": lambda L: L.ones(2).trace(),
    # TC4: Tensor-only arguments of the methods
    "maximum_number": lambda L: L.ones(2).maximum(3),
    "minimum_number": lambda L: L.ones(2).minimum(3.0),
    "atan2_number": lambda L: L.ones(2).atan2(2),
    "atan2__number": lambda L: L.ones(2).atan2_(2.0),
    "logical_and_number": lambda L: L.ones(2).logical_and(1),
    "logical_or_number": lambda L: L.ones(2).logical_or(True),
    "logical_xor_number": lambda L: L.ones(2).logical_xor(0),
    "atan2_tensor": lambda L: L.ones(2).atan2(L.tensor([1.0, -1.0])),
    # TC11: integer powers with negative exponents
    "pow_int_negative_tensor": lambda L: L.tensor([2, -1, 3, 1, -1, 0]).pow(
        L.tensor([-1, -1, 2, -5, -2, 3])
    ),
    "pow_int_negative_number": lambda L: L.tensor([2, 3]).pow(-1),
    "pow__int_negative_number": lambda L: L.tensor([2, 3]).pow_(-1),
    "pow__int_negative_tensor": lambda L: L.tensor([2, -1]).pow_(L.tensor([-1, -3])),
    "pow_uint8": lambda L: L.tensor([2, 3], dtype=L.uint8).pow(L.tensor([2, 1], dtype=L.uint8)),
    # remainder's zero has the sign of the dividend, as torch's
    "remainder_zero_sign": lambda L: (lambda r: L.atan2(r, L.tensor([-1.0, -1.0, -1.0])))(
        L.tensor([0.0, 4.0, 1.0]).remainder(L.tensor([float("-inf"), -2.0, -3.0]))
    ),
    "remainder_float": lambda L: L.tensor([5.5, -5.5, 3.0]).remainder(2.0),
    "remainder_float_negative": lambda L: L.tensor([5.5, -5.5, 3.0]).remainder(-2.0),
    # TC14: div with a rounding mode keeps integer dtypes
    "div_trunc_int": lambda L: L.tensor([7, -7, 6, -6]).div(2, rounding_mode="trunc"),
    "div_trunc_int_tensor": lambda L: L.tensor([7, -7, 7, -7]).div(
        L.tensor([2, 2, -2, -2]), rounding_mode="trunc"
    ),
    "div_trunc_int_float": lambda L: L.tensor([7, -7]).div(2.0, rounding_mode="trunc"),
    "div_trunc_big": lambda L: L.tensor([2**62 + 1]).div(3, rounding_mode="trunc"),
    "div_floor_int": lambda L: L.full((1, 1), 0).div(2, rounding_mode="floor"),
    "div_trunc_bool": lambda L: L.tensor([True]).div(True, rounding_mode="trunc"),
    "div_bad_mode": lambda L: L.ones(2).div(2, rounding_mode="up"),
    # seed 1 #22125: a bool scalar times an int alpha stays bool for a bool tensor
    "add_bool_scalar_int_alpha": lambda L: L.tensor([True, False]).add(False, alpha=-1),
    "add__bool_scalar_int_alpha": lambda L: L.tensor([True, False]).add_(True, alpha=2),
    # seed 1 #29223: uint8 by a negative number wraps it into uint8 first (4 // 255)
    "div_trunc_uint8_negative": lambda L: L.tensor([4, 200, 255], dtype=L.uint8).div(
        -1, rounding_mode="trunc"
    ),
    "div_trunc_uint8_negative_3": lambda L: L.tensor([4, 200], dtype=L.uint8).div(
        -3, rounding_mode="trunc"
    ),
    # TC13: all/any of uint8 stay uint8; a dim tuple
    "all_uint8": lambda L: L.tensor([[8]], dtype=L.uint8).all(-1),
    "any_uint8": lambda L: L.tensor([0, 3], dtype=L.uint8).any(),
    "all_dims": lambda L: L.tensor([[1, 0], [1, 1]]).all((0, 1)),
    "any_keepdim": lambda L: L.tensor([[0.0, 0.0], [0.0, 2.0]]).any(1, keepdim=True),
    "all_bad_dim": lambda L: L.ones(2).all(2),
    "count_nonzero_dims": lambda L: L.tensor([[1, 0], [2, 3]]).count_nonzero((0, 1)),
    "count_nonzero_dim": lambda L: L.tensor([[1, 0], [2, 3]]).count_nonzero(0),
    # TC3
    "isnan": lambda L: L.tensor([1.0, float("nan"), float("inf")]).isnan(),
    "isinf": lambda L: L.tensor([1.0, float("nan"), float("-inf")]).isinf(),
    "isfinite": lambda L: L.tensor([1.0, float("nan"), float("inf")]).isfinite(),
    "isnan_int": lambda L: L.tensor([1, 2]).isnan(),
    "isfinite_int": lambda L: L.tensor([1, 2]).isfinite(),
    # TC10, TC27, TC28
    "mT_0d": lambda L: L.tensor(1.0).mT,
    "mT_1d": lambda L: L.ones(2).mT,
    "mT_3d": lambda L: L.arange(6.0).reshape(1, 2, 3).mT,
    "flatten_same_dim": lambda L: (lambda x: L.tensor([x.flatten(1, 1) is x]))(L.ones(2, 3)),
    "flatten_1d": lambda L: (lambda x: L.tensor([x.flatten() is x]))(L.ones(3)),
    "flatten_0d": lambda L: L.tensor(2.0).flatten(),
    "flatten_bad_order": lambda L: L.ones(2, 3, 4).flatten(2, 1),
    "permute_nothing": lambda L: L.ones(2).permute(),
    "permute_0d_nothing": lambda L: L.tensor(1.0).permute(),
    "permute_0d_empty_tuple": lambda L: L.tensor(1.0).permute(()),
    # TC2: index_select on a 0-d input
    "index_select_0d": lambda L: L.tensor(5.0).index_select(0, L.tensor([0])),
    "index_select_0d_two": lambda L: L.tensor(5.0).index_select(0, L.tensor([0, 0])),
    "index_select_0d_none": lambda L: L.tensor(5.0).index_select(0, L.tensor([], dtype=L.int64)),
    # norm with p=inf over nothing
    "norm_inf_empty": lambda L: L.zeros(0).norm(float("inf")),
    "norm_minus_inf_empty_dim": lambda L: L.zeros(0, 2).norm(float("-inf"), 0),
    "norm_inf_nonempty_dim": lambda L: L.zeros(0, 2).norm(float("inf"), 1),
    # setitem's checks in torch's order; TC21
    "setitem_dtype_mismatch": lambda L: (lambda x: x.__setitem__(L.tensor([0]), L.tensor(0.5)))(
        L.tensor([[3]])
    ),
    "setitem_mask_any_dtype": lambda L: (
        lambda x: _then(lambda: x.__setitem__(L.tensor([True, False]), L.tensor(5)), lambda: x)
    )(L.zeros(2)),
    "setitem_uint8_mask": lambda L: (
        lambda x: x.__setitem__(L.tensor([1, 0], dtype=L.uint8), L.tensor(5.0))
    )(L.zeros(2)),
    "setitem_shape_before_range": lambda L: (lambda x: x.__setitem__(L.tensor([5]), L.ones(3)))(
        L.zeros(2)
    ),
    "setitem_dtype_before_range": lambda L: (
        lambda x: x.__setitem__(L.tensor([5]), L.ones(1, dtype=L.int64))
    )(L.zeros(2)),
    "setitem_indices_not_broadcastable": lambda L: (
        lambda x: x.__setitem__((L.tensor([0, 1]), L.tensor([0, 1, 2])), 1.0)
    )(L.zeros(3, 3)),
    "getitem_indices_not_broadcastable": lambda L: L.zeros(3, 3)[
        L.tensor([0, 1]), L.tensor([0, 1, 2])
    ],
    "setitem_false": lambda L: (
        lambda x: _then(lambda: x.__setitem__(False, L.ones(5)), lambda: x)
    )(L.zeros(2)),
    "setitem_true": lambda L: (
        lambda x: _then(lambda: x.__setitem__(True, L.tensor(7)), lambda: x)
    )(L.zeros(2)),
    # seed 1 #13383: a None dim's stride (numpy 0, torch's unsqueeze 1) made the same
    # memory look like a partial overlap; a different rank is still torch's partial overlap
    "mul_same_memory_new_axis": lambda L: (
        lambda x: _then(lambda: x[L.tensor(0), None, ...].mul_(x), lambda: x)
    )(L.full((1, 1, 2), 0.5)),
    "mul_same_memory_other_rank": lambda L: (lambda x: x[L.tensor(0), None, ...].mul_(x[0]))(
        L.full((1, 1, 2), 0.5)
    ),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_matches_torch(name):
    ours = _outcome(lambda: CALLS[name](gt))
    theirs = _outcome(lambda: CALLS[name](torch))
    assert ours[0] is theirs[0], (ours, theirs)
    if theirs[0] is None:
        assert repr(ours[1]) == repr(theirs[1])
    else:
        for numpy_words in ("axis", "ufunc", "zero-size array", "tuple index out of range"):
            assert numpy_words not in ours[1], ours


def test_setitem_false_records_nothing():
    """torch's ``x[False] = v`` writes nothing and bumps no version."""
    for L in (gt, torch):
        x = L.zeros(2)
        x[False] = 1.0
        assert x._version == 0 and x.tolist() == [0.0, 0.0]


def test_inplace_overlap_leaves_the_tensor_unchanged():
    y = gt.arange(4.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        y[1:].add_(y[:3])
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0] and y._version == 0
    assert np.shares_memory(y[1:].numpy(), y.numpy())


@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
def test_integer_division_by_zero_into_an_empty_result_does_not_raise(op):
    # torch checks each divisor it uses: none when the broadcast result is empty
    for lib in (gt, torch):
        x = lib.zeros(0, 1, dtype=lib.int64)
        assert tuple(getattr(x, op)(lib.tensor([[0]])).shape) == (0, 1)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            getattr(lib.ones(2, dtype=lib.int64), op)(lib.tensor([0, 1]))


@pytest.mark.parametrize("make", [lambda x: x[:, 0], lambda x: x.t(), lambda x: x, lambda x: x[1]])
def test_ravel_is_contiguous_then_view_as_torch(make):
    # a strided input is copied first: the result never sees later writes to its source
    results = []
    for lib in (gt, torch):
        x = lib.arange(6.0).reshape(3, 2)
        r = make(x).ravel()
        x.fill_(-1.0)
        results.append((r.tolist(), r.is_contiguous()))
    assert results[0] == results[1]


def _result_or_error(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e).__name__
    return np.asarray(r.tolist()).tolist()


@pytest.mark.parametrize(
    "program",
    [
        # (fuzz seed 20261201) setitem: structural index errors before the dtype check
        lambda L: (
            L.tensor([0.5], dtype=L.float64).sum(-1).__setitem__(L.tensor([-1, 0]), L.tensor(1.0))
        ),
        lambda L: L.zeros(0, 2, dtype=L.int64).__setitem__(
            ([0, 0], slice(0, 1)), L.tensor(0.5, dtype=L.float64)
        ),
        lambda L: L.zeros(2, 2, dtype=L.int64).__setitem__(
            ([5, 0], slice(0, 1)), L.tensor(0.5, dtype=L.float64)
        ),
        # seed 1 #7981, #32137: masked_fill_ writes an expanded view (torch warns only)
        lambda L: (
            lambda b: (
                b.expand(2, -1, 2).masked_fill_(L.ones((2, 2, 2), dtype=L.bool), 3),
                b,
            )[1]
        )(L.tensor([[4], [-4]], dtype=L.int8)),
        lambda L: (
            lambda b: (
                b.expand(-1, 2).masked_fill_(
                    L.tensor([[False, True], [True, True], [False, False], [True, False]]), 9.0
                ),
                b,
            )[1]
        )(L.arange(4.0).reshape(4, 1)),
        # seed 1 #12403: copy_ between two views describing the same elements returns early
        lambda L: (lambda v: (v[1:].copy_(v[:-1]), v)[1])(L.tensor(0.5).expand(3)),
        lambda L: (lambda b: (b.expand(3).copy_(L.tensor([1.0, 2.0, 3.0])), b)[1])(L.ones(1)),
        # zero_/fill_ write an expanded view (torch allows it; other in-place ops refuse)
        lambda L: (lambda b: (b.expand(2, 3).zero_(), b)[1])(L.arange(3.0)),
        lambda L: (lambda b: (b.expand(2, 3).fill_(2.0), b)[1])(L.arange(3.0)),
        lambda L: L.arange(3.0).expand(2, 3).add_(1),
        # addmm's integer alpha/beta follow torch's overflow rule
        lambda L: L.addmm(
            L.tensor([[3]], dtype=L.uint8),
            L.ones(1, 1, dtype=L.uint8),
            L.ones(1, 1, dtype=L.uint8),
            beta=2,
            alpha=-1,
        ),
        lambda L: L.addmm(
            L.tensor([[3]], dtype=L.uint8),
            L.ones(1, 1, dtype=L.uint8),
            L.ones(1, 1, dtype=L.uint8),
            alpha=300,
        ),
        # bitwise ops on floats: the broadcast error comes before the missing kernel
        lambda L: L.ones(1, 2, dtype=L.float64) | L.ones(1, 4, 1, 3, dtype=L.float64),
        lambda L: L.ones(2, dtype=L.float64) | L.ones(2, dtype=L.float64),
    ],
)
def test_fuzz_found_orders_and_values_match_torch(program):
    assert _result_or_error(lambda: program(gt)) == _result_or_error(lambda: program(torch))


def test_cumsum_of_a_non_contiguous_input_is_contiguous():
    # seed 1 #18869: cumsum of an advanced-index result kept numpy's layout, so a reshape
    # of it copied and a later in-place write through the reshape missed it (torch: a view)
    def run(lib):
        x = lib.arange(64.0, dtype=lib.float64).reshape(4, 4, 4).mT
        v = x[lib.tensor([3, 0, -4]), ...].cumsum(1)
        w = lib.reshape(v, (3, 16))
        w.sinh_()
        return list(v.stride()), v.is_contiguous(), v.sum().item()

    assert run(gt) == run(torch)


@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.sum(1, keepdim=True),
        lambda x: x.sum(1),
        lambda x: x.mean(1, keepdim=True),
        lambda x: x.std(1, keepdim=True),
        lambda x: x.norm(dim=1, keepdim=True),
        lambda x: x.amax(1, keepdim=True),
        lambda x: x.max(1, keepdim=True).values,
        lambda x: x.max(1, keepdim=True).indices,
        lambda x: x.argmin(1, keepdim=True),
        lambda x: x.logsumexp(1, keepdim=True),
        lambda x: x.prod(1, keepdim=True),
    ],
)
def test_a_reduction_of_a_permuted_tensor_is_contiguous(reduce):
    """seed 1 #18104: torch allocates a reduction's result contiguous, numpy kept the
    input's order, and ``.view(-1)`` of it raised (Note [A reduction's result is
    contiguous])."""
    got = [
        (r.stride(), r.view(-1).tolist())
        for L in (gt, torch)
        for r in [reduce(L.arange(8.0).reshape(2, 2, 2).permute(2, 1, 0))]
    ]
    assert got[0] == got[1]


@pytest.mark.parametrize(
    ("shape", "dim", "index_shape"),
    [((0, 2), 1, (3, 0)), ((2, 2), 0, (3, 0, 1)), ((0, 1, 2), 1, (1, 2, 0, 2))],
)
def test_gather_with_an_empty_index_checks_no_sizes(shape, dim, index_shape):
    """seed 2 #4240: torch checks neither the ranks nor the sizes of an empty index."""
    got = [
        _outcome(lambda L=L: L.zeros(shape).gather(dim, L.zeros(index_shape, dtype=L.int64)))
        for L in (gt, torch)
    ]
    assert got[0] == got[1] and got[0][0] is None


def test_relu_keeps_the_sign_of_a_negative_zero():
    """seed 2 #9335: torch's relu is ``x < 0 ? 0 : x``: relu(-0.0) is -0.0 (its rsqrt
    -inf), relu(-1.0) is +0.0; both the small-array loop and the ufunc path."""
    for n in (4, 4000):
        values = np.array([-0.0, -1.0, np.nan, 2.0] * (n // 4), dtype=np.float32)
        for fn in (lambda L, x: L.relu(x), lambda L, x: x.clone().relu_()):
            got = fn(gt, gt.from_numpy(values)).numpy()
            want = fn(torch, torch.from_numpy(values)).numpy()
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_relu_of_any_size_and_layout_matches_torch(dtype, layout):
    """Large arrays take the C loop too (Note [relu takes its C loop at every size]): the
    same values, signed zeros and nans as torch, and torch's strides (a transposed input
    keeps its layout; a strided one gives a contiguous result)."""
    rng = np.random.default_rng(8)
    values = rng.standard_normal((300, 90)).astype(dtype)
    values[rng.random(values.shape) < 0.05] = -0.0
    values[rng.random(values.shape) < 0.01] = np.nan
    pick = {
        "contiguous": lambda L, t: t,
        "transposed": lambda L, t: t.t(),
        "strided": lambda L, t: t[:, ::3],
    }[layout]
    got = pick(gt, gt.from_numpy(values)).relu()
    want = pick(torch, torch.from_numpy(values)).relu()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
    assert got.stride() == want.stride()
    inplace = pick(gt, gt.from_numpy(values.copy())).relu_()
    np.testing.assert_array_equal(inplace.numpy(), want.numpy())


@pytest.mark.parametrize("join", ["cat0", "cat1", "stack"])
def test_a_join_of_transposed_tensors_is_contiguous(join):
    """seed 2 #17603: numpy's concatenate of F-ordered inputs is F-ordered; torch's result
    is contiguous, so its flatten() is a view that sees a later write."""

    def program(L):
        x = L.arange(4).reshape(2, 2).t()
        r = {
            "cat0": lambda: L.cat([x, x * 2], 0),
            "cat1": lambda: L.cat([x, x * 2], 1),
            "stack": lambda: L.stack([x, x * 2]),
        }[join]()
        flat = r.flatten()
        r[-1] = -4
        return r.stride(), flat.tolist()

    assert program(gt) == program(torch)


_FILLS = {
    "fill_": lambda L, x, v: x.fill_(v),
    "fill_tensor": lambda L, x, v: x.fill_(L.tensor(v)),  # cast, not checked (seed 1 #11461)
    "fill_empty": lambda L, x, v: x[:0].fill_(v),  # checked though nothing is written
    "setitem": lambda L, x, v: x.__setitem__(0, v),
    "setitem_tensor": lambda L, x, v: x.__setitem__(0, L.tensor(v)),
    "masked_fill": lambda L, x, v: x.masked_fill(L.tensor([True, False]), v),
    "masked_fill_tensor": lambda L, x, v: x.masked_fill_(L.tensor([True, False]), L.tensor(v)),
    "full": lambda L, x, v: L.full((2,), v, dtype=x.dtype),
    "full_like": lambda L, x, v: L.full_like(x, v),
}


@pytest.mark.parametrize("op", list(_FILLS))
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
def test_a_fill_value_must_fit_the_dtype(op, dtype):
    """seed 1 #12741, #4340, #7149, #48402: torch's fill ops refuse a number that does not
    fit (Note [A fill value must fit the dtype]) with its RuntimeError; gradstack wrapped."""
    for v in [-0.75, -2.5, 255.5, 256.0, -1, -255, -256, 200, 32768, 2**31, float("nan")]:
        got = []
        for L in (gt, torch):
            x = L.zeros(2, dtype=getattr(L, dtype))
            try:
                r = _FILLS[op](L, x, v)
                got.append(((r if r is not None else x).tolist(), None))
            except RuntimeError as e:
                got.append((None, str(e)))
        assert got[0] == got[1], (v, got)


def test_a_transposed_one_by_one_view_is_a_partial_overlap():
    """seed 20261201 #1391: torch compares a size-1 dim's stride too: ``v.sub_(v.t())`` of a
    1x1 view with strides (6, 1) is refused; only numpy's stride-0 new axes are skipped."""
    got = [
        _outcome(lambda L=L: (lambda v: v.sub_(v.t()))(L.ones(1, 2, 1).neg()[:1:3, -2]))
        for L in (gt, torch)
    ]
    assert got[0][0] is got[1][0] is RuntimeError


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_prefix_sum_of_negative_zeros_is_positive_zero_as_in_torch(dtype):
    """fuzz seed 4 #350: torch's cumsum starts from +0, so ``[-0.0, -0.0, 1.0]`` sums to
    ``[0, 0, 1]`` with no negative zero (numpy's starts from the first element); a 0-d
    input is copied, sign kept."""
    for values in ([-0.0, -0.0, 1.0], [[-0.0], [-0.0]], -0.0):
        want = torch.tensor(values, dtype=getattr(torch, dtype))
        got = gt.tensor(values, dtype=getattr(gt, dtype))
        for dim in range(max(want.dim(), 1)):
            w, g = want.cumsum(dim).numpy(), got.cumsum(dim).numpy()
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("exponent", [0.5, -0.5, 1.5, 2.0, -1.0, 1 / 3])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_a_number_exponent_and_a_tensor_exponent_as_torch(exponent, as_tensor):
    """Note [A number exponent and a tensor exponent] (fuzz seed 4 #1722): torch's pow by
    a number takes sqrt for 0.5 and 1 / sqrt for -0.5; by a tensor (0-d too) it is
    std::pow, so (-inf) ** tensor(0.5) is inf and (-0.0) ** tensor(0.5) is +0."""
    values = [float("-inf"), -4.0, float("inf"), -0.0, 0.0, 2.0]
    for dtype in ("float32", "float64"):
        want_x = torch.tensor(values, dtype=getattr(torch, dtype))
        got_x = gt.tensor(values, dtype=getattr(gt, dtype))
        if as_tensor:
            want = want_x.pow(torch.tensor(exponent, dtype=getattr(torch, dtype)))
            got = got_x.pow(gt.tensor(exponent, dtype=getattr(gt, dtype)))
        else:
            want, got = want_x.pow(exponent), got_x.pow(exponent)
        w, g = want.numpy(), got.numpy()
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        real = ~np.isnan(w)  # (a NaN's sign bit is not compared)
        np.testing.assert_array_equal(np.signbit(g[real]), np.signbit(w[real]))
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("dim", [(2, 1, 0), [2, 1, 0], (0,), 0, (0, 1), ()])
def test_a_frobenius_norm_over_more_than_two_dims_raises_as_torch(dim):
    """fuzz seed 4 #10669: ``norm(p='fro', dim=(2, 1, 0))`` is torch's matrix norm, which
    wants two dims; over one or two dims it is the vector norm."""

    def run(L):
        try:
            r = L.ones(2, 3, 4).norm(p="fro", dim=dim)
            return list(r.shape), round(float(r.sum()), 4)
        except RuntimeError as e:
            return str(e)

    assert run(gt) == run(torch)


@pytest.mark.parametrize("exponent", [16777217, 1099511627775, 1.1, -2.2, 3, -2, 7])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_number_exponent_is_a_double_as_in_torch(exponent, dtype):
    """Note [A number exponent is a double] (fuzz seed 5 #7142): torch's pow by a Python
    number other than its shortcuts is std::pow in double, rounded once to the tensor's
    dtype (3 and -2 are x * x * x and 1 / (x * x)); bit for bit."""
    values = [-1.0, 1.1, 0.9, 2.0, -0.5]

    def run(L):
        try:
            return L.tensor(values, dtype=getattr(L, dtype)).pow(exponent).numpy()
        except RuntimeError as e:  # float16: an exponent beyond half's range
            return str(e)

    got, want = run(gt), run(torch)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)


def test_a_negative_step_into_a_0d_tensor_is_first_a_count_error():
    # fuzz seed 6 #16582: torch counts the indexed dims before it reads a slice's step
    x = gt.tensor(-3)
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
        x[0::-1,] = gt.tensor(-4)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        gt.zeros(3)[::-1]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]  # a lone slice: torch reads its step first (fuzz seed 20261201 #1447)
    with pytest.raises(IndexError, match="too many indices"):
        x[::-1, None]


def test_fill_with_a_tensor_value_refuses_an_expanded_target():
    # fuzz seed 6 #19421: a number fills an expanded view; a 0-d tensor value is copied in
    # and torch's internal-overlap check refuses the target; a 1-d value is refused first
    v = gt.tensor([[[1.0]]]).expand(2, -1, 2, 2)
    v.fill_(3.0)
    assert v.tolist() == [[[[3.0, 3.0], [3.0, 3.0]]]] * 2
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        v.fill_(gt.tensor(2.0))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        gt.zeros(3).fill_(gt.tensor([3.0]))
    x = gt.zeros(3)
    x.fill_(gt.tensor(2.5, dtype=gt.float64))
    assert x.tolist() == [2.5, 2.5, 2.5]


@pytest.mark.parametrize(
    "key",
    [
        (slice(None), [0, 1]),
        (Ellipsis, [0, 1]),
        (slice(None), slice(None), [[0, 1]]),
        (Ellipsis, [0, 1, -3], slice(-2, None)),
        ([0, 1], slice(None), [1, 2]),
    ],
)
def test_an_advanced_index_of_a_c_ordered_tensor_is_contiguous(key):
    # fuzz seed 6 #18922: numpy puts x[:, idx]'s index dims outermost in memory; torch's
    # result is contiguous, so .view(-1) works and v[1:].copy_(v[:-1]) is a partial overlap
    x = gt.arange(81.0).reshape(3, 3, 3, 3)
    for source in (x, x[:, ::2], gt.arange(3.0).expand(3, 3, 3, 3)):
        k = tuple(gt.tensor(i) if isinstance(i, list) else i for i in key)
        v = source[k]
        want = np.asarray(
            source.numpy()[tuple(np.asarray(i) if isinstance(i, list) else i for i in key)]
        )
        assert v.is_contiguous()
        np.testing.assert_array_equal(v.numpy(), want)
        assert v.view(-1).tolist() == want.ravel().tolist()
    v = x[(slice(None), gt.tensor([0, 1]))] * 1.0
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to"):
        v[1:].copy_(v[:-1])


def _error_of(fn):
    try:
        fn()
    except (RuntimeError, IndexError, TypeError, ValueError) as e:
        return type(e).__name__, str(e).split(" (")[0]
    return "ok", ""


@pytest.mark.parametrize(
    "write",
    [
        lambda L, v: v.__setitem__(([1, 0], -1), L.tensor(0.5)),
        lambda L, v: v.__setitem__(([1, 2], -1), L.tensor(0.5)),  # fuzz seed 7 #899
        lambda L, v: v.__setitem__(([1, 2], -1), 0.5),
        lambda L, v: v.__setitem__(([1, 2], -1), L.tensor(True)),
    ],
)
def test_an_advanced_setitem_checks_the_dtype_before_the_bounds(write):
    # torch's index_put_ refuses a value of another dtype before its kernel finds an index
    # out of range; an int index in the key used to make gradstack check the bounds first
    ours = _error_of(lambda: write(gt, gt.zeros(2, 2, dtype=gt.bool)))
    theirs = _error_of(lambda: write(torch, torch.zeros(2, 2, dtype=torch.bool)))
    assert ours == theirs


@pytest.mark.parametrize(
    "shape, dim, idx",
    [
        ((1, 1, 0), -1, [-1]),
        ((1, 1, 0), -1, [0]),
        ((0,), 0, [0]),
        ((2, 0), 1, [0]),
        ((0, 2), 0, [0]),
        ((0, 2), 1, [0]),
        ((0, 2), 1, [5]),
        ((1, 1, 0), 2, []),
        ((1, 1, 1, 0, 1, 1, 1, 1), 5, [0, 0, 0, -1]),  # fuzz seed 8 #2479
    ],
)
def test_index_select_of_an_empty_input_raises_as_torch(shape, dim, idx):
    # fuzz seed 7 #4181: torch checks the indexed dim of an empty input (2-d or more) first
    def run(L):
        return L.index_select(L.ones(shape), dim, L.tensor(idx, dtype=L.int64))

    ours, theirs = _error_of(lambda: run(gt)), _error_of(lambda: run(torch))
    assert ours[0] == theirs[0]
    if theirs[0] == "RuntimeError":
        assert ours[1] == theirs[1]


@pytest.mark.parametrize(
    "key",
    [
        (slice(None, 3), [], Ellipsis, [0], slice(None, 1)),  # fuzz seed 8 #8077
        (slice(None), [1], Ellipsis, [0], slice(None)),
        ([0, 1], Ellipsis, [0]),
        (Ellipsis, [0], slice(None), [0, 0]),
    ],
)
def test_an_ellipsis_standing_for_no_dim_separates_no_advanced_indices(key):
    # torch keeps an advanced block in place when only an empty Ellipsis lies between its
    # indices; numpy counted them as separated and moved the block first
    x = np.arange(24.0).reshape(2, 3, 4, 1)
    ours = gt.tensor(x)[key]
    theirs = torch.tensor(x)[key]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize(
    "dtype, exponent",
    [
        ("int32", 2**40),
        ("int32", 2**31),
        ("int32", 2**31 - 1),
        ("int32", -(2**31) - 1),
        ("int8", 300),
        ("int8", 127),
        ("uint8", 256),
        ("int64", 2**63),
        ("int16", 70000),
    ],
)
def test_an_integer_tensor_to_a_large_int_power_raises_as_torch(dtype, exponent):
    # fuzz seed 8 #520: the exponent was wrapped to the tensor's type before the kernel
    # (int32 ** 2**40 gave 1); torch refuses an exponent its type cannot hold
    base = np.array([-5, 2], dtype=dtype) if dtype != "uint8" else np.array([2], dtype=dtype)

    def run(L, inplace):
        t = L.tensor(base)
        return t.pow_(exponent) if inplace else t**exponent

    for inplace in (False, True):
        ours = _error_of(lambda i=inplace: run(gt, i))
        theirs = _error_of(lambda i=inplace: run(torch, i))
        assert ours == theirs
        if ours[0] == "ok":
            assert run(gt, inplace).tolist() == run(torch, inplace).tolist()


@pytest.mark.parametrize("op", ["triu", "tril"])
def test_triu_tril_results_are_contiguous_as_torchs(op):
    # fuzz seed 19 #5267: numpy kept a transposed input's layout, so a later view raised
    views = [
        lambda lib: lib.zeros(1, 3, 2).permute(2, 1, 0),
        lambda lib: lib.zeros(1, 3, 2).permute(0, 2, 1),
        lambda lib: lib.zeros(4, 6)[::2, ::2],
        lambda lib: lib.zeros(3, 4).t(),
        lambda lib: lib.zeros(2, 3, 4).permute(2, 0, 1)[1:],
    ]
    for make in views:
        for diagonal in (-1, 0, 2):
            ours = getattr(gt, op)(make(gt), diagonal)
            theirs = getattr(torch, op)(make(torch), diagonal)
            assert ours.stride() == theirs.stride()
    x0 = gt.full((1, 3, 2), 0.5)
    assert getattr(gt, op)(x0.permute(2, 1, 0), 2).view_as(x0).shape == (1, 3, 2)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_cumsum_accumulates_as_torchs_cpu_kernel(dtype):
    # torch sums in acc_type (double for float32) and rounds each prefix once; numpy's
    # float32 running sum differed in the last bits (fuzz seed 21 #10869:
    # linspace(-1, 1, 6).cumsum(0).long() gave 0 where torch gives -1)
    rng = np.random.default_rng(21)
    for shape, dim in [((1000,), 0), ((30, 40), 1), ((30, 40), 0), ((5, 6, 7), 2)]:
        a = rng.standard_normal(shape).astype(dtype)
        ours = gt.tensor(a).cumsum(dim).numpy()
        theirs = torch.tensor(a).cumsum(dim).numpy()
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
    assert gt.linspace(-1, 1, 6).cumsum(0).long().tolist() == [-1, -1, -1, -1, -1, 0]


def test_pow_of_bools_of_unbroadcastable_shapes_is_first_a_shape_error():
    # fuzz seed 23 #3761: torch checks the shapes before it refuses bool pow
    for lib in (gt, torch):
        a = lib.tensor([[True], [False]])
        b = lib.tensor([[True], [False], [True], [True]])
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            a**b
        with pytest.raises((NotImplementedError, RuntimeError), match="not implemented for 'Bool'"):
            a ** lib.tensor([[True], [False]])


@pytest.mark.parametrize("scalar", [math.log(2.0), 1e-4, 3.3, -0.7, 123.456, 7])
def test_float16_times_a_scalar_computes_in_float32_as_torch(scalar):
    # Note [A float16 tensor and a scalar compute in float32]: mul and div read the scalar
    # as float32; add and sub round it to float16, in torch as here
    x = (np.random.default_rng(7).standard_normal(5000) * 10).astype(np.float16)
    cases = {
        "mul": lambda L, t: t * scalar,
        "rmul": lambda L, t: scalar * t,
        "div": lambda L, t: t / scalar,
        "mul_0d": lambda L, t: t * L.tensor(scalar),
        "div_0d_float64": lambda L, t: t / L.tensor(scalar, dtype=L.float64),
        "mul_": lambda L, t: t.clone().mul_(scalar),
        "div_": lambda L, t: t.clone().div_(scalar),
        "add": lambda L, t: t + scalar,
        "sub": lambda L, t: t - scalar,
        "rsub": lambda L, t: scalar - t,
    }
    for name, f in cases.items():
        got = f(gt, gt.from_numpy(x.copy())).numpy()
        want = f(torch, torch.from_numpy(x.copy())).numpy()
        assert got.dtype == np.float16, name
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("op", ["remainder", "floor_divide"])
def test_integer_division_of_unbroadcastable_bools_is_first_a_shape_error(op):
    # fuzz seed 29 #12816: torch checks the shapes before it refuses bool remainder
    for lib in (gt, torch):
        a = lib.tensor([True, False, True])
        with pytest.raises(RuntimeError, match="must match the size of tensor b"):
            getattr(a, op)(lib.tensor([False, False]))
        with pytest.raises((NotImplementedError, RuntimeError), match="not implemented for 'Bool'"):
            getattr(a, op)(lib.tensor([True, True, True]))


@pytest.mark.parametrize(
    "dtype, value",
    [("int8", 300), ("int8", -129), ("uint8", 256), ("uint8", -1), ("int8", 127),
     ("int16", 70000), ("int8", 1.5), ("float16", 1e10), ("int8", True)],
)  # fmt: skip
@pytest.mark.parametrize("empty", [False, True])
def test_where_converts_a_number_with_torchs_overflow_check(dtype, value, empty):
    # fuzz seed 29 #1628: torch converts the number to the result's dtype with its check,
    # even when nothing is selected
    def run(lib):
        n = 0 if empty else 2
        cond = lib.tensor([True, False])[:n]
        t = lib.tensor([1, 2], dtype=getattr(lib, dtype))[:n]
        out = []
        for args in ((cond, t, value), (cond, value, t)):
            try:
                r = lib.where(*args)
                out.append((str(r.dtype).split(".")[-1], r.tolist()))
            except RuntimeError as e:
                out.append(str(e))
        return out

    assert run(gt) == run(torch)


@pytest.mark.parametrize("divisor", [-200, 200, -129, 300, -5, 56, 7])
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_integer_division_converts_the_divisor_to_the_result_dtype_first(divisor, mode):
    # fuzz seed 35 #3785: torch wraps -200 into int8 (56) before dividing, for a number
    # and for a 0-d int64 tensor alike; trunc's sign fix-up must see the wrapped divisor
    values = np.array([-5, 5, -128, 127, 0], dtype=np.int8)
    for make in (lambda lib: divisor, lambda lib: lib.tensor(divisor)):
        ours = gt.tensor(values).div(make(gt), rounding_mode=mode)
        theirs = torch.tensor(values).div(make(torch), rounding_mode=mode)
        assert ours.dtype.name == str(theirs.dtype).split(".")[1]
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
