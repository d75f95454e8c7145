"""Kernels of the neural-network ops: losses, normalisation, embedding and activations.

These are ops of the registry like ``mul`` or ``sum`` (DESIGN.md: every differentiable op is
an op of tensor-core with one entry in graph-engine's derivative table), so that
``F.cross_entropy`` records torch's ``NllLossBackward0`` rather than the nodes of the
elementwise ops it could be written with, and so that the profiler names them as torch
does.  Each kernel takes its op's canonical positional arguments (torch's argument order,
with ``reduction`` as the string ``"none"``/``"mean"``/``"sum"``), checks them, and computes
with numpy in the input's dtype.  The layers above (``gradstack_nn.functional``) add
torch's Python-level checks and warnings, broadcasting and the composite cases.

=====================================  ===========================================
op                                     torch counterpart
=====================================  ===========================================
``nll_loss``, ``nll_loss2d``           ``aten::nll_loss`` (1-D/2-D input), ``nll_loss2d``
``mse_loss``                           ``aten::mse_loss``
``smooth_l1_loss``, ``huber_loss``     ``aten::smooth_l1_loss``, ``aten::huber_loss``
``binary_cross_entropy``               ``aten::binary_cross_entropy``
``binary_cross_entropy_with_logits``   ``aten::binary_cross_entropy_with_logits``
``layer_norm``                         ``aten::native_layer_norm`` (its first output)
``batch_norm``                         ``aten::native_batch_norm`` (updates running stats)
``embedding``, ``embedding_renorm_``   ``aten::embedding``, ``aten::embedding_renorm_``
``gelu``, ``gelu_backward``            ``aten::gelu``, ``aten::gelu_backward``
``silu``, ``silu_``, ``log_sigmoid``   ``aten::silu``, ``aten::silu_``, ``aten::log_sigmoid``
``softplus``                         ``aten::softplus``
``leaky_relu``, ``leaky_relu_``        ``aten::leaky_relu``, ``aten::leaky_relu_``
=====================================  ===========================================

Examples
--------
>>> import gradstack_tensor as gt
>>> logp = gt.tensor([[-0.1, -2.5], [-1.2, -0.4]])
>>> gt.OPS["nll_loss"](logp, gt.tensor([0, 1]), None, "mean", -100).item()
0.25
>>> gt.OPS["gelu"](gt.tensor([0.0, 1.0]), "none").tolist()
[0.0, 0.8413447141647339]
"""

from __future__ import annotations

import math

import numpy as np

from . import _activation_kernels, _log_sigmoid_kernels, _loss_kernels, _nll_kernels, _norm_kernels
from . import _batch_norm_kernels as _bn_kernels
from . import dtypes as _dt
from ._dispatch import OPS
from ._index_kernels import take_rows as _take_rows
from ._kernels import fusable
from ._tensor import Tensor, _data, _wrap
from ._ufuncs import quiet

__all__: list[str] = []

_REDUCTIONS = ("none", "mean", "sum")

# torch's names of the scalar types, as its error messages spell them
_SCALAR_NAMES = _dt.SCALAR_TYPE_NAMES


def _scalar_name(a: np.ndarray) -> str:
    return _SCALAR_NAMES.get(a.dtype.name, a.dtype.name)


# -------------------------------------------------------------------------------------
# argument checks


def _tensor(x, op: str, what: str) -> np.ndarray:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{what}' must be Tensor, not {type(x).__name__}")
    return _data(x)


def _float(x, op: str, kernel: str, what: str = "input") -> np.ndarray:
    a = _tensor(x, op, what)
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(a)}'")
    return a


def _optional_float(x, op: str, what: str, like: np.ndarray):
    """An optional float tensor argument (a weight) of ``like``'s dtype, or None."""
    if x is None:
        return None
    a = _tensor(x, op, what)
    if a.dtype != like.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(like)} but found {_scalar_name(a)} ({op}'s "
            f"{what} must have the input's dtype)"
        )
    return a


def _reduction(reduction, op: str) -> str:
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction (in {op})")
    return reduction


def _int(value, op: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}(): argument '{what}' must be int, not {type(value).__name__}")
    return int(value)


def _number(value, op: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}(): argument '{what}' must be a number, not {type(value).__name__}")
    return float(value)


def _flag(value, op: str, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}(): argument '{what}' must be bool, not {type(value).__name__}")
    return bool(value)


def _result(value, dtype) -> Tensor:
    return _wrap(np.asarray(value, dtype=dtype))


