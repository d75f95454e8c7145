"""Kernels of the random ops, with torch 2.13's CPU algorithms over torch's stream.

Each op draws from a :class:`~gradstack_tensor.random.Generator` (Note [torch's random
stream] in random.py) exactly as torch's CPU kernel does: the same number of raw draws,
in the same order, turned into values by the same arithmetic (the C loops of
``_random_kernels.pyx`` and ``_sampler_kernels.pyx``, the latter drawing from the
generator's state in the same pass).  After ``manual_seed(s)`` they give torch's values
bit for bit.

===============================  =================================================
op                               torch's CPU algorithm
===============================  =================================================
``uniform_``                     ``from + (to - from) * u`` per element (24 or 53 bits)
``normal_``                      vectorised Box-Muller over blocks of 16 (size >= 16,
                                 contiguous; the last 16 redrawn), else one at a time
                                 with the generator's cached second value
``bernoulli_``, ``bernoulli``    ``u < p`` per element (53 bits for a float ``p``)
``exponential_``                 ``-1 / lambda * log1p(-u)``, 53 bits
``random_``                      ``raw % range + from`` (64-bit draws past 2**32)
``multinomial``                  without replacement (or one sample): ``argmax``/``topk``
                                 of ``p / q``, ``q ~ Exp(1)``; with replacement: binary
                                 search of ``u`` in the normalised cumulative sums
``normal`` (tensor mean/std)     ``normal_(0, 1)`` then ``* std + mean``
===============================  =================================================

Note [The CPU capability decides the arithmetic]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch picks its kernels by CPU capability (``torch.backends.cpu.get_cpu_capability()``):
AVX2 (or AVX512) on a CPU with AVX2 and FMA, else DEFAULT, unless the environment
variable ``ATEN_CPU_CAPABILITY`` (``default``, ``avx2``, ``avx512``) lowers it.  The
capability changes the values: with FMA the multiply-adds are fused, and float32's
``normal_`` uses the AVX2 Box-Muller (Note [Which products torch fuses] in
``_random_kernels.pyx``).  :func:`cpu_capability` makes the same choice, from the same
variable, once at import.

Note [Values are written in memory order]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's TensorIterator fills a tensor in the order of its memory (dims sorted by stride),
not in index order: ``w.t().normal_()`` writes the same memory as ``w.normal_()`` would
(though by the one-at-a-time sampler, since ``w.t()`` is not contiguous).
:func:`_memory_order` gives that view.

Note [float16 normal_ with a tail]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch draws a contiguous float16 ``normal_`` of 16 elements or more in float32 and rounds
(measured: bit for bit when the size is a multiple of 16, on both capabilities).  When it
is not, torch's last 16 values come from a path not reproduced here (neither 11-bit nor
rounded uniforms give them): gradstack's last 16 float16 values then differ from torch's,
the others are equal.  Below 16 elements, or not contiguous, the values are torch's.

Note [Complex random fills]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch fills a complex tensor through its ``view_as_real``: ``uniform_(a, b)`` draws the
real and imaginary parts as a real tensor of twice the values (interleaved, in memory
order), and ``normal_(mean, std)`` draws them with ``std / sqrt(2)`` (and ``mean`` for
both parts), so that ``E|z - mean|^2 = std^2``.  ``rand``, ``rand_like`` and
``randn_like`` of a complex dtype are these fills, as in torch: the FNO's
``torch.rand(..., dtype=torch.cfloat)`` gives torch's numbers.

Examples
--------
>>> import gradstack_tensor as gt
>>> _ = gt.manual_seed(0)
>>> gt.empty(3).bernoulli_(0.5).tolist()
[0.0, 0.0, 1.0]
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from . import _dropout_kernels
from . import _random_kernels as _rk
from . import _sampler_kernels as _sk
from ._dispatch import OPS
from ._impl_elementwise import SCALAR_TYPE, _check_writable
from ._tensor import Tensor, _data, _wrap
from .random import generator_or_default

__all__ = ["cpu_capability"]


def _capability_from(env: str | None, hardware_avx2: bool) -> str:
    best = "avx2" if hardware_avx2 else "default"
    if env is None:
        return best
    if env == "default":
        return "default"
    if env in ("avx2", "avx512"):
        return best  # (gradstack's kernels are the same for both: see the Note)
    warnings.warn(f"ignoring invalid value for ATEN_CPU_CAPABILITY: {env}", stacklevel=2)
    return best


_CAPABILITY = _capability_from(os.environ.get("ATEN_CPU_CAPABILITY"), _rk.avx2_fma_supported())


def cpu_capability() -> str:
    """``"avx2"`` or ``"default"``: which of torch's CPU kernels the random ops follow
    (Note [The CPU capability decides the arithmetic])."""
    return _CAPABILITY


def _fused() -> bool:
    return _CAPABILITY != "default"


# -------------------------------------------------------------------------------------
# helpers


def _memory_axes(x: np.ndarray):
    """The axis order whose C order is ``x``'s memory order (Note [Values are written in
    memory order]), or None when that is ``x``'s own C order."""
    if x.ndim < 2 or x.flags.c_contiguous:
        return None
    return sorted(range(x.ndim), key=lambda d: -abs(x.strides[d]))


