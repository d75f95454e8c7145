"""Random number generation: one seeded default generator, as ``torch.manual_seed``.

gradstack draws from numpy's PCG64.  The same seed gives the same numbers in gradstack
(not the same numbers as torch, whose generator differs).

Examples
--------
>>> import gradstack_tensor as gt
>>> _ = gt.manual_seed(0); a = gt.rand(3)
>>> _ = gt.manual_seed(0); b = gt.rand(3)
>>> bool((a == b).all())
True
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "Generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "default_generator",
    "get_rng_state",
    "set_rng_state",
]


class Generator:
    """A random generator with torch's interface over ``numpy.random.Generator``."""

    def __init__(self, device="cpu"):
        self._seed = int(np.random.SeedSequence().entropy % (2**63))
        self._np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed) -> Generator:
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise RuntimeError(f"Overflow when unpacking long: seed {seed} out of range")
        self._seed = seed % (2**64)
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        self.manual_seed(int(np.random.SeedSequence().entropy % (2**63)))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return self._np.bit_generator.state

    def set_state(self, state) -> None:
        self._np.bit_generator.state = state


default_generator = Generator()

# Note [Draw observer]
# vmap must know when a function it maps draws random numbers (its ``randomness`` flag:
# "error" refuses, "different"/"same" decide what each sample sees), including draws that
# no op argument reveals (``randn(3)``).  Every draw passes through numpy_generator, so one
# optional callback here is the whole interface; None (the default) costs one check.
_draw_observer = None


def set_draw_observer(fn):
    """Install ``fn(generator)``, called before every draw (None removes it); returns the
    previous observer.  ``generator`` is the one passed to the drawing function, or None."""
    global _draw_observer
    previous, _draw_observer = _draw_observer, fn
    return previous


def numpy_generator(generator=None) -> np.random.Generator:
    if _draw_observer is not None:
        _draw_observer(generator)
    if generator is None:
        return default_generator._np
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a gradstack Generator, got {type(generator).__name__}")
    return generator._np


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)