def _reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    """``mean``/``sum``/``none`` of an elementwise loss (the mean of nothing is nan)."""
    if reduction == "none":
        return loss
    total = np.add.reduce(loss, axis=None)
    if reduction == "sum":
        return np.asarray(total, dtype=loss.dtype)
    return np.asarray(quiet(np.true_divide, total, loss.size), dtype=loss.dtype)


def _pair(input, target, op: str, kernel: str):
    """Input and target of a regression loss: float arrays promoted to one dtype (torch's
    result type), broadcast against each other."""
    x = _float(input, op, kernel)
    y = _tensor(target, op, "target")
    if y.dtype.kind not in "fiub":
        raise TypeError(f"{op}(): unsupported target dtype {y.dtype}")
    res = _dt.result_type([(input.dtype, input.ndim), (target.dtype, target.ndim)]).numpy
    if res.kind != "f":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(y)}'")
    x, y = x.astype(res, copy=False), y.astype(res, copy=False)
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        from ._shapes import broadcast_error

        raise broadcast_error(x.shape, y.shape) from None
    return x, y


# -------------------------------------------------------------------------------------
# negative log-likelihood


def _nll_target(target, op: str) -> np.ndarray:
    t = _tensor(target, op, "target")
    if t.dtype not in (np.int64, np.uint8):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(t)} (in {op}: "
            "class indices are int64; for class probabilities call cross_entropy)"
        )
    return t


def _nll_shapes(x: np.ndarray, t: np.ndarray, op: str) -> None:
    if op == "nll_loss":
        if not 1 <= x.ndim <= 2:
            raise RuntimeError("input tensor should be 1D or 2D")
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if x.ndim == 1:
            if t.ndim == 1 and t.shape[0] != 1:
                raise ValueError(
                    f"Expected input batch_size (1) to match target batch_size ({t.shape[0]})."
                )
        elif t.ndim != 1 or x.shape[0] != t.shape[0]:
            got = t.shape[0] if t.ndim == 1 else 1
            raise ValueError(
                f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({got})."
            )
        return
    if x.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of size: "
            f"{list(x.shape)}"
        )
    if t.ndim != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {t.ndim}"
        )
    if (x.shape[0],) + x.shape[2:] != t.shape:
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: {list(t.shape)})")


def nll_weights(target: np.ndarray, weight, n_classes: int, ignore_index: int, dtype):
    """The class indices to pick (0 where ignored) and the per-target weights of the NLL
    loss (``weight[target]``, 0 where ignored).  Raises IndexError for an index out of
    range."""
    t = target.astype(np.int64, copy=False)
    # (one pass when every target is a class: a negative index is a huge unsigned one)
    if t.size and not (0 <= ignore_index < n_classes) and (t.view(np.uint64) < n_classes).all():
        w = np.ones(t.shape, dtype=dtype) if weight is None else weight[t].astype(dtype)
        return t, w
    ignored = t == ignore_index
    bad = ((t < 0) | (t >= n_classes)) & ~ignored
    if bad.any():
        raise IndexError(f"Target {int(t[bad].flat[0])} is out of bounds.")
    any_ignored = bool(ignored.any())
    safe = np.where(ignored, 0, t) if any_ignored else t
    if weight is None:
        w = np.ones(t.shape, dtype=dtype)
    else:
        w = weight[safe].astype(dtype, copy=False)
    if any_ignored:
        w = np.where(ignored, 0, w).astype(dtype, copy=False)
    return safe, w


_NLL_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def nll_kernel_takes(x: np.ndarray, weight) -> bool:
    """Whether ``_nll_kernels`` takes an NLL loss of input `x` (at least 2-d) and `weight`:
    C-contiguous float32/float64 arrays (the others keep the numpy path)."""
    return (
        x.dtype in _NLL_KERNEL_DTYPES
        and x.flags.c_contiguous
        and x.flags.aligned
        and (weight is None or (weight.flags.c_contiguous and weight.flags.aligned))
    )


def nll_kernel_target(t: np.ndarray) -> np.ndarray:
    """Targets as ``_nll_kernels`` takes them: C-contiguous int64."""
    if t.dtype == np.int64 and t.flags.c_contiguous and t.flags.aligned:
        return t
    return np.ascontiguousarray(t, dtype=np.int64)