def _memory_order(x: np.ndarray) -> np.ndarray:
    """A view of ``x`` whose C order is its memory order."""
    axes = _memory_axes(x)
    return x if axes is None else x.transpose(axes)


def _write(input: Tensor, values: np.ndarray, name: str) -> Tensor:
    """Write the flat ``values`` into ``input`` in memory order and bump its version."""
    view = _memory_order(_data(input))
    view[...] = values.reshape(view.shape)
    input._bump_version(name)
    return input


def _check_float(input: Tensor, name: str, kernel: str, complex_ok: bool = False) -> None:
    if not (input.is_floating_point() or (complex_ok and input.is_complex())):
        raise NotImplementedError(  # torch's type and words, then what to do
            f"\"{kernel}\" not implemented for '{SCALAR_TYPE[input.dtype.name]}' ({name} of a "
            f"{input.dtype.name} tensor: random fills need a floating-point tensor; use randint "
            "for integers)"
        )


def _fill_target(input: Tensor) -> np.ndarray:
    """The real array a random fill writes: ``input``'s data, or for a complex tensor its
    ``view_as_real`` (Note [Complex random fills])."""
    x = _data(input)
    return x[..., None].view(x.real.dtype) if x.dtype.kind == "c" else x


def _write_into(input: Tensor, target: np.ndarray, values: np.ndarray, name: str) -> Tensor:
    view = _memory_order(target)
    view[...] = values.reshape(view.shape)
    input._bump_version(name)
    return input


def _real(v, name: str, what: str) -> float:
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
        raise TypeError(f"{name}(): argument '{what}' must be a number, not {type(v).__name__}")
    return float(v)


def uniform_values(gen, n: int, dtype: np.dtype, low: float = 0.0, high: float = 1.0):
    """``n`` values of torch's ``uniform_real_distribution`` of ``dtype`` in [low, high),
    drawn in one C pass (Note [Uniform and exponential draws in C])."""
    if dtype == np.float64:
        out = np.empty(n, dtype=np.float64)
        _sk.uniform(gen, out, low, high, _fused())
        return out
    out = np.empty(n, dtype=np.float32)
    _sk.uniform(gen, out, low, high, _fused())
    # torch draws float16 and bfloat16 in float32 and rounds
    return out if dtype == np.float32 else out.astype(dtype)


