"""``Dirichlet(concentration)``: the distribution on the simplex, with torch's sampler and
its reparameterised gradient.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = Dirichlet(gt.tensor([1.0, 2.0, 3.0]))
>>> [round(v, 4) for v in d.mean.tolist()]
[0.1667, 0.3333, 0.5]
>>> round(d.log_prob(gt.tensor([0.2, 0.3, 0.5])).item(), 4)
1.5041
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_autograd import Function, once_differentiable
from gradstack_tensor import Size, Tensor
from gradstack_tensor.extension import data_of, wrap

from .. import functional as F
from . import constraints
from ._implicit_grads import dirichlet_grad
from ._samplers import sample_dirichlet
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = wrap(dirichlet_grad(data_of(x), data_of(concentration), data_of(total)))
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """``torch._sample_dirichlet`` with torch's reparameterised gradient."""

    @staticmethod
    def forward(ctx, concentration):
        x = sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with ``concentration`` (its last dim is the event).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> Dirichlet(gt.tensor([0.5, 0.5])).sample()  # torch's draw
    tensor([0.0176, 0.9824])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        concentration = self.concentration.expand(shape)
        return _Dirichlet.apply(concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            gt.xlogy(self.concentration - 1.0, value).sum(-1)
            + gt.lgamma(self.concentration.sum(-1))
            - gt.lgamma(self.concentration).sum(-1)
        )

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (
            gt.lgamma(self.concentration).sum(-1)
            - gt.lgamma(a0)
            - (k - a0) * gt.digamma(a0)
            - ((self.concentration - 1.0) * gt.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - gt.lgamma(x.sum(-1))