def _nll(op, input, target, weight, reduction, ignore_index):
    x = _float(input, op, "nll_loss_out_frame")
    t = _nll_target(target, op)
    _nll_shapes(x, t, op)
    reduction = _reduction(reduction, op)
    ignore_index = _int(ignore_index, op, "ignore_index")
    n_classes = x.shape[1] if x.ndim >= 2 else x.shape[0]
    w_arr = _optional_float(weight, op, "weight", x)
    if w_arr is not None and (w_arr.ndim != 1 or w_arr.shape[0] != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {list(w_arr.shape)}"
        )
    if x.ndim >= 2 and nll_kernel_takes(x, w_arr):
        # one pass over the targets (Note [The NLL kernels follow torch's loops])
        loss, _ = _nll_kernels.nll_loss_forward(
            x, nll_kernel_target(t), w_arr, reduction, ignore_index
        )
        return _wrap(loss.reshape(t.shape) if reduction == "none" else loss)
    if x.ndim == 1:
        t2 = t.reshape(())
        safe, w = nll_weights(t2, w_arr, n_classes, ignore_index, x.dtype)
        picked = x[safe]
    elif x.ndim == 2:
        safe, w = nll_weights(t, w_arr, n_classes, ignore_index, x.dtype)
        picked = x[np.arange(x.shape[0]), safe]
    else:  # (flat indices n C S + t S + s: take_along_axis was half of nll_loss2d's time)
        safe, w = nll_weights(t, w_arr, n_classes, ignore_index, x.dtype)
        n, s = x.shape[0], math.prod(x.shape[2:])
        base = np.arange(n, dtype=np.int64)[:, None] * (n_classes * s) + np.arange(s)
        flat = (base + safe.reshape(n, s) * s).reshape(safe.shape)
        picked = np.take(x if x.flags.c_contiguous else np.ascontiguousarray(x), flat)
    loss = quiet(np.multiply, -picked, w)
    if reduction == "none":
        return _result(loss, x.dtype)
    total = np.add.reduce(loss, axis=None)
    if reduction == "sum":
        return _result(total, x.dtype)
    return _result(quiet(np.true_divide, total, np.add.reduce(w, axis=None)), x.dtype)


def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    """``-input[n, target[n]] * weight[target[n]]``, reduced (``mean`` divides by the total
    weight of the targets that are not ``ignore_index``); 1-D or 2-D ``input``."""
    return _nll("nll_loss", input, target, weight, reduction, ignore_index)


def nll_loss2d(input, target, weight=None, reduction="mean", ignore_index=-100):
    """:func:`nll_loss` over a batch of images: input ``(N, C, H, W)``, target ``(N, H, W)``."""
    return _nll("nll_loss2d", input, target, weight, reduction, ignore_index)


OPS["nll_loss"].set_kernel(nll_loss)
OPS["nll_loss2d"].set_kernel(nll_loss2d)


# -------------------------------------------------------------------------------------
# regression and binary classification losses