def _normal_scalar(gen, n: int, mean: float, std: float) -> np.ndarray:
    """torch's one-at-a-time normal sampler (float64 values), using and updating the
    generator's cached second value."""
    draws = _rk.normal_scalar_draws(n, gen._next_double is not None)
    out = np.empty(n, dtype=np.float64)
    gen._next_double = _rk.normal_scalar(
        gen._random64(draws), out, mean, std, _fused(), gen._next_double
    )
    return out


def normal_values(
    gen, n: int, dtype: np.dtype, mean: float, std: float, contiguous: bool, out=None
):
    """``n`` values of torch's ``normal_`` of ``dtype`` (flat, in memory order); ``out``, a
    flat float32/float64 array of ``n`` elements of ``dtype``, receives them in place
    when the block sampler runs (``n >= 16`` and ``contiguous``)."""
    if n < 16 or not contiguous:
        return _normal_scalar(gen, n, mean, std).astype(dtype)
    tail = n % 16
    if dtype == np.float64:
        data = out if out is not None else np.empty(n, dtype=np.float64)
        _sk.uniform(gen, data, 0.0, 1.0, _fused())
        _rk.normal_blocks_f64(data[: n - tail], mean, std)
        if tail:
            data[n - 16 :] = uniform_values(gen, 16, np.float64)
            _rk.normal_blocks_f64(data[n - 16 :], mean, std)
        return data
    # float16 is drawn as float32 and rounded: torch's values when n is a multiple of 16
    # (Note [float16 normal_ with a tail])
    data = out if out is not None and dtype == np.float32 else np.empty(n, dtype=np.float32)
    _sk.uniform(gen, data, 0.0, 1.0, _fused())
    vectorised = _fused()
    _rk.normal_blocks_f32(data[: n - tail], mean, std, vectorised)
    if tail:
        data[n - 16 :] = uniform_values(gen, 16, np.float32)
        _rk.normal_blocks_f32(data[n - 16 :], mean, std, vectorised)
    return data if dtype == np.float32 else data.astype(dtype)


def exponential_values(gen, n: int, lambd: float) -> np.ndarray:
    out = np.empty(n, dtype=np.float64)
    _sk.exponential(gen, out, lambd)
    return out


def randperm_values(gen, n: int) -> np.ndarray:
    """torch's ``randperm_cpu``: Fisher-Yates over ``random() % (n - i)`` for
    ``n < 2**32 / 20``, else the inside-out variant over ``random64() % (i + 1)`` (one C
    pass, the draws taken in it)."""
    out = np.empty(n, dtype=np.int64)
    _sk.randperm(gen, out)
    return out


# -------------------------------------------------------------------------------------
# uniform_ and normal_ (declared in _op_table.py)


@OPS["uniform_"].set_kernel
def uniform_(input, a=0.0, b=1.0, generator=None):
    _check_writable(input, "uniform_")
    _check_float(input, "uniform_", "check_uniform_bounds", complex_ok=True)
    a, b = _real(a, "uniform_", "from"), _real(b, "uniform_", "to")
    if not a <= b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}"
        )
    if not np.isfinite(b - a):
        raise RuntimeError(
            f"uniform_: the range [{a}, {b}) is out of bounds for {input.dtype.name}"
        )
    gen = generator_or_default(generator, "uniform_")
    x = _fill_target(input)
    view = _memory_order(x)
    if x.dtype in _FILL_DTYPES and view.flags.c_contiguous and view.flags.writeable:
        _sk.uniform(gen, view.reshape(-1), a, b, _fused())  # in place, in memory order
        input._bump_version("uniform_")
        return input
    return _write_into(input, x, uniform_values(gen, x.size, x.dtype, a, b), "uniform_")


