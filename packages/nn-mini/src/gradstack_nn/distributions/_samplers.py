"""torch's CPU rejection samplers, from tensor-core (``gradstack_tensor.random_samplers``:
Note [torch's rejection samplers, step for step] there), under the names the
distributions draw with."""

from __future__ import annotations

from gradstack_tensor.random_samplers import (
    binomial,
    cauchy,
    poisson,
    sample_dirichlet,
    standard_gamma,
)

__all__ = ["standard_gamma", "sample_dirichlet", "poisson", "binomial", "cauchy"]
