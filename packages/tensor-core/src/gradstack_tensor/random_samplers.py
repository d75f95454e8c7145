"""torch's CPU rejection samplers: ``_standard_gamma``, ``poisson``, ``binomial``,
``_sample_dirichlet`` and ``cauchy_``, with torch's algorithms over torch's stream, so that
after the same ``manual_seed`` they draw torch's values.

Note [torch's rejection samplers, step for step]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The samplers follow ATen's ``Distributions.h``/``Distributions.cpp`` (2.13): Marsaglia and
Tsang's gamma sampler with the ``alpha < 1`` boost, Hoermann's transformed rejection for a
Poisson rate of at least 10 (products of uniforms below), BTRS or inversion for the
binomial.  An accept/reject test that differs in its last bit takes a different number of
draws and changes every later value, so the arithmetic is torch's, type for type: where
ATen computes in the tensor's ``scalar_t`` (``float`` for float32 tensors, e.g. ``alpha
+= 1.0f``, ``count * prob``) the kernels compute in float, and in double where ATen does.
Each sampler is one C loop over the elements that draws from the generator as torch's
loop does, element after element (Note [Samplers in one C pass] in
``_sampler_kernels.pyx``); this module checks the arguments and shapes the results.  They
are the kernels of the ops ``poisson`` and ``binomial`` (bound at the end) and what
nn-mini's distributions draw with.
"""

from __future__ import annotations

import numpy as np

from . import _sampler_kernels as _sk
from ._dispatch import OPS
from ._tensor import Tensor
from ._tensor import _data as data_of
from ._tensor import _wrap as wrap
from .dtypes import SCALAR_TYPE_NAMES
from .random import generator_or_default

__all__ = ["standard_gamma", "sample_dirichlet", "poisson", "binomial", "cauchy"]


# torch's ScalarType names, as its dispatch errors print them
_SCALAR_TYPE = SCALAR_TYPE_NAMES


def _type_name(t: Tensor) -> str:
    dtype = str(t.dtype).split(".")[-1]
    return _SCALAR_TYPE.get(dtype, dtype)


def _floating(t: Tensor, name: str) -> np.ndarray:
    """The float32/float64 array of ``t``, or torch's dispatch error for its dtype."""
    a = data_of(t.detach())
    if a.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{_type_name(t)}'")
    return np.ascontiguousarray(a)


def _std_max(low, values: np.ndarray) -> np.ndarray:
    """``std::max(low, v)`` elementwise: ``low`` where ``v`` is NaN (np.maximum keeps it)."""
    values = np.asarray(values)
    return np.where(low < values, values, np.asarray(low, dtype=values.dtype))


def _gamma_values(alpha: np.ndarray, single: bool) -> np.ndarray:
    """Gamma(alpha, 1) draws of each element of ``alpha`` (C order) from the default
    generator, as float64 (``single``: ATen's scalar_t is float, ``alpha`` float32)."""
    out = np.empty(alpha.size, dtype=np.float64)
    flat = alpha.reshape(-1).astype(np.float32 if single else np.float64, copy=False)
    _sk.standard_gamma(generator_or_default(None), flat, out, single)
    return out.reshape(alpha.shape)


def standard_gamma(concentration: Tensor) -> Tensor:
    """``torch._standard_gamma``: Gamma(concentration, 1) draws, without gradient
    (``Gamma.rsample`` adds the reparameterised one).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> standard_gamma(gt.tensor([0.5, 2.0], dtype=gt.float64)).tolist()
    [0.0007893582063475732, 0.6315406048880828]
    """
    a = _floating(concentration, "gamma_cpu")
    single = a.dtype == np.float32
    values = _gamma_values(a, single).astype(a.dtype)
    return wrap(_std_max(np.finfo(a.dtype).tiny, values))


