"""Type stub for ``gradstack_tensor._sampler_kernels`` (see _sampler_kernels.pyx)."""

import numpy as np
import numpy.typing as npt

from .random import Generator

__all__ = [
    "poisson",
    "standard_gamma",
    "binomial",
    "cauchy",
    "log_normal",
    "geometric",
    "uniform",
    "exponential",
    "random_mod",
    "randperm",
]

_Floats = npt.NDArray[np.float32] | npt.NDArray[np.float64]

def poisson(gen: Generator, rate: _Floats, out: _Floats) -> int: ...
def standard_gamma(
    gen: Generator, alpha: _Floats, out: npt.NDArray[np.float64], single: bool
) -> None: ...
def binomial(gen: Generator, count: _Floats, prob: _Floats, out: _Floats) -> None: ...
def cauchy(gen: Generator, out: _Floats, median: float, sigma: float) -> None: ...
def log_normal(gen: Generator, out: _Floats, mean: float, std: float, fused: bool) -> None: ...
def geometric(gen: Generator, out: _Floats, p: float) -> None: ...
def uniform(gen: Generator, out: _Floats, low: float, high: float, fused: bool) -> None: ...
def exponential(gen: Generator, out: _Floats, lambd: float) -> None: ...
def random_mod(
    gen: Generator,
    out: _Floats | npt.NDArray[np.int64],
    span: int,
    low: int,
    wide: bool,
) -> None: ...
def randperm(gen: Generator, out: npt.NDArray[np.int64]) -> None: ...
