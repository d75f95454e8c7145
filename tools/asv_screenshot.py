"""Render the published asv dashboard in headless Chromium and save screenshots.

Serves ``.asv/html`` on 127.0.0.1 (a free port, this process only), opens it in Debian's
``chromium`` (installed with apt-get when missing and running as root), and for each page:

* dumps the DOM after the page's scripts ran (``--dump-dom``) and checks that the page did
  not fall back to asv's ``error.html`` (CDN assets that did not load: see
  tools/asv_offline.py) and that flot drew its plots (``canvas.flot-base`` elements, axis
  tick labels);
* saves a screenshot to ``.asv/screenshots/<name>.png`` and checks it is not blank.

Each Chromium call gets a new ``--user-data-dir``: a reused profile served a cached broken
page after the assets were fixed (pitfall P15).

Usage::

    hatch run asv:publish                     # asv publish + the offline fix
    hatch run asv:screenshot                  # grid + one benchmark's graph (+ list, regressions)
    python tools/asv_screenshot.py --benchmark bench_autograd.DeepChain.time_backward
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / ".asv" / "html"
SHOTS = ROOT / ".asv" / "screenshots"

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--window-size=1280,900",
    "--virtual-time-budget=15000",
]
ERROR_PAGE_TEXT = "continental origin of swallow"  # asv's error.html
# benchmarks to show on the graph shot, first one the results have wins
PREFERRED = [
    "bench_autograd.DeepChain.time_backward",
    "bench_autograd.TutorialLoop.time_forward_backward",
    "bench_nn.MLPStep.time_train_step",
    "bench_tensor.Matmul.time_gradstack",
]


@dataclass
class Shot:
    name: str
    url: str
    png: Path
    dom: str = ""
    checks: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)


# --------------------------------------------------------------------------- chromium


def find_chromium(install: bool = True) -> str:
    """Path of a Chromium binary; installs Debian's package when missing (as root)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if not install:
        raise FileNotFoundError("chromium is not installed")
    if os.geteuid() != 0:
        raise FileNotFoundError("chromium is not installed; run `sudo apt-get install chromium`")
    print("asv_screenshot: installing Debian's chromium with apt-get (quietly) ...", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"],
    ):
        # apt prints hundreds of lines even with -qq (dpkg's unpack/setup lines): keep them
        # for a failure only
        result = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(
                f"`{' '.join(cmd)}` failed:\n{(result.stdout + result.stderr)[-3000:]}"
            )
    print("asv_screenshot: chromium installed", flush=True)
    path = shutil.which("chromium")
    if not path:
        raise FileNotFoundError("apt-get installed chromium but it is not on PATH")
    return path


def _chromium(binary: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="asv-chromium-") as profile:
        cmd = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def dump_dom(binary: str, url: str) -> str:
    return _chromium(binary, "--dump-dom", url).stdout


def screenshot(binary: str, url: str, png: Path) -> None:
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    result = _chromium(binary, f"--screenshot={png}", url)
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot for {url}:\n{result.stderr[-2000:]}")


# --------------------------------------------------------------------------- server


# Note [Counting drawn pixels]
# A flot canvas exists whether or not a series was drawn on it, and asv's summary grid
# gives every sparkline a 1-pixel grey frame (grid.borderWidth = 1), so neither counting
# canvases nor counting non-blank pixels tells an empty plot from a drawn one.  The server
# adds this script to index.html: every half second it writes into each plot canvas how
# many of its pixels are *coloured* (opaque, and with channels that differ: asv draws its
# series in saturated colours, its frames, ticks and text in grey), which --dump-dom then
# shows.  A frame alone counts 0; a series line a few hundred.
PIXEL_PROBE = """<script>
(function () {
  function probe() {
    document.querySelectorAll("canvas.flot-base").forEach(function (c) {
      var n = -1;
      try {
        var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        n = 0;
        for (var i = 0; i < d.length; i += 4) {
          var hi = Math.max(d[i], d[i + 1], d[i + 2]), lo = Math.min(d[i], d[i + 1], d[i + 2]);
          if (d[i + 3] > 64 && hi - lo > 60) { n++; }
        }
      } catch (e) { n = -1; }
      c.setAttribute("data-drawn-pixels", String(n));
    });
  }
  setInterval(probe, 500);
})();
</script>"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the console for results
        pass

    def do_GET(self):  # noqa: N802 - the http.server API
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path not in ("/", "/index.html"):
            return super().do_GET()
        text = (Path(self.directory) / "index.html").read_text(encoding="utf-8")
        body = text.replace("</body>", PIXEL_PROBE + "\n</body>", 1).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(directory: Path):
    """Serve `directory` on 127.0.0.1 at a free port for the duration of the block."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- checks