def mse_loss(input, target, reduction="mean"):
    """``(input - target) ** 2``, reduced."""
    x, y = _pair(input, target, "mse_loss", "mse_cpu")
    reduction = _reduction(reduction, "mse_loss")
    d = quiet(np.subtract, x, y)
    return _result(_reduce(quiet(np.multiply, d, d), reduction), x.dtype)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``; ``d = input - target``."""
    x, y = _pair(input, target, "smooth_l1_loss", "smooth_l1_cpu")
    reduction = _reduction(reduction, "smooth_l1_loss")
    beta = _number(beta, "smooth_l1_loss", "beta")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta > 0 and fusable(x, y):  # one C pass (Note [Loss kernels follow torch's formulas])
        return _result(_reduce(_loss_kernels.smooth_l1(x, y, beta), reduction), x.dtype)
    z = np.abs(quiet(np.subtract, x, y))
    with np.errstate(all="ignore"):
        loss = np.where(z < beta, 0.5 * z * z / beta if beta > 0 else z, z - 0.5 * beta)
    return _result(_reduce(loss.astype(x.dtype, copy=False), reduction), x.dtype)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    x, y = _pair(input, target, "huber_loss", "huber_cpu")
    reduction = _reduction(reduction, "huber_loss")
    delta = _number(delta, "huber_loss", "delta")
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if fusable(x, y):  # one C pass (Note [Loss kernels follow torch's formulas])
        return _result(_reduce(_loss_kernels.huber(x, y, delta), reduction), x.dtype)
    z = np.abs(quiet(np.subtract, x, y))
    with np.errstate(all="ignore"):
        loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _result(_reduce(loss.astype(x.dtype, copy=False), reduction), x.dtype)


def _same_dtype_target(input, target, op):
    x = _float(input, op, "binary_cross_entropy")
    y = _tensor(target, op, "target")
    if y.dtype != x.dtype:
        raise RuntimeError(
            f"Found dtype {_scalar_name(y)} but expected {_scalar_name(x)} (the target of {op} "
            "must have the input's dtype)"
        )
    return x, y


def _broadcast_weight(w, shape, op, what):
    if w is None:
        return None
    try:
        return np.broadcast_to(w, np.broadcast_shapes(w.shape, shape))
    except ValueError:
        raise RuntimeError(
            f"{op}: the {what} of shape {list(w.shape)} cannot be broadcast to the input's "
            f"shape {list(shape)}"
        ) from None


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """``-weight * (target * log(input) + (1 - target) * log(1 - input))``, each log
    clamped to >= -100 as torch does; ``input`` must lie in [0, 1]."""
    op = "binary_cross_entropy"
    x, y = _same_dtype_target(input, target, op)
    w = _broadcast_weight(_optional_float(weight, op, "weight", x), x.shape, op, "weight")
    reduction = _reduction(reduction, op)
    if x.shape != y.shape:
        raise ValueError(
            f"Using a target size ({list(y.shape)}) that is different to the input size "
            f"({list(x.shape)}) is deprecated. Please ensure they have the same size."
        )
    if x.size and not bool(((x >= 0) & (x <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(all="ignore"):
        log_x = np.maximum(np.log(x), -100)
        log_1mx = np.maximum(np.log1p(-x), -100)
        loss = (y - 1) * log_1mx - y * log_x
        if w is not None:
            loss = loss * w
    return _result(_reduce(np.asarray(loss, dtype=x.dtype), reduction), x.dtype)


def log_sigmoid_array(x: np.ndarray) -> np.ndarray:
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, stable for any ``x``."""
    with np.errstate(all="ignore"):
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):
    """``(1 - target) * input - log_weight * log_sigmoid(input)`` with ``log_weight = 1 +
    (pos_weight - 1) * target``, times ``weight``, reduced (torch's stable formula)."""
    op = "binary_cross_entropy_with_logits"
    x = _float(input, op, op)
    y = _tensor(target, op, "target")
    if y.dtype != x.dtype:
        raise RuntimeError(
            f"result type {_scalar_name(x)} can't be cast to the desired output type "
            f"{_scalar_name(y)} (the target of {op} must have the input's dtype)"
        )
    if x.shape != y.shape:
        raise ValueError(
            f"Target size ({list(y.shape)}) must be the same as input size ({list(x.shape)})"
        )
    w = _broadcast_weight(_optional_float(weight, op, "weight", x), x.shape, op, "weight")
    pw = _broadcast_weight(
        _optional_float(pos_weight, op, "pos_weight", x), x.shape, op, "pos_weight"
    )
    reduction = _reduction(reduction, op)
    with np.errstate(all="ignore"):
        ls = log_sigmoid_array(x)
        if pw is not None:
            ls = ls * ((pw - 1) * y + 1)
        loss = (1 - y) * x - ls
        if w is not None:
            loss = loss * w
    return _result(_reduce(np.asarray(loss, dtype=x.dtype), reduction), x.dtype)


OPS["mse_loss"].set_kernel(mse_loss)
OPS["smooth_l1_loss"].set_kernel(smooth_l1_loss)
OPS["huber_loss"].set_kernel(huber_loss)
OPS["binary_cross_entropy"].set_kernel(binary_cross_entropy)
OPS["binary_cross_entropy_with_logits"].set_kernel(binary_cross_entropy_with_logits)


# -------------------------------------------------------------------------------------
# normalisation


