"""The reduction entries of tensor-core's op database (a ``Family``): ``sum``, ``mean``,
``max`` ..., ``var``/``std``, ``norm``, ``logsumexp``, softmax, ``cumsum``, ``sort`` and
``topk``."""

# ruff: noqa: F405 (the names from op_db_base)
from __future__ import annotations

import math

import numpy as np
from gradstack_tensor_tests_op_db_base import *  # noqa: F403 (its __all__: all of it)

__all__ = ["extend"]

_FAMILY = Family()
_add, extend = _FAMILY.add, _FAMILY.extend


# ---- reductions


def _sum_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng)
    yield SampleInput(make_array((70, 70), dtype, rng), desc="large, all")
    yield SampleInput(
        make_array((2, 3), dtype, rng), (), {"dtype": DT("float64")}, desc="dtype=float64"
    )


_FLOAT_RED_TOL = {"float32": 1e-4}
_add(OpInfo("sum", _reduce_ref(np.sum, int_dtype=np.int64), _sum_samples, ALL, rtol=_FLOAT_RED_TOL))
_add(OpInfo("mean", _reduce_ref(np.mean), reduction_samples, FLOATS, rtol=_FLOAT_RED_TOL))
_add(
    OpInfo(
        "prod",
        _reduce_ref(np.prod, int_dtype=np.int64),
        lambda info, dtype, rng: reduction_samples(info, dtype, rng, dims=(None, 0, -1)),
        ALL,
        (-1.5, 1.5),
        rtol=_FLOAT_RED_TOL,
    )
)
_add(OpInfo("amax", _reduce_ref(np.max), reduction_samples, ALL))
_add(OpInfo("amin", _reduce_ref(np.min), reduction_samples, ALL))


def _extreme_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, dims=(None, 0, -1), unique=dtype != "bool")


_add(OpInfo("max", _extreme_ref(np.argmax, np.max), _extreme_samples, ALL))
_add(OpInfo("min", _extreme_ref(np.argmin, np.min), _extreme_samples, ALL))
_add(OpInfo("argmax", _arg_ref(np.argmax), _extreme_samples, NUMERIC))
_add(OpInfo("argmin", _arg_ref(np.argmin), _extreme_samples, NUMERIC))


def _count_nonzero_ref(x, dim=None):
    if dim is not None and x.ndim == 0:
        return (x != 0).astype(np.int64)
    return np.asarray(np.count_nonzero(x, axis=_axes(dim, x.ndim)), dtype=np.int64)


def _count_nonzero_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, keepdim=False)


# the Tensor methods count_nonzero/isnan/isinf/isfinite are the Cython core's (issue 11:
# proposed to the lead); the function forms dispatch these ops
_add(OpInfo("count_nonzero", _count_nonzero_ref, _count_nonzero_samples, ALL), method=False)
for _name, _ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    _add(
        OpInfo(
            _name,
            (lambda fn: lambda x: fn(x) if x.dtype.kind == "f" else fn(x.astype(np.float64)))(_ref),
            unary_samples,
            ALL,
        ),
        method=False,
    )


def _var_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng, empty=False)
    x = make_array((3, 4), dtype, rng)
    yield SampleInput(x, (), {"dim": 1, "unbiased": False}, desc="unbiased=False")
    yield SampleInput(x, (), {"dim": 0, "correction": 2}, desc="correction=2")


_add(OpInfo("var", _var_ref(False), _var_samples, FLOATS, rtol=_FLOAT_RED_TOL))
_add(OpInfo("std", _var_ref(True), _var_samples, FLOATS, rtol=_FLOAT_RED_TOL))


def _norm_samples(info, dtype, rng):
    yield from reduction_samples(info, dtype, rng, dims=(None, 1, (0, 1)), empty=False)
    x = make_array((3, 4), dtype, rng)
    for p in (1, 3, math.inf, 0):
        yield SampleInput(x, (p,), {"dim": 1}, desc=f"p={p}")


_add(OpInfo("norm", _norm_ref, _norm_samples, FLOATS, rtol=_FLOAT_RED_TOL))


def _logsumexp_samples(info, dtype, rng):
    return reduction_samples(info, dtype, rng, dims=(0, -1, (0, 1)), empty=False)


_add(OpInfo("logsumexp", _logsumexp_ref, _logsumexp_samples, ALL, rtol=_FLOAT_RED_TOL))


def _softmax_samples(info, dtype, rng):
    for shape, layout in (
        ((), "c"),
        ((5,), "c"),
        ((2, 3), "c"),
        ((3, 4), "T"),
        ((2, 3, 4), "sliced"),
        ((0, 3), "c"),
    ):
        for dim in (0, -1):
            x = make_array(shape, dtype, rng, (-5.0, 5.0), layout=layout)
            yield SampleInput(x, (dim,), desc=f"{describe(x)}, dim={dim}")


_add(OpInfo("softmax", _softmax_ref(False), _softmax_samples, FLOATS))
_add(OpInfo("log_softmax", _softmax_ref(True), _softmax_samples, FLOATS))
_add(OpInfo("cumsum", _cumsum_ref, _softmax_samples, ALL, rtol=_FLOAT_RED_TOL))


def _sort_samples(info, dtype, rng):
    for shape, layout in (
        ((), "c"),
        ((6,), "c"),
        ((3, 4), "T"),
        ((2, 3, 4), "sliced"),
        ((0, 3), "c"),
    ):
        for dim in (0, -1):
            for descending in (False, True):
                x = make_array(shape, dtype, rng, layout=layout, unique=dtype != "bool")
                yield SampleInput(
                    x, (dim, descending), desc=f"{describe(x)}, dim={dim}, descending={descending}"
                )


_add(OpInfo("sort", _sort_ref, _sort_samples, ALL))


def _topk_samples(info, dtype, rng):
    for shape, k, dim in (
        ((6,), 3, -1),
        ((3, 4), 2, 0),
        ((3, 4), 0, 1),
        ((2, 5), 5, 1),
        ((), 1, 0),
    ):
        for largest in (True, False):
            x = make_array(shape, dtype, rng, layout="T" if len(shape) == 2 else "c", unique=True)
            yield SampleInput(x, (k, dim, largest), desc=f"{describe(x)}, k={k}, dim={dim}")


_add(OpInfo("topk", _topk_ref, _topk_samples, NUMERIC))