def sample_dirichlet(concentration: Tensor) -> Tensor:
    """``torch._sample_dirichlet``: gamma draws (in float64) normalised over the last dim
    and clamped into ``[tiny, 1)``.

    The gamma draws are torch's bit for bit; the normalising sum is tensor-core's ``sum``,
    which adds the last dim in order where torch's AVX2 kernel adds 4-wide lanes and the
    tail in another order, so a float64 ratio may differ from torch's in its last bit.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> x = sample_dirichlet(gt.tensor([1.0, 2.0, 3.0], dtype=gt.float64))
    >>> round(x.sum().item(), 12)
    1.0
    """
    a = _floating(concentration, "dirichlet")
    gamma = _std_max(np.finfo(np.float64).tiny, _gamma_values(a, False))
    g = wrap(np.asarray(gamma, dtype=np.float64))
    ratio = data_of(g / g.sum(-1, keepdim=True)).astype(a.dtype)
    below_one = np.nextafter(a.dtype.type(1), a.dtype.type(0))
    clamped = _std_max(np.finfo(a.dtype).tiny, ratio)
    return wrap(np.where(clamped < below_one, clamped, below_one).astype(a.dtype))


def poisson(rate: Tensor, generator=None) -> Tensor:
    """``torch.poisson``: a Poisson draw for each rate.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> poisson(gt.tensor([0.5, 4.0, 30.0])).tolist()
    [2.0, 5.0, 26.0]
    """
    lam = _floating(rate, "poisson_cpu")
    gen = generator_or_default(generator, "poisson")
    out = np.empty(lam.shape, dtype=lam.dtype)
    # checked element by element, as torch's loop: the earlier ones drew
    if _sk.poisson(gen, lam.reshape(-1), out.reshape(-1)) >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return wrap(out)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """``torch.binomial``: a Binomial(count, prob) draw for each pair of elements.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> binomial(gt.tensor([10.0, 100.0]), gt.tensor([0.5, 0.3])).tolist()
    [7.0, 31.0]
    """
    for t, what in ((count, "count"), (prob, "prob")):
        if not t.is_floating_point():
            raise ValueError(
                f"binomial only supports floating-point dtypes for {what}, got: {_type_name(t)}"
            )
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_type_name(prob)} but expected {_type_name(count)}")
    if tuple(count.shape) != tuple(prob.shape):
        from .composites import broadcast_tensors

        count, prob = broadcast_tensors(count, prob)  # torch's size error if they do not
    n = _floating(count, "binomial_cpu")
    p = _floating(prob, "binomial_cpu")
    gen = generator_or_default(generator, "binomial")
    out = np.empty(n.shape, dtype=n.dtype)
    _sk.binomial(gen, n.reshape(-1), p.reshape(-1), out.reshape(-1))
    return wrap(out)


def cauchy(shape, dtype, median: float = 0.0, sigma: float = 1.0, generator=None) -> Tensor:
    """``empty(shape, dtype=dtype).cauchy_(median, sigma)``: torch's
    ``median + sigma * tan(pi * (u - 0.5))`` of a uniform double ``u`` per element.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> [round(v, 6) for v in cauchy((2,), gt.float32).tolist()]
    [10.59773, 0.764767]
    """
    from ._impl_random import cauchy_values

    n = int(np.prod(shape, dtype=np.int64))
    values = cauchy_values(generator_or_default(generator, "cauchy_"), n, median, sigma)
    return wrap(values.astype(dtype.numpy).reshape(tuple(shape)))


# -------------------------------------------------------------------------------------
# the kernels of the ops poisson and binomial (declared in _op_table.py)


def _poisson_kernel(input, generator=None):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"poisson(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    return poisson(input, generator)


def _binomial_kernel(count, prob, generator=None):
    for t, what, pos in ((count, "count", 1), (prob, "prob", 2)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"binomial(): argument '{what}' (position {pos}) must be Tensor, not "
                f"{type(t).__name__}"
            )
    return binomial(count, prob, generator)


OPS["poisson"].set_kernel(_poisson_kernel)
OPS["binomial"].set_kernel(_binomial_kernel)
