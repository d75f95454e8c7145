"""The parameter of the distributions of a yes/no outcome, given as ``probs`` or
``logits``: ``Bernoulli``, ``Binomial``, ``Geometric``, ``NegativeBinomial``,
``LogitRelaxedBernoulli``.

Note [One binary parameter, two spellings]
The constructor stores the one it was given (``Distribution._set_probs_or_logits``);
the other is computed from it on first use and cached on the instance
(``lazy_property``), as torch's classes each write out.  The mixin holds that pair once.
"""

from __future__ import annotations

from gradstack_tensor import Tensor

from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryProbsLogits"]


class BinaryProbsLogits:
    """``probs`` and ``logits`` of a binary outcome, each computed from the other.

    Examples
    --------
    >>> from gradstack_nn.distributions import Bernoulli
    >>> round(Bernoulli(logits=0.0).probs.item(), 3), Bernoulli(probs=0.5).logits.item()
    (0.5, 0.0)
    """

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)
