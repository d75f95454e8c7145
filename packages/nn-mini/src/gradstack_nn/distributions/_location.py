"""What the symmetric unimodal families centred at ``loc`` share (``Normal``, ``Laplace``,
``MultivariateNormal``, ``LowRankMultivariateNormal``, ``VonMises``): their mean and their
mode are ``loc``, which torch's classes each write out."""

from __future__ import annotations

from gradstack_tensor import Tensor

__all__ = ["MeanAndModeAtLoc"]


class MeanAndModeAtLoc:
    """``mean`` and ``mode``: ``self.loc``.

    Examples
    --------
    >>> from gradstack_nn.distributions import Laplace
    >>> d = Laplace(2.0, 1.0)
    >>> d.mean.item(), d.mode.item()
    (2.0, 2.0)
    """

    loc: Tensor

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc
