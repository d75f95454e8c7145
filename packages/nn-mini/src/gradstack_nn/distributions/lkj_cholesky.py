"""``LKJCholesky(dim, concentration=1.0)``: the LKJ distribution over Cholesky factors of
correlation matrices ([1] Lewandowski, Kurowicka and Joe, "Generating random correlation
matrices based on vines and extended onion method", 2009), sampled by the onion method.

Examples
--------
>>> import gradstack_tensor as gt
>>> d = LKJCholesky(3, 0.5)
>>> round(d.log_prob(gt.eye(3)).item(), 4)
-2.531
"""

from __future__ import annotations

import math

import gradstack_tensor as gt
from gradstack_tensor import Size

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution of the lower Cholesky factor ``L`` of a ``dim x dim``
    correlation matrix, with density proportional to ``det(L L^T) ** (concentration -
    1)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> L = LKJCholesky(3, 0.5).sample()
    >>> [round(v, 6) for v in (L @ L.mT).diagonal().tolist()]
    [1.0, 1.0, 1.0]
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(
                f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}."
            )
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = Size((dim, dim))
        # This is used to draw vectorized samples from the beta distribution in Sec. 3.2 of [1].
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = gt.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = gt.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):  # noqa: B008
        # The onion method (Sec. 3.2 of Lewandowski et al., 2009), vectorised over rows.
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = gt.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        # Replace NaNs in first row
        u_hypersphere[..., 0, :].fill_(0.0)
        w = gt.sqrt(y) * u_hypersphere
        # Fill diagonal elements; clamp for numerical stability
        eps = gt.finfo(w.dtype).tiny
        diag_elems = gt.clamp(1 - gt.sum(w**2, dim=-1), min=eps).sqrt()
        w += gt.diag_embed(diag_elems)
        return w

    def log_prob(self, value):
        # The density with respect to the Lebesgue measure of L's strict lower triangle
        # (Sec. 3.1 of [1], adapted to the Cholesky factor as in Stan).
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = gt.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = gt.sum(order * diag_elems.log(), dim=-1)
        # Compute normalization constant (page 1999 of [1])
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = gt.lgamma(alpha) * dm1
        numerator = gt.mvlgamma(alpha - 0.5, dm1)
        # pi_constant in [1] is D * (D - 1) / 4 * log(pi)
        # pi_constant in multigammaln is (D - 1) * (D - 2) / 4 * log(pi)
        # hence, we need to add a pi_constant = (D - 1) * log(pi) / 2
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
