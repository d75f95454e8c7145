"""Errors are product (STYLE principle 9): every misuse raises a Python exception whose
message says what went wrong, with which sizes/dtypes/dims, and what to do.

* shape mismatches name the sizes that clash and the dimension, as torch's message does
  (the numbers are compared with torch's when it is installed);
* dtype errors, out-of-range dims and indices, invalid views, in-place writes to expanded
  tensors, bool and integer edge cases: a table of calls with the exception type and the
  key words of the message, which runs without torch.
"""

from __future__ import annotations

import re

import gradstack_tensor as gt
import numpy as np
import pytest

BROADCAST_RE = re.compile(
    r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at "
    r"non-singleton dimension (\d+)"
)

# (shape a, shape b, (size a, size b, dim)) as torch reports them
MISMATCHES = [
    ((2, 3), (4,), (3, 4, 1)),
    ((2, 3), (3, 2), (3, 2, 1)),
    ((5, 1, 3), (4, 2), (3, 2, 2)),
    ((2, 3), (2, 4, 3), (2, 4, 1)),
    ((2, 4, 3), (2, 3), (4, 2, 1)),
    ((3,), (2, 4, 5), (3, 5, 2)),
    ((1, 2, 3), (4, 1, 1, 5), (3, 5, 3)),
    ((0,), (2,), (0, 2, 0)),
    ((6, 5, 4), (3, 1), (5, 3, 1)),
]

BINARY_CALLS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
    "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b,
    "maximum": lambda a, b: gt.maximum(a, b),
    "atan2": lambda a, b: gt.atan2(a, b),
    "remainder": lambda a, b: a % b,
    "logical_and": lambda a, b: gt.logical_and(a, b),
    "add_alpha": lambda a, b: a.add(b, alpha=2),
    "where": lambda a, b: gt.where(a > 0, a, b),
    "rsub": lambda a, b: gt.rsub(a, b),
}


@pytest.mark.parametrize("op", list(BINARY_CALLS))
@pytest.mark.parametrize(("sa", "sb", "expected"), MISMATCHES)
def test_broadcast_errors_name_the_clashing_sizes_and_dim(op, sa, sb, expected):
    with pytest.raises(RuntimeError) as exc:
        BINARY_CALLS[op](gt.ones(sa), gt.ones(sb))
    m = BROADCAST_RE.search(str(exc.value))
    assert m, f"{op}{sa, sb}: {exc.value}"
    if op not in ("where", "rsub"):  # where(a > 0, a, b) / rsub(a, b) = b - a: other pairs
        assert tuple(map(int, m.groups())) == expected
        assert str(list(sa)) in str(exc.value) and str(list(sb)) in str(exc.value)


@pytest.mark.parametrize(("sa", "sb", "expected"), MISMATCHES)
def test_broadcast_error_sizes_match_torchs(sa, sb, expected):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as texc:
        torch.ones(sa) + torch.ones(sb)
    with pytest.raises(RuntimeError) as gexc:
        gt.ones(sa) + gt.ones(sb)
    assert (
        BROADCAST_RE.search(str(texc.value)).groups()
        == BROADCAST_RE.search(str(gexc.value)).groups()
        == tuple(map(str, expected))
    )


# ---------------------------------------------------------------------------------------
# The table: call, exception type, regex the message must contain

x23 = lambda: gt.ones(2, 3)  # noqa: E731

