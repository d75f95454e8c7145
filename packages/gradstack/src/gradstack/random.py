"""``gradstack.random``: the generator functions, as ``torch.random`` (``fork_rng`` ...).

The generator is tensor-core's (torch's CPU MT19937: the same seed gives torch's numbers).

>>> import gradstack as torch
>>> with torch.random.fork_rng():
...     _ = torch.rand(2)
>>> torch.random.initial_seed() == torch.initial_seed()
True
"""

from __future__ import annotations

from gradstack_tensor.random import (
    Generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]