@OPS["normal_"].set_kernel
def normal_(input, mean=0.0, std=1.0, generator=None):
    _check_writable(input, "normal_")
    _check_float(input, "normal_", "normal_kernel_cpu", complex_ok=True)
    mean, std = _real(mean, "normal_", "mean"), _real(std, "normal_", "std")
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    gen = generator_or_default(generator, "normal_")
    x = _fill_target(input)
    if input.is_complex():  # each part's variance is half (Note [Complex random fills])
        std = std / math.sqrt(2)
    contiguous = x.flags.c_contiguous
    if x.dtype in _FILL_DTYPES and contiguous and x.flags.writeable and x.size >= 16:
        flat = x.reshape(-1)  # the block sampler, in place
        normal_values(gen, x.size, x.dtype, mean, std, True, out=flat)
        input._bump_version("normal_")
        return input
    values = normal_values(gen, x.size, x.dtype, mean, std, contiguous)
    return _write_into(input, x, values.astype(x.dtype, copy=False), "normal_")


# -------------------------------------------------------------------------------------
# bernoulli


def _bernoulli_into(input: Tensor, p, gen, name: str) -> Tensor:
    x = _data(input)
    if isinstance(p, Tensor):
        pa = _data(p)
        if pa.dtype.kind != "f":
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_p_\" not implemented for '{SCALAR_TYPE[p.dtype.name]}'"
            )
        try:
            pa = np.broadcast_to(pa, x.shape)
        except ValueError:
            raise RuntimeError(
                f"{name}: the probabilities of shape {list(pa.shape)} do not broadcast to the "
                f"tensor's shape {list(x.shape)}"
            ) from None
        axes = _memory_axes(x)
        flat_p = np.ascontiguousarray(pa if axes is None else pa.transpose(axes)).reshape(-1)
        if flat_p.size and not ((flat_p >= 0) & (flat_p <= 1)).all():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to "
                "PyTorch.)"
            )
        if pa.dtype == np.float64:
            u = uniform_values(gen, flat_p.size, np.float64)
        else:
            u = uniform_values(gen, flat_p.size, np.float32)
            flat_p = flat_p.astype(np.float32)
        return _write(input, (u < flat_p).astype(x.dtype), name)
    p = _real(p, name, "p")
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if x.dtype in _FILL_DTYPES and x.flags.c_contiguous and x.flags.aligned and x.flags.writeable:
        # Note [Dropout's mask in one pass] (_dropout_kernels.pyx): the same draws
        if x.size:
            gen._fresh = False  # as gen._random(n > 0)
        _dropout_kernels.bernoulli_scalar_draw_(x.reshape(-1), gen._bits, p)
        input._bump_version(name)
        return input
    u = uniform_values(gen, x.size, np.float64)
    return _write(input, (u < p).astype(x.dtype), name)


_FILL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _bernoulli_inplace(input, p=0.5, generator=None):
    """``input`` filled with 0/1 draws: 1 with probability ``p`` (a number or a tensor of
    probabilities broadcast to ``input``)."""
    _check_writable(input, "bernoulli_")
    gen = generator_or_default(generator, "bernoulli_")
    return _bernoulli_into(input, p, gen, "bernoulli_")


def empty_like_array(input: Tensor, dtype) -> np.ndarray:
    """torch's ``empty_like`` (``preserve_format``): the input's strides when it is dense
    (a permutation of a contiguous block), else C-contiguous.  The factories'
    ``*_like`` (``creation.py``) and the draws into a new tensor (whose order of draws is
    that memory's order) share it."""
    x = _data(input)
    target = dtype.numpy
    if x.ndim >= 2 and not x.flags.c_contiguous and x.size > 1:
        extent = sum((n - 1) * abs(st) for n, st in zip(x.shape, x.strides)) + x.itemsize
        if extent == x.size * x.itemsize and min(x.strides) > 0:
            return np.empty_like(x, dtype=target, order="K")
    return np.empty(x.shape, dtype=target)