ERRORS = {
    # shapes
    "inplace_broadcast": (
        lambda: x23().add_(gt.ones(4, 2, 3)),
        RuntimeError,
        r"output with shape \[2, 3\].*broadcast shape",
    ),
    "inplace_broadcast_1d": (lambda: gt.ones(3).mul_(gt.ones(2, 3)), RuntimeError, r"\[3\]"),
    "copy_shapes": (
        lambda: x23().copy_(gt.ones(4)),
        RuntimeError,
        r"size of tensor a \(3\) must match the size of tensor b \(4\)",
    ),
    "mm_shapes": (
        lambda: x23() @ gt.ones(4, 5),
        RuntimeError,
        r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)",
    ),
    "matmul_batched": (
        lambda: gt.ones(2, 3, 4) @ gt.ones(5, 6),
        RuntimeError,
        r"\[2, 3, 4\].*\[5, 6\]",
    ),
    "matmul_0d": (lambda: gt.tensor(1.0) @ gt.ones(2), RuntimeError, "at least 1D"),
    "dot_sizes": (lambda: gt.ones(3).dot(gt.ones(4)), RuntimeError, r"\[3\].*\[4\]"),
    "vec_matmul": (lambda: gt.ones(3) @ gt.ones(4), RuntimeError, r"\[3\].*\[4\]"),
    "mv_sizes": (lambda: x23().mv(gt.ones(4)), RuntimeError, r"mat \(2x3\), vec \(4\)"),
    "bmm_sizes": (lambda: gt.ones(2, 2, 3).bmm(gt.ones(3, 3, 2)), RuntimeError, r"\[2, 2, 3\]"),
    "mm_ndim": (lambda: x23().mm(gt.ones(3)), RuntimeError, "2D"),
    "addmm_bias": (
        lambda: gt.addmm(gt.ones(3, 3), x23(), gt.ones(3, 4)),
        RuntimeError,
        r"\[3, 3\]",
    ),
    "cat_sizes": (
        lambda: gt.cat([x23(), gt.ones(2, 4)]),
        RuntimeError,
        "Sizes of tensors must match except in dimension 0.*size 3.*size 4.*tensor number 1",
    ),
    "cat_ndim": (lambda: gt.cat([x23(), gt.ones(3)]), RuntimeError, "same number of dimensions"),
    "cat_empty_list": (lambda: gt.cat([]), ValueError, "non-empty"),  # torch's type
    "cat_not_tensors": (lambda: gt.cat([x23(), [1, 2]]), TypeError, "element 1"),
    "cat_0d": (lambda: gt.cat([gt.tensor(1.0)]), RuntimeError, "zero-dimensional"),
    "stack_sizes": (
        lambda: gt.stack([x23(), gt.ones(3, 2)]),
        RuntimeError,
        r"\[2, 3\] at entry 0 and \[3, 2\] at entry 1",
    ),
    "expand_size": (
        lambda: x23().expand(2, 4),
        RuntimeError,
        r"expanded size of the tensor \(4\) must match the existing size \(3\) at "
        r"non-singleton dimension 1",
    ),
    "expand_fewer": (lambda: x23().expand(3), RuntimeError, r"number of sizes provided \(1\)"),
    "masked_fill_shape": (
        lambda: x23().masked_fill(gt.ones(4) > 0, 0.0),
        (RuntimeError, ValueError),
        r"(shape|broadcast)",
    ),
    "where_shapes": (lambda: gt.where(gt.ones(4) > 0, x23(), 0.0), RuntimeError, r"\(4\)"),
    "clamp_tensor_shape": (lambda: x23().clamp(min=gt.ones(4)), RuntimeError, r"\(3\).*\(4\)"),
    # views and reshapes
    "view_transposed": (
        lambda: x23().t().view(-1),
        RuntimeError,
        r"view size is not compatible.*Use \.reshape\(\.\.\.\) instead",
    ),
    "view_sliced": (lambda: gt.ones(4, 6)[:, :3].view(12), RuntimeError, "reshape"),
    "view_numel": (
        lambda: x23().view(4),
        RuntimeError,
        r"shape '\[4\]' is invalid for input of size 6",
    ),
    "view_two_inferred": (
        lambda: x23().view(-1, -1),
        RuntimeError,
        "only one dimension can be inferred",
    ),
    "view_negative": (lambda: x23().view(-2, 3), RuntimeError, "invalid shape dimension -2"),
    "view_inferred_zero": (lambda: gt.ones(0, 3).view(0, -1), RuntimeError, "invalid"),
    "view_bad_type": (lambda: x23().view(2.0, 3), TypeError, "tuple of ints.*float"),
    "reshape_numel": (
        lambda: x23().reshape(5),
        RuntimeError,
        r"shape '\[5\]' is invalid for input of size 6",
    ),
    "flatten_order": (
        lambda: x23().flatten(1, 0),
        RuntimeError,
        "start_dim cannot come after end_dim",
    ),
    "permute_len": (
        lambda: x23().permute(0),
        RuntimeError,
        r"input\.dim\(\) = 2 is not equal to len\(dims\) = 1",
    ),
    "permute_dup": (lambda: x23().permute(0, 0), RuntimeError, "duplicate dims"),
    "t_3d": (lambda: gt.ones(2, 3, 4).t(), RuntimeError, "<= 2 dimensions.*transpose"),
    "repeat_dims": (lambda: x23().repeat(2), RuntimeError, "repeat dims"),
    "split_zero": (lambda: x23().split(0), RuntimeError, "dimension size of 2"),
    "split_negative": (lambda: x23().split(-1), RuntimeError, "non-negative"),
    "split_sizes_sum": (lambda: x23().split([1, 2]), RuntimeError, r"sum exactly to 2.*\[1, 2\]"),
    "chunk_zero": (lambda: x23().chunk(0), RuntimeError, "greater than 0"),
    "narrow_range": (
        lambda: x23().narrow(1, 2, 2),
        RuntimeError,
        r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)",
    ),
    "tril_1d": (lambda: gt.ones(3).tril(), RuntimeError, "at least 2 dimensions"),
    "diag_3d": (lambda: gt.ones(2, 2, 2).diag(), RuntimeError, "1D or 2D"),
    "trace_1d": (lambda: gt.ones(3).trace(), RuntimeError, "expected a matrix"),
    # dims
    "sum_dim": (
        lambda: x23().sum(2),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    ),
    "sum_neg_dim": (lambda: x23().sum(-3), IndexError, r"\[-2, 1\], but got -3"),
    "sum_dup_dims": (lambda: x23().sum((0, 0)), RuntimeError, "multiple times"),
    "sum_0d_dim": (lambda: gt.tensor(1.0).sum(1), IndexError, r"\[-1, 0\], but got 1"),
    "mean_dim": (lambda: x23().mean(5), IndexError, "but got 5"),
    "max_dim": (lambda: x23().max(2), IndexError, "but got 2"),
    "argmax_dim": (lambda: x23().argmax(-3), IndexError, "but got -3"),
    "softmax_dim": (lambda: x23().softmax(2), IndexError, "but got 2"),
    "transpose_dim": (lambda: x23().transpose(0, 2), IndexError, "but got 2"),
    "unsqueeze_dim": (lambda: x23().unsqueeze(3), IndexError, r"\[-3, 2\], but got 3"),
    "squeeze_dim": (lambda: x23().squeeze(2), IndexError, "but got 2"),
    "select_dim": (lambda: x23().select(2, 0), IndexError, "but got 2"),
    "cat_dim": (lambda: gt.cat([x23(), x23()], 2), IndexError, "but got 2"),
    "stack_dim": (lambda: gt.stack([x23(), x23()], 3), IndexError, r"\[-3, 2\], but got 3"),
    "size_dim": (lambda: x23().size(2), IndexError, "but got 2"),
    "stride_dim": (lambda: x23().stride(-3), IndexError, "but got -3"),
    "cumsum_dim": (lambda: x23().cumsum(2), IndexError, "but got 2"),
    "sort_dim": (lambda: x23().sort(2), IndexError, "but got 2"),
    "flip_dim": (lambda: x23().flip(2), IndexError, "but got 2"),
    "unbind_dim": (lambda: x23().unbind(2), IndexError, "but got 2"),
    # indices
    "index_int": (
        lambda: x23()[5],
        IndexError,
        r"index 5 is out of bounds for dimension 0 with size 2.*\[2, 3\]",
    ),
    "index_neg": (lambda: x23()[-3], IndexError, "index -3 is out of bounds for dimension 0"),
    "index_col": (
        lambda: x23()[:, 7],
        IndexError,
        "index 7 is out of bounds for dimension 1 with size 3",
    ),
    "index_too_many": (
        lambda: x23()[0, 0, 0],
        IndexError,
        "too many indices for tensor of dimension 2",
    ),
    "index_0d": (lambda: gt.tensor(1.0)[0], IndexError, "dimension 0"),
    "index_tensor_oob": (lambda: x23()[gt.tensor([3])], IndexError, "index 3 is out of bounds"),
    "index_float_tensor": (
        lambda: x23()[gt.tensor([0.5])],
        IndexError,
        "tensors used as indices must be long, int, byte or bool tensors",
    ),
    "index_float": (lambda: x23()[0.5], IndexError, r"only integers, slices.*\(got float\)"),
    "index_str": (lambda: x23()["a"], TypeError, r"invalid data type .str.*an index is"),
    "index_mask_shape": (
        lambda: x23()[gt.tensor([True, False, True])],
        IndexError,
        r"mask.*size 3.*size 2",
    ),
    "index_neg_step": (lambda: x23()[::-1], ValueError, "step must be greater than zero"),
    "setitem_oob": (lambda: x23().__setitem__(4, 1.0), IndexError, "out of bounds for dimension 0"),
    "setitem_shape": (
        lambda: x23().__setitem__(0, gt.ones(4)),
        RuntimeError,
        r"expanded size of the tensor \(3\) must match the existing size \(4\)",
    ),
    "select_index": (
        lambda: x23().select(0, 2),
        IndexError,
        r"select\(\): index 2 out of range for tensor of size \[2, 3\] at dimension 0",
    ),
    "select_0d": (lambda: gt.tensor(1.0).select(0, 0), IndexError, "0-dim"),
    "index_select_oob": (
        lambda: x23().index_select(0, gt.tensor([2])),
        IndexError,
        "out of range.*size 2",
    ),
    "index_select_dtype": (
        lambda: x23().index_select(0, gt.tensor([0.0])),
        RuntimeError,  # torch's type
        "int32 or int64",
    ),
    "gather_oob": (
        lambda: x23().gather(1, gt.tensor([[3]])),
        RuntimeError,
        "index 3 is out of bounds for dimension 1 with size 3",
    ),
    "gather_ndim": (
        lambda: x23().gather(1, gt.tensor([0])),
        RuntimeError,
        "same number of dimensions",
    ),
    "topk_k": (lambda: x23().topk(4), RuntimeError, "k=4 out of range.*size 3"),
    # dtypes
    "matmul_dtypes": (
        lambda: x23() @ gt.ones(3, 2, dtype=gt.float64),
        RuntimeError,
        "same dtype, but got: float != double.*float32 and float64",
    ),
    "mm_bool": (
        lambda: gt.ones(2, 2, dtype=gt.bool).mm(gt.ones(2, 2, dtype=gt.bool)),
        NotImplementedError,  # torch's type
        "not implemented for 'Bool'",
    ),
    "mean_int": (
        lambda: gt.ones(2, dtype=gt.int64).mean(),
        RuntimeError,
        r"mean\(\): could not infer output dtype.*int64.*\.float\(\)",
    ),
    "var_int": (lambda: gt.ones(2, dtype=gt.int32).var(), RuntimeError, "int32"),
    "softmax_int": (
        lambda: gt.ones(2, dtype=gt.int64).softmax(0),
        NotImplementedError,  # torch's type
        r"not implemented for 'Long' \(int64.*\.float\(\)",
    ),
    "argmax_bool": (lambda: gt.ones(2, dtype=gt.bool).argmax(), RuntimeError, "Bool"),
    "topk_bool": (lambda: gt.ones(2, dtype=gt.bool).topk(1), RuntimeError, "bool"),
    "trace_bool": (lambda: gt.ones(2, 2, dtype=gt.bool).trace(), RuntimeError, "Bool"),
    "bitwise_float": (
        lambda: gt.ones(2).bitwise_and(gt.ones(2)),
        NotImplementedError,
        "\"bitwise_and_cpu\" not implemented for 'Float'",
    ),
    "bitwise_not_float": (
        lambda: ~gt.ones(2),
        TypeError,
        r"only implemented on integer and Boolean",
    ),
    "requires_grad_int": (
        lambda: gt.ones(2, dtype=gt.int64).requires_grad_(),
        RuntimeError,
        r"floating point.*int64.*\.float\(\)",
    ),
    "where_cond_float": (
        lambda: gt.where(gt.ones(2), gt.ones(2), gt.ones(2)),
        RuntimeError,  # torch's type
        "boolean tensor",
    ),
    "masked_fill_float_mask": (
        lambda: x23().masked_fill(x23(), 0),
        RuntimeError,  # torch's type
        "boolean masks",
    ),
    "inplace_float_into_int": (
        lambda: gt.ones(2, dtype=gt.int64).add_(1.5),
        RuntimeError,
        "result type float32 can't be cast to the desired output type int64",
    ),
    "inplace_div_int": (lambda: gt.ones(2, dtype=gt.int64).div_(2), RuntimeError, "can't be cast"),
    "inplace_unary_float_int": (
        lambda: gt.ones(2, dtype=gt.int64).sin_(),
        RuntimeError,
        r"can't be cast.*sin\(\)",
    ),
    "clamp_inplace_float_into_int": (
        lambda: gt.ones(2, dtype=gt.int64).clamp_(0.5),
        RuntimeError,
        "can't be cast",
    ),
    "operand_str": (
        lambda: x23() + "a",
        TypeError,
        "argument 'other' must be a Tensor or a Python number, not str",
    ),
    "operand_list": (
        lambda: x23() * [1, 2],
        TypeError,
        "argument 'other'.*not list.*gradstack.tensor",
    ),
    "operand_none": (lambda: x23() - None, TypeError, "NoneType"),
    "unary_not_tensor": (lambda: gt.sin(1.0), TypeError, "must be a Tensor, not float"),
    "function_not_tensor": (lambda: gt.sum([1, 2]), TypeError, "must be Tensor, not list"),
    "rand_int_dtype": (
        lambda: gt.rand(2, dtype=gt.int64),
        NotImplementedError,  # torch's type
        "check_uniform_bounds.*'Long'",
    ),
    "uniform_int": (
        lambda: gt.ones(2, dtype=gt.int32).uniform_(),
        NotImplementedError,  # torch's type
        "floating-point",
    ),
    # bool and integer edge cases
    "neg_bool": (lambda: -gt.ones(2, dtype=gt.bool), RuntimeError, "Negation.*bool.*logical_not"),
    "sub_bool": (
        lambda: gt.ones(2, dtype=gt.bool) - gt.ones(2, dtype=gt.bool),
        RuntimeError,
        "Subtraction.*bool.*logical_not",
    ),
    "sub_bool_scalar": (lambda: gt.ones(2) - True, RuntimeError, "Subtraction.*bool"),
    "rsub_bool": (lambda: 1 - gt.ones(2, dtype=gt.bool), RuntimeError, "Subtraction.*bool"),
    "sub_inplace_bool": (
        lambda: gt.ones(2, dtype=gt.int64).sub_(gt.ones(2, dtype=gt.bool)),
        RuntimeError,
        "Subtraction.*bool",
    ),
    "abs_bool": (lambda: gt.ones(2, dtype=gt.bool).abs(), NotImplementedError, "abs_cpu.*'Bool'"),
    "floor_bool": (
        lambda: gt.ones(2, dtype=gt.bool).floor(),
        NotImplementedError,
        "floor.*'Bool'",
    ),
    "relu_bool": (lambda: gt.ones(2, dtype=gt.bool).relu(), RuntimeError, "Boolean.*relu"),
    "pow_bool": (
        lambda: gt.ones(2, dtype=gt.bool) ** gt.ones(2, dtype=gt.bool),
        NotImplementedError,
        "pow.*'Bool'",
    ),
    "floordiv_bool": (
        lambda: gt.ones(2, dtype=gt.bool) // gt.ones(2, dtype=gt.bool),
        NotImplementedError,
        "div_floor_cpu.*'Bool'",
    ),
    "floordiv_int_zero": (lambda: gt.tensor([1, 2]) // 0, RuntimeError, "ZeroDivisionError"),
    "floordiv_int_zero_tensor": (
        lambda: gt.tensor([1, 2]) // gt.tensor([1, 0]),
        RuntimeError,
        "ZeroDivisionError",
    ),
    "remainder_int_zero": (lambda: gt.tensor([1, 2]) % 0, RuntimeError, "ZeroDivisionError"),
    "remainder_inplace_zero": (
        lambda: gt.tensor([1, 2]).remainder_(0),
        RuntimeError,
        "ZeroDivisionError",
    ),
    "pow_negative_int": (
        lambda: gt.tensor([1, 2]) ** -1,
        RuntimeError,
        "Integers to negative integer powers are not allowed",
    ),
    "int_overflow_scalar": (lambda: gt.tensor([1, 2]) + 2**64, RuntimeError, "Overflow"),
    "float_overflow_scalar": (lambda: gt.ones(2) * 10**400, RuntimeError, "overflow"),
    "alpha_float_int": (
        lambda: gt.tensor([1, 2]).add(1, alpha=0.5),
        RuntimeError,
        "integral input tensors.*alpha",
    ),
    "alpha_bool": (lambda: gt.ones(2).sub(gt.ones(2), alpha=True), RuntimeError, "Boolean alpha"),
    "item_many": (lambda: gt.tensor([1, 2]).item(), RuntimeError, "2 elements cannot be converted"),
    "float_many": (lambda: float(gt.tensor([1.0, 2.0])), ValueError, "has 2"),
    "bool_many": (
        lambda: bool(gt.tensor([1, 2])),
        RuntimeError,
        r"ambiguous.*\.any\(\) or \.all\(\)",
    ),
    "bool_empty": (lambda: bool(gt.zeros(0)), RuntimeError, "0"),
    "len_0d": (lambda: len(gt.tensor(1)), TypeError, "0-d"),
    "iter_0d": (lambda: iter(gt.tensor(1)), TypeError, "0-d"),
    "index_float_tensor_as_index": (lambda: [0, 1][gt.tensor(1.0)], TypeError, "integer tensors"),
    "max_empty": (lambda: gt.zeros(0).max(), (RuntimeError, IndexError), r"numel\(\) == 0.*dim"),
    "argmax_empty": (lambda: gt.zeros(0, 3).argmax(), (RuntimeError, IndexError), "dim"),
    "amax_empty": (lambda: gt.zeros(0, 3).amax(0), (RuntimeError, IndexError), "dim"),
    "clamp_no_bounds": (lambda: x23().clamp(), RuntimeError, "At least one of 'min' or 'max'"),
    "norm_p": (lambda: x23().norm(p="nuc"), RuntimeError, "unsupported p='nuc'"),
    "var_both": (
        lambda: x23().var(unbiased=True, correction=1),
        TypeError,
        "either unbiased or correction",
    ),
    "div_rounding": (lambda: x23().div(2, rounding_mode="up"), RuntimeError, "'trunc', or 'floor'"),
    "fill_tensor": (lambda: x23().fill_(gt.ones(2)), RuntimeError, "0-dimension value tensor"),
    "numpy_requires_grad": (
        lambda: gt.ones(2, requires_grad=True).numpy(),
        RuntimeError,
        r"detach\(\)\.numpy\(\)",
    ),
    "grad_shape": (
        lambda: setattr(gt.ones(2, requires_grad=True), "grad", gt.ones(3)),
        RuntimeError,
        r"grad shape \[3\] vs tensor shape \[2\]",
    ),
    "grad_dtype": (
        lambda: setattr(gt.ones(2), "grad", gt.ones(2, dtype=gt.float64)),
        RuntimeError,
        "float64.*float32",
    ),
    "backward_without_autograd": (lambda: gt.ones(2).backward(), RuntimeError, "graph-engine"),
    "pickle": (lambda: __import__("pickle").dumps(gt.ones(2)), TypeError, "not pickled"),
    "cuda": (lambda: gt.ones(2).to("cuda"), RuntimeError, "CPU only"),
    "unknown_op": (lambda: gt.get_op("mull"), KeyError, "Did you mean mul"),
    "unknown_dtype": (
        lambda: gt.ones(2).to(dtype=np.complex64),
        TypeError,
        "argument 'dtype' must be gradstack.dtype",  # a numpy dtype is refused, as torch
    ),
    "unknown_device": (lambda: gt.ones(2).to("complex64"), RuntimeError, "device type"),
    "as_not_tensor": (lambda: x23().expand_as(None), TypeError, "must be a Tensor, not NoneType"),
    "inplace_expanded": (
        lambda: gt.ones(3).expand(2, 3).add_(1),
        RuntimeError,
        r"single memory location.*clone\(\)",
    ),
    "inplace_expanded_setitem": (
        lambda: gt.ones(1, 3).expand(2, 3).__setitem__(slice(None), 1.0),  # repeated rows
        RuntimeError,
        r"clone\(\)",
    ),
    "inplace_expanded_unary": (lambda: gt.ones(3).expand(2, 3).exp_(), RuntimeError, r"clone\(\)"),
    "inplace_expanded_random": (
        lambda: gt.ones(3).expand(2, 3).uniform_(),
        RuntimeError,
        r"clone\(\)",
    ),
}

