"""``gradstack.distributions``: probability distributions as ``torch.distributions``
(``Normal``, ``Categorical``, ``Bernoulli``, ``Uniform``, ``kl_divergence``), from
gradstack-nn-mini (``gradstack_nn.distributions``)."""

from gradstack_nn.distributions import *  # noqa: F403
from gradstack_nn.distributions import __all__  # noqa: F401
