"""``gradstack_nn.distributions`` (``gradstack.distributions``): the probability
distributions small models train with, as ``torch.distributions``: ``Normal``,
``Categorical``, ``Bernoulli``, ``Uniform``, and ``kl_divergence`` between them.

Each draws from the generator as torch's does (``sample`` and ``rsample`` call the same
ops: ``normal``, ``multinomial``, ``bernoulli``, ``rand``), so after the same seed the
samples are torch's; ``log_prob``, ``entropy``, ``mean``, ``variance`` are torch's
formulas, written with gradstack ops, so they differentiate (``rsample`` reparametrises).
Arguments are validated as torch does by default (``validate_args``).

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Normal(gt.tensor(0.0), gt.tensor(1.0))
>>> round(d.log_prob(gt.tensor(0.0)).item(), 4)
-0.9189
>>> c = Categorical(probs=gt.tensor([0.25, 0.75]))
>>> round(c.entropy().item(), 4)
0.5623
"""

from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = [
    "Distribution",
    "Normal",
    "Categorical",
    "Bernoulli",
    "Uniform",
    "kl_divergence",
    "register_kl",
]