def _normalized_shape(normalized_shape, x: np.ndarray):
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        normalized_shape = (int(normalized_shape),)
    if not isinstance(normalized_shape, (tuple, list)) or not all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in normalized_shape
    ):
        raise TypeError(
            "layer_norm(): argument 'normalized_shape' must be a tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    shape = tuple(int(s) for s in normalized_shape)
    if len(shape) == 0:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            "least one element, but got normalized_shape = []"
        )
    if x.ndim < len(shape) or x.shape[x.ndim - len(shape) :] != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size{list(x.shape)}"
        )
    return shape


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the last ``len(normalized_shape)``
    dims (biased variance), as torch's ``native_layer_norm``."""
    op = "layer_norm"
    x = _float(input, op, "LayerNormKernelImpl")
    shape = _normalized_shape(normalized_shape, x)
    eps = _number(eps, op, "eps")
    params = []
    for what, p in (("weight", weight), ("bias", bias)):
        a = _optional_float(p, op, what, x)
        if a is not None and a.shape != shape:
            raise RuntimeError(
                f"Expected {what} to be of same shape as normalized_shape, but got {what} of "
                f"shape {list(a.shape)} and normalized_shape = {list(shape)}"
            )
        params.append(a)
    normalized = math.prod(shape)
    if x.dtype in (np.float32, np.float64) and normalized:
        # Note [Layer norm's moments] in _norm_kernels.pyx: one pass per row
        w, b = (None if a is None else np.ascontiguousarray(a) for a in params)
        return _wrap(_norm_kernels.layer_norm(np.ascontiguousarray(x), normalized, w, b, eps))
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    with np.errstate(all="ignore"):
        mean = x.mean(axis=axes, keepdims=True)
        centered = x - mean
        var = (centered * centered).mean(axis=axes, keepdims=True)
        out = centered * (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
        if params[0] is not None:
            out = out * params[0]
        if params[1] is not None:
            out = out + params[1]
    return _result(out, x.dtype)


OPS["layer_norm"].set_kernel(layer_norm)


def _stats_axes(ndim: int) -> tuple:
    """The dims batch norm reduces over: all but the channel dim 1."""
    return (0,) + tuple(range(2, ndim))


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch normalisation over dim 1 of an ``(N, C, *)`` input (torch's
    ``native_batch_norm``).

    In training (or without running statistics) the batch mean and biased variance
    normalise the input, and the running statistics, when given, are updated in place:
    ``running = (1 - momentum) * running + momentum * batch`` with the unbiased variance.
    In evaluation the running statistics normalise it.
    """
    op = "batch_norm"
    x = _float(input, op, "batch_norm")
    if x.ndim < 2:
        raise RuntimeError(
            f"batch_norm: expected an input of at least 2 dims (N, C, *), got {x.ndim}"
        )
    training = _flag(training, op, "training")
    momentum = _number(momentum, op, "momentum")
    eps = _number(eps, op, "eps")
    c = x.shape[1]
    arrays = []
    for what, p in (
        ("weight", weight),
        ("bias", bias),
        ("running_mean", running_mean),
        ("running_var", running_var),
    ):
        a = _optional_float(p, op, what, x)
        if a is not None and a.shape != (c,):
            raise RuntimeError(f"{what} should contain {c} elements not {a.size}")
        arrays.append(a)
    w, b, rm, rv = arrays
    if (rm is None) != (rv is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be given together")
    axes = _stats_axes(x.ndim)
    shape = [1] * x.ndim
    shape[1] = c
    n = x.size // c if c else 0
    use_batch = training or rm is None
    if x.dtype in _C_FLOATS and x.size:
        return _batch_norm_c(
            np.ascontiguousarray(x),
            w,
            b,
            rm,
            rv,
            running_mean,
            running_var,
            use_batch,
            training,
            momentum,
            eps,
        )
    with np.errstate(all="ignore"):
        if use_batch:
            mean = x.mean(axis=axes)
            centered = x - mean.reshape(shape)
            var = (centered * centered).mean(axis=axes)
            invstd = (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)
            if training and rm is not None:
                if not rm.flags.writeable or not rv.flags.writeable:
                    raise RuntimeError("batch_norm: the running statistics are not writable")
                unbiased = var * (n / (n - 1)) if n > 1 else np.full_like(var, np.nan)
                rm[...] = (1 - momentum) * rm + momentum * mean
                rv[...] = (1 - momentum) * rv + momentum * unbiased
                running_mean._bump_version("batch_norm")
                running_var._bump_version("batch_norm")
            out = centered * invstd.reshape(shape)
        else:
            invstd = (1.0 / np.sqrt(rv + eps)).astype(x.dtype, copy=False)
            out = (x - rm.reshape(shape)) * invstd.reshape(shape)
        if w is not None:
            out = out * w.reshape(shape)
        if b is not None:
            out = out + b.reshape(shape)
    return _result(out, x.dtype)


_C_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _batch_norm_c(x, w, b, rm, rv, running_mean, running_var, use_batch, training, momentum, eps):
    """``batch_norm`` of a C-contiguous float32/float64 input by the C passes of
    ``_batch_norm_kernels.pyx`` (Note [Batch norm follows torch's CPU kernel]): the
    statistics summed in float64, the output ``x * alpha + beta`` per channel."""
    dtype = x.dtype
    with np.errstate(all="ignore"):
        if use_batch:
            mean64, var64 = _bn_kernels.batch_norm_stats(x)
            invstd = (1.0 / np.sqrt(var64 + eps)).astype(dtype)
            mean = mean64.astype(dtype)
            if training and rm is not None:
                if not rm.flags.writeable or not rv.flags.writeable:
                    raise RuntimeError("batch_norm: the running statistics are not writable")
                n = x.size // x.shape[1]
                unbiased = var64 * (n / (n - 1)) if n > 1 else np.full_like(var64, np.nan)
                rm[...] = momentum * mean64 + (1 - momentum) * rm
                rv[...] = momentum * unbiased + (1 - momentum) * rv
                running_mean._bump_version("batch_norm")
                running_var._bump_version("batch_norm")
        else:
            mean = rm.astype(dtype)
            invstd = (dtype.type(1) / np.sqrt(rv.astype(dtype) + dtype.type(eps))).astype(dtype)
        alpha = invstd * w if w is not None else invstd
        beta = (b - mean * alpha) if b is not None else -(mean * alpha)
        out = _bn_kernels.batch_norm_apply(
            x, np.ascontiguousarray(alpha, dtype), np.ascontiguousarray(beta, dtype)
        )
    return _wrap(out)


OPS["batch_norm"].set_kernel(batch_norm)


# -------------------------------------------------------------------------------------
# embedding


def _indices(indices, op):
    i = _tensor(indices, op, "indices")
    if i.dtype not in (np.int64, np.int32):
        name = {"Float": "FloatTensor", "Double": "DoubleTensor"}.get(
            _scalar_name(i), _scalar_name(i) + "Tensor"
        )
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{name} instead (while checking arguments for "
            f"{op})"
        )
    return i


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``weight[indices]``: the rows of ``weight`` (``(num_embeddings, dim)``) picked by
    ``indices``; ``padding_idx`` and ``scale_grad_by_freq`` only change the gradient."""
    op = "embedding"
    w = _tensor(weight, op, "weight")
    i = _indices(indices, op)
    _int(padding_idx, op, "padding_idx")
    _flag(scale_grad_by_freq, op, "scale_grad_by_freq")
    if _flag(sparse, op, "sparse"):
        raise RuntimeError(
            "embedding(sparse=True) is not supported: gradstack has no sparse tensors"
        )
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if w.flags.c_contiguous and w.flags.aligned and i.dtype.isnative and not w.dtype.hasobject:
        try:  # one pass: the bounds, then the rows copied
            return _wrap(_take_rows(w, i if i.flags.c_contiguous and i.flags.aligned else i.copy()))
        except IndexError:
            raise IndexError("index out of range in self") from None
    if i.size and (i.min() < 0 or i.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    return _wrap(w[i])


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescale in place the rows of ``weight`` named in ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm`` to norm ``max_norm`` (torch's ``max_norm / (norm + 1e-7)``)."""
    op = "embedding_renorm_"
    w = _float(weight, op, "embedding_renorm_cpu_", "weight")
    i = _indices(indices, op)
    max_norm = _number(max_norm, op, "max_norm")
    norm_type = _number(norm_type, op, "norm_type")
    if w.ndim != 2:
        raise RuntimeError("embedding_renorm_: 'weight' must be 2-D")
    if not w.flags.writeable:
        raise RuntimeError("embedding_renorm_: the weight is not writable (an expanded view?)")
    if i.size and (i.min() < 0 or i.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    rows = np.unique(i.reshape(-1))
    with np.errstate(all="ignore"):
        sub = w[rows]
        if norm_type == math.inf:
            norms = np.abs(sub).max(axis=1)
        elif norm_type == 0:
            norms = (sub != 0).sum(axis=1).astype(w.dtype)
        else:
            norms = (np.abs(sub) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
        big = norms > max_norm
        scale = (max_norm / (norms + 1e-7)).astype(w.dtype, copy=False)
    w[rows[big]] = sub[big] * scale[big, None]
    weight._bump_version("embedding_renorm_")
    return weight


OPS["embedding"].set_kernel(embedding)
OPS["embedding_renorm_"].set_kernel(embedding_renorm_)


# -------------------------------------------------------------------------------------
# activations

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_COEF = 0.044715
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

_erf_impl = None
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def unary_kernel(kernel, x: np.ndarray, *args):
    """``kernel(x, *args)`` (an elementwise kernel of ``_activation_kernels``) in ``x``'s
    layout, or None when ``x``'s dtype is not float32/float64 (native order).

    Note [Activation kernels keep the input's layout]
    The kernels take C-contiguous arrays.  A dense array in another order (a transpose, a
    permutation of dims) is run in its memory order and the result permuted back, so that
    the output has the input's strides, as numpy's (and torch's) elementwise loops give;
    any other layout (a slice with steps, an expanded view) is copied to a C-contiguous
    array first, and the result is C-contiguous.
    """
    if fusable(x):
        return kernel(x, *args)
    if not isinstance(x, np.ndarray) or x.dtype not in _KERNEL_DTYPES:
        return None
    order = np.argsort([-abs(st) for st in x.strides], kind="stable")
    xt = x.transpose(order)
    if xt.flags.c_contiguous and xt.flags.aligned:
        return kernel(xt, *args).transpose(np.argsort(order))
    return kernel(np.ascontiguousarray(x), *args)


def binary_kernel(kernel, g: np.ndarray, x: np.ndarray, *args):
    """``kernel(g, x, *args)`` (a backward kernel), or None unless ``g`` and ``x`` share a
    float32/float64 dtype and a shape (other layouts are copied C-contiguous first)."""
    if fusable(g, x):
        return kernel(g, x, *args)
    if not (isinstance(x, np.ndarray) and isinstance(g, np.ndarray)):
        return None
    if x.dtype not in _KERNEL_DTYPES or g.dtype != x.dtype or g.shape != x.shape:
        return None
    return kernel(np.ascontiguousarray(g), np.ascontiguousarray(x), *args)


def erf_array(x: np.ndarray) -> np.ndarray:
    """The error function elementwise, in ``x``'s dtype.

    Note [erf without a C kernel]
    numpy has no erf.  float32 and float64 take ``_activation_kernels.erf`` (Note
    [float32 erf, exp and tanh in double] there); other dtypes take scipy's (correctly
    rounded to ~1 ulp) when scipy is installed, else the standard library's ``math.erf``
    element by element (exact, but ~100 ns per element).
    """
    r = unary_kernel(_activation_kernels.erf, x)
    if r is not None:
        return r
    global _erf_impl
    if _erf_impl is None:
        try:
            from scipy.special import erf as scipy_erf

            _erf_impl = scipy_erf
        except ImportError:  # pragma: no cover - scipy is in the dev environment
            _erf_impl = np.frompyfunc(math.erf, 1, 1)
    if x.dtype == np.float16:  # scipy has no half-precision loop
        return np.asarray(_erf_impl(x.astype(np.float32)), dtype=np.float16)
    return np.asarray(_erf_impl(x), dtype=x.dtype)


def _approximate(value, op) -> str:
    if value not in ("none", "tanh"):
        raise RuntimeError(
            f"approximate argument must be either none or tanh (got {value!r} in {op})."
        )
    return value


def gelu_array(x: np.ndarray, approximate: str) -> np.ndarray:
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            inner = _SQRT_2_OVER_PI * (x + _GELU_TANH_COEF * x * x * x)
            return (0.5 * x * (1 + np.tanh(inner))).astype(x.dtype, copy=False)
        return (0.5 * x * (1 + erf_array((x * _INV_SQRT_2).astype(x.dtype, copy=False)))).astype(
            x.dtype, copy=False
        )


def gelu_derivative_array(x: np.ndarray, approximate: str) -> np.ndarray:
    """``d gelu(x) / dx`` elementwise."""
    with np.errstate(all="ignore"):
        if approximate == "tanh":
            x2 = x * x
            t = np.tanh(_SQRT_2_OVER_PI * (x + _GELU_TANH_COEF * x2 * x))
            du = _SQRT_2_OVER_PI * (1 + 3 * _GELU_TANH_COEF * x2)
            d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du
        else:
            cdf = 0.5 * (1 + erf_array((x * _INV_SQRT_2).astype(x.dtype, copy=False)))
            d = cdf + x * _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return d.astype(x.dtype, copy=False)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (``approximate="none"``, Phi the normal CDF) or its tanh approximation
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``."""
    x = _float(input, "gelu", "GeluKernelImpl")
    approximate = _approximate(approximate, "gelu")
    r = unary_kernel(_activation_kernels.gelu, x, approximate)
    return _wrap(gelu_array(x, approximate) if r is None else r)


def gelu_backward(grad_output, input, approximate="none"):
    """``grad_output * gelu'(input)`` (torch's ``gelu_backward``, GeLU's backward formula)."""
    g = _float(grad_output, "gelu_backward", "GeluBackwardKernelImpl", "grad_output")
    x = _float(input, "gelu_backward", "GeluBackwardKernelImpl")
    approximate = _approximate(approximate, "gelu_backward")
    r = binary_kernel(_activation_kernels.gelu_backward, g, x, approximate)
    if r is not None:
        return _wrap(r)
    res = np.promote_types(g.dtype, x.dtype)
    d = gelu_derivative_array(x.astype(res, copy=False), approximate)
    try:
        return _wrap(quiet(np.multiply, g.astype(res, copy=False), d))
    except ValueError:
        from ._shapes import broadcast_error

        raise broadcast_error(g.shape, x.shape) from None


def silu(input):
    """``x * sigmoid(x)``, computed as ``x / (1 + exp(-x))``."""
    x = _float(input, "silu", "silu_cpu")
    r = unary_kernel(_activation_kernels.silu, x)
    if r is not None:
        return _wrap(r)
    with np.errstate(all="ignore"):
        return _wrap((x / (1 + np.exp(-x))).astype(x.dtype, copy=False))


def silu_(input):
    """In-place :func:`silu`."""
    x = _float(input, "silu_", "silu_cpu")
    _check_writable(x, "silu_")
    r = unary_kernel(_activation_kernels.silu, x)
    if r is not None:
        x[...] = r
    else:
        with np.errstate(all="ignore"):
            x[...] = x / (1 + np.exp(-x))
    input._bump_version("silu_")
    return input


def log_sigmoid(input):
    """``log(sigmoid(x))``, stable for large ``|x|``."""
    x = _float(input, "log_sigmoid", "log_sigmoid_cpu")
    r = unary_kernel(_log_sigmoid_kernels.log_sigmoid, x)  # Note [log_sigmoid in one pass]
    if r is not None:
        return _wrap(r)
    return _wrap(log_sigmoid_array(x).astype(x.dtype, copy=False))


def softplus(input, beta=1.0, threshold=20.0):
    """``log1p(exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold`` (torch's
    ``softplus_kernel``, in the input's dtype): one op, four passes of numpy over the
    elements (the composite it replaces made seven ops and their nodes)."""
    x = _float(input, "softplus", "softplus_forward")
    beta, threshold = float(beta), float(threshold)
    # one pass (Note [softplus as log_sigmoid's mirror] in _log_sigmoid_kernels.pyx)
    r = unary_kernel(_log_sigmoid_kernels.softplus, x, beta, threshold)
    if r is not None:
        return _wrap(r)
    out = np.empty(x.shape, dtype=x.dtype)  # (an array also for 0-d input: ufuncs' out=)
    np.multiply(x, beta, out=out)
    above = out > threshold
    with np.errstate(over="ignore"):
        np.exp(out, out=out)
    np.log1p(out, out=out)
    if beta != 1.0:
        np.divide(out, beta, out=out)
    np.copyto(out, x, where=above)
    return _wrap(out)


def _check_writable(x: np.ndarray, op: str) -> None:
    if not x.flags.writeable:
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded view). Please clone() the "
            "tensor before performing the operation."
        )


def _leaky(x: np.ndarray, slope: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x > 0, x, x * np.asarray(slope, dtype=x.dtype))


def leaky_relu(input, negative_slope=0.01):
    """``x`` where ``x > 0``, ``negative_slope * x`` elsewhere."""
    x = _float(input, "leaky_relu", "leaky_relu_cpu")
    slope = _number(negative_slope, "leaky_relu", "negative_slope")
    r = unary_kernel(_activation_kernels.leaky_relu, x, slope) if math.isfinite(slope) else None
    return _wrap(_leaky(x, slope).astype(x.dtype, copy=False) if r is None else r)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    x = _float(input, "leaky_relu_", "leaky_relu_cpu")
    slope = _number(negative_slope, "leaky_relu_", "negative_slope")
    _check_writable(x, "leaky_relu_")
    r = unary_kernel(_activation_kernels.leaky_relu, x, slope) if math.isfinite(slope) else None
    x[...] = _leaky(x, slope) if r is None else r
    input._bump_version("leaky_relu_")
    return input


def set_kernels(*kernels) -> None:
    """Bind each function as the kernel of the op of its name."""
    for kernel in kernels:
        OPS[kernel.__name__].set_kernel(kernel)


set_kernels(
    gelu, gelu_backward, silu, silu_, log_sigmoid, softplus, leaky_relu, leaky_relu_
)  # fmt: skip


# the ops of this module (the tests walk them)
NN_OPS = (
    "nll_loss",
    "nll_loss2d",
    "mse_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "layer_norm",
    "batch_norm",
    "embedding",
    "embedding_renorm_",
    "gelu",
    "gelu_backward",
    "silu",
    "silu_",
    "log_sigmoid",
    "softplus",
    "leaky_relu",
    "leaky_relu_",
)
