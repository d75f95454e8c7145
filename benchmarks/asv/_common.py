"""Helpers shared by the asv suites: guarded imports and deterministic inputs.

Note [Benchmarks against old commits]
asv measures old commits with the suites of today.  A module must therefore import even
when the package it measures did not exist yet at that commit, and a benchmark whose API is
missing must be *skipped*, not failed: asv treats ``NotImplementedError`` raised in
``setup`` as "skipped".  Upper packages are imported with :func:`optional` at module level
and each ``setup`` starts with :func:`require`.

Note [Fresh state per timed call]
Benchmarks that consume what ``setup`` built (``backward`` frees the graph, ``step`` moves
the parameters) set ``number = 1``: every timed call then runs on freshly set-up state,
under both the old asv timing loop (setup once per sample) and the new one (asv_runner
0.3: setup before *every* timed call whenever a setup hook exists, asv#966).

Note [Micro-benchmarks have no setup]
Because of that rule, a class with a ``setup`` is timed one call at a time, right after
setup allocated fresh arrays: fine for a 5 ms backward, useless for a 1 us op (cold caches,
clock overhead).  Benchmarks that consume nothing therefore have no ``setup``: their inputs
come from a ``functools.cache``-d builder on first use (during asv's calibration, outside
the samples), and asv batches many calls per sample.  A missing package raises
``SkipNotImplemented`` from the builder, which asv records as skipped as well.  The cache
look-up (well under 100 ns) is paid equally by the gradstack and the numpy side.

Note [One round]
Every suite module sets ``rounds = 1`` (asv reads the attribute from the module when a
benchmark does not set it).  asv's default of two rounds interleaves benchmarks to average
out slow drifts, but on the 2-core machines here it doubled the time of a history run
(about 10 minutes per commit) for little gain: samples still come from up to ten repeats,
and asv's statistics still decide what counts as a regression.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

try:  # asv_runner's "skip from inside a benchmark" exception (a NotImplementedError)
    from asv_runner.benchmarks.mark import SkipNotImplemented
except ImportError:  # outside asv (smoke runs, pytest)
    SkipNotImplemented = NotImplementedError

__all__ = [
    "optional",
    "require",
    "rng",
    "tensor",
    "numpy_of",
    "one_thread",
    "benchmark_script",
    "SkipNotImplemented",
]


def optional(name: str):
    """Import a module, or return None when it is missing (or broken) in this commit."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an old commit may fail in any way at import
        return None


def require(*modules, attrs: tuple[tuple[object, str], ...] = ()) -> None:
    """Skip the benchmark unless every module and attribute exists (in ``setup`` or in a
    time function: ``SkipNotImplemented`` is a ``NotImplementedError``)."""
    for module in modules:
        if module is None:
            raise SkipNotImplemented("package not present in this commit")
    for owner, attr in attrs:
        if owner is None or not hasattr(owner, attr):
            raise SkipNotImplemented(f"{attr} not present in this commit")


def benchmark_script(name: str):
    """A module of ``benchmarks/`` beside this package (``model_zoo``, ``op_cases``), loaded
    from its file: the side-by-side scripts and the asv suites share one model and op
    code, and asv's import path does not reach it otherwise."""
    path = Path(__file__).resolve().parents[1] / f"{name}.py"
    key = f"_gradstack_benchmarks_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module  # before exec: dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[key]


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def tensor(array: np.ndarray, requires_grad: bool = False):
    """A gradstack tensor holding a copy of a numpy array (public API only)."""
    gt = importlib.import_module("gradstack_tensor")
    return gt.tensor(np.array(array), requires_grad=requires_grad)


def numpy_of(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def one_thread() -> None:
    """Pin the Cython kernels to one thread where the API exists (numpy's BLAS is pinned by
    OMP/OPENBLAS_NUM_THREADS=1, which the asv hatch env sets)."""
    kernels = optional("gradstack_tensor._kernels")
    if kernels is not None and hasattr(kernels, "set_num_threads"):
        kernels.set_num_threads(int(os.environ.get("GRADSTACK_BENCH_THREADS", "1")))
