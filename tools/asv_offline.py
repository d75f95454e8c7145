"""Make asv's published dashboard work without internet access.

asv 0.6.6's ``index.html`` loads jQuery, flot, bootstrap, stupidtable and blueimp-md5 from
CDNs, with SRI ``integrity`` hashes.  Opened offline (a laptop on a plane, a CI artefact,
headless Chromium here) the page falls back to asv's ``error.html`` ("Can not determine
continental origin of swallow...").  This script, run after ``asv publish`` (``hatch run
asv:publish`` does both):

1. fetches those files once from the npm registry with ``npm pack`` into ``.asv/vendor/``
   (a git-ignored cache: third-party files are fetched at build time, never committed);
2. copies them to ``<html>/vendor/`` (and bootstrap's glyph fonts to ``<html>/fonts/``,
   where the stylesheet looks for them);
3. points ``index.html`` at the local copies and drops the ``integrity`` attributes: the
   npm files are the unminified or a neighbouring release of what the CDN serves, so the
   hashes cannot match and the browser would refuse them;
4. labels the commits on the graph page (Note [Commit labels on the graph page]).

Note [Commit labels on the graph page]
On a benchmark's graph, asv 0.6.6 spaces the points by revision number along an x axis it
titles "commits" and blanks every tick label (its ``graphdisplay.js`` sets a formatter that
returns ""), so a reader cannot tell which point is which commit without hovering.  The
published ``graphdisplay.js`` is patched to put a tick at each measured commit, labelled
with its short hash (every k-th one when there are more than ten, the newest always), and to
title the axis "commit".  The date scale and the parameter axes are left as asv draws them.

It fails loudly if any ``<script src>`` or ``<link href>`` still points outside the site.

Usage::

    python tools/asv_offline.py [HTML_DIR]      # default .asv/html
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / ".asv" / "vendor"  # ignored cache, never committed

# CDN url in asv's index.html -> (npm package@version, file in the npm tarball, local name).
# npm has no stupidtable 1.0.1: stupid-table-plugin 1.1.3 has the same API.
ASSETS = {
    "https://code.jquery.com/jquery-3.3.1.min.js": (
        "jquery@3.3.1",
        "package/dist/jquery.min.js",
        "jquery.min.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js": (
        "flot@0.8.3",
        "package/jquery.flot.js",
        "jquery.flot.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js": (
        "flot@0.8.3",
        "package/jquery.flot.time.js",
        "jquery.flot.time.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.selection.min.js": (
        "flot@0.8.3",
        "package/jquery.flot.selection.js",
        "jquery.flot.selection.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.categories.min.js": (
        "flot@0.8.3",
        "package/jquery.flot.categories.js",
        "jquery.flot.categories.js",
    ),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js": (
        "flot-orderbars@1.0.0",
        "package/js/jquery.flot.orderBars.js",
        "jquery.flot.orderBars.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js": (
        "stupid-table-plugin@1.1.3",
        "package/stupidtable.min.js",
        "stupidtable.min.js",
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js": (
        "blueimp-md5@2.19.0",
        "package/js/md5.min.js",
        "md5.min.js",
    ),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/js/bootstrap.min.js": (
        "bootstrap@3.1.1",
        "package/dist/js/bootstrap.min.js",
        "bootstrap.min.js",
    ),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css": (
        "bootstrap@3.1.1",
        "package/dist/css/bootstrap.min.css",
        "bootstrap.min.css",
    ),
}
# extra files taken from a tarball: (npm spec, member prefix, destination folder in the site)
FONTS = ("bootstrap@3.1.1", "package/dist/fonts/", "fonts")

# Note [Commit labels on the graph page]
GRAPH_JS = "graphdisplay.js"
BLANK_TICKS = 'options.xaxis.tickFormatter = function (v, axis) { return ""; };'
COMMIT_TICKS = """options.xaxis.tickFormatter = null;
                options.xaxis.ticks = gradstack_commit_ticks;  /* tools/asv_offline.py */
                options.xaxis.axisLabel = 'commit';"""
TICKS_FUNCTION = """    /* gradstack (tools/asv_offline.py, Note [Commit labels on the graph page]):
       a tick at each measured commit, labelled with its short hash, at most about ten */
    function gradstack_commit_ticks(axis) {
        var revs = [];
        $.each(graphs, function(i, graph) {
            $.each(graph.data, function(j, point) {
                if (revs.indexOf(point[0]) === -1 && point[0] >= axis.min && point[0] <= axis.max) {
                    revs.push(point[0]);
                }
            });
        });
        revs.sort(function(a, b) { return a - b; });
        var step = Math.max(1, Math.ceil(revs.length / 10));
        var ticks = [];
        for (var i = revs.length - 1; i >= 0; i -= step) {
            var hash = $.asv.get_commit_hash(revs[i]);
            ticks.push([revs[i], hash ? hash.substring(0, 8) : "r" + revs[i]]);
        }
        return ticks;
    }

    function handle_x_scale(options) {"""

EXTERNAL_ASSET = re.compile(r'<(?:script|link)\b[^>]*\b(?:src|href)="(https?://[^"]+)"')


def _npm_pack(spec: str, workdir: Path) -> Path:
    try:
        out = subprocess.run(
            ["npm", "pack", spec, "--silent"],
            cwd=workdir,
            check=True,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        sys.exit("asv_offline: npm is not installed (apt-get install npm)")
    except subprocess.CalledProcessError as exc:
        sys.exit(f"asv_offline: `npm pack {spec}` failed:\n{exc.stderr}")
    return workdir / out.stdout.split()[-1]


def fetch_vendor() -> None:
    """Download the assets once from the npm registry into the ignored cache."""
    print(
        f"asv_offline: the dashboard's scripts are not cached yet: fetching them once from "
        f"the npm registry (npm pack) into {VENDOR.relative_to(ROOT)}/ ...",
        flush=True,
    )
    VENDOR.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, list[tuple[str, str]]] = {}
    for spec, member, name in ASSETS.values():
        wanted.setdefault(spec, []).append((member, name))
    with tempfile.TemporaryDirectory() as tmp:
        for spec, files in wanted.items():
            tarball = _npm_pack(spec, Path(tmp))
            with tarfile.open(tarball) as tf:
                for member, name in files:
                    (VENDOR / name).write_bytes(tf.extractfile(member).read())
                if spec == FONTS[0]:
                    fonts = VENDOR / FONTS[2]
                    fonts.mkdir(exist_ok=True)
                    for info in tf.getmembers():
                        if info.isfile() and info.name.startswith(FONTS[1]):
                            (fonts / Path(info.name).name).write_bytes(tf.extractfile(info).read())
            print(f"asv_offline: fetched {spec}")


def _cached() -> bool:
    return all((VENDOR / name).is_file() for _, _, name in ASSETS.values()) and any(
        (VENDOR / FONTS[2]).glob("*")
    )


def make_offline(html_dir: Path) -> list[str]:
    """Rewrite ``html_dir/index.html`` to use local copies; return the rewritten URLs."""
    index = html_dir / "index.html"
    if not index.is_file():
        sys.exit(f"asv_offline: {index} does not exist; run `asv publish` first")
    if not _cached():
        fetch_vendor()
    (html_dir / "vendor").mkdir(exist_ok=True)
    text = index.read_text(encoding="utf-8")
    rewritten = []
    for url, (_, _, name) in ASSETS.items():
        shutil.copy2(VENDOR / name, html_dir / "vendor" / name)
        if url in text:
            text = text.replace(url, f"vendor/{name}")
            rewritten.append(url)
    shutil.copytree(VENDOR / FONTS[2], html_dir / FONTS[2], dirs_exist_ok=True)
    text = re.sub(r'\s+integrity="[^"]*"', "", text)  # SRI hashes are for the CDN builds
    index.write_text(text, encoding="utf-8")
    left = EXTERNAL_ASSET.findall(text)
    if left:
        sys.exit(f"asv_offline: external assets remain in {index} (add them to ASSETS): {left}")
    label_commits(html_dir)
    return rewritten


def label_commits(html_dir: Path) -> bool:
    """Patch the published graph page to label commits (Note [Commit labels on the graph
    page]); False when it was patched already."""
    path = html_dir / GRAPH_JS
    text = path.read_text(encoding="utf-8")
    if "gradstack_commit_ticks" in text:
        return False
    anchor = "    function handle_x_scale(options) {"
    if BLANK_TICKS not in text or anchor not in text:
        sys.exit(f"asv_offline: {path} is not asv 0.6.6's: update Note [Commit labels ...]")
    text = text.replace(BLANK_TICKS, COMMIT_TICKS).replace(anchor, TICKS_FUNCTION)
    path.write_text(text, encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    html_dir = Path(argv[0] if argv else ROOT / ".asv" / "html").resolve()
    rewritten = make_offline(html_dir)
    print(
        f"asv_offline: {html_dir / 'index.html'} now loads {len(rewritten)} assets from "
        f"vendor/ (cache: {VENDOR.relative_to(ROOT)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
