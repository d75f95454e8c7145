"""``Adafactor``, step for step as ``torch.optim.Adafactor`` computes it.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> w = Parameter(gt.tensor([[1.0, 2.0], [3.0, 4.0]]))
>>> opt = Adafactor([w], lr=0.01)
>>> (w * w).sum().backward()
>>> opt.step()
>>> [round(v, 4) for v in w.flatten().tolist()]  # torch.optim.Adafactor gives the same
[0.9788, 1.97, 2.9715, 3.9732]
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from .optimizer import Optimizer, has_grad, scalar

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern), torch's algorithm: the second moment of a matrix's
    gradient kept as a row and a column factor (of the last two dims), not per element::

        t += 1;  beta2_t = t ** beta2_decay (the weight of the new value);
        rho = min(lr, 1 / sqrt(t));  alpha = max(eps2, rms(param)) * rho
        param *= 1 - lr * weight_decay
        matrix: row = lerp(row, mean(g^2, -1), beta2_t); col = lerp(col, mean(g^2, -2), beta2_t)
                v = row @ col / max(mean(row, -2), eps1)
        vector: v = lerp(v, g^2, beta2_t)
        u = g / sqrt(max(v, eps1^2));  param -= alpha / max(1, rms(u) / d) * u

    Parameters
    ----------
    params : iterable
    lr : float, default 1e-2
        The bound of the relative step size ``rho``.
    beta2_decay : float, default -0.8
        The exponent of the second moment's decay (``<= 0``).
    eps : (float or None, float), default (None, 1e-3)
        ``eps1``, the floor of the second moment (None: the parameter dtype's machine
        epsilon, of the first parameter stepped, as torch), and ``eps2``, the floor of a
        parameter's scale.
    d : float, default 1.0
        The clipping threshold of the update's root mean square (``>= 1``).
    weight_decay : float, default 0
        Decoupled, as AdamW's: the parameter shrinks by ``lr * weight_decay`` a step.
    foreach : optional
        Accepted, as torch's; the step is one loop over the parameters either way.
    maximize : bool, default False

    Notes
    -----
    As torch, the state of a parameter is created at its first step: ``step``, and
    ``row_var``/``col_var`` (the gradient's shape with the last, resp. second-to-last dim 1)
    for a parameter of two or more dims, ``variance`` (its shape) for a vector; complex
    parameters are refused.
    """

    def __init__(
        self,
        params,
        lr=1e-2,
        beta2_decay=-0.8,
        eps=(None, 1e-3),
        d=1.0,
        weight_decay=0.0,
        *,
        foreach=None,
        maximize=False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {
            "lr": lr,
            "beta2_decay": beta2_decay,
            "eps": eps,
            "d": d,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
        }
        super().__init__(params, defaults)

    def _step_group(self, group) -> None:
        lr = scalar(group["lr"])
        eps1, eps2 = group["eps"]
        d, beta2_decay, weight_decay = group["d"], group["beta2_decay"], group["weight_decay"]
        for p in group["params"]:
            if not has_grad(p):
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = gt.tensor(0.0)
                if p.grad.dim() > 1:
                    row_shape, col_shape = list(p.grad.shape), list(p.grad.shape)
                    row_shape[-1] = 1
                    col_shape[-2] = 1
                    state["row_var"] = p.grad.new_zeros(row_shape)
                    state["col_var"] = p.grad.new_zeros(col_shape)
                else:
                    state["variance"] = gt.zeros_like(p.grad)
            grad = -p.grad if group["maximize"] else p.grad
            if eps1 is None:  # (the first parameter's dtype, for the group: torch's loop)
                eps1 = gt.finfo(p.dtype).eps
            state["step"].add_(1)
            step = state["step"].item()
            beta2_t = step**beta2_decay
            rho = min(lr, 1 / (step**0.5))
            alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                # mean(g^2) along a dim as torch's: a norm squared, over the dim's size
                row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
                row_var.lerp_(row_mean, beta2_t)
                col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
                col_var.lerp_(col_mean, beta2_t)
                var_estimate = row_var @ col_var
                var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
            else:
                variance = state["variance"]
                variance.lerp_(grad * grad, beta2_t)
                var_estimate = variance.clone()
            update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
            update.mul_(grad)
            denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
            p.add_(update, alpha=-alpha / denom)
