"""``gradstack.utils.benchmark``: ``Timer`` and ``Measurement`` from gradstack-profiler
(``gradstack_profiler.benchmark``), as ``torch.utils.benchmark``."""

from gradstack_profiler.benchmark import Measurement, Timer

__all__ = ["Timer", "Measurement"]
