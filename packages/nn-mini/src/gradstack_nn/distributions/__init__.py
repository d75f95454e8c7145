"""``gradstack_nn.distributions`` (``gradstack.distributions``): ``torch.distributions``
with torch 2.13's semantics, laid out as torch's package (one family a module,
``constraints``, ``transforms``, ``constraint_registry``, ``kl``, ``utils``).

Every distribution has torch's ``batch_shape``/``event_shape``, ``sample``, ``rsample``
(reparameterised where torch's ``has_rsample`` is true), ``log_prob``, ``entropy``,
``mean``, ``mode``, ``variance``, ``stddev``, ``cdf``/``icdf`` where torch has them,
``expand``, ``support``, ``arg_constraints`` and argument validation with torch's
messages.  The formulas are torch's, written with gradstack ops, so they differentiate
(to any order where torch's do).

Draws equal torch's after the same ``manual_seed``: the samplers call the ops torch's
call (``normal``, ``rand``, ``bernoulli``, ``multinomial``, ``exponential_`` ...), and
torch's rejection samplers (``_standard_gamma``, ``poisson``, ``binomial``,
``_sample_dirichlet``, ``cauchy_``) are replayed on the same generator stream
(tensor-core's ``random_samplers.py``), so Gamma, Beta, Dirichlet, Chi2, StudentT, Poisson,
Binomial and the rest draw torch's values too.  The code follows PyTorch's
``torch/distributions`` (BSD-3-Clause), whose structure and formulas it keeps.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Normal(gt.tensor(0.0), gt.tensor(1.0))
>>> round(d.log_prob(gt.tensor(0.0)).item(), 4)
-0.9189
>>> c = Categorical(probs=gt.tensor([0.25, 0.75]))
>>> round(c.entropy().item(), 4)
0.5623
>>> round(kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item(), 4)
0.5
"""

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import _add_kl_info, kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

_add_kl_info()
del _add_kl_info

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "FisherSnedecor",
    "Gamma",
    "GeneralizedPareto",
    "Geometric",
    "Gumbel",
    "HalfCauchy",
    "HalfNormal",
    "Independent",
    "InverseGamma",
    "Kumaraswamy",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "LogisticNormal",
    "LowRankMultivariateNormal",
    "MixtureSameFamily",
    "Multinomial",
    "MultivariateNormal",
    "NegativeBinomial",
    "Normal",
    "OneHotCategorical",
    "OneHotCategoricalStraightThrough",
    "Pareto",
    "RelaxedBernoulli",
    "RelaxedOneHotCategorical",
    "StudentT",
    "Poisson",
    "Uniform",
    "VonMises",
    "Weibull",
    "Wishart",
    "TransformedDistribution",
    "biject_to",
    "kl_divergence",
    "register_kl",
    "transform_to",
]
__all__.extend(transforms.__all__)
