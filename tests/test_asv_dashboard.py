"""The published asv dashboard renders offline, with real plots (tools/asv_screenshot.py).

Slow (four headless Chromium renders, about 30 s) and dependent on benchmark results, so
it runs only when asked, never because something happens to be installed:
``GRADSTACK_DASHBOARD_TEST=1`` (the asv hatch env sets it)::

    hatch run asv:history          # results for the last 12 commits that changed packages/
    hatch run asv:publish          # the dashboard in .asv/html, made to work offline
    hatch run asv:dashboard-test   # this file

Each sparkline and graph is checked for drawn pixels (Note [Counting drawn pixels] in
tools/asv_screenshot.py), not merely for a canvas element.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / ".asv" / "html"
REQUESTED = os.environ.get("GRADSTACK_DASHBOARD_TEST") == "1"
TO_RUN = (
    "run `hatch run asv:history` (or `hatch run asv:run HEAD~1..HEAD`), "
    "then `hatch run asv:publish`"
)

pytestmark = pytest.mark.skipif(
    not REQUESTED, reason="opt-in: `hatch run asv:dashboard-test` (GRADSTACK_DASHBOARD_TEST=1)"
)


def _load_tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML}/index.html is missing: {TO_RUN}")
    commits = len(json.loads((HTML / "index.json").read_text()).get("revision_to_hash", {}))
    if commits < 2:
        pytest.fail(
            f"the published dashboard has results of {commits} commit(s); its plots need at "
            f"least two: {TO_RUN}"
        )
    if importlib.util.find_spec("PIL") is None and importlib.util.find_spec("matplotlib") is None:
        pytest.skip("needs Pillow or matplotlib to read the screenshots")
    _load_tool("asv_offline").make_offline(HTML)  # idempotent; a bare `asv publish` undoes it
    tool = _load_tool("asv_screenshot")
    out = tmp_path_factory.mktemp("asv-screenshots")
    return {shot.name: shot for shot in tool.take(HTML, out, install=REQUESTED)}


def test_no_external_assets_left(shots):
    text = (HTML / "index.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr.net" not in text and "cdnjs.cloudflare.com" not in text
    assert "integrity=" not in text
    assert (HTML / "vendor" / "jquery.min.js").is_file()


@pytest.mark.parametrize("page", ["grid", "graph", "list", "regressions"])
def test_page_did_not_fall_back_to_error_page(shots, page):
    shot = shots[page]
    assert not shot.checks["error_page"], f"{page}: asv's error.html was shown ({shot.url})"
    assert shot.checks["chars"] > 2000, f"{page}: the DOM is nearly empty"


def test_summary_grid_draws_plots(shots):
    checks = shots["grid"].checks
    # one sparkline per benchmark, each with its line drawn: a canvas alone proves nothing
    assert checks["probed_canvases"] == checks["flot_canvases"] >= 5, checks
    assert checks["drawn_canvases"] >= 5, checks
    assert checks["drawn_canvases"] >= checks["flot_canvases"] / 2, (
        f"{checks['empty_canvases']} of {checks['flot_canvases']} sparklines are empty: "
        f"benchmarks without results in two commits? {TO_RUN}"
    )


def test_benchmark_graph_draws_a_plot(shots):
    checks = shots["graph"].checks
    assert checks["drawn_canvases"] >= 1, checks
    assert checks["tick_labels"] >= 4, checks  # flot labels its axes once data is drawn
    # each measured commit by its short hash (tools/asv_offline.py)
    assert checks["commit_labels"] >= 2, checks


@pytest.mark.parametrize("page", ["grid", "graph"])
def test_screenshot_is_not_blank(shots, page):
    checks = shots[page].checks
    assert checks["size"] == [1280, 900], checks
    assert checks["non_background_fraction"] > 0.02, checks
    assert checks["colours"] >= 8, checks
    # data series are drawn in colour; an empty plot has no saturated pixels at all
    assert checks["plot_coloured_pixels"] >= 150, checks
    assert not shots[page].problems, shots[page].problems
