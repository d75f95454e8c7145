"""pytest-benchmark settings for the timed suites (``hatch run bench``).

Note [Comparing on min]
``hatch run bench`` compares every run with the newest earlier save in ``.benchmarks/`` and
*reports* the differences (min, median, mean, stddev, rounds): it does not fail.  Medians
and means move by 30-130% between two runs of unchanged code on this shared 2-core machine
(other processes steal whole rounds), which made a median:50% failure check fail on
reruns.  The minimum is the statistic load cannot make better, only worse for a few
rounds, so it barely moves: to fail on a regression, ask for it on min::

    hatch run bench --benchmark-compare-fail=min:25%

Note [First run has no baseline]
On a machine that has no saved run yet there is nothing to compare with, and a requested
``--benchmark-compare-fail`` would end with "--benchmark-compare-fail requires valid
--benchmark-compare".  Then this run simply becomes the baseline (it is saved by
``--benchmark-autosave``), and the check starts with the next run.
"""

from __future__ import annotations

import os

import pytest


def pytest_configure(config):
    # one thread, as in the asv suites and the comparison report (numpy's BLAS reads these
    # only when it loads, so they are set as early as a conftest can)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    bench = getattr(session.config, "_benchmarksession", None)
    if bench is None or not bench.compare_fail or bench.compared_mapping:
        return
    bench.compare_fail = []
    bench.logger.warning(
        "no saved benchmark run to compare with yet: this run is saved as the baseline and "
        "--benchmark-compare-fail applies from the next `hatch run bench` on"
    )
