"""``Timer`` and ``Measurement``, as ``torch.utils.benchmark`` (``gradstack.utils.benchmark``).

Enough of torch's benchmark utilities for the programs that time a statement the way
torch's tutorials do (``Timer(stmt, globals=...).timeit(100)``, then ``.times[0]`` or
the printed measurement), built on the standard library's :mod:`timeit`.  As torch's,
a ``Timer`` runs its statement with ``num_threads`` threads (default 1) and puts the
previous setting back afterwards.

Examples
--------
>>> t = Timer("sum(range(100))")
>>> m = t.timeit(1000)
>>> m.number_per_run, len(m.times), m.times[0] > 0
(1000, 1, True)
"""

from __future__ import annotations

import statistics
import timeit as _timeit

import gradstack_tensor as _gt

__all__ = ["Timer", "Measurement"]


def _format_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.2f} {unit}"
    return f"{seconds / 1e-9:.2f} ns"


class Measurement:
    """The result of :meth:`Timer.timeit` or :meth:`Timer.blocked_autorange`: ``times``
    holds the time of one run of the statement in each block of ``number_per_run`` runs."""

    def __init__(self, number_per_run: int, raw_times: list, stmt: str, label=None,
                 sub_label=None, description=None, num_threads: int = 1) -> None:  # fmt: skip
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.stmt = stmt
        self.label = label
        self.sub_label = sub_label
        self.description = description
        self.num_threads = num_threads

    @property
    def times(self) -> list[float]:
        """Seconds per run of the statement, one value per block."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def __repr__(self) -> str:
        title = " ".join(str(x) for x in (self.label, self.sub_label) if x) or self.stmt
        n = len(self.raw_times)
        threads = "thread" if self.num_threads == 1 else "threads"
        return (
            f"<gradstack.utils.benchmark.Measurement object at {hex(id(self))}>\n"
            f"{title}\n"
            f"  {'Median: ' if n > 1 else ''}{_format_time(self.median)}\n"
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs per "
            f"measurement, {self.num_threads} {threads}"
        )


class Timer:
    """Time ``stmt`` (a string of Python, or a callable) after ``setup``, with the names
    of ``globals``, as ``torch.utils.benchmark.Timer``."""

    def __init__(self, stmt="pass", setup="pass", globals=None, label=None,  # noqa: A002
                 sub_label=None, description=None, num_threads: int = 1,
                 **_unused) -> None:  # fmt: skip
        if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
        self._stmt = stmt
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, globals=dict(globals or {}))
        self._label, self._sub_label, self._description = label, sub_label, description
        self._num_threads = num_threads

    def _measure(self, number: int) -> float:
        before = _gt.kernels.get_num_threads()
        _gt.kernels.set_num_threads(self._num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            _gt.kernels.set_num_threads(before)

    def _measurement(self, number: int, raw: list) -> Measurement:
        stmt = self._stmt if isinstance(self._stmt, str) else getattr(self._stmt, "__name__", "")
        return Measurement(number, raw, stmt, self._label, self._sub_label, self._description,
                           self._num_threads)  # fmt: skip

    def timeit(self, number: int = 1000000) -> Measurement:
        """Run the statement ``number`` times (after one warm-up run): one measurement."""
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            raise ValueError(f"number must be a positive int, got {number!r}")
        self._measure(1)
        return self._measurement(number, [self._measure(number)])

    def _block_size(self) -> int:
        number = 1
        while number < 10**9 and self._measure(number) < 1e-4:  # a block takes >= 0.1 ms
            number *= 10
        return number

    def _blocks(self, number: int, raw: list, min_run_time: float, callback) -> None:
        spent = 0.0
        while spent < min_run_time or not raw:
            t = self._measure(number)
            raw.append(t)
            spent += t
            if callback is not None:
                callback(number, t)

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs, each long enough to time well, until ``min_run_time`` seconds
        have passed."""
        number = self._block_size()
        raw: list[float] = []
        self._blocks(number, raw, min_run_time, callback)
        return self._measurement(number, raw)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:  # fmt: skip
        """Blocks until the interquartile range of the times is at most ``threshold`` times
        their median (or ``max_run_time`` seconds have passed)."""
        number = self._block_size()
        raw: list[float] = []
        while True:
            self._blocks(number, raw, min_run_time, callback)
            m = self._measurement(number, raw)
            if len(raw) >= 4:
                q = statistics.quantiles(m.times, n=4)
                if q[2] - q[0] <= threshold * m.median:
                    return m
            if sum(raw) >= max_run_time:
                return m