def _bernoulli(input, p=None, generator=None):
    """0/1 draws of ``input``'s shape and dtype: 1 with probability ``input`` (or ``p``)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"bernoulli(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )

    gen = generator_or_default(generator, "bernoulli")
    # torch's empty_like: an expanded (overlapping) input gets a C-contiguous result, whose
    # memory order is the order of the draws (numpy's empty_like kept the stride-0 dim
    # innermost: other draws than torch's for Bernoulli(probs).sample(shape))
    out = _wrap(empty_like_array(input, input.dtype))
    return _bernoulli_into(out, input if p is None else p, gen, "bernoulli")


OPS["bernoulli"].set_kernel(_bernoulli)
OPS["bernoulli_"].set_kernel(_bernoulli_inplace)


# -------------------------------------------------------------------------------------
# exponential_ and random_


def _exponential_inplace(input, lambd=1.0, generator=None):
    _check_writable(input, "exponential_")
    if not input.is_floating_point():
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be "
            f"a floating point but you specified {SCALAR_TYPE[input.dtype.name]}"
        )
    lambd = _real(lambd, "exponential_", "lambd")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    gen = generator_or_default(generator, "exponential_")
    return _serial_fill(input, "exponential_", lambda out: _sk.exponential(gen, out, lambd))


OPS["exponential_"].set_kernel(_exponential_inplace)


# -------------------------------------------------------------------------------------
# cauchy_, log_normal_ and geometric_: torch's serial CPU kernels, one double per element
# (Note [Serial draws in double])

# Note [Serial draws in double]
# torch's CPU cauchy_, log_normal_ and geometric_ run ``cpu_serial_kernel`` over a
# distribution of doubles, whatever the tensor's dtype: one ``uniform_real_distribution
# <double>`` draw per element (cauchy: ``median + sigma * tan(pi * (u - 0.5))``;
# geometric: ``ceil(log(u) / log1p(-p))``), or one ``normal_distribution<double>`` draw
# using the generator's cached second value (log_normal: ``exp(mean + std * n)``), cast to
# the dtype.  Each is one C loop (``_sampler_kernels.pyx``) with the C library's functions,
# as torch's, writing a float32/float64 tensor whose memory is one block in place, else a
# float64 buffer cast afterwards (C's cast of a double, as torch's ``static_cast``).

_TYPE_META = {"int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}  # fmt: skip


def _serial_fill(input: Tensor, name: str, draw, integral=None) -> Tensor:
    """Run ``draw(flat)`` (a sampler of ``_sampler_kernels``) over ``input``'s memory in
    memory order (Note [Values are written in memory order]) and bump its version;
    ``integral(values)`` turns the float64 values into an integer dtype's."""
    x = _data(input)
    view = _memory_order(x)
    if x.dtype in _FILL_DTYPES and view.flags.c_contiguous and view.flags.writeable:
        draw(view.reshape(-1))
        input._bump_version(name)
        return input
    values = np.empty(x.size, dtype=np.float64)
    draw(values)
    if integral is not None and x.dtype.kind in "iu":
        values = integral(values)
    elif x.dtype.itemsize == 2 and x.dtype.kind == "f":
        # c10::Half of a double converts through float: rounded twice, as here
        with np.errstate(over="ignore"):  # (beyond the dtype: inf, as torch's cast)
            values = values.astype(np.float32)
    with np.errstate(over="ignore"):
        values = values.astype(x.dtype)
    return _write(input, values, name)


def cauchy_values(gen, n: int, median: float, sigma: float) -> np.ndarray:
    """``n`` draws of torch's ``cauchy_distribution<double>`` (float64)."""
    out = np.empty(n, dtype=np.float64)
    _sk.cauchy(gen, out, median, sigma)
    return out


def _cauchy_inplace(input, median=0.0, sigma=1.0, generator=None):
    _check_writable(input, "cauchy_")
    median, sigma = _real(median, "cauchy_", "median"), _real(sigma, "cauchy_", "sigma")
    if not input.is_floating_point():
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_TYPE_META[input.dtype.name]}"
        )
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    gen = generator_or_default(generator, "cauchy_")
    return _serial_fill(input, "cauchy_", lambda out: _sk.cauchy(gen, out, median, sigma))


