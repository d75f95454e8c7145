"""``LogisticNormal(loc, scale)``: a normal vector mapped to the simplex by stick
breaking.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = LogisticNormal(gt.zeros(2), gt.ones(2))
>>> d.event_shape
gradstack.Size([3])
>>> round(d.log_prob(gt.tensor([0.2, 0.3, 0.5])).item(), 4)
1.298
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The logistic-normal distribution: ``Normal(loc, scale)`` over ``K - 1`` coordinates
    through ``StickBreakingTransform`` onto the ``K``-simplex.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> LogisticNormal(gt.zeros(2), gt.ones(2)).sample()  # torch's draw
    tensor([0.7001, 0.1281, 0.1718])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale
