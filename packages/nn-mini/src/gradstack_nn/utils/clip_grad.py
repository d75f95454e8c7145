"""Gradient clipping, as ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([3.0, 4.0]))
>>> w.grad = gt.tensor([3.0, 4.0])
>>> clip_grad_norm_([w], max_norm=1.0).item()
5.0
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
>>> w.grad = gt.tensor([3.0, -0.5])
>>> _ = clip_grad_value_([w], 1.0)
>>> w.grad.tolist()
[1.0, -0.5]
"""

from __future__ import annotations

import types
import warnings

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.kernels import sum_of_squares as _sum_of_squares

from ..zeroed_grads import has_grad

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _as_list(parameters, stacklevel: int = 3) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)
    if is_generator and len(parameters) == 0:
        warnings.warn(
            "`parameters` is an empty generator, no gradient clipping will occur.",
            stacklevel=stacklevel,
        )
    return parameters


def _total_norm(grads: list, norm_type: float, error_if_nonfinite: bool) -> Tensor:
    """The ``norm_type``-norm of the per-gradient norms (torch's ``_get_total_norm``)."""
    if len(grads) == 0:
        return gt.tensor(0.0)
    norms = [g.norm(norm_type) for g in grads]
    dtype = norms[0].dtype
    for n in norms[1:]:
        dtype = gt.promote_types(dtype, n.dtype)
    total = gt.stack([n.to(dtype) for n in norms]).norm(norm_type)
    return _checked_total(total, norm_type, error_if_nonfinite)


def _checked_total(total: Tensor, norm_type: float, error_if_nonfinite: bool) -> Tensor:
    if error_if_nonfinite and not bool(gt.isfinite(total).item()):
        raise RuntimeError(
            f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grad_norm_(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm (the norm
    of the vector of every gradient's norm) is at most ``max_norm``.

    The scale is ``min(1, max_norm / (total_norm + 1e-6))``, as torch.  Returns the total
    norm before clipping (a 0-d tensor).  Parameters without a gradient (None, or zeros of
    the default ``zero_grad()`` not written since) are skipped, as torch skips None.
    """
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if has_grad(p)]
    with ag.no_grad():
        arrays = _fused_arrays(grads, float(norm_type))
        if arrays is not None:
            return _clip_fused(grads, arrays, float(max_norm), error_if_nonfinite)
        total = _total_norm(grads, float(norm_type), error_if_nonfinite)
        if grads:
            coef = (float(max_norm) / (total + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef)
    return total


# Note [clip_grad_norm_ on the arrays]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# clip_grad_norm_ is two tensor ops a gradient (its norm, the in-place scaling), ~5 us of
# dispatch each: ~0.5 ms of a 54-parameter GPT's step beyond the two passes over memory.
# For the common case (the 2-norm of float32 or float64 gradients of one dtype, each
# C-contiguous) the per-gradient work is done on the arrays: each norm as ``Tensor.norm``
# computes it (Note [The 2-norm in one pass] in tensor-core's _vector_norm_kernels.pyx:
# the sum of squares in double, its square root rounded once), the scaling as ``mul_``'s
# float multiply by the same 0-d coefficient in place, each gradient's version bumped as
# ``mul_`` bumps it.  The total norm and the coefficient stay tensor ops (``stack``,
# ``norm``, ``+``, ``/``, ``clamp``): the same values, bit for bit.


def _fused_arrays(grads: list, norm_type: float):
    """The gradients' arrays when clip_grad_norm_ may work on them (Note [clip_grad_norm_
    on the arrays]), else None."""
    if norm_type != 2.0 or not grads:
        return None
    arrays = [_data(g) for g in grads if type(g) is Tensor]
    if len(arrays) != len(grads):
        return None
    dtype = arrays[0].dtype
    if dtype not in _FUSED_DTYPES:
        return None
    for a in arrays:
        if a.dtype != dtype or not (a.flags.c_contiguous and a.flags.aligned and a.flags.writeable):
            return None
    return arrays


_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _clip_fused(grads: list, arrays: list, max_norm: float, error_if_nonfinite: bool) -> Tensor:
    dtype = arrays[0].dtype
    # each gradient's norm rounded once to its dtype, the vector of them made at once (it
    # was a 0-d tensor per gradient, then ``stack``: the same array, ~5 us a gradient more)
    sums = np.fromiter((_sum_of_squares(a) for a in arrays), np.float64, len(arrays))
    norms = gt.from_numpy(np.sqrt(sums).astype(dtype))
    total = _checked_total(norms.norm(2.0), 2.0, error_if_nonfinite)
    coef = _data((max_norm / (total + 1e-6)).clamp(max=1.0))
    for g, a in zip(grads, arrays):
        np.multiply(a, coef, out=a)
        g._bump_version("clip_grad_norm_")
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    parameters = _as_list(parameters)
    with ag.no_grad():
        for p in parameters:
            if has_grad(p):
                p.grad.clamp_(min=-clip_value, max=clip_value)


# -- torch's split form of clip_grad_norm_ and the deprecated alias ---------------------

__all__ += ["get_total_norm", "clip_grads_with_norm_", "clip_grad_norm"]


def get_total_norm(
    tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach=None
) -> Tensor:
    """The ``norm_type``-norm of the norms of ``tensors`` (any tensors, gradients or not),
    as ``torch.nn.utils.get_total_norm``: the first half of :func:`clip_grad_norm_`.

    Returns ``tensor(0.)`` for no tensors; raises when the norm is not finite and
    ``error_if_nonfinite``.

    >>> import gradstack_tensor as gt
    >>> get_total_norm([gt.tensor([3.0]), gt.tensor([4.0])]).item()
    5.0
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    with ag.no_grad():
        return _total_norm(tensors, float(norm_type), error_if_nonfinite)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``, as ``torch.nn.utils.clip_grads_with_norm_``: the second half of
    :func:`clip_grad_norm_`, for a ``total_norm`` computed elsewhere (over several groups
    of parameters, or after a reduction across processes).

    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> w = Parameter(gt.tensor([3.0, 4.0]))
    >>> w.grad = gt.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([w], 1.0, gt.tensor(10.0))
    >>> [round(v, 4) for v in w.grad.tolist()]
    [0.3, 0.4]
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if has_grad(p)]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with ag.no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm(
    parameters,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach=None,
) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (with torch's ``FutureWarning``).

    >>> import warnings
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> w = Parameter(gt.tensor([3.0, 4.0]))
    >>> w.grad = gt.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     clip_grad_norm([w], 1.0).item()
    5.0
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