_NOT_AUTOGRAD = "gradstack_autograd"


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_table(name):
    call, exc, words = ERRORS[name]
    if name == "backward_without_autograd" and _NOT_AUTOGRAD in __import__("sys").modules:
        pytest.skip("the autograd layer is installed in this session")
    with pytest.raises(exc) as e:
        call()
    msg = str(e.value)
    assert re.search(words, msg, re.S), f"{name}: {type(e.value).__name__}: {msg}"
    assert len(msg) > 10, f"{name}: a terse message: {msg!r}"


def test_failed_inplace_ops_leave_the_tensor_unchanged():
    x = gt.tensor([1, 2])
    for call in (
        lambda: x.add_(1.5),
        lambda: x.div_(2),
        lambda: x.sin_(),
        lambda: x.add_(gt.ones(3)),
        lambda: x.remainder_(0),
        lambda: x.sub_(True),
    ):
        with pytest.raises(RuntimeError):
            call()
    assert x.tolist() == [1, 2] and x._version == 0


def test_failed_view_leaves_no_trace():
    x = gt.ones(2, 3)
    with pytest.raises(RuntimeError):
        x.t().view(6)
    assert x._version == 0 and x.t().reshape(6).shape == (6,)


@pytest.mark.parametrize(
    "name",
    [
        "index_int",
        "index_col",
        "select_index",
        "narrow_range",
        "view_numel",
        "expand_size",
        "cat_sizes",
        "mm_shapes",
        "sum_dim",
        "unsqueeze_dim",
        "stack_sizes",
        "permute_len",
    ],
)
def test_messages_carry_torchs_numbers(name):
    """Where torch names sizes/dims/indices, gradstack's message has the same numbers."""
    torch = pytest.importorskip("torch")
    call, exc, _ = ERRORS[name]
    with pytest.raises(exc) as g:
        call()
    tcall = {
        "index_int": lambda: torch.ones(2, 3)[5],
        "index_col": lambda: torch.ones(2, 3)[:, 7],
        "select_index": lambda: torch.ones(2, 3).select(0, 2),
        "narrow_range": lambda: torch.ones(2, 3).narrow(1, 2, 2),
        "view_numel": lambda: torch.ones(2, 3).view(4),
        "expand_size": lambda: torch.ones(2, 3).expand(2, 4),
        "cat_sizes": lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]),
        "mm_shapes": lambda: torch.ones(2, 3) @ torch.ones(4, 5),
        "sum_dim": lambda: torch.ones(2, 3).sum(2),
        "unsqueeze_dim": lambda: torch.ones(2, 3).unsqueeze(3),
        "stack_sizes": lambda: torch.stack([torch.ones(2, 3), torch.ones(3, 2)]),
        "permute_len": lambda: torch.ones(2, 3).permute(0),
    }[name]
    with pytest.raises(Exception) as t:
        tcall()
    numbers = re.findall(r"-?\d+", str(t.value))
    gnumbers = re.findall(r"-?\d+", str(g.value))
    assert numbers == gnumbers[: len(numbers)], (str(t.value), str(g.value))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # numpy on view("a") dtype strings