def _log_normal_inplace(input, mean=1.0, std=2.0, generator=None):
    _check_writable(input, "log_normal_")
    mean, std = _real(mean, "log_normal_", "mean"), _real(std, "log_normal_", "std")
    _check_float(input, "log_normal_", "log_normal_cpu")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    gen = generator_or_default(generator, "log_normal_")
    fused = _fused()
    return _serial_fill(
        input, "log_normal_", lambda out: _sk.log_normal(gen, out, mean, std, fused)
    )


def _geometric_integral(values: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # (C's cast of a double: through a 64-bit integer)
        return values.astype(np.int64)


def _geometric_inplace(input, p, generator=None):
    _check_writable(input, "geometric_")
    p = _real(p, "geometric_", "p")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    gen = generator_or_default(generator, "geometric_")
    return _serial_fill(
        input, "geometric_", lambda out: _sk.geometric(gen, out, p), _geometric_integral
    )


OPS["cauchy_"].set_kernel(_cauchy_inplace)
OPS["log_normal_"].set_kernel(_log_normal_inplace)
OPS["geometric_"].set_kernel(_geometric_inplace)

_INT_LIMITS = {
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "uint8": (0, 255),
    "bool": (0, 1),
}
_MANTISSA = {"float16": 11, "float32": 24, "float64": 53}
_C_NAMES = {
    "int64": "long",
    "int32": "int",
    "int16": "short",
    "int8": "signed char",
    "uint8": "unsigned char",
    "bool": "bool",
    "float16": "c10::Half",
    "float32": "float",
    "float64": "double",
}


def _check_random_bound(value: int, dtype_name: str, what: str) -> None:
    if dtype_name in _MANTISSA:
        m = _MANTISSA[dtype_name]
        if not -(2**m) <= value <= 2**m:
            warnings.warn(
                f"{what} is out of bounds [-(2^{m}), 2^{m}]. Due to precision limitations "
                f"{_C_NAMES[dtype_name].replace('c10::Half', 'Half')} can support discrete "
                "uniform distribution only within this range. This warning will become an "
                "error in version 1.7 release, please fix the code in advance",
                UserWarning,
                stacklevel=4,
            )
        return
    lo, hi = _INT_LIMITS[dtype_name]
    if not lo <= value <= hi:
        raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[dtype_name]}")


def _float_bounds(low: int, high: int, dtype_name: str) -> tuple[int, int]:
    """torch's ``update_from``/``update_to``: bounds of a float ``random_`` moved inwards
    to values the dtype represents (``randint(0, 2**35, dtype=float32)`` draws below
    ``2**35 - 2**11``)."""
    cast = {"float16": np.float16, "float32": np.float32, "float64": np.float64}[dtype_name]
    digits = _MANTISSA[dtype_name]

    def as_int(v: int) -> int:
        f = cast(v)
        return int(f) if np.isfinite(f) else v

    low_plus_1 = as_int(low + 1)
    if low_plus_1 < low:
        n = max(abs(low + 1).bit_length() - 1, 0)
        low = low_plus_1 + (1 << (n - digits + 1))
    high_minus_1 = as_int(high - 1)
    if high_minus_1 >= high:
        n = max(abs(high - 1).bit_length() - 1, 0)
        high = high_minus_1 - (1 << (n - digits + 1))
    return low, high


