"""torch's CPU rejection samplers: ``_standard_gamma``, ``poisson``, ``binomial``,
``_sample_dirichlet`` and ``cauchy_``, with torch's algorithms over torch's
stream (Note [Replaying torch's scalar draws] in ``_torch_stream.py``), so that after the
same ``manual_seed`` they draw torch's values.

Note [torch's rejection samplers, step for step]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The samplers follow ATen's ``Distributions.h``/``Distributions.cpp`` (2.13): Marsaglia and
Tsang's gamma sampler with the ``alpha < 1`` boost, Hoermann's transformed rejection for a
Poisson rate of at least 10 (products of uniforms below), BTRS or inversion for the
binomial.  An accept/reject test that differs in its last bit takes a different number of
draws and changes every later value, so the arithmetic is torch's, type for type: where
ATen computes in the tensor's ``scalar_t`` (``float`` for float32 tensors, e.g. ``alpha
+= 1.0f``, ``count * prob``) the code here rounds to float32 (``_F32``), and where it
computes in ``double`` it uses Python floats; the constants written ``0.0331f`` are the
float32 values.  One function is not the C library's: ``math.lgamma`` is CPython's own,
used only by the Poisson rejection test for rates of at least 10, where a last-bit
difference flips a decision with a probability of about 1e-16 per draw.

Each sampler runs Python steps per element: measured on a shared 2-core host (medians of
5 interleaved rounds), 10,000 draws of Gamma(1.5) take 80 ms (torch: 0.7 ms), of
Poisson(4) 60 ms (0.6 ms), of float32 Binomial(100, 0.3) 340 ms (0.8 ms).  They are the
kernels of the ops ``poisson`` and ``binomial`` (``gradstack_tensor.poisson``/``binomial``,
bound at the end) and what nn-mini's distributions draw with; C kernels would make them
fast, exact as they are but slow for large samples.
"""

from __future__ import annotations

import math

import numpy as np

from ._dispatch import OPS
from ._tensor import Tensor
from ._tensor import _data as data_of
from ._tensor import _wrap as wrap
from ._torch_stream import TorchStream
from .dtypes import SCALAR_TYPE_NAMES
from .random import generator_or_default

__all__ = ["standard_gamma", "sample_dirichlet", "poisson", "binomial", "cauchy"]

_F32 = np.float32
_ONE_THIRD_F = float(_F32(1.0) / _F32(3.0))  # 1.0f / 3.0f
_C0331_F = float(_F32(0.0331))  # 0.0331f


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


def _gamma_one(alpha, s: TorchStream, single: bool) -> float:
    """ATen's ``sample_gamma<scalar_t, double>`` for one ``alpha`` (``single``: scalar_t
    is float)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inverse = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1 - s.uniform(), inverse)
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    d = float(_F32(alpha) - _F32(_ONE_THIRD_F)) if single else alpha - _ONE_THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = s.normal()
            y = 1.0 + c * x
            if not y <= 0:  # ATen's do-while (y <= 0): a NaN ends it
                break
        v = y * y * y
        u = 1 - s.uniform()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_values(alpha: np.ndarray, single: bool) -> np.ndarray:
    """Gamma(alpha, 1) draws of each element of ``alpha`` (C order), as float64."""
    out = np.empty(alpha.size, dtype=np.float64)
    with TorchStream() as s:
        for i, a in enumerate(alpha.reshape(-1).tolist()):
            out[i] = _gamma_one(a, s, single)
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


def _poisson_one(lam: float, s: TorchStream) -> int:
    """ATen's ``sample_poisson`` for one rate."""
    if lam >= 10:
        # transformed rejection (Hoermann, 1993)
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = s.uniform() - 0.5
            v = s.uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)) <= (
                -lam + k * loglam - math.lgamma(k + 1)
            ):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x = 0
    prod = 1.0
    while True:
        prod *= s.uniform()
        if prod > enlam:
            x += 1
        else:
            return x


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
    out = np.empty(lam.size, dtype=lam.dtype)
    with TorchStream(generator, "poisson") as s:
        for i, value in enumerate(lam.reshape(-1).tolist()):
            if not value >= 0:  # checked element by element: the earlier ones drew
                raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
            out[i] = _poisson_one(value, s)
    return wrap(out.reshape(lam.shape))


_STIRLING_TAIL = (
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287,
)  # fmt: skip


def _stirling_approx_tail(k: float) -> float:
    if k < len(_STIRLING_TAIL):
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count, prob, s: TorchStream, S) -> object:
    """ATen's ``binomial_inversion<scalar_t, double>``; ``S`` is scalar_t."""
    geom_sum = 0.0
    num_geom = S(0)
    logprob = float(S(math.log1p(-float(prob))))  # log1p of scalar_t
    while True:
        geom = math.ceil(math.log(s.uniform()) / logprob)
        geom_sum += geom
        if geom_sum > float(count):
            break
        num_geom = S(num_geom + S(1))
    return num_geom


def _btrs(count, prob, s: TorchStream, S) -> object:
    """ATen's ``btrs<scalar_t, double>``, transformed rejection with squeeze."""
    stddev = float(S(math.sqrt(float(S(count * prob * (S(1) - prob))))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(S(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(S(prob / (S(1) - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(math.floor(S((count + S(1)) * prob)))
    while True:
        u = s.uniform() - 0.5
        v = s.uniform()
        us = 0.5 - abs(u)
        k = S(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        kf = float(k)
        count_k1 = float(S(S(count - k) + S(1)))
        upperbound = (
            (m + 0.5) * math.log((m + 1) / (r * (float(count) - m + 1)))
            + float(S(count + S(1))) * math.log((float(count) - m + 1) / count_k1)
            + (kf + 0.5) * math.log(r * count_k1 / float(S(k + S(1))))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(float(count) - m)
            - _stirling_approx_tail(kf)
            - _stirling_approx_tail(float(S(count - k)))
        )
        if v <= upperbound:
            return k


def _binomial_one(count, prob, s: TorchStream, S) -> object:
    """ATen's ``sample_binomial<scalar_t, double>``."""
    if count <= 0.0 or prob <= 0.0:
        return S(0)
    if prob >= 1.0:
        return count
    if prob <= 0.5:
        if S(count * prob) >= 10.0:
            return _btrs(count, prob, s, S)
        return _binomial_inversion(count, prob, s, S)
    if prob > 0.5:
        qprob = S(1.0 - float(prob))
        if S(count * qprob) >= 10.0:
            return S(count - _btrs(count, qprob, s, S))
        return S(count - _binomial_inversion(count, qprob, s, S))
    return S(math.nan)


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
    S = _F32 if n.dtype == np.float32 else float
    out = np.empty(n.size, dtype=n.dtype)
    with TorchStream(generator, "binomial") as s:
        for i, (ni, pi) in enumerate(zip(n.reshape(-1).tolist(), p.reshape(-1).tolist())):
            out[i] = _binomial_one(S(ni), S(pi), s, S)
    return wrap(out.reshape(n.shape))


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
