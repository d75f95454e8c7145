"""The in-place updates torch's optimisers are written with (``lerp_``, ``addcmul_``,
``addcdiv_``), as gradstack ops in torch's order of operations.

Note [Optimiser arithmetic in torch's order]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
gradstack's Tensor has no ``lerp_``/``addcmul_``/``addcdiv_`` methods yet, so the updates
are spelled with ``mul``/``div``/``add_``, grouping the operations as torch's CPU kernels
do (``self + value * t1 * t2``, ``self + value * t1 / t2``, ``self + w * (end - self)``
for ``w < 0.5``).  The remaining difference is torch's fused multiply-add in ``lerp``
(one rounding instead of two): about one ulp per step, which is why the step-for-step
tests against torch use 1e-12 in float64.
"""

from __future__ import annotations

from gradstack_tensor import Tensor

__all__ = ["lerp_", "addcmul_", "addcdiv_"]


def lerp_(self: Tensor, end: Tensor, weight: float) -> Tensor:
    """``self += weight * (end - self)`` in place (torch's formula for each half of [0, 1])."""
    if abs(weight) < 0.5:
        return self.add_((end - self) * weight)
    # self = end - (end - self) * (1 - weight), written into self
    return self.copy_(end - (end - self) * (1.0 - weight))


def addcmul_(self: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``self += value * t1 * t2`` in place."""
    return self.add_((t1 * value) * t2 if value != 1 else t1 * t2)


def addcdiv_(self: Tensor, t1: Tensor, t2: Tensor, value: float = 1.0) -> Tensor:
    """``self += value * t1 / t2`` in place."""
    return self.add_((t1 * value) / t2 if value != 1 else t1 / t2)