def _random_draws(gen, n: int, dtype_name: str, low: int | None, high: int | None):
    """torch's ``random_()``, ``random_(to)`` and ``random_(from, to)`` as ``(raw, span,
    from)``: the values are ``int64((raw % span) + from)``, computed modulo 2**64."""
    if low is None:  # random_(): [0, 2**mantissa] for floats, [0, max] for integers
        if dtype_name == "bool":
            return gen._random(n), 2, 0
        if dtype_name in ("float64", "int64"):
            bound = 2**53 + 1 if dtype_name == "float64" else 2**63
            return gen._random64(n), bound, 0
        bound = 2 ** _MANTISSA[dtype_name] + 1 if dtype_name in _MANTISSA else None
        if bound is None:
            bound = _INT_LIMITS[dtype_name][1] + 1
        return gen._random(n), bound, 0
    span = high - low
    # torch 2.13 draws 64 bits once the range reaches 2**28 (32 bits below), whatever the
    # dtype (measured: DistributionsHelper.h of older versions said 2**32 and four dtypes)
    return (gen._random64(n) if span >= 2**28 else gen._random(n)), span, low


def _random_span(dtype_name: str, low: int | None, high: int | None):
    """``(span, from, wide)`` of :func:`_random_draws` without drawing: ``wide`` when the
    draws are ``random64()``."""
    if low is None:
        if dtype_name == "bool":
            return 2, 0, False
        if dtype_name in ("float64", "int64"):
            return (2**53 + 1 if dtype_name == "float64" else 2**63), 0, True
        if dtype_name in _MANTISSA:
            return 2 ** _MANTISSA[dtype_name] + 1, 0, False
        return _INT_LIMITS[dtype_name][1] + 1, 0, False
    return high - low, low, high - low >= 2**28


def random_values(gen, n: int, dtype_name: str, low: int | None, high: int | None):
    """torch's ``random_()``, ``random_(to)`` and ``random_(from, to)`` values (int64)."""
    raw, span, low = _random_draws(gen, n, dtype_name, low, high)
    # torch: int64((raw % span) + from), computed modulo 2**64
    return ((raw % np.uint64(span)) + np.uint64(low % 2**64)).view(np.int64)


def _random_inplace(input, low=None, high=None, generator=None):
    """Integers drawn uniformly: ``random_()`` over the dtype's range, ``random_(to)`` over
    [0, to), ``random_(from, to)`` over [from, to)."""
    _check_writable(input, "random_")
    return random_fill(input, low, high, generator_or_default(generator, "random_"))


def random_fill(input, low, high, gen):
    """:func:`_random_inplace` drawing from ``gen`` (a :class:`Generator`), without telling
    the draw observer (for a factory whose draw vmap batches: Note [Factories under vmap])."""
    name = input.dtype.name
    if (low is None) != (high is None):  # random_(to)
        low, high = 0, (high if low is None else low)
    if low is not None:
        low, high = int(low), int(high)
        if not low < high:
            raise RuntimeError(
                f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
            )
        _check_random_bound(low, name, "from")
        _check_random_bound(high - 1, name, "to - 1")
        if name in _MANTISSA:
            low, high = _float_bounds(low, high, name)
    x = _data(input)
    if name in ("float32", "float64", "int64"):  # one C pass (Note [random_ in one C pass])
        view = _memory_order(x)
        flat = view.reshape(-1) if view.flags.c_contiguous else np.empty(x.size, x.dtype)
        # the draws taken from the generator's state in the same pass
        span, low, wide = _random_span(name, low, high)
        _sk.random_mod(gen, flat, span, low, wide)
        if not view.flags.c_contiguous:
            view[...] = flat.reshape(view.shape)
        input._bump_version("random_")
        return input
    values = random_values(gen, x.size, name, low, high)
    return _write(input, values.astype(x.dtype), "random_")


OPS["random_"].set_kernel(_random_inplace)


# -------------------------------------------------------------------------------------
# multinomial


