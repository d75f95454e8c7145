"""``gradstack_nn.optim.lr_scheduler`` (``gradstack.optim.lr_scheduler``): learning-rate
schedules, epoch for epoch as ``torch.optim.lr_scheduler`` computes them.

Each has ``step()``, ``get_last_lr()``, ``state_dict()`` and ``load_state_dict()`` with
torch's keys; the closed-form ones are written in the chainable form torch uses, so that
they compose with other changes to ``lr``.  One module per family, all names of this
package as of torch's ``torch.optim.lr_scheduler`` (one module in torch):

==================  =======================================================================
``scheduler``       ``LRScheduler`` (the base class, ``_LRScheduler`` its old name)
``lambda_lr``       ``LambdaLR``, ``MultiplicativeLR``
``step``            ``StepLR``, ``MultiStepLR``, ``ExponentialLR``, ``ConstantLR``,
                    ``LinearLR``, ``PolynomialLR``
``cosine``          ``CosineAnnealingLR``, ``CosineAnnealingWarmRestarts``
``cyclic``          ``CyclicLR``, ``OneCycleLR``
``plateau``         ``ReduceLROnPlateau``
``chaining``        ``SequentialLR``, ``ChainedScheduler``
==================  =======================================================================

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> from gradstack_nn.optim import SGD
>>> opt = SGD([Parameter(gt.zeros(1))], lr=0.1)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for epoch in range(5):
...     opt.step()
...     sched.step()
...     lrs.append(sched.get_last_lr()[0])
>>> lrs
[0.1, 0.05, 0.05, 0.025, 0.025]
"""

from . import chaining, cosine, cyclic, lambda_lr, plateau, scheduler, step
from .chaining import *  # noqa: F403
from .cosine import *  # noqa: F403
from .cyclic import *  # noqa: F403
from .lambda_lr import *  # noqa: F403
from .plateau import *  # noqa: F403
from .scheduler import *  # noqa: F403
from .scheduler import _LRScheduler  # noqa: F401 - torch's old name, kept importable
from .step import *  # noqa: F403

# (``__all__ +=`` of each family's list, a form type checkers follow through star imports)
__all__: list[str] = []
__all__ += scheduler.__all__
__all__ += lambda_lr.__all__
__all__ += step.__all__
__all__ += cosine.__all__
__all__ += plateau.__all__
__all__ += cyclic.__all__
__all__ += chaining.__all__