def load_png(path: Path):
    """Pixels as a numpy array (H, W, C) of floats in [0, 1], via Pillow or matplotlib."""
    import numpy as np

    try:
        from PIL import Image

        with Image.open(path) as img:
            return np.asarray(img.convert("RGB"), dtype=np.float64) / 255.0
    except ImportError:
        import matplotlib.image as mpimg

        return np.asarray(mpimg.imread(path), dtype=np.float64)[..., :3]


# an empty plot has none; one short line of two commits has a few hundred
MIN_SERIES_PIXELS = 150
# where the data is drawn, as (left, top) in pixels of a 1280x900 shot: below the navbar;
# on the graph page right of the side panel and below the legend
PLOT_AREA = {"grid": (0, 60), "graph": (260, 160)}


def image_stats(path: Path, plot_area: tuple[int, int] = (0, 60)) -> dict:
    """How much of the picture is not background, how many colours it has, and how many
    saturated pixels (data series; text, frames and grid lines are grey) the plot area has."""
    import numpy as np

    px = load_png(path)
    left, top = plot_area
    area = px[top:, left:].reshape(-1, px.shape[-1])
    flat = px.reshape(-1, px.shape[-1])
    background = np.median(flat, axis=0)
    differs = np.abs(flat - background).max(axis=1) > 0.08
    quantised = np.unique((flat * 31).round().astype(np.int16), axis=0)
    saturated = (area.max(axis=1) - area.min(axis=1)) > 0.35
    return {
        "size": [int(px.shape[1]), int(px.shape[0])],
        "non_background_fraction": float(differs.mean()),
        "plot_coloured_pixels": int(saturated.sum()),
        "colours": int(len(quantised)),
        "std": float(px.std()),
    }


# a sparkline of two or more commits draws a few hundred pixels; anti-aliasing alone none
MIN_DRAWN_PIXELS = 20


def dom_checks(dom: str) -> dict:
    canvases = re.findall(r'<canvas[^>]*class="[^"]*flot-base[^"]*"[^>]*>', dom)
    drawn = [
        int(m.group(1)) for c in canvases if (m := re.search(r'data-drawn-pixels="(-?\d+)"', c))
    ]
    return {
        "drawn_canvases": sum(n >= MIN_DRAWN_PIXELS for n in drawn),
        "empty_canvases": sum(0 <= n < MIN_DRAWN_PIXELS for n in drawn),
        "probed_canvases": len(drawn),
        # after a redirect to error.html, the dumped DOM is that page (index.html only
        # names error.html inside its load-failure handler, so the name alone proves nothing)
        "error_page": ERROR_PAGE_TEXT in dom,
        "flot_canvases": len(re.findall(r'<canvas[^>]*class="[^"]*flot-base', dom)),
        "tick_labels": len(re.findall(r'class="[^"]*tick-label', dom)),
        # x-axis labels that are short commit hashes (Note [Commit labels on the graph
        # page] in tools/asv_offline.py)
        "commit_labels": len(re.findall(r'tick-label[^"]*"[^>]*>[0-9a-f]{8}<', dom)),
        "chars": len(dom),
    }


