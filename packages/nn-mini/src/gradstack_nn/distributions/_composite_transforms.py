"""The base class of the transforms and the transforms built from other transforms:
``Transform`` (with its inverse), ``ComposeTransform``, ``IndependentTransform``,
``ReshapeTransform``, ``CatTransform``, ``StackTransform`` and
``CumulativeDistributionTransform``.  ``transforms`` is the public module: it re-exports
these with the elementwise and matrix transforms.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.distributions.transforms import ExpTransform
>>> t = ComposeTransform([ExpTransform(), ExpTransform().inv])
>>> t(gt.tensor([2.0])).tolist()
[2.0]
"""

from __future__ import annotations

import functools
import operator

import gradstack_tensor as gt
from gradstack_tensor import Size

from . import constraints
from .utils import _sum_rightmost, lazy_property

__all__ = [
    "Transform",
    "ComposeTransform",
    "identity_transform",
    "IndependentTransform",
    "ReshapeTransform",
    "CatTransform",
    "StackTransform",
    "CumulativeDistributionTransform",
]


class Transform:
    """The base class of transforms.

    Parameters
    ----------
    cache_size : int
        0 (no cache) or 1 (the last ``(x, y)`` pair is kept).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions.transforms import AffineTransform, ExpTransform
    >>> t = ExpTransform(cache_size=1)
    >>> x = gt.tensor([1.0])
    >>> t.inv(t(x)) is x
    True
    """

    bijective = False
    domain: constraints.Constraint
    codomain: constraints.Constraint

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv: Transform | None = None
        if cache_size == 0:
            pass  # default behaviour
        elif cache_size == 1:
            self._cached_x_y = (None, None)
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> Transform:
        """The inverse transform (``t.inv.inv is t``)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> int:
        """The sign of the Jacobian determinant, for monotone scalar transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        """``y = t(x)`` (from the cache when ``x`` is the cached input)."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = (x, y)
        return y

    def _inv_call(self, y):
        """``x = t.inv(y)`` (from the cache when ``y`` is the cached output)."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = (x, y)
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` for an input ``x`` and its output ``y``."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        """The shape of the output for an input of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of the input for an output of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (what ``Transform.inv`` returns)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv: Transform = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        if not isinstance(other, _InverseTransform):
            return False
        return self._inv == other._inv

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms ``parts`` applied in order.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions.transforms import AffineTransform, ExpTransform
    >>> t = ComposeTransform([AffineTransform(0.0, 2.0), ExpTransform()])
    >>> x = gt.tensor([0.5])
    >>> t.log_abs_det_jacobian(x, t(x)).tolist()
    [1.6931471824645996]
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        if not isinstance(other, ComposeTransform):
            return False
        return self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # Adjust event_dim to be maximum among all parts.
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim < domain.event_dim:
            raise AssertionError(
                f"event_dim {event_dim} must be >= domain.event_dim {domain.event_dim}"
            )
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        # Adjust event_dim to be maximum among all parts.
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim < codomain.event_dim:
            raise AssertionError(
                f"event_dim {event_dim} must be >= codomain.event_dim {codomain.event_dim}"
            )
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self) -> int:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return gt.zeros_like(x)

        # Compute intermediates. This will be free if parts[:-1] are all cached.
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)

        terms = []
        event_dim = self.domain.event_dim
        for part, x, y in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(
                _sum_rightmost(part.log_abs_det_jacobian(x, y), event_dim - part.domain.event_dim)
            )
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        fmt_string = self.__class__.__name__ + "(\n    "
        fmt_string += ",\n    ".join([p.__repr__() for p in self.parts])
        fmt_string += "\n)"
        return fmt_string


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` extra rightmost dims treated
    as event dims (its log-Jacobian is summed over them).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions.transforms import AffineTransform, ExpTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> t.log_abs_det_jacobian(gt.ones(2, 3), None).tolist()
    [3.0, 3.0]
    """

    def __init__(
        self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(
            self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size
        )

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (
            f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"
        )

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """The reshape of the rightmost ``in_shape`` dims to ``out_shape`` (Jacobian 1).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> ReshapeTransform((4,), (2, 2))(gt.arange(8.0).reshape(2, 4)).shape
    gradstack.Size([2, 2, 2])
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return x.reshape(batch_shape + self.out_shape)

    def _inverse(self, y):
        batch_shape = y.shape[: y.dim() - len(self.out_shape)]
        return y.reshape(batch_shape + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        batch_shape = x.shape[: x.dim() - len(self.in_shape)]
        return x.new_zeros(batch_shape)

    def forward_shape(self, shape):
        if len(shape) < len(self.in_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.in_shape)
        if shape[cut:] != self.in_shape:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.in_shape}")
        return shape[:cut] + self.out_shape

    def inverse_shape(self, shape):
        if len(shape) < len(self.out_shape):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(self.out_shape)
        if shape[cut:] != self.out_shape:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {self.out_shape}")
        return shape[:cut] + self.in_shape