def test_every_error_is_a_python_exception_not_a_crash():
    """A sweep of nonsense arguments over the Tensor's methods raises Python exceptions."""
    x = gt.ones(2, 3)
    bad_args = [
        (),
        (None,),
        ("a",),
        (1.5,),
        (99,),
        (-99,),
        ([1, 2],),
        (x,),
        (object(),),
        (1, 2, 3, 4, 5),
    ]
    allowed = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError, KeyError)
    skip = {
        "backward",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "retain_grad",
        "cuda",
        "numpy",
        "detach_",
        "requires_grad_",
        "_make_subclass",
        "new_empty",
        "new_zeros",
        "new_ones",
        "new_full",
        "new_tensor",
        "imag",  # a property that raises for a real tensor, as torch's
    }
    for name in dir(gt.Tensor):
        if name.startswith("__") or name in skip:
            continue
        attr = getattr(x, name, None)
        if not callable(attr):
            continue
        for args in bad_args:
            try:
                getattr(gt.ones(2, 3), name)(*args)
            except allowed:
                pass
            except Exception as e:  # noqa: BLE001 - the point of the test
                pytest.fail(f"Tensor.{name}{args!r} raised {type(e).__name__}: {e}")


def test_masked_fill_broadcasts_out_of_place_but_not_in_place():
    """As torch: the out-of-place form broadcasts the tensor up to the mask's shape."""
    assert gt.ones(2, 3).masked_fill(gt.ones(4, 2, 3) > 0, 0.0).shape == (4, 2, 3)
    with pytest.raises(RuntimeError, match=r"\[2, 3\]"):
        gt.ones(2, 3).masked_fill_(gt.ones(4, 2, 3) > 0, 0.0)
