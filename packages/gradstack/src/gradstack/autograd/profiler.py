"""``gradstack.autograd.profiler``: ``profile``, ``record_function``, ``emit_nvtx``,
``load_nvprof`` from gradstack-profiler (``gradstack_profiler``)."""

try:
    import gradstack_profiler as _impl
except ModuleNotFoundError as e:  # pragma: no cover - a partial install
    if e.name != "gradstack_profiler":
        raise
    raise ModuleNotFoundError(
        "gradstack.autograd.profiler needs the profiler layer: pip install gradstack-profiler",
        name=e.name,
    ) from None

from gradstack_profiler import *  # noqa: F403,E402

__all__ = list(_impl.__all__)
