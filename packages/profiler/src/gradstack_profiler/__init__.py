"""gradstack_profiler: the autograd profiler of gradstack, shaped like ``torch.autograd.profiler``.

While a :class:`profile` is active, every op called through tensor-core's dispatch point,
every backward node the engine runs and every :class:`record_function` block is an
event; afterwards ``prof.key_averages().table()`` prints torch's table (Self CPU, CPU
total, # of Calls ...), with a footer that explains Self vs total, and
``prof.export_chrome_trace(path)`` writes a trace for Perfetto or ``chrome://tracing``.
With no profile active the package costs nothing: it registers its dispatch layer and
its engine observer only inside the ``with`` block.  :mod:`gradstack_profiler.scheduled`
is torch.profiler's interface on top of it (``profile(schedule=..., on_trace_ready=...)``
with ``step()``, ``tensorboard_trace_handler``).

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd  # noqa: F401 - the autograd layer
>>> import gradstack_profiler as profiler
>>> x = gt.randn(2, 3, requires_grad=True)
>>> y = gt.rand(2, 3, requires_grad=True)
>>> z = gt.ones(2, 3, requires_grad=True)
>>> with profiler.profile() as prf:
...     for _ in range(1000):
...         z = (z / x) * y
>>> sorted((row.key, row.count) for row in prf.key_averages())
[('aten::div', 1000), ('aten::mul', 1000)]
>>> print(prf.key_averages().table(sort_by='self_cpu_time_total'))  # doctest: +SKIP
"""

from . import profiler, scheduled
from .__about__ import __version__
from ._names import event_name
from ._nvprof import load_nvprof, parse_nvprof_trace
from ._nvtx import emit_nvtx
from ._profile import profile, record_function
from ._recorder import LAYER_PRIORITY
from .events import EventList, FunctionEvent, FunctionEventAvg, Interval, Kernel

__all__ = [
    *profiler.__all__,  # the torch-shaped names: profile ... Kernel
    "event_name",
    "LAYER_PRIORITY",
    "profiler",
    "scheduled",
    "__version__",
]
