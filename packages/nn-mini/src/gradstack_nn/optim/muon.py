"""``Muon``, step for step as ``torch.optim.Muon`` computes it: momentum, then the update
orthogonalised by a Newton-Schulz iteration in bfloat16, for 2-D parameters.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([[1.0, 2.0], [3.0, 4.0]]))
>>> opt = Muon([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> [round(v, 4) for v in w.flatten().tolist()]  # torch.optim.Muon gives the same
[1.0584, 1.8984, 2.8966, 3.9353]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .optimizer import Optimizer, has_grad, scalar

__all__ = ["Muon"]

# torch's constants (Keller Jordan's Muon)
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients, ns_steps: int, eps: float):
    """An approximate orthogonalisation ``U S' V^T`` of the 2-D ``grad`` (``S'`` near 1),
    by ``ns_steps`` quintic Newton-Schulz iterations in bfloat16, torch's function
    (its checks, its bfloat16 products: gradstack's bfloat16 ``addmm`` rounds as torch's
    CPU one)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))  # spectral norm at most 1
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = gt.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = gt.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    if grad.size(0) > grad.size(1):
        ortho_grad = ortho_grad.T
    return ortho_grad


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape) -> float:
    """The learning rate scaled for the update's RMS: ``sqrt(max(1, A / B))`` (``"original"``,
    Keller Jordan's) or ``0.2 * sqrt(max(A, B))`` (``"match_rms_adamw"``, Moonshot's)."""
    A, B = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(A, B))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


class Muon(Optimizer):
    """Muon, torch's algorithm, for 2-D parameters (hidden layers' weights; biases and
    embeddings are for another optimiser)::

        buf = lerp(buf, g, 1 - momentum)                       (buf = momentum*buf + (1-momentum)*g)
        u = lerp(g, buf, momentum) if nesterov else buf
        o = NS(u)           (5 Newton-Schulz steps in bfloat16, coefficients (a, b, c))
        param *= 1 - lr * weight_decay
        param -= adjust_lr(lr, shape) * o

    Parameters
    ----------
    params : iterable
        2-D parameters only (torch's ValueError otherwise).
    lr : float, default 1e-3
    weight_decay : float, default 0.1
        Decoupled, as AdamW's.
    momentum : float, default 0.95
    nesterov : bool, default True
    ns_coefficients : (float, float, float), default (3.4445, -4.7750, 2.0315)
    eps : float, default 1e-7
        The floor of the norm the update is divided by.
    ns_steps : int, default 5
        Newton-Schulz iterations (below 100).
    adjust_lr_fn : {None, "original", "match_rms_adamw"}
        The learning rate's scaling by the parameter's shape.

    Notes
    -----
    A parameter's state, ``momentum_buffer`` (zeros of its gradient), is created at its
    first step; complex parameters are refused, as torch.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}"
                    )

    def _step_group(self, group) -> None:
        # a tensor lr stays a 0-d tensor, as torch's ``_to_scalar``: ``1 - lr * wd`` and
        # the adjusted lr are then computed in its dtype
        lr = group["lr"]
        if isinstance(lr, Tensor):
            lr = lr.reshape(())
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        for p in group["params"]:
            if not has_grad(p):
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = gt.zeros_like(p.grad)
            grad = p.grad
            if grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = state["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(
                update, group["ns_coefficients"], group["ns_steps"], group["eps"]
            )
            adjusted_lr = scalar(_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
            p.mul_(1 - lr * weight_decay)
            p.add_(update, alpha=-adjusted_lr)