class _TransformsAlongDim(Transform):
    """What ``CatTransform`` and ``StackTransform`` share: the transforms ``tseq`` (checked,
    with the cache size given), the ``dim`` along which they apply, the check that a
    tensor has that dim, and bijectivity (when every transform is bijective)."""

    transforms: list[Transform]

    def __init__(self, tseq, dim: int, cache_size: int) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def _check_dim(self, t, name):
        if not -t.dim() <= self.dim < t.dim():
            raise AssertionError(
                f"dim {self.dim} out of range for {name} with {t.dim()} dimensions"
            )

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)


class CatTransform(_TransformsAlongDim):
    """The transforms ``tseq`` applied to consecutive slices of ``lengths`` along
    ``dim`` (as ``cat``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions.transforms import AffineTransform, ExpTransform
    >>> t = CatTransform([ExpTransform(), AffineTransform(0.0, 2.0)], dim=0, lengths=[1, 2])
    >>> t(gt.tensor([0.0, 1.0, 2.0])).tolist()
    [1.0, 2.0, 4.0]
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)
        if lengths is None:
            lengths = [1] * len(self.transforms)
        self.lengths = list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(
                f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})"
            )

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, t, name, dim_name=None):
        self._check_dim(t, name if dim_name is None else dim_name)
        if t.size(self.dim) != self.length:
            raise AssertionError(
                f"{name}.size({self.dim}) = {t.size(self.dim)} must equal length {self.length}"
            )

    def _slices(self, t):
        start = 0
        for trans, length in zip(self.transforms, self.lengths):
            yield trans, t.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        self._check(x, "x", dim_name="tensor")
        return gt.cat([trans(xslice) for trans, xslice in self._slices(x)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y", dim_name="tensor")
        return gt.cat([trans.inv(yslice) for trans, yslice in self._slices(y)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x")
        self._check(y, "y")
        logdetjacs = []
        for (trans, xslice), (_, yslice) in zip(self._slices(x), self._slices(y)):
            logdetjac = trans.log_abs_det_jacobian(xslice, yslice)
            if trans.event_dim < self.event_dim:
                logdetjac = _sum_rightmost(logdetjac, self.event_dim - trans.event_dim)
            logdetjacs.append(logdetjac)
        # Decide whether to concatenate or sum.
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return gt.cat(logdetjacs, dim=dim)
        return sum(logdetjacs)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_TransformsAlongDim):
    """The transforms ``tseq`` applied to the slices of ``dim`` (as ``stack``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions.transforms import AffineTransform, ExpTransform
    >>> t = StackTransform([ExpTransform(), AffineTransform(1.0, 1.0)], dim=0)
    >>> t(gt.tensor([[0.0], [1.0]])).tolist()
    [[1.0], [2.0]]
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(tseq, dim, cache_size)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, t, name):
        self._check_dim(t, name)
        if t.size(self.dim) != len(self.transforms):
            raise AssertionError(
                f"{name}.size({self.dim}) = {t.size(self.dim)} must equal len(transforms) "
                f"{len(self.transforms)}"
            )

    def _call(self, x):
        self._check(x, "x")
        yslices = [trans(xslice) for xslice, trans in zip(self._slice(x), self.transforms)]
        return gt.stack(yslices, dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        xslices = [trans.inv(yslice) for yslice, trans in zip(self._slice(y), self.transforms)]
        return gt.stack(xslices, dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x")
        self._check(y, "y")
        logdetjacs = [
            trans.log_abs_det_jacobian(xslice, yslice)
            for xslice, yslice, trans in zip(self._slice(x), self._slice(y), self.transforms)
        ]
        return gt.stack(logdetjacs, dim=self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's CDF as a transform to ``[0, 1]`` (a copula's building block).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions import Normal
    >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(gt.tensor([0.0])).tolist()
    [0.5]
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint | None:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
