"""pytest-benchmark settings for the timed suites (``hatch run bench``).

Note [First run has no baseline]
``hatch run bench`` passes ``--benchmark-compare --benchmark-compare-fail=median:50%``:
every run is compared with the newest earlier save in ``.benchmarks/`` and fails when a
median got 50% slower.  On a machine that has no saved run yet there is nothing to compare
with, and pytest-benchmark would end with "--benchmark-compare-fail requires valid
--benchmark-compare".  Then this run simply becomes the baseline (it is saved by
``--benchmark-autosave``), and the regression check starts with the next run.
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
        "the --benchmark-compare-fail check starts with the next `hatch run bench`"
    )
