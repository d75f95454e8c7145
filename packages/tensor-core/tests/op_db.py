"""The op database of tensor-core's tests: one entry per registered op.

Every op in ``gradstack_tensor.OPS`` has an :class:`OpInfo` here (or a reason in
:data:`SKIPS`): its numpy reference, a generator of sample inputs (0-d, empty,
broadcastable pairs, non-contiguous inputs made by transposing, slicing and flipping numpy
arrays), the domain its inputs are drawn from (``log`` needs positive numbers), the dtypes
it supports as torch does, and how it is called (function form, method form, or both).
``test_ops.py`` runs generic tests over all of it; ``test_fuzz.py`` borrows the entries
to know how to call each op.

Note [Samples are numpy]
~~~~~~~~~~~~~~~~~~~~~~~~
A :class:`SampleInput` holds numpy arrays wherever the op takes a tensor.  The tests turn
them into gradstack tensors with ``from_numpy`` (which keeps the array's strides, so a
transposed or flipped array becomes a non-contiguous tensor), into torch tensors with a
contiguous copy, and hand the arrays themselves to the numpy reference.  Floating-point
arrays reach the reference upcast to float64, so the reference is the more precise side.

Examples
--------
>>> import numpy as np
>>> info = OP_DB["exp"]
>>> info.domain, info.dtypes[:2]
((-3.0, 3.0), ('float32', 'float64'))
>>> s = info.samples("float32", np.random.default_rng(0))[0]
>>> s.input.shape, s.input.dtype
((), dtype('float32'))
"""

from __future__ import annotations

import numpy as np
from gradstack_tensor_tests_op_db_base import (
    ALL,
    DT,
    FLOATS,
    INTS,
    NUMERIC,
    SMALL_PATH_BINARY,
    SMALL_PATH_UNARY,
    OpInfo,
    SampleInput,
    describe,  # noqa: F401 (the tests' db.describe)
    make_array,
)

__all__ = [
    "ALL",
    "DT",
    "FLOATS",
    "INTS",
    "NUMERIC",
    "OP_DB",
    "SKIPS",
    "OpInfo",
    "SampleInput",
    "make_array",
    "SMALL_PATH_UNARY",
    "SMALL_PATH_BINARY",
]

_RANDOM = "a random draw: compared value for value with torch after the same seed in "
SKIPS: dict[str, str] = {  # op name -> why it has no entry
    "linalg_svd": "its singular vectors' signs are LAPACK's, which may differ from torch's "
    "MKL per pair: compared with torch up to those signs (values, errors, empty inputs, "
    "gradients of sign-invariant functions) in tests/test_dropin_small_names_torch.py",
    **{
        name: f"{why}: compared with torch (values{extra}, errors, empty and batched "
        "inputs, gradients) in tests/test_linalg_factorizations_torch.py"
        for name, why, extra in (
            ("linalg_eig", "its eigenvectors are defined up to a phase", " and invariants"),
            ("linalg_eigh", "its eigenvectors are defined up to a sign", " and invariants"),
            ("linalg_qr", "a named tuple of factors, its modes", ""),
            ("linalg_lstsq", "four fields, filled by driver", ""),
            ("linalg_solve_triangular", "keyword-only arguments, upper required", ""),
            ("linalg_lu", "the named tuple (P, L, U)", ""),
            ("linalg_pinv", "its atol/rtol/hermitian keywords", ""),
        )
    },
    **{
        name: "torch's reduce/include_self arguments: compared with torch (values of every "
        "reduce in float32, float64 and integers, errors, gradients) in "
        "tests/test_reducing_writes_torch.py"
        for name in ("scatter_reduce", "scatter_reduce_", "index_reduce", "index_reduce_")
    },
    "div_rounding": "no function of its own: div(a, b, rounding_mode=...) calls it; its values, "
    "dtypes and gradients are compared with torch in graph-engine's test_div_rounding_mode.py",
    "mul_scalar": "torch's mul.Scalar, no public function: compared with torch.ops.aten.mul.Scalar "
    "(values, gradients, node names) in graph-engine's autograd_op_db.py",
    "div_scalar": "torch's div.Scalar, no public function: compared with torch.ops.aten.div.Scalar "
    "(values, gradients, node names) in graph-engine's autograd_op_db.py",
    "erf": "compared with torch (values, dtypes, gradients) in graph-engine's "
    "test_special_functions.py",
    "erfinv": "compared with torch (values, dtypes, gradients) in graph-engine's "
    "test_special_functions.py",
    "erfc": "compared with torch (values in every float dtype with their tails, layouts, "
    "gradients) in graph-engine's test_special_functions.py",
    **{
        name: "compared with torch (values over dense grids with the edges in float32 and "
        "float64, dtypes, layouts, errors, gradients) in tests/test_special_bessel_torch.py"
        for name in (
            "frexp",
            "igamma",
            "igamma_",
            "igammac",
            "igammac_",
            *(
                "special_" + f
                for f in (
                    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
                    "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
                    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0 "
                    "i0e i1 i1e erfcx zeta chebyshev_polynomial_t chebyshev_polynomial_u "
                    "chebyshev_polynomial_v chebyshev_polynomial_w hermite_polynomial_h "
                    "hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
                    "shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u "
                    "shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w"
                ).split()
            ),
        )
    },
    **{
        name: "compared with torch (values at the poles and in float32, gradients) in "
        "tests/test_gamma_functions_torch.py and graph-engine's autograd_op_db.py"
        for name in ("lgamma", "digamma", "polygamma")
    },
    **{
        name: "a complex-number op: compared with torch (values, dtypes, errors, gradients) "
        "in tests/test_complex_dtypes_torch.py and tests/test_complex_autograd_torch.py"
        for name in (
            "view_as_real",
            "view_as_complex",
            "conj",
            "conj_physical",
            "_neg_view",
            "angle",
            "polar",
            "complex",
        )
    },
    **{
        name: "torch's private FFT op behind torch.fft: compared with torch through the "
        "torch.fft functions (values, dtypes, errors, gradients) in tests/test_fft_torch.py"
        for name in ("fft_c2c", "fft_r2c", "fft_c2r")
    },
    **{
        name: _RANDOM + "test_random_torch.py"
        for name in ("bernoulli", "bernoulli_", "exponential_", "multinomial", "normal", "random_")
    },
    **{
        name: "a random draw: compared with torch (draws after the same seed, with a "
        "Generator, errors, node names, zero gradients) in tests/test_random_draws_torch.py"
        for name in ("cauchy_", "log_normal_", "geometric_", "poisson", "binomial")
    },
}

