"""The torch-shaped module: ``gradstack_profiler.profiler`` mirrors ``torch.autograd.profiler``.

``gradstack.autograd.profiler`` re-exports this module, so that
``torch.autograd.profiler.profile(...)`` code runs with ``import gradstack as torch``.
"""

from ._nvprof import load_nvprof, parse_nvprof_trace
from ._nvtx import emit_nvtx
from ._profile import profile, record_function
from .events import EventList, FunctionEvent, FunctionEventAvg, Interval, Kernel

__all__ = [
    "profile",
    "record_function",
    "emit_nvtx",
    "load_nvprof",
    "parse_nvprof_trace",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "Kernel",
]
