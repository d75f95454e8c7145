# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The op table: every built-in op of the tensor library, declared once.

An op is declared here with torch's name, its kind (``KIND_*``: how the generic
elementwise kernels treat it), its numpy ufunc (elementwise ops), and whether it writes
into its first argument (``inplace``) or returns a view of it (``view``).  Declaring an op
does not give it a kernel: ``_elementwise.pyx`` binds the C kernels of the elementwise
ops and ``sum``, and the ``_impl_*.py`` modules bind the Python kernels
(``OPS["mean"].set_kernel(...)``).  docs/architecture.md says how to add an op.

Examples
--------
>>> import gradstack_tensor as gt
>>> mul, mul_ = gt.get_op("mul"), gt.get_op("mul_")
>>> mul.kind == gt.KIND_BINARY, mul_.inplace, gt.get_op("t").is_view
(True, True, True)
"""
import numpy as np

from ._dispatch cimport K_BINARY, K_BINARY_FLOAT, K_COMPARE, K_OTHER, K_UNARY, K_UNARY_FLOAT, Op, new_op
from ._dispatch import OPS
from ._ufuncs import (
    _atan2_ufunc,
    _float_remainder,
    _integer_division,
    _integer_identity,
    _neg_ufunc,
    _not_for_bool,
    _not_for_float,
    _pow_ufunc,
    _relu_ufunc,
    _rounded_unary,
    _rsqrt_ufunc,
    _sigmoid_ufunc,
    _sign_ufunc,
    _tanh_ufunc,
)


cdef Op _elementwise(str name, int kind, ufunc):
    return new_op(name, kind, ufunc)


cdef Op _inplace_of(Op base):
    return new_op(base.name + "_", base.kind, base.ufunc, True, False)


# ----------------------------------------------------------------------------------------
# Elementwise ops (C kernels in _elementwise.pyx)

_elementwise("add", K_BINARY, np.add)
_elementwise("sub", K_BINARY, np.subtract)
_elementwise("mul", K_BINARY, np.multiply)
_elementwise("div", K_BINARY_FLOAT, np.true_divide)
_elementwise("pow", K_BINARY, _pow_ufunc)
_elementwise("maximum", K_BINARY, np.maximum)
_elementwise("minimum", K_BINARY, np.minimum)
_elementwise("remainder", K_BINARY,
             _integer_division("remainder", "remainder_cpu", _float_remainder))
_elementwise("floor_divide", K_BINARY,
             _integer_division("floor_divide", "div_floor_cpu", np.floor_divide))
_elementwise("atan2", K_BINARY_FLOAT, _atan2_ufunc)
_elementwise("bitwise_and", K_BINARY, _not_for_float("bitwise_and_cpu", np.bitwise_and))
_elementwise("bitwise_or", K_BINARY, _not_for_float("bitwise_or_cpu", np.bitwise_or))
_elementwise("bitwise_xor", K_BINARY, _not_for_float("bitwise_xor_cpu", np.bitwise_xor))
_elementwise("logical_and", K_COMPARE, np.logical_and)
_elementwise("logical_or", K_COMPARE, np.logical_or)
_elementwise("logical_xor", K_COMPARE, np.logical_xor)

_elementwise("eq", K_COMPARE, np.equal)
_elementwise("ne", K_COMPARE, np.not_equal)
_elementwise("lt", K_COMPARE, np.less)
_elementwise("le", K_COMPARE, np.less_equal)
_elementwise("gt", K_COMPARE, np.greater)
_elementwise("ge", K_COMPARE, np.greater_equal)

_elementwise("neg", K_UNARY, _neg_ufunc)
_elementwise("abs", K_UNARY, _not_for_bool("abs_cpu", np.absolute))
_elementwise("sign", K_UNARY, _sign_ufunc)
_elementwise("sgn", K_UNARY, _sign_ufunc)    # sign for real dtypes; its gradient differs
_elementwise("relu", K_UNARY, _relu_ufunc)
_elementwise("floor", K_UNARY,
             _not_for_bool("floor_vml_cpu", _integer_identity(np.floor)))
_elementwise("ceil", K_UNARY, _not_for_bool("ceil_vml_cpu", _integer_identity(np.ceil)))
_elementwise("round", K_UNARY,
             _not_for_bool("round_vml_cpu", _integer_identity(np.round)))
_elementwise("trunc", K_UNARY,
             _not_for_bool("trunc_vml_cpu", _integer_identity(np.trunc)))
_elementwise("logical_not", K_UNARY, np.logical_not)
_elementwise("bitwise_not", K_UNARY, _not_for_float("bitwise_not_cpu", np.invert))
_elementwise("exp", K_UNARY_FLOAT, _rounded_unary(np.exp))
_elementwise("exp2", K_UNARY_FLOAT, _rounded_unary(np.exp2))
_elementwise("expm1", K_UNARY_FLOAT, _rounded_unary(np.expm1))
_elementwise("log", K_UNARY_FLOAT, _rounded_unary(np.log))
_elementwise("log2", K_UNARY_FLOAT, _rounded_unary(np.log2))
_elementwise("log10", K_UNARY_FLOAT, _rounded_unary(np.log10))
_elementwise("log1p", K_UNARY_FLOAT, _rounded_unary(np.log1p))
_elementwise("sqrt", K_UNARY_FLOAT, np.sqrt)
_elementwise("rsqrt", K_UNARY_FLOAT, _rsqrt_ufunc)
_elementwise("reciprocal", K_UNARY_FLOAT, np.reciprocal)
_elementwise("sin", K_UNARY_FLOAT, np.sin)
_elementwise("cos", K_UNARY_FLOAT, np.cos)
_elementwise("tan", K_UNARY_FLOAT, _rounded_unary(np.tan))
_elementwise("asin", K_UNARY_FLOAT, _rounded_unary(np.arcsin))
_elementwise("acos", K_UNARY_FLOAT, _rounded_unary(np.arccos))
_elementwise("atan", K_UNARY_FLOAT, _rounded_unary(np.arctan))
_elementwise("sinh", K_UNARY_FLOAT, _rounded_unary(np.sinh))
_elementwise("cosh", K_UNARY_FLOAT, _rounded_unary(np.cosh))
_elementwise("asinh", K_UNARY_FLOAT, _rounded_unary(np.arcsinh))
_elementwise("acosh", K_UNARY_FLOAT, _rounded_unary(np.arccosh))
_elementwise("atanh", K_UNARY_FLOAT, _rounded_unary(np.arctanh))
_elementwise("tanh", K_UNARY_FLOAT, _tanh_ufunc)
_elementwise("sigmoid", K_UNARY_FLOAT, _sigmoid_ufunc)

for _name in ("add", "sub", "mul", "div", "pow", "remainder", "floor_divide", "atan2",
              "neg", "abs", "sign", "sgn", "relu", "floor", "ceil", "round", "trunc",
              "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
              "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
              "asinh", "acosh", "atanh", "tanh", "sigmoid", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
              "logical_not"):
    _inplace_of(OPS[_name])


# ----------------------------------------------------------------------------------------
# Reductions with a C kernel (_elementwise.pyx)

new_op("sum")


# ----------------------------------------------------------------------------------------
# ops whose kernels are written in Python (_impl_*.py bind them at import)
_PYTHON_OPS = (
    # (name, inplace, view)
    ("rsub", False, False), ("where", False, False), ("clamp", False, False),
    ("clamp_", True, False), ("zero_", True, False), ("fill_", True, False),
    ("copy_", True, False), ("setitem_", True, False), ("masked_fill", False, False),
    ("masked_fill_", True, False), ("uniform_", True, False), ("normal_", True, False),
    ("mean", False, False), ("prod", False, False), ("max", False, False),
    ("min", False, False), ("amax", False, False), ("amin", False, False),
    ("argmax", False, False), ("argmin", False, False), ("var", False, False),
    ("std", False, False), ("norm", False, False), ("logsumexp", False, False),
    ("softmax", False, False), ("log_softmax", False, False), ("cumsum", False, False),
    ("matmul", False, False), ("mm", False, False), ("bmm", False, False),
    ("dot", False, False), ("outer", False, False), ("addmm", False, False),
    ("mv", False, False),
    # matrix functions with a factorization (_impl_decompositions.py)
    ("linalg_inv", False, False), ("linalg_det", False, False),
    ("linalg_logabsdet", False, False), ("linalg_solve", False, False),
    ("linalg_cholesky", False, False),
    ("view", False, True), ("reshape", False, False), ("transpose", False, True),
    ("permute", False, True), ("t", False, True), ("squeeze", False, True),
    ("unsqueeze", False, True), ("expand", False, True), ("flatten", False, False),
    ("narrow", False, True), ("select", False, True), ("diagonal", False, True), ("unfold", False, True),
    ("getitem", False, False),
    ("split", False, True), ("chunk", False, True), ("unbind", False, True),
    ("alias", False, True), ("detach", False, True),
    ("cat", False, False), ("stack", False, False), ("clone", False, False),
    ("contiguous", False, False), ("to_dtype", False, False), ("expand_as", False, True),
    ("repeat", False, False), ("flip", False, False), ("tril", False, False),
    ("triu", False, False), ("index_select", False, False), ("gather", False, False),
    ("diag", False, False), ("trace", False, False), ("sort", False, False),
    ("topk", False, False), ("isnan", False, False), ("isinf", False, False),
    ("isfinite", False, False), ("count_nonzero", False, False),
    ("div_rounding", False, False),  # torch's div(a, b, rounding_mode=...): aten::div
    # torch's mul.Scalar and div.Scalar (aten::mul, aten::div): the product and quotient by
    # a number that library code makes where torch's C++ does (MulBackward1, DivBackward1)
    ("mul_scalar", False, False), ("div_scalar", False, False),
    # indexed writes (_impl_scatter.py)
    ("scatter", False, False), ("scatter_", True, False), ("scatter_add", False, False),
    ("scatter_add_", True, False), ("index_add", False, False), ("index_add_", True, False),
    ("index_copy", False, False), ("index_copy_", True, False), ("index_fill", False, False),
    ("index_fill_", True, False),
)
for _name, _inplace, _view in _PYTHON_OPS:
    new_op(_name, K_OTHER, None, _inplace, _view)
