"""``ExponentialFamily``: distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``, with the entropy and the KL divergence between
two members of one family computed from the log normalizer ``F`` by autograd (Bregman
divergences, as torch).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.distributions import Exponential
>>> d = Exponential(gt.tensor([2.0]))
>>> round(ExponentialFamily.entropy(d).item(), 4), round(d.entropy().item(), 4)
(0.3069, 0.3069)
"""

from __future__ import annotations

import gradstack_autograd
from gradstack_tensor import Tensor

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential families: a subclass gives ``_natural_params``,
    ``_log_normalizer(*natural_params)`` and ``_mean_carrier_measure``."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer ``F(theta)`` of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        """The expected carrier measure ``E[k(x)]`` (needed for the entropy)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy from the Bregman divergence of the log normalizer."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = gradstack_autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np_, g in zip(nparams, gradients):
            result -= (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
