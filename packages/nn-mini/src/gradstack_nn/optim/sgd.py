"""``SGD``: stochastic gradient descent with momentum, dampening, weight decay, Nesterov
and maximize, exactly as ``torch.optim.SGD`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> from gradstack_nn.optim import SGD
>>> w = Parameter(gt.tensor([1.0, 2.0]))
>>> opt = SGD([w], lr=0.1, momentum=0.9)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w.detach().tolist()   # w - 0.1 * 2w
[0.800000011920929, 1.600000023841858]
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_autograd.zeroed_grads import grad_is_zeroed
from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of as _data

from .optimizer import Optimizer, has_grad, required

try:
    from gradstack_tensor.kernels import fusable as _fusable
    from gradstack_tensor.kernels import sgd_update_ as _sgd_update_
except ImportError:  # pragma: no cover - tensor-core built without its kernels
    _fusable = _sgd_update_ = None

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), torch's algorithm::

        g = -grad if maximize else grad
        if weight_decay != 0:  g = g + weight_decay * param
        if momentum != 0:
            buf = g                                     (first step)
            buf = momentum * buf + (1 - dampening) * g  (later steps)
            g = g + momentum * buf if nesterov else buf
        param = param - lr * g

    Parameters
    ----------
    params : iterable
        Parameters, or dicts defining parameter groups.
    lr : float, default 1e-3
        Learning rate.
    momentum, dampening, weight_decay : float, default 0
        Momentum factor, dampening for momentum, L2 penalty.
    nesterov : bool, default False
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximise the objective instead of minimising it.
    foreach, fused : optional
        Accepted for torch compatibility; gradstack always takes its fused Cython kernel
        (one pass per parameter) when the arrays allow it.

    Notes
    -----
    ``step()`` runs under ``no_grad`` and counts as an in-place write on each parameter
    (its version goes up), so a graph that saved a parameter before the step refuses to
    backpropagate through stale values.  The momentum buffers live in
    ``optimizer.state[param]["momentum_buffer"]``.
    """

    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ) -> None:
        if lr is not required:
            if isinstance(lr, Tensor) and lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if differentiable:
            raise ValueError("SGD(differentiable=True) is not supported by gradstack")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        _step_group(self.state, group)


def _step_group(state, group) -> None:
    lr = float(group["lr"])
    momentum = float(group["momentum"])
    dampening = float(group["dampening"])
    weight_decay = float(group["weight_decay"])
    nesterov = bool(group["nesterov"])
    maximize = bool(group["maximize"])
    if momentum == 0 and _sgd_update_ is not None:
        _step_without_momentum(group["params"], lr, weight_decay, maximize)
        return
    for p in group["params"]:
        if not has_grad(p):
            continue
        g = p.grad
        pstate = state[p] if momentum != 0 else None
        buf = pstate.get("momentum_buffer") if pstate is not None else None
        if _sgd_update_ is not None and _fast_path(p, g, buf, momentum):
            _kernel_step(
                p, g, buf, pstate, lr, momentum, dampening, weight_decay, nesterov, maximize
            )
        else:
            buf = _tensor_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize)
            if pstate is not None:
                pstate["momentum_buffer"] = buf


def _step_without_momentum(params, lr: float, weight_decay: float, maximize: bool) -> None:
    """The loop of ``_step_group`` without momentum (no state, no buffer), with
    ``has_grad`` and ``_fast_path`` written out: 4.5 us less per step for the tutorial's
    four parameters, a fifth of its ``step()`` (Note [SGD's fast path])."""
    for p in params:
        g = p._grad  # has_grad(p), without its call
        if g is None or grad_is_zeroed(g):
            continue
        pa, ga = _data(p), _data(g)
        if p._base is None and _fusable(pa, ga) and pa.flags.writeable:
            _sgd_update_(pa, ga, None, lr, weight_decay=weight_decay, maximize=maximize)
            p._bump_version("SGD.step")
        else:
            _tensor_step(p, g, None, lr, 0.0, 0.0, weight_decay, False, maximize)


def _fast_path(p: Tensor, g: Tensor, buf, momentum: float) -> bool:
    """Whether the fused kernel applies: float32/float64 arrays of one shape, contiguous,
    the parameter writable and not a view (Note [SGD's fast path])."""
    # Note [SGD's fast path]
    # The kernel writes the parameter's array directly; it needs C-contiguous arrays of one
    # float dtype and a parameter that is not a view of another tensor (a write through a
    # view is fine for numpy, but the base's version counter is the view's, so it is
    # bumped all the same; we still keep views on the tensor path for clarity).
    pa, ga = _data(p), _data(g)
    if not _fusable(pa, ga) or not pa.flags.writeable or p._base is not None:
        return False
    if momentum != 0 and buf is not None:
        ba = _data(buf)
        return _fusable(pa, ba) and ba.flags.writeable and not np.shares_memory(pa, ba)
    return True


def _kernel_step(
    p, g, buf, pstate, lr, momentum, dampening, weight_decay, nesterov, maximize
) -> None:
    first = momentum != 0 and buf is None
    pa = _data(p)
    if first:
        ba = np.empty_like(pa)
        pstate["momentum_buffer"] = gt.from_numpy(ba)
    else:
        ba = _data(buf) if momentum != 0 else None
    _sgd_update_(
        pa,
        _data(g),
        ba,
        lr,
        momentum=momentum,
        dampening=dampening,
        weight_decay=weight_decay,
        nesterov=nesterov,
        maximize=maximize,
        first_step=first,
    )
    p._bump_version("SGD.step")
    if buf is not None:
        buf._bump_version("SGD.step")


def _tensor_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """torch's ``_single_tensor_sgd`` with tensor ops (any dtype and layout)."""
    grad = -g if maximize else g
    if weight_decay != 0:
        grad = grad.add(p, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = grad.detach().clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    p.add_(grad, alpha=-lr)
    return buf


def sgd(
    params,
    d_p_list,
    momentum_buffer_list,
    *,
    weight_decay,
    momentum,
    lr,
    dampening,
    nesterov,
    maximize,
    **_ignored,
) -> None:
    """The functional form of :class:`SGD` (torch.optim.sgd): updates ``params`` in place
    and fills ``momentum_buffer_list`` (None entries become the new buffers)."""
    with ag.no_grad():
        for i, (p, g) in enumerate(zip(params, d_p_list)):
            buf = momentum_buffer_list[i] if momentum != 0 else None
            momentum_buffer_list_value = _tensor_step(
                p, g, buf, lr, momentum, dampening, weight_decay, nesterov, maximize
            )
            if momentum != 0:
                momentum_buffer_list[i] = momentum_buffer_list_value
