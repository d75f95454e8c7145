"""``torch.distributions.transforms``: invertible (or not) maps with the log of the
absolute Jacobian determinant, from which ``TransformedDistribution`` builds densities.

Each transform has a ``domain`` and a ``codomain`` (constraints), ``__call__`` (forward),
``inv`` (the inverse transform), ``log_abs_det_jacobian(x, y)``, ``sign`` for the
monotone scalar ones, and ``forward_shape``/``inverse_shape``.  With ``cache_size=1`` the
last pair ``(x, y)`` is kept, so that ``t.inv(t(x))`` returns ``x`` itself.

Examples
--------
>>> import gradstack_tensor as gt
>>> t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])
>>> t(gt.tensor([0.0])).tolist(), t.inv(gt.tensor([3.0])).tolist()
([3.0], [0.0])
>>> StickBreakingTransform()(gt.zeros(2)).tolist()
[0.3333333432674408, 0.3333333134651184, 0.3333333134651184]
"""

from __future__ import annotations

import math

import gradstack_tensor as gt

from .. import functional as F
from . import constraints
from ._composite_transforms import (
    CatTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
    Transform,
    _InverseTransform,  # noqa: F401 - torch's transforms module has it too
    identity_transform,
)
from .utils import _Number, broadcast_all, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftplusTransform",
    "TanhTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "Transform",
    "identity_transform",
]


class ExpTransform(Transform):
    """``y = exp(x)``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> ExpTransform().inv(gt.tensor([1.0])).tolist()
    [0.0]
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> PowerTransform(gt.tensor(2.0))(gt.tensor([3.0])).tolist()
    [9.0]
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self) -> int:
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return gt.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return gt.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x):
    finfo = gt.finfo(x.dtype)
    return gt.clamp(gt.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``, clipped into ``[tiny, 1 - eps]``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> SigmoidTransform()(gt.tensor([0.0])).tolist()
    [0.5]
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = gt.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> [round(v, 4) for v in SoftplusTransform()(gt.tensor([0.0])).tolist()]
    [0.6931]
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)`` (the inverse is ``atanh``, unstable near -1 and 1: use
    ``cache_size=1`` to get ``x`` back from the cache).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> TanhTransform()(gt.tensor([0.0])).tolist()
    [0.0]
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return gt.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # the stable form of log(1 - tanh(x)**2), as in TensorFlow Probability
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse is the identity).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> AbsTransform()(gt.tensor([-2.0])).tolist()
    [2.0]
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x`` (``event_dim`` rightmost dims form one event).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> t = AffineTransform(1.0, 3.0)
    >>> t(gt.tensor([1.0])).tolist(), t.log_abs_det_jacobian(gt.tensor([1.0]), None).tolist()
    ([4.0], [1.0986123085021973])
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        if isinstance(self.loc, _Number) and isinstance(other.loc, _Number):
            if self.loc != other.loc:
                return False
        elif not (self.loc == other.loc).all().item():
            return False
        if isinstance(self.scale, _Number) and isinstance(other.scale, _Number):
            if self.scale != other.scale:
                return False
        elif not (self.scale == other.scale).all().item():
            return False
        return True

    @property
    def sign(self):
        if isinstance(self.scale, _Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, _Number):
            result = gt.full_like(x, math.log(abs(scale)))
        else:
            result = gt.abs(scale).log()
        if self.event_dim:
            result_size = result.size()[: -self.event_dim] + (-1,)
            result = result.view(result_size).sum(-1)
            shape = shape[: -self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return gt.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )

    def inverse_shape(self, shape):
        return gt.broadcast_shapes(
            shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ())
        )


class CorrCholeskyTransform(Transform):
    """Unconstrained vectors of length ``D(D-1)/2`` to Cholesky factors of ``D x D``
    correlation matrices (tanh, then stick-breaking of each row's squared norm).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> CorrCholeskyTransform()(gt.zeros(3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = gt.tanh(x)
        eps = gt.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # stick-breaking: each row's squared norm sums to 1
        z = r**2
        z1m_cumprod_sqrt = (1 - z).sqrt().cumprod(-1)
        # Diagonal elements must be 1.
        r = r + gt.eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        # inverse stick-breaking
        y_cumsum = 1 - gt.cumsum(y * y, dim=-1)
        y_cumsum_shifted = F.pad(y_cumsum[..., :-1], [1, 0], value=1)
        y_vec = tril_matrix_to_vec(y, diag=-1)
        y_cumsum_vec = tril_matrix_to_vec(y_cumsum_shifted, diag=-1)
        t = y_vec / (y_cumsum_vec).sqrt()
        # inverse of tanh
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        y1m_cumsum_tril = tril_matrix_to_vec(y1m_cumsum, diag=-2)
        stick_breaking_logdet = 0.5 * (y1m_cumsum_tril).log().sum(-1)
        tanh_logdet = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        # Reshape from (..., N) to (..., D, D).
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (D, D)

    def inverse_shape(self, shape):
        # Reshape from (..., D, D) to (..., N).
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        N = D * (D - 1) // 2
        return shape[:-2] + (N,)


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by ``exp`` and normalising (not bijective:
    for a bijection use ``StickBreakingTransform``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> SoftmaxTransform()(gt.zeros(2)).tolist()
    [0.5, 0.5]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        probs = y
        return probs.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


class StickBreakingTransform(Transform):
    """Unconstrained vectors of length ``K - 1`` to the ``K``-simplex by stick breaking
    (bijective; useful with HMC-style samplers).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> t = StickBreakingTransform()
    >>> y = t(gt.tensor([0.5, -0.5], dtype=gt.float64))
    >>> [round(v, 12) for v in t.inv(y).tolist()]
    [0.5, -0.5]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        # we clamp to make sure that sf is positive which sometimes does not
        # happen when y[-1] ~ 0 or y[:-1].sum() ~ 1
        sf = gt.clamp(sf, min=gt.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        # use the identity 1 - sigmoid(x) = exp(-x) * sigmoid(x)
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices to lower-triangular ones with a positive diagonal
    (the strict lower triangle kept, the diagonal exponentiated).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> LowerCholeskyTransform()(gt.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices to positive-definite ones, ``L @ L.mT`` of the
    ``LowerCholeskyTransform``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> PositiveDefiniteTransform()(gt.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        y = gt.linalg.cholesky(y)
        return LowerCholeskyTransform().inv(y)