def graph_benchmark(html: Path, wanted: str | None) -> str:
    """A benchmark that has results in the published site."""
    names = set(json.loads((html / "index.json").read_text())["benchmarks"])
    if wanted:
        if wanted not in names:
            raise SystemExit(f"asv_screenshot: no benchmark {wanted!r} in {html}/index.json")
        return wanted
    for name in PREFERRED:
        if name in names:
            return name
    return sorted(names)[0]


def take(
    html: Path = HTML, out: Path = SHOTS, benchmark: str | None = None, install: bool = True
) -> list[Shot]:
    """Render the grid, one benchmark's graph, the list and the regressions page; check them."""
    if not (html / "index.html").is_file():
        raise SystemExit(f"asv_screenshot: {html}/index.html missing: run `hatch run asv:publish`")
    binary = find_chromium(install)
    bench = graph_benchmark(html, benchmark)
    pages = [
        ("grid", "index.html", True),
        ("graph", f"index.html#{bench}", True),
        ("list", "index.html#summarylist", False),
        ("regressions", "index.html#regressions", False),
    ]
    shots = []
    with serve(html) as base:
        for name, path, needs_plots in pages:
            shot = Shot(name, f"{base}/{path}", out / f"{name}.png")
            shot.dom = dump_dom(binary, shot.url)
            (out / f"{name}.dom.html").parent.mkdir(parents=True, exist_ok=True)
            (out / f"{name}.dom.html").write_text(shot.dom, encoding="utf-8")
            screenshot(binary, shot.url, shot.png)
            shot.checks = {
                **dom_checks(shot.dom),
                **image_stats(shot.png, PLOT_AREA.get(name, (0, 60))),
            }
            if shot.checks["error_page"]:
                shot.problems.append("fell back to asv's error page (external assets?)")
            if shot.checks["chars"] < 2000:
                shot.problems.append("the DOM is nearly empty")
            if needs_plots and shot.checks["drawn_canvases"] == 0:
                shot.problems.append(
                    f"no plot has drawn pixels ({shot.checks['flot_canvases']} canvases, "
                    f"{shot.checks['empty_canvases']} empty)"
                )
            if name == "graph" and shot.checks["tick_labels"] < 4:
                shot.problems.append("the graph has no axis tick labels")
            if name == "graph" and shot.checks["commit_labels"] < 2:
                shot.problems.append("the graph's commits are not labelled")
            if needs_plots and shot.checks["plot_coloured_pixels"] < MIN_SERIES_PIXELS:
                shot.problems.append("the plots are empty: no data series was drawn")
            # (the regressions page is legitimately almost empty when nothing regressed)
            if needs_plots and (
                shot.checks["non_background_fraction"] < 0.02 or shot.checks["colours"] < 8
            ):
                shot.problems.append("the screenshot is (nearly) blank")
            shots.append(shot)
    return shots


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HTML)
    parser.add_argument("--out", type=Path, default=SHOTS)
    parser.add_argument("--benchmark", help="the benchmark whose graph to shoot")
    parser.add_argument("--no-install", action="store_true", help="never apt-get chromium")
    args = parser.parse_args(argv)
    shots = take(args.html.resolve(), args.out.resolve(), args.benchmark, not args.no_install)
    failed = False
    for shot in shots:
        c = shot.checks
        status = "FAIL" if shot.problems else "ok"
        print(
            f"{status:4s} {shot.name:12s} {shot.png}  canvases={c['flot_canvases']} "
            f"drawn={c['drawn_canvases']} empty={c['empty_canvases']} "
            f"ticks={c['tick_labels']} non-background={c['non_background_fraction']:.1%} "
            f"series_px={c['plot_coloured_pixels']} "
            f"colours={c['colours']}  {shot.url.split('/', 3)[-1]}"
        )
        for problem in shot.problems:
            print(f"     - {problem}")
        failed |= bool(shot.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