def _multinomial(input, num_samples, replacement=False, generator=None):
    """Indices drawn from the categories of each row of ``input`` (weights, not
    necessarily normalised), with or without replacement."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"multinomial(): argument 'input' (position 1) must be Tensor, not "
            f"{type(input).__name__}"
        )
    gen = generator_or_default(generator, "multinomial")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(
            "multinomial(): argument 'num_samples' (position 2) must be int, not "
            f"{type(num_samples).__name__}"
        )
    n_sample = int(num_samples)
    p = _data(input)
    if p.dtype.kind != "f":
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{SCALAR_TYPE[input.dtype.name]}"
        )
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    n_categories = p.shape[-1]
    if n_sample <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not (replacement or n_sample <= n_categories):
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if n_categories > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    out_shape = (n_sample,) if p.ndim == 1 else (p.shape[0], n_sample)
    if p.size == 0:
        return _wrap(np.empty(out_shape, dtype=np.int64))
    rows = p.reshape(-1, n_categories)
    if not replacement or n_sample == 1:
        # Gumbel-max: the n_sample largest p / q, q ~ Exp(1), drawn in p's memory order
        if not (np.isfinite(rows).all() and (rows >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (rows.sum(axis=1, dtype=np.float64) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        q = np.empty_like(p)
        view = _memory_order(q)
        view[...] = exponential_values(gen, p.size, 1.0).astype(p.dtype).reshape(view.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (p / q).reshape(-1, n_categories)
        if n_sample == 1:
            idx = np.argmax(s, axis=1)[:, None]
        else:
            idx = np.argsort(-s, axis=1, kind="stable")[:, :n_sample]
        return _wrap(idx.astype(np.int64).reshape(out_shape))
    acc = np.float32 if p.dtype == np.float16 else p.dtype
    result = np.empty((rows.shape[0], n_sample), dtype=np.int64)
    for i, row in enumerate(rows):
        if not (row >= 0).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry < 0)"
            )
        if not np.isfinite(row).all():
            raise RuntimeError(
                "invalid multinomial distribution (encountering probability entry = infinity "
                "or NaN)"
            )
        cum = np.cumsum(row.astype(acc), dtype=acc)
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[-1] = 1
        u = uniform_values(gen, n_sample, np.float64)
        result[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return _wrap(result.reshape(out_shape))


OPS["multinomial"].set_kernel(_multinomial)


# -------------------------------------------------------------------------------------
# normal with tensor mean or std (torch.normal(mean, std))


def _normal(mean, std, generator=None):
    """Normal draws of mean ``mean`` and standard deviation ``std``, one of which at least
    is a tensor (broadcast together): ``normal_(0, 1)`` then ``* std + mean`` (torch's order:
    a tensor ``mean`` with a float ``std`` draws ``normal_(0, std)`` then adds ``mean``)."""
    gen = generator_or_default(generator, "normal")
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (m_t or s_t):
        raise TypeError("normal(): mean or std must be a Tensor for this form")
    if s_t and (_data(std) < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not s_t and not float(std) >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    for t in (mean, std):
        if isinstance(t, Tensor) and not t.is_floating_point():
            raise NotImplementedError(
                f"\"normal_kernel_cpu\" not implemented for '{SCALAR_TYPE[t.dtype.name]}'"
            )
    if m_t and s_t:
        ma, sa = _data(mean), _data(std)
        try:
            shape = np.broadcast_shapes(ma.shape, sa.shape)
        except ValueError:
            from ._shapes import broadcast_error

            raise broadcast_error(ma.shape, sa.shape) from None
        dtype = ma.dtype
    else:
        ma = _data(mean) if m_t else None
        sa = _data(std) if s_t else None
        shape = (ma if m_t else sa).shape
        dtype = (ma if m_t else sa).dtype
    n = math.prod(shape)
    if m_t and not s_t:
        z = normal_values(gen, n, dtype, 0.0, float(std), True).astype(dtype).reshape(shape)
        return _wrap(z + ma)
    z = normal_values(gen, n, dtype, 0.0, 1.0, True).astype(dtype).reshape(shape)
    z = z * sa
    return _wrap((z + (ma if m_t else dtype.type(mean))).astype(dtype, copy=False))


OPS["normal"].set_kernel(_normal)
