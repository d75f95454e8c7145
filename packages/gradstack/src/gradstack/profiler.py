"""``gradstack.profiler``: torch.profiler's interface (``profile`` with ``activities``,
``schedule``, ``on_trace_ready`` and ``step()``; ``schedule``, ``ProfilerActivity``,
``ProfilerAction``, ``tensorboard_trace_handler``, ``record_function``,
``supported_activities``, ``DeviceType``, ``kineto_available``) from gradstack-profiler's
``gradstack_profiler.scheduled``."""

try:
    from gradstack_profiler import scheduled as _impl
except ModuleNotFoundError as e:  # pragma: no cover - a partial install
    if e.name != "gradstack_profiler":
        raise
    raise ModuleNotFoundError(
        "gradstack.profiler needs the profiler layer: pip install gradstack-profiler",
        name=e.name,
    ) from None

from gradstack_profiler.scheduled import (  # noqa: E402, F401 - the names of __all__
    DeviceType,
    ProfilerAction,
    ProfilerActivity,
    kineto_available,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = list(_impl.__all__)
