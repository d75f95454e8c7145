"""``Adam``, step for step as ``torch.optim.Adam`` computes it (``AdamW`` is in ``adamw.py``).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([1.0, -2.0]))
>>> opt = Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> [round(v, 4) for v in w.detach().tolist()]   # the first step moves each weight by lr
[0.9, -1.9]
>>> sorted(opt.state_dict()["state"][0])
['exp_avg', 'exp_avg_sq', 'step']
"""

from __future__ import annotations

import functools
import weakref

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of as _data

from ._ops import addcdiv_, addcmul_, lerp_
from .optimizer import (
    Optimizer,
    check_betas,
    check_flags,
    check_nonnegative,
    lr_betas_eps,
    params_with_state,
    real_views,
    scalar,
    with_weight_decay,
    zeros_state,
)

try:
    from gradstack_tensor.kernels import adam_update_ as _adam_update_
    from gradstack_tensor.kernels import fusable as _fusable
except ImportError:  # pragma: no cover - tensor-core built without its kernels
    _fusable = _adam_update_ = None

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam (Kingma and Ba), torch's single-tensor algorithm::

        g = -grad if maximize else grad
        if weight_decay: param *= 1 - lr * wd (decoupled, AdamW)  or  g = g + wd * param
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        if amsgrad: v_max = max(v_max, v), used in place of v below
        param -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Parameters
    ----------
    params : iterable
        Parameters, or dicts defining parameter groups.
    lr : float, default 1e-3
    betas : (float, float), default (0.9, 0.999)
    eps : float, default 1e-8
    weight_decay : float, default 0
        L2 penalty added to the gradient (``decoupled_weight_decay=True``: AdamW's decay).
    amsgrad : bool, default False
    maximize : bool, default False
    foreach, fused, capturable : optional
        Accepted for torch compatibility (gradstack runs the single-tensor algorithm, which
        torch also runs for CPU tensors by default); ``capturable=True`` and
        ``differentiable=True`` raise.

    Notes
    -----
    Parameters whose ``.grad`` is None are skipped (their state is not created).  The state
    of each parameter is ``step`` (a float32 0-d tensor, as torch), ``exp_avg``,
    ``exp_avg_sq`` and, with amsgrad, ``max_exp_avg_sq``.
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ) -> None:
        check_nonnegative(lr=lr, eps=eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        check_flags(type(self).__name__, capturable=capturable, differentiable=differentiable)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = {
            "lr": lr,
            "betas": tuple(scalar(b) for b in betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr, beta1, beta2, eps = lr_betas_eps(group)
        amsgrad = group["amsgrad"]
        decoupled = group.get("decoupled_weight_decay", False)
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
        for p, state in params_with_state(self, group, zeros_state(names)):
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            max_sq = state.get("max_exp_avg_sq") if amsgrad else None
            if (
                _adam_update_ is not None
                and (max_sq is not None or not amsgrad)
                and _fast_path(p, exp_avg, exp_avg_sq, max_sq)
            ):
                _kernel_step(p, state, group, lr, beta1, beta2, decoupled)
                continue
            grad = -p.grad if group["maximize"] else p.grad
            param = p
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]
            if p.is_complex():  # Note [Complex parameters are stepped as real pairs]
                param, grad, exp_avg, exp_avg_sq, max_sq = real_views(
                    p, grad, exp_avg, exp_avg_sq, max_sq
                )
            state["step"].add_(1)
            grad = with_weight_decay(param, grad, group, lr)
            lerp_(exp_avg, grad, 1 - beta1)
            addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
            step = state["step"].item()
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            if amsgrad:
                assert max_sq is not None  # (taken from the state above)
                max_sq.copy_(gt.maximum(max_sq, exp_avg_sq))
                denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            else:
                denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
            addcdiv_(param, exp_avg, denom, value=-step_size)


def _fast_path(p: Tensor, *states) -> bool:
    """Whether the fused kernel applies: float32/float64 arrays of one shape, C-contiguous,
    the parameter writable and not a view, the states separate arrays (Note [Adam's fast
    path])."""
    # Note [Adam's fast path]
    # ``adam_update_`` (tensor-core's _adam_update.pyx) does the whole step of one
    # parameter in one pass, with torch's operations in torch's order (Note [Adam follows
    # torch's _single_tensor_adam]), instead of ten tensor ops and their temporaries.  It
    # writes the arrays directly, so it takes only what it can write safely: parameters
    # that are not views (as SGD's fast path), states that are C-contiguous float arrays
    # of the parameter's dtype and share no memory.  Complex parameters, float16, views
    # and odd layouts take the tensor ops.  The versions of the tensors written are bumped
    # as their in-place ops would.
    pa, ga = _data(p), _data(p.grad)
    if p._base is not None or not pa.flags.writeable or not _fusable(pa, ga):
        return False
    arrays = [_data(s) for s in states if s is not None]
    if not _fusable(pa, *arrays) or not all(a.flags.writeable for a in arrays):
        return False
    # Note [Adam's disjoint arrays are checked once]
    # ``np.shares_memory`` costs ~1.4 us a pair, six pairs a parameter: 0.5 ms of a
    # 54-parameter GPT's step, for arrays that are the same objects every step.  A
    # parameter whose array and state arrays are the objects found disjoint before is
    # disjoint still (an array's memory does not move), so the verdict is kept per
    # parameter with the arrays it was found for, and checked again when any changes
    # (``p.data = ...``, ``load_state_dict``).
    # (Keyed by id, the entry holding a weak reference to the parameter, dropped with it:
    # a Tensor's == is elementwise, so it cannot key a WeakKeyDictionary.)
    key = (pa, *arrays)
    seen = _DISJOINT.get(id(p))
    if (
        seen is not None
        and seen[0]() is p
        and len(seen[1]) == len(key)
        and all(a is b for a, b in zip(seen[1], key))
    ):
        return True
    if any(np.shares_memory(a, b) for i, a in enumerate(key) for b in arrays[i:]):
        return False
    ident = id(p)
    _DISJOINT[ident] = (weakref.ref(p, functools.partial(_forget, ident)), key)
    return True


def _forget(ident: int, _ref: object) -> None:
    """Drop a dead parameter's entry of ``_DISJOINT`` (a weak reference's callback)."""
    _DISJOINT.pop(ident, None)


_DISJOINT: dict[int, tuple] = {}


def _kernel_step(p, state, group, lr, beta1, beta2, decoupled) -> None:
    """One Adam step of ``p`` by the fused kernel; ``step`` is incremented as torch's
    float32 ``state["step"]`` (its array, then its version)."""
    step_t = state["step"]
    step_a = _data(step_t)
    step_a += 1
    step_t._bump_version("Adam.step")
    amsgrad = group["amsgrad"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    max_sq = state["max_exp_avg_sq"] if amsgrad else None
    _adam_update_(
        _data(p),
        _data(p.grad),
        _data(exp_avg),
        _data(exp_avg_sq),
        _data(max_sq) if amsgrad else None,
        lr=lr,
        beta1=beta1,
        beta2=beta2,
        eps=group["eps"],
        weight_decay=group["weight_decay"],
        step=float(step_a),
        amsgrad=amsgrad,
        maximize=group["maximize"],
        decoupled=decoupled,
    )
    for t in (p, exp_avg, exp_avg_sq, max_sq):
        if t is not None:
            t._bump_version("Adam.step")
