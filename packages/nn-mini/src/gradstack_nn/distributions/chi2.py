"""``Chi2(df)``: the chi-squared distribution, ``Gamma(df / 2, 1 / 2)``.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Chi2(gt.tensor([4.0]))
>>> d.mean.tolist(), d.variance.tolist()
([4.0], [8.0])
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in Chi2(gt.tensor([3.0])).log_prob(gt.tensor([1.0])).tolist()]
    [-1.4189]
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
