"""``gradstack.utils``: :mod:`gradstack.utils.data` (data sets, samplers, ``DataLoader``),
:mod:`gradstack.utils.checkpoint` (activation checkpointing, from gradstack-graph-engine)
and :mod:`gradstack.utils.benchmark` (``Timer``, from gradstack-profiler, imported on first
use so that ``import gradstack`` stays light)."""

import importlib as _importlib

from . import checkpoint, data

__all__ = ["benchmark", "checkpoint", "data"]


def __getattr__(name):
    if name == "benchmark":
        module = _importlib.import_module(f"{__name__}.benchmark")
        globals()["benchmark"] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
