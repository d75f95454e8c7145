"""The default generator's stream as torch's CPU rejection samplers read it: one uniform
double at a time, and normal doubles that share the generator's cached Box-Muller value.

Note [Replaying torch's scalar draws]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's ``_standard_gamma``, ``poisson``, ``binomial`` and ``_sample_dirichlet`` loop over
the elements in order and, for each, draw as many numbers as their rejection step needs
from the default generator: ``uniform_real_distribution<double>`` (one 64-bit draw, the
same value as ``rand(1, dtype=float64)``) and ``normal_distribution<double>`` (two
uniforms per Box-Muller pair, the second value cached in the generator for the next
call).  How many numbers an element takes is known only while sampling, so
:class:`TorchStream` reads uniforms ahead in blocks (``rand(k, dtype=float64)``: cheap
and in order), computes the normals from them as torch does (``sqrt(-2 log1p(-u2))``
times ``cos``/``sin`` of ``2 pi u1``, with the C library's functions, which Python's
``math`` calls), and, when it closes, puts the generator where torch's would be: the
saved state restored, exactly the uniforms used drawn again, and the cached normal
written into the state (``get_rng_state``/``set_rng_state``, torch's byte layout).  The
draws are then torch's bit for bit, and so is every later draw.  An error raised while
sampling (torch's per-element checks) keeps the draws made before it, as torch's loop
does.
"""

from __future__ import annotations

import math

import numpy as np

from ._tensor import _wrap
from .random import generator_or_default

__all__ = ["TorchStream"]

# The fields of torch's CPUGeneratorImplState (5056 bytes on x86-64) that hold the cached
# normal double: normal_y and normal_is_valid of its legacy THGeneratorState part.
_CACHE_FIELDS = np.dtype(
    {
        "names": ["normal_y", "normal_is_valid"],
        "formats": ["<f8", "<i4"],
        "offsets": [5024, 5040],
        "itemsize": 5056,
    }
)


class TorchStream:
    """A context manager over a generator (the default one when None) giving torch's
    scalar draws.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> _ = gt.manual_seed(0)
    >>> with TorchStream() as s:
    ...     u = s.uniform()
    >>> _ = gt.manual_seed(0)
    >>> u == gt.rand(1, dtype=gt.float64).item()
    True
    """

    def __init__(self, generator=None, name: str = "generator"):
        self._gen = generator_or_default(generator, name)

    def __enter__(self) -> TorchStream:
        self._state = self._gen.get_state()
        fields = np.frombuffer(self._state.numpy().tobytes(), dtype=_CACHE_FIELDS)[0]
        self._cache = float(fields["normal_y"]) if fields["normal_is_valid"] else None
        self._block: list[float] = []
        self._pos = 0
        self._used = 0
        self._block_size = 64
        return self

    def _uniforms(self, n: int) -> list[float]:
        from ._impl_random import uniform_values

        return uniform_values(self._gen, n, np.dtype(np.float64)).tolist()

    def uniform(self) -> float:
        """The next ``uniform_real_distribution<double>(0, 1)`` draw."""
        if self._pos == len(self._block):
            self._block = self._uniforms(self._block_size)
            self._pos = 0
            self._block_size = min(2 * self._block_size, 1 << 16)
        u = self._block[self._pos]
        self._pos += 1
        self._used += 1
        return u

    def normal(self) -> float:
        """The next ``normal_distribution<double>(0, 1)`` draw (cached value first)."""
        if self._cache is not None:
            value, self._cache = self._cache, None
            return value
        u1 = self.uniform()
        u2 = self.uniform()
        r = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self._cache = r * math.sin(theta)
        return r * math.cos(theta)

    def __exit__(self, exc_type, exc, tb) -> None:
        # an error raised while sampling (torch's checks, element by element) keeps the
        # draws made before it, as torch's loop does; the exception propagates
        self._gen.set_state(self._state)
        if self._used:
            self._uniforms(self._used)
        state = self._gen.get_state().numpy().copy()
        fields = state.view(_CACHE_FIELDS)
        fields["normal_is_valid"] = int(self._cache is not None)
        fields["normal_y"] = self._cache if self._cache is not None else 0.0
        self._gen.set_state(_wrap(state))
