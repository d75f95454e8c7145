"""The parameters of ``RelaxedBernoulli`` and ``RelaxedOneHotCategorical``, read from the
distribution each transforms (``LogitRelaxedBernoulli``, ``ExpRelaxedCategorical``), which
holds them: the one place torch's two classes write out alike."""

from __future__ import annotations

from typing import Any

from gradstack_tensor import Tensor

__all__ = ["ParametersOfBase"]


class ParametersOfBase:
    """``temperature``, ``logits`` and ``probs``: the base distribution's.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions import RelaxedBernoulli
    >>> RelaxedBernoulli(gt.tensor(0.5), logits=gt.tensor(0.0)).probs.item()
    0.5
    """

    base_dist: Any  # (the TransformedDistribution's base)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
