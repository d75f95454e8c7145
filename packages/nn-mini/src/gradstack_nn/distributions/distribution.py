"""``Distribution``: the base class of the distributions, as torch's (shapes, sampling,
argument and sample validation, ``expand``).

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.distributions import Normal
>>> d = Normal(gt.zeros(3), 1.0)
>>> d.batch_shape, d.event_shape
(gradstack.Size([3]), gradstack.Size([]))
>>> d.sample((2,)).shape
gradstack.Size([2, 3])
>>> d.expand((4, 3)).batch_shape
gradstack.Size([4, 3])
"""

from __future__ import annotations

import warnings

from gradstack_autograd import no_grad
from gradstack_tensor import Size, Tensor

from . import constraints
from .utils import _Number, broadcast_all, lazy_property

__all__ = ["Distribution", "ParamShapeOfParam"]


class Distribution:
    """The abstract base class of probability distributions.

    Parameters
    ----------
    batch_shape : Size
        The shape over which parameters are batched.
    event_shape : Size
        The shape of one sample (without batching).
    validate_args : bool, optional
        Whether to check the parameters (here) and the values given to ``log_prob``,
        ``cdf``... against ``arg_constraints`` and ``support``; None takes the default
        (on, as torch's, unless ``python -O``; see :meth:`set_default_validate_args`).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn.distributions import Normal
    >>> Normal(0.0, -1.0)
    Traceback (most recent call last):
      ...
    ValueError: Expected parameter scale (Tensor of shape ()) ... but found invalid values:
    -1.0
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions created afterwards
        without an explicit ``validate_args``.

        Examples
        --------
        >>> from gradstack_nn.distributions import Distribution, Normal
        >>> Distribution.set_default_validate_args(False)
        >>> Normal(0.0, -1.0).scale.item()
        -1.0
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(
        self,
        batch_shape: Size = Size(),  # noqa: B008 - an immutable tuple, as torch's default
        event_shape: Size = Size(),  # noqa: B008
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    "Please set `arg_constraints = {}` or initialize the distribution "
                    "with `validate_args=False` to turn off validation.",
                    stacklevel=2,
                )
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(
                    getattr(type(self), param), lazy_property
                ):
                    continue  # not computed yet: checking would compute it
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}"
                    )
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution whose parameters are expanded (views) to ``batch_shape``;
        arguments are not validated again."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of one sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        """The constraint of each tensor parameter (by name)."""
        raise NotImplementedError

    @property
    def support(self) -> constraints.Constraint | None:
        """The constraint of the distribution's values."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        """The mean."""
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        """The mode."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance."""
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        """The standard deviation (``variance.sqrt()``)."""
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        """A sample of shape ``sample_shape + batch_shape + event_shape``, without
        gradient (``rsample`` under ``no_grad`` by default)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:  # noqa: B008
        """A reparameterised sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``sample((n,))`` (deprecated in torch)."""
        warnings.warn(
            "`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
            FutureWarning,
            stacklevel=2,
        )
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """All the values of a discrete distribution along dim 0: shape
        ``(cardinality,) + batch_shape + event_shape`` (batch dims of size 1 when
        ``expand`` is False)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """``exp(entropy())``."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:  # noqa: B008
        """``sample_shape + batch_shape + event_shape``: the shape of a sample."""
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value: Tensor) -> None:
        """Check a value given to ``log_prob``/``cdf``: a tensor whose rightmost dims are
        ``event_shape``, broadcastable with ``batch_shape``, within the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")

        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}."
            )

        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}."
                )
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable "
                "sample validation. Please initialize the distribution with "
                "`validate_args=False` to turn off validation.",
                stacklevel=2,
            )
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}"
            )

    # Note [Parameters named once]
    # torch's distributions repeat, class after class, the same lines: ``__init__``
    # broadcasts the parameters and takes the batch shape from them (empty when all are
    # Python numbers); ``expand`` makes a new instance, expands each parameter and
    # initialises the base class without validation. Here a class names its parameters
    # and these two methods do the rest, with torch's steps in torch's order.

    def _set_parameters(self, **parameters) -> Size:
        """Broadcast ``parameters`` together (numbers become tensors), set each as the
        attribute of its name, and return the batch shape they give: ``Size()`` when every
        one is a Python number, else the broadcast shape (Note [Parameters named once]).

        Examples
        --------
        >>> import gradstack_tensor as gt
        >>> from gradstack_nn.distributions import Normal
        >>> d = Normal.__new__(Normal)
        >>> d._set_parameters(loc=gt.zeros(2), scale=1.0), d.scale.tolist()
        (gradstack.Size([2]), [1.0, 1.0])
        >>> d._set_parameters(loc=0.0, scale=1.0)
        gradstack.Size([])
        """
        tensors = broadcast_all(*parameters.values())
        for name, tensor in zip(parameters, tensors):
            setattr(self, name, tensor)
        if all(isinstance(value, _Number) for value in parameters.values()):
            return Size()
        return tensors[0].size()

    def _set_probs_or_logits(self, probs, logits, **others) -> Size:
        """``_set_parameters`` for a distribution given either ``probs`` or ``logits``
        (not both), broadcast with ``others``; the one given is also ``_param``.

        Examples
        --------
        >>> from gradstack_nn.distributions import Bernoulli
        >>> d = Bernoulli.__new__(Bernoulli)
        >>> d._set_probs_or_logits(None, 0.0), d._param is d.logits
        (gradstack.Size([]), True)
        >>> d._set_probs_or_logits(0.5, 0.0)
        Traceback (most recent call last):
          ...
        ValueError: Either `probs` or `logits` must be specified, but not both.
        """
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        batch_shape = self._set_parameters(**others, **{name: value})
        self._param = getattr(self, name)
        return batch_shape

    def _expand_parameters(self, cls, batch_shape, _instance, *names, event_shape=None):
        """``expand`` for a distribution whose parameters ``names`` have the batch shape
        (``+ event_shape`` when given): a new instance with each parameter that is set
        (``probs``/``logits``: whichever were computed) expanded, not validated again
        (Note [Parameters named once]).

        Examples
        --------
        >>> import gradstack_tensor as gt
        >>> from gradstack_nn.distributions import Normal
        >>> d = Normal(gt.zeros(3), 1.0)
        >>> d._expand_parameters(Normal, (2, 3), None, "loc", "scale").scale.shape
        gradstack.Size([2, 3])
        """
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape if event_shape is None else batch_shape + event_shape
        for name in names:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(shape))
        if "_param" in self.__dict__:
            new._param = new.logits if "logits" in self.__dict__ else new.probs
        # ``cls`` is a subclass of Distribution, which mypy cannot see through super()
        if event_shape is None:
            super(cls, new).__init__(batch_shape, validate_args=False)  # type: ignore[call-arg]
        else:
            super(cls, new).__init__(  # type: ignore[call-arg]
                batch_shape, event_shape, validate_args=False
            )
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method."
            )
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names
        )
        return self.__class__.__name__ + "(" + args_string + ")"


class ParamShapeOfParam:
    """``param_shape``: the shape of the parameter the constructor was given (``_param``:
    ``probs`` or ``logits``, set by ``Distribution._set_probs_or_logits``), which
    torch's ``Bernoulli``, ``Binomial``, ``Categorical`` ... each write out."""

    _param: Tensor

    @property
    def param_shape(self) -> Size:
        return self._param.size()
