"""The op table: every built-in op of the tensor library, declared once, one row per op.

A row (:class:`OpRow`, made by :func:`op`; both in ``_op_row.py``) says everything about an
op that is not its kernel's code:

- its name (torch's), its kind (how the generic elementwise kernels treat it) and, for an
  elementwise op, its numpy path (``ufunc``: a numpy ufunc, or a function of
  ``_ufuncs.pyx`` that adds torch's rules to one);
- its in-place form (``inplace_form``: the row also declares ``name_``), or that the op
  itself writes into its first argument (``writes``) or returns a view of it (``view``);
- torch's ``aten`` name (the profiler names the op ``aten::<aten>``; None for an op torch
  does not have: ``gradstack::<name>``);
- the argument kinds of its generated forms (``args``, in torch's schema words:
  ``"Tensor, Tensor|Number"``), its docstring, its aliases and the ``out=`` rule of its
  function form.

Everything else is derived from the rows, never listed again: the ops of the registry
(``OPS``, declared when this module is imported), their in-place forms, the profiler's
event names (``Op.aten``), the function forms of ``functions.py``, and, at build time, the
Tensor methods and their stub (Note [Generated from the op table]).  The kernels are bound
elsewhere: ``_elementwise.pyx`` gives every elementwise kind its C kernel (over the row's
``ufunc``), the ``_impl_*.py`` modules bind the Python kernels
(``OPS["mean"].set_kernel(...)``).  docs/architecture.md says how to add an op.

Note [Generated from the op table]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A row with ``args`` gets a Tensor method and a function form that nobody writes.  The
methods must stay C-level methods of the compiled Tensor (a method added at run time
would be a Python function and could not live on a cdef class), so the build writes them:
``_op_codegen.py`` reads this file (and ``_op_row.py``), alone, and writes
``_op_methods.pxi`` (the class ``OpTableMethods`` of the Tensor's class chain, and a C
global per op) and ``_op_methods.pyi`` (its stub), which ``_tensor_elementwise.pyx`` includes and
``_tensor.pyi`` inherits.  The build hook (``hatch_build.py``: ``tools/rebuild.py`` and
every wheel build) runs the generator before Cython and rewrites a file only when its text
changes, so an edit of a row recompiles the one module that includes it, and only when the
generated code changed.  The generated files are not in git.  The function forms are made
at import, by ``functions.py``, from the same rows.

Note [The table is read at build time]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The build reads this module before anything is compiled, so it imports numpy, the
standard library and ``_op_row.py`` only.  A ``ufunc`` that is one of ``_ufuncs.pyx``'s
functions is named through :data:`ufuncs` (``ufuncs._rounded_unary(np.exp)``), which
records the call and makes it when the ops are declared; and the ops are declared only
when this module is imported as ``gradstack_tensor._op_table``.

Examples
--------
>>> import gradstack_tensor as gt
>>> mul, mul_ = gt.get_op("mul"), gt.get_op("mul_")
>>> ROW["mul"].kind, mul_.inplace, mul_.kind == mul.kind, gt.get_op("t").is_view
('binary', True, True, True)
>>> mul.aten, gt.get_op("to_dtype").aten, gt.get_op("getitem").aten
('mul', 'to', None)
>>> ROW["atan2"].args
'Tensor, Tensor'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _op_row
from ._op_row import (
    BINARY,
    BINARY_FLOAT,
    COMPARE,
    EITHER,
    ELEMENTWISE,  # noqa: F401 - re-exported (__all__)
    OTHER,
    TENSOR,
    TENSOR_FIRST,
    TENSORS,
    UNARY,
    UNARY_FLOAT,
    OpRow,
    _Deferred,
    op,
    resolve,
    ufuncs,
)

__all__ = [*_op_row.__all__, "ROWS", "ROW"]


def _rounded(ufunc: Any) -> _Deferred:
    """float32 computed in double (Note [float32 transcendental functions are computed in
    double] in _ufuncs.pyx)."""
    return ufuncs._rounded_unary(ufunc)


# torch.special's functions over _bessel_kernels (the op is ``special_<name>``); the flag
# says whether torch's kernel takes float16 (computing in float32)
_SPECIAL_UNARY = (
    ("airy_ai", False), ("bessel_j0", False), ("bessel_j1", False), ("bessel_y0", False),
    ("bessel_y1", False), ("modified_bessel_i0", False), ("modified_bessel_i1", False),
    ("modified_bessel_k0", False), ("modified_bessel_k1", False),
    ("scaled_modified_bessel_k0", False), ("scaled_modified_bessel_k1", False),
    ("spherical_bessel_j0", False), ("i0e", True), ("i1", True), ("i1e", True),
    ("erfcx", False),
)  # fmt: skip
_SPECIAL_BINARY = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "zeta",
)  # fmt: skip

# ----------------------------------------------------------------------------------------
# The table

ROWS: tuple[OpRow, ...] = (
    # -- arithmetic (C kernels in _elementwise.pyx) --------------------------------------
    op(
        "add",
        BINARY,
        np.add,
        inplace_form=True,
        args=EITHER,
        params="other, *, alpha=1",
        doc="""``self + alpha * other``, broadcast, in torch's result dtype.

        Examples
        --------
        >>> gt.tensor([1., 2.]).add(gt.tensor([10., 20.]), alpha=2).tolist()
        [21.0, 42.0]
        """,
        inplace_doc="""In-place :meth:`add`: ``self += alpha * other``; returns ``self``.

        Examples
        --------
        >>> t = gt.ones(2)
        >>> t.add_(1, alpha=3).tolist(), t._version
        ([4.0, 4.0], 1)
        """,
    ),
    op(
        "sub",
        BINARY,
        np.subtract,
        inplace_form=True,
        args=EITHER,
        params="other, *, alpha=1",
        aliases=("subtract",),
        doc="""``self - alpha * other``, broadcast (bool tensors are refused, as in torch).

        Examples
        --------
        >>> gt.tensor([5, 7]).sub(gt.tensor([1, 2]), alpha=2).tolist()
        [3, 3]
        """,
    ),
    op(
        "mul",
        BINARY,
        np.multiply,
        inplace_form=True,
        args=EITHER,
        aliases=("multiply",),
        doc="""``self * other``, elementwise and broadcast.

        Examples
        --------
        >>> (gt.tensor([[1.], [2.]]).mul(gt.tensor([1., 10.]))).tolist()
        [[1.0, 10.0], [2.0, 20.0]]
        """,
    ),
    # div's method and function take rounding_mode (the op div_rounding): written by hand
    op("div", BINARY_FLOAT, np.true_divide, inplace_form=True),
    op(
        "pow",
        BINARY,
        ufuncs._pow_ufunc,
        inplace_form=True,
        args=EITHER,
        params="exponent",
        doc="""``self ** exponent``, elementwise (either may be a number).

        Examples
        --------
        >>> gt.tensor([1., 2., 3.]).pow(2).tolist()
        [1.0, 4.0, 9.0]
        """,
    ),
    op(
        "maximum",
        BINARY,
        np.maximum,
        args=TENSORS,
        doc="""The elementwise maximum of ``self`` and ``other`` (NaN wins, as in torch).

        Examples
        --------
        >>> gt.tensor([1., 5.]).maximum(gt.tensor([3., 2.])).tolist()
        [3.0, 5.0]
        """,
    ),
    op(
        "minimum",
        BINARY,
        np.minimum,
        args=TENSORS,
        doc="The elementwise minimum of ``self`` and ``other`` (NaN wins, as in torch).",
    ),
    op(
        "remainder",
        BINARY,
        ufuncs._integer_division("remainder", "remainder_cpu", ufuncs._float_remainder),
        inplace_form=True,
        args=EITHER,
        doc="""Python's modulus: the remainder has the sign of ``other``.

        Examples
        --------
        >>> gt.tensor([-3, 3]).remainder(2).tolist()
        [1, 1]
        """,
    ),
    op(
        "fmod",
        BINARY,
        ufuncs._integer_division("fmod", "fmod_cpu", ufuncs._float_fmod),
        inplace_form=True,
        args=TENSOR_FIRST,
        doc="""C's remainder: ``self - trunc(self / other) * other``, the sign of ``self``.

        Examples
        --------
        >>> gt.tensor([-3., 3.]).fmod(2).tolist()
        [-1.0, 1.0]
        """,
    ),
    op(
        "floor_divide",
        BINARY,
        ufuncs._integer_division("floor_divide", "div_floor_cpu", ufuncs._float_floor_divide),
        inplace_form=True,
        args=EITHER,
        doc="``self // other``: division rounded down (integer division by zero raises).",
    ),
    op(
        "atan2",
        BINARY_FLOAT,
        ufuncs._atan2_ufunc,
        inplace_form=True,
        args=TENSORS,
        doc="""The angle of the point ``(other, self)``: ``atan(self / other)`` in the right
        quadrant.

        ``other`` must be a Tensor, as in torch.

        Examples
        --------
        >>> gt.tensor([1.]).atan2(gt.tensor([1.])).tolist()
        [0.7853981852531433]
        """,
    ),
    # -- comparisons, logic and bits -----------------------------------------------------
    op(
        "eq",
        COMPARE,
        np.equal,
        args=TENSOR_FIRST,
        doc="""``self == other`` elementwise: a bool tensor.

        Examples
        --------
        >>> gt.tensor([1, 2, 3]).eq(2).tolist()
        [False, True, False]
        """,
    ),
    op(
        "ne",
        COMPARE,
        np.not_equal,
        args=TENSOR_FIRST,
        doc="``self != other`` elementwise: a bool tensor.",
    ),
    op(
        "lt",
        COMPARE,
        np.less,
        args=TENSOR_FIRST,
        doc="""``self < other`` elementwise: a bool tensor.

        Examples
        --------
        >>> gt.tensor([1, 2, 3]).lt(2).tolist()
        [True, False, False]
        """,
    ),
    op(
        "le",
        COMPARE,
        np.less_equal,
        args=TENSOR_FIRST,
        doc="``self <= other`` elementwise: a bool tensor.",
    ),
    op(
        "gt",
        COMPARE,
        np.greater,
        args=TENSOR_FIRST,
        doc="``self > other`` elementwise: a bool tensor.",
    ),
    op(
        "ge",
        COMPARE,
        np.greater_equal,
        args=TENSOR_FIRST,
        doc="``self >= other`` elementwise: a bool tensor.",
    ),
    op(
        "logical_and",
        COMPARE,
        np.logical_and,
        args=TENSORS,
        doc="Elementwise logical and of the truth values (nonzero is True): a bool tensor.",
    ),
    op(
        "logical_or",
        COMPARE,
        np.logical_or,
        args=TENSORS,
        doc="Elementwise logical or of the truth values (nonzero is True): a bool tensor.",
    ),
    op(
        "logical_xor",
        COMPARE,
        np.logical_xor,
        args=TENSORS,
        doc="Elementwise logical xor of the truth values (nonzero is True): a bool tensor.",
    ),
    op(
        "logical_not",
        UNARY,
        np.logical_not,
        inplace_form=True,
        args=TENSOR,
        out="cast",  # a bool result
        doc="Elementwise logical not (zero becomes True): a bool tensor.",
        inplace_doc="In-place :meth:`logical_not`, keeping ``self``'s dtype; returns ``self``.",
    ),
    op(
        "bitwise_and",
        BINARY,
        ufuncs._not_for_float("bitwise_and_cpu", np.bitwise_and),
        inplace_form=True,
        args=EITHER,
        doc="Bitwise and (``&``) of integer or bool tensors.",
    ),
    op(
        "bitwise_or",
        BINARY,
        ufuncs._not_for_float("bitwise_or_cpu", np.bitwise_or),
        inplace_form=True,
        args=EITHER,
        doc="Bitwise or (``|``) of integer or bool tensors.",
    ),
    op(
        "bitwise_xor",
        BINARY,
        ufuncs._not_for_float("bitwise_xor_cpu", np.bitwise_xor),
        inplace_form=True,
        args=EITHER,
        doc="Bitwise xor (``^``) of integer or bool tensors.",
    ),
    op(
        "bitwise_not",
        UNARY,
        ufuncs._not_for_float("bitwise_not_cpu", np.invert),
        inplace_form=True,
        args=TENSOR,
        doc="Bitwise not (``~``) of an integer or bool tensor.",
    ),
    op(
        "bitwise_left_shift",
        BINARY,
        ufuncs._shift("lshift_cpu", True),
        inplace_form=True,
        args=EITHER,
        doc="""``self << other`` of integer tensors (Note [Shift counts outside the bit width]).

        Examples
        --------
        >>> gt.tensor([1, -3], dtype=gt.int8).bitwise_left_shift(2).tolist()
        [4, -12]
        >>> gt.tensor([1, 1]).bitwise_left_shift(gt.tensor([63, 64])).tolist()
        [-9223372036854775808, 0]
        """,
    ),
    op(
        "bitwise_right_shift",
        BINARY,
        ufuncs._shift("rshift_cpu", False),
        inplace_form=True,
        args=EITHER,
        doc="""``self >> other`` of integer tensors, arithmetic (the sign fills) for signed
        types (Note [Shift counts outside the bit width]).

        Examples
        --------
        >>> gt.tensor([-8, 8]).bitwise_right_shift(1).tolist()
        [-4, 4]
        >>> gt.tensor([-8, 8]).bitwise_right_shift(gt.tensor([70, -1])).tolist()
        [-1, 0]
        """,
    ),
    # -- unary functions that keep the dtype ---------------------------------------------
    op(
        "neg",
        UNARY,
        ufuncs._neg_ufunc,
        inplace_form=True,
        args=TENSOR,
        method_aliases=("negative",),
        doc="""``-self``.

        Examples
        --------
        >>> gt.tensor([1., -2.]).neg().tolist()
        [-1.0, 2.0]
        """,
    ),
    op(
        "abs",
        UNARY,
        ufuncs._not_for_bool("abs_cpu", np.absolute),
        inplace_form=True,
        args=TENSOR,
        method_aliases=("absolute",),
        doc="""The absolute value.

        Examples
        --------
        >>> gt.tensor([-1, 2]).abs().tolist()
        [1, 2]
        """,
    ),
    op(
        "sign",
        UNARY,
        ufuncs._sign_ufunc,
        inplace_form=True,
        args=TENSOR,
        doc="-1, 0 or 1 by the sign of each element (0 for NaN, as torch).",
    ),
    op(
        "sgn",  # sign for real dtypes; its gradient differs
        UNARY,
        ufuncs._sign_ufunc,
        inplace_form=True,
        args=TENSOR,
        doc="""torch's sign extended to complex numbers; for the real dtypes here, :meth:`sign`.

        The values are those of :meth:`sign`. The gradient is not: autograd records
        ``SgnBackward0``, whose gradient is torch's efficient zero, a zero that stays zero
        when later multiplied by ``inf`` or NaN (Note [Efficient zeros] in graph-engine).

        Examples
        --------
        >>> gt.tensor([-2., 0., 3.]).sgn().tolist()
        [-1.0, 0.0, 1.0]
        """,
    ),
    op(
        "relu",
        UNARY,
        ufuncs._relu_ufunc,
        inplace_form=True,
        args=TENSOR,
        out=None,  # torch's relu takes no out=
        doc="""``max(self, 0)`` elementwise (NaN stays NaN).

        Examples
        --------
        >>> gt.tensor([-1., 0.5]).relu().tolist()
        [0.0, 0.5]
        """,
    ),
    op(
        "floor",
        UNARY,
        ufuncs._not_for_bool("floor_vml_cpu", ufuncs._integer_identity(np.floor)),
        inplace_form=True,
        args=TENSOR,
        doc="Round down to an integer value (integer tensors are returned as they are).",
    ),
    op(
        "ceil",
        UNARY,
        ufuncs._not_for_bool("ceil_vml_cpu", ufuncs._integer_identity(np.ceil)),
        inplace_form=True,
        args=TENSOR,
        doc="Round up to an integer value.",
    ),
    # round's method and function take decimals (the op round_decimals): written by hand
    op(
        "round",
        UNARY,
        ufuncs._not_for_bool("round_vml_cpu", ufuncs._integer_identity(np.round)),
        inplace_form=True,
    ),
    op(
        "trunc",
        UNARY,
        ufuncs._not_for_bool("trunc_vml_cpu", ufuncs._integer_identity(np.trunc)),
        inplace_form=True,
        args=TENSOR,
        doc="Round towards zero.",
    ),
    # -- unary functions with a float result ---------------------------------------------
    op(
        "exp",
        UNARY_FLOAT,
        _rounded(np.exp),
        inplace_form=True,
        args=TENSOR,
        doc="""``e ** self``; integer tensors give the default float dtype.

        Examples
        --------
        >>> gt.tensor([0, 1]).exp().dtype
        gradstack.float32
        """,
    ),
    op(
        "exp2",
        UNARY_FLOAT,
        _rounded(np.exp2),
        inplace_form=True,
        args=TENSOR,
        doc="``2 ** self``.",
    ),
    op(
        "expm1",
        UNARY_FLOAT,
        _rounded(np.expm1),
        inplace_form=True,
        args=TENSOR,
        doc="``exp(self) - 1``, accurate near 0.",
    ),
    op(
        "log",
        UNARY_FLOAT,
        _rounded(np.log),
        inplace_form=True,
        args=TENSOR,
        doc="The natural logarithm (``-inf`` at 0, NaN below, without warnings).",
    ),
    op(
        "log2",
        UNARY_FLOAT,
        _rounded(np.log2),
        inplace_form=True,
        args=TENSOR,
        doc="The base-2 logarithm.",
    ),
    op(
        "log10",
        UNARY_FLOAT,
        _rounded(np.log10),
        inplace_form=True,
        args=TENSOR,
        doc="The base-10 logarithm.",
    ),
    op(
        "log1p",
        UNARY_FLOAT,
        _rounded(np.log1p),
        inplace_form=True,
        args=TENSOR,
        doc="``log(1 + self)``, accurate near 0.",
    ),
    op(
        "sqrt",
        UNARY_FLOAT,
        np.sqrt,
        inplace_form=True,
        args=TENSOR,
        doc="""The square root (NaN for negative elements).

        Examples
        --------
        >>> gt.tensor([4., 9.]).sqrt().tolist()
        [2.0, 3.0]
        """,
    ),
    op(
        "rsqrt",
        UNARY_FLOAT,
        ufuncs._rsqrt_ufunc,
        inplace_form=True,
        args=TENSOR,
        doc="``1 / sqrt(self)``.",
    ),
    op(
        "reciprocal",
        UNARY_FLOAT,
        np.reciprocal,
        inplace_form=True,
        args=TENSOR,
        doc="``1 / self``; integer tensors give the default float dtype.",
    ),
    op("sin", UNARY_FLOAT, np.sin, inplace_form=True, args=TENSOR, doc="The sine (radians)."),
    op("cos", UNARY_FLOAT, np.cos, inplace_form=True, args=TENSOR, doc="The cosine (radians)."),
    op(
        "tan",
        UNARY_FLOAT,
        _rounded(np.tan),
        inplace_form=True,
        args=TENSOR,
        doc="The tangent (radians).",
    ),
    op(
        "asin",
        UNARY_FLOAT,
        _rounded(np.arcsin),
        inplace_form=True,
        args=TENSOR,
        doc="The inverse sine.",
    ),
    op(
        "acos",
        UNARY_FLOAT,
        _rounded(np.arccos),
        inplace_form=True,
        args=TENSOR,
        doc="The inverse cosine.",
    ),
    op(
        "atan",
        UNARY_FLOAT,
        _rounded(np.arctan),
        inplace_form=True,
        args=TENSOR,
        doc="The inverse tangent.",
    ),
    op(
        "sinh",
        UNARY_FLOAT,
        _rounded(np.sinh),
        inplace_form=True,
        args=TENSOR,
        doc="The hyperbolic sine.",
    ),
    op(
        "cosh",
        UNARY_FLOAT,
        _rounded(np.cosh),
        inplace_form=True,
        args=TENSOR,
        doc="The hyperbolic cosine.",
    ),
    op(
        "asinh",
        UNARY_FLOAT,
        _rounded(np.arcsinh),
        inplace_form=True,
        args=TENSOR,
        method_aliases=("arcsinh", "arcsinh_"),
        doc="The inverse hyperbolic sine.",
    ),
    op(
        "acosh",
        UNARY_FLOAT,
        _rounded(np.arccosh),
        inplace_form=True,
        args=TENSOR,
        method_aliases=("arccosh", "arccosh_"),
        doc="The inverse hyperbolic cosine (NaN below 1).",
    ),
    op(
        "atanh",
        UNARY_FLOAT,
        _rounded(np.arctanh),
        inplace_form=True,
        args=TENSOR,
        method_aliases=("arctanh", "arctanh_"),
        doc="The inverse hyperbolic tangent (+-inf at +-1, NaN beyond).",
    ),
    op(
        "tanh",
        UNARY_FLOAT,
        ufuncs._tanh_ufunc,
        inplace_form=True,
        args=TENSOR,
        doc="The hyperbolic tangent.",
    ),
    op(
        "sigmoid",
        UNARY_FLOAT,
        ufuncs._sigmoid_ufunc,
        inplace_form=True,
        args=TENSOR,
        doc="""The logistic function ``1 / (1 + exp(-self))``, stable for large ``|self|``.

        Examples
        --------
        >>> gt.tensor([0.]).sigmoid().tolist()
        [0.5]
        """,
    ),
    # -- reductions with a C kernel (_elementwise.pyx) -----------------------------------
    op("sum"),
    # -- ops whose kernels are written in Python (_impl_*.py bind them at import) ---------
    # elementwise predicates and the special functions (_impl_special.py)
    op(
        "isnan",
        args=TENSOR,
        out=None,
        doc="""Where ``self`` is NaN: a bool tensor (integer and bool tensors are never NaN).

        Examples
        --------
        >>> gt.tensor([1., float("nan")]).isnan().tolist()
        [False, True]
        """,
    ),
    op("isinf", args=TENSOR, out=None, doc="Where ``self`` is +inf or -inf: a bool tensor."),
    op(
        "isfinite",
        args=TENSOR,
        out=None,
        doc="""Where ``self`` is neither NaN nor infinite: a bool tensor.

        Examples
        --------
        >>> gt.tensor([1., float("inf")]).isfinite().tolist()
        [True, False]
        """,
    ),
    op("erf"),
    op("erfc"),
    op("erfinv"),
    op("lgamma"),
    op("digamma"),
    op("polygamma"),
    # torch.special's Bessel functions, orthogonal polynomials, erfcx and zeta: elementwise
    # over C kernels (_bessel_kernels.pyx, Note [The special functions' numpy path] in
    # _ufuncs.pyx); torch has no Tensor methods for them, special.py calls them
    *(
        op(f"special_{name}", UNARY_FLOAT, ufuncs._special_unary(name, f"{name}_cpu", half))
        for name, half in _SPECIAL_UNARY
    ),
    *(
        op(f"special_{name}", BINARY_FLOAT, ufuncs._special_binary(name, f"{name}_cpu", False))
        for name in _SPECIAL_BINARY
    ),
    op(
        "i0",
        UNARY_FLOAT,
        ufuncs._special_unary("i0", "i0_cpu", True),
        inplace_form=True,
        args=TENSOR,
        doc="""The modified Bessel function of the first kind of order 0 (Cephes' ``i0``, as
        torch's ``calc_i0``).

        Examples
        --------
        >>> round(gt.tensor(1.0).i0().item(), 5)
        1.26607
        """,
    ),
    op(
        "igamma",
        BINARY,
        ufuncs._special_binary("igamma", "igamma_cpu", True),
        inplace_form=True,
        args=TENSORS,
        doc="""The regularized lower incomplete gamma function ``P(self, other)`` (SciPy's
        ``gammainc``, as torch's): floating-point tensors only.

        Examples
        --------
        >>> round(gt.tensor(1.0).igamma(gt.tensor(1.0)).item(), 5)
        0.63212
        """,
    ),
    op(
        "igammac",
        BINARY,
        ufuncs._special_binary("igammac", "igammac_cpu", True),
        inplace_form=True,
        args=TENSORS,
        doc="""The regularized upper incomplete gamma function ``Q(self, other) = 1 - P``.

        Examples
        --------
        >>> round(gt.tensor(1.0).igammac(gt.tensor(1.0)).item(), 5)
        0.36788
        """,
    ),
    op(
        "frexp",
        args=TENSOR,
        out=None,
        doc="""``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent`` and
        ``0.5 <= |mantissa| < 1`` (C's frexp): the mantissa in ``self``'s dtype, the exponent
        int32; floating-point tensors only.

        Examples
        --------
        >>> m, e = gt.tensor([8.0, 0.75]).frexp()
        >>> m.tolist(), e.tolist()
        ([0.5, 0.75], [4, 0])
        """,
    ),
    op(
        "nextafter",
        BINARY,
        ufuncs._floats_only("nextafter_cpu", ufuncs._nextafter_bits),
        inplace_form=True,
        args=TENSORS,
        doc="""The next floating-point value after ``self`` towards ``other``.

        Examples
        --------
        >>> gt.tensor([1.0]).nextafter(gt.tensor([2.0])).item() > 1.0
        True
        """,
    ),
    # torch's sub with the operands swapped (``2 - t``), where, clamp, masked_fill
    op("rsub"),
    op("where"),
    op("clamp", inplace_form=True),
    op("masked_fill", inplace_form=True),
    # torch's div(a, b, rounding_mode=...) (aten::div), and torch's mul.Scalar and
    # div.Scalar: the product and quotient by a number that library code makes where
    # torch's C++ does (MulBackward1, DivBackward1)
    op("div_rounding", aten="div"),
    # torch's round(x, decimals=d) (aten::round.decimals, RoundBackward1)
    op("round_decimals", aten="round"),
    op("mul_scalar", aten="mul"),
    op("div_scalar", aten="div"),
    # fills and copies
    op("zero_", writes=True),
    op("fill_", writes=True),
    op("copy_", writes=True),
    op("setitem_", writes=True, aten=None),  # torch spreads it over index_put_, copy_ ...
    # random draws (_impl_random.py)
    op("uniform_", writes=True),
    op("normal_", writes=True),
    op("normal"),
    op("bernoulli", inplace_form=True),
    op("exponential_", writes=True),
    op("cauchy_", writes=True),
    op("log_normal_", writes=True),
    op("geometric_", writes=True),
    op("poisson"),  # (random_samplers.py: torch's rejection samplers)
    op("binomial"),
    op("random_", writes=True),
    op("multinomial"),
    # reductions
    op("mean"),
    op("prod"),
    op("max"),
    op("min"),
    op("amax"),
    op("amin"),
    op("argmax"),
    op("argmin"),
    op("var"),
    op("std"),
    op("norm"),
    op("logsumexp"),
    op("softmax"),
    op("log_softmax"),
    op("cumsum"),
    op("count_nonzero"),
    # linear algebra, and the matrix functions with a factorization (_impl_decompositions.py)
    op("matmul"),
    op("mm"),
    op("bmm"),
    op("dot"),
    op("vdot"),  # torch's own op (VdotBackward0): dot with the first operand conjugated
    op("outer"),
    op("addmm"),
    op("mv"),
    op("linalg_inv"),
    op("linalg_det"),
    op("linalg_logabsdet", aten="linalg_slogdet"),  # (slogdet's differentiable half)
    op("linalg_solve"),
    op("linalg_cholesky"),
    op("linalg_svd"),
    # (_impl_factorizations.py)
    op("linalg_eig"),
    op("linalg_eigh"),
    op("linalg_qr"),
    op("linalg_lstsq"),
    op("linalg_solve_triangular"),
    op("linalg_lu"),
    op("linalg_pinv"),
    op("diag"),
    op("trace"),
    op("tril"),
    op("triu"),
    # views, shapes and copies
    op("view", view=True),
    op("reshape"),
    op("transpose", view=True),
    op("permute", view=True),
    op("t", view=True),
    op("squeeze", view=True),
    op("unsqueeze", view=True),
    op("expand", view=True),
    op("expand_as", view=True),
    op("flatten"),
    op("narrow", view=True),
    op("select", view=True),
    op("diagonal", view=True),
    op("unfold", view=True),
    op("split", view=True),
    op("chunk", view=True),
    op("unbind", view=True),
    op("alias", view=True),
    op("detach", view=True),
    op("getitem", aten=None),  # torch spreads indexing over select, slice, index ...
    op("cat"),
    op("stack"),
    op("clone"),
    op("contiguous"),
    op("to_dtype", aten="to"),
    op("repeat"),
    op("flip"),
    op("index_select"),
    op("gather"),
    op("sort"),
    op("topk"),
    # complex numbers (_impl_complex.py)
    op("view_as_real", view=True),
    op("view_as_complex", view=True),
    op("conj"),  # a lazy conjugate view (Note [The conjugate and negative bits])
    op("_neg_view"),  # a lazy negative view (``imag`` of a conjugate view)
    op("conj_physical"),
    op("polar"),
    op("complex"),
    op("angle"),  # of a complex tensor (a real one's is the composite angle())
    # the discrete Fourier transforms behind torch.fft (_impl_fft.py)
    op("fft_c2c", aten="_fft_c2c"),
    op("fft_r2c", aten="_fft_r2c"),
    op("fft_c2r", aten="_fft_c2r"),
    # indexed writes (_impl_scatter.py)
    op("scatter", inplace_form=True),
    op("scatter_add", inplace_form=True),
    op("index_add", inplace_form=True),
    op("index_copy", inplace_form=True),
    op("index_fill", inplace_form=True),
    # reducing writes (_impl_scatter_reduce.py)
    op("scatter_reduce", inplace_form=True),
    op("index_reduce", inplace_form=True),
    # nn: losses, normalisation, embedding, activations (_impl_nn.py)
    op("nll_loss"),
    op("nll_loss2d"),
    op("mse_loss"),
    op("smooth_l1_loss"),
    op("huber_loss"),
    op("binary_cross_entropy"),
    op("binary_cross_entropy_with_logits"),
    op("layer_norm"),
    op("batch_norm"),
    op("embedding"),
    op("embedding_renorm_", writes=True),
    op("gelu"),
    op("gelu_backward"),
    op("silu", inplace_form=True),
    op("log_sigmoid"),
    op("softplus"),
    op("leaky_relu", inplace_form=True),
    # sliding windows: F.unfold/F.fold (and so convolutions), max pooling (_impl_windows.py)
    op("im2col"),
    op("col2im"),
    op("max_pool2d_with_indices"),
    op("avg_pool2d"),
    op("avg_pool2d_backward"),
    # the 2-d convolution: im2col + BLAS products, forward and backward (_impl_windows.py)
    op("conv2d"),
    # the fused recurrent cells: one LSTM/GRU step after its GEMMs (_impl_rnn.py)
    op("_thnn_fused_lstm_cell"),
    op("_thnn_fused_gru_cell"),
    # a recurrent layer's direction in one op, after its input's GEMM (_impl_rnn.py)
    op("_lstm_layer", aten=None),
    op("_gru_layer", aten=None),
)

# the rows by name
ROW: dict[str, OpRow] = {row.name: row for row in ROWS}


def _declare_all() -> None:
    """Declare every row's op (and in-place form) in the registry, ``OPS``."""
    from . import _dispatch, _ufuncs

    kinds = {
        OTHER: _dispatch.KIND_OTHER,
        BINARY: _dispatch.KIND_BINARY,
        BINARY_FLOAT: _dispatch.KIND_BINARY_FLOAT,
        COMPARE: _dispatch.KIND_COMPARE,
        UNARY: _dispatch.KIND_UNARY,
        UNARY_FLOAT: _dispatch.KIND_UNARY_FLOAT,
    }
    if len(ROW) != len(ROWS):
        raise ValueError("the op table declares an op twice")
    for row in ROWS:
        ufunc = resolve(row.ufunc, _ufuncs)
        kind = kinds[row.kind]
        _dispatch.declare_op(row.name, kind, ufunc, row.writes, row.view, row.aten)
        if row.inplace_form:
            aten = None if row.aten is None else row.aten + "_"
            _dispatch.declare_op(row.name + "_", kind, ufunc, True, False, aten)


# Note [The table is read at build time]: the build loads this file alone
if __name__ == "gradstack_tensor._op_table":
    _declare_all()
