"""``kl_div``: the Kullback-Leibler divergence loss, composed of gradstack ops as torch's
formula (``target * (log(target) - input)``, 0 where the target is 0).

Examples
--------
>>> import gradstack_tensor as gt
>>> logp = gt.tensor([[0.25, 0.75]]).log()
>>> round(kl_div(logp, gt.tensor([[0.5, 0.5]]), reduction="batchmean").item(), 4)
0.1438
"""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = ["kl_div"]


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average=None,
    reduce=None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """``target * (log(target) - input)`` summed as ``reduction`` says (``"batchmean"``:
    the sum over the batch size, the divergence's definition; ``"mean"`` divides by every
    element, with torch's warning); ``input`` holds log-probabilities, ``target``
    probabilities (log-probabilities with ``log_target=True``).

    Where the target is 0 the term is 0 and its gradient finite (torch's ``xlogy`` gives
    the target a NaN gradient there; the input's gradient is the same).
    """
    from .functional import _reduction

    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = gt.where(positive, target, 1.0)
        loss = gt.where(positive, target * safe.log(), 0.0) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")