# ---------------------------------------------------------------------------------------
# The entries

OP_DB: dict[str, OpInfo] = {}

# Names with a function form in torch (``torch.<name>``) and a method form
# (``torch.Tensor.<name>``); the database declares what torch offers and
# test_ops checks that gradstack offers the same.
_TORCH_NO_FUNCTION = {
    "add_",
    "sub_",
    "mul_",
    "div_",
    "pow_",
    "remainder_",
    "fmod_",
    "floor_divide_",
    "atan2_",
    "bitwise_and_",
    "bitwise_or_",
    "bitwise_xor_",
    "bitwise_not_",
    "bitwise_left_shift_",
    "bitwise_right_shift_",
    "logical_not_",
    "sign_",
    "sgn_",
    "copy_",
    "masked_fill_",
    "uniform_",
    "normal_",
    "expand",
    "expand_as",
    "view",
    "repeat",
    "contiguous",
    "nextafter_",
}


def _add(info: OpInfo, *, function=True, method=True) -> OpInfo:
    if info.name in OP_DB:
        raise ValueError(f"duplicate op_db entry {info.name!r}")
    if function is True:
        info.function = None if info.name in _TORCH_NO_FUNCTION else info.name
    elif function:
        info.function = function
    if method is True:
        info.method = info.name
    elif method:
        info.method = method
    OP_DB[info.name] = info
    return info


def _extend_with(name):
    """Add the entries of the helper module ``name`` (Note [Test helpers import by name] in
    the workspace's conftest.py) to this database."""
    import importlib
    import sys

    importlib.import_module(f"gradstack_tensor_tests_{name}").extend(sys.modules[__name__])


# the entries by family: op_db_elementwise.py, op_db_reductions.py, op_db_linalg.py,
# op_db_shape.py
for _family in ("elementwise", "reductions", "linalg", "shape"):
    _extend_with(f"op_db_{_family}")

# ---------------------------------------------------------------------------------------
# Ops that have a numpy-path twin check (Note [Small float arrays take C loops])

for _name in SMALL_PATH_UNARY + SMALL_PATH_BINARY + ("sum",):
    assert _name in OP_DB, _name

# ---------------------------------------------------------------------------------------
# Turning samples into calls (Note [Samples are numpy])


def to_gs(obj, gt):
    """Arrays become gradstack tensors sharing memory (``from_numpy``), DT gradstack dtypes."""
    if isinstance(obj, np.ndarray):
        return gt.from_numpy(obj)
    if isinstance(obj, DT):
        return getattr(gt, str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_gs(v, gt) for v in obj)
    if isinstance(obj, dict):
        return {k: to_gs(v, gt) for k, v in obj.items()}
    return obj


def to_torch(obj, torch):
    """Arrays become torch tensors over a contiguous copy (torch refuses negative strides)."""
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj, copy=True, order="C"))
    if isinstance(obj, DT):
        return getattr(torch, str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch(v, torch) for v in obj)
    if isinstance(obj, dict):
        return {k: to_torch(v, torch) for k, v in obj.items()}
    return obj


def to_ref(obj):
    """Copies of the arrays for the numpy reference, floats upcast to float64."""
    if isinstance(obj, np.ndarray):
        return obj.astype(np.float64) if obj.dtype.kind == "f" else obj.copy()
    if isinstance(obj, DT):
        return np.dtype(str(obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_ref(v) for v in obj)
    if isinstance(obj, dict):
        return {k: to_ref(v) for k, v in obj.items()}
    return obj


# the nn ops of _impl_nn.py (losses, normalisation, activations): entries in op_db_nn.py
_extend_with("op_db_nn")
_extend_with("op_db_rnn")
