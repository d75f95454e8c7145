"""Publish the asv dashboard, made to work offline (``hatch run asv:publish``).

Runs ``asv publish`` and then ``tools/asv_offline.py`` on ``.asv/html``.  Before any
benchmark results exist, asv only answers with its own hint (about ``asv run``, which here
must run through hatch with the project's machine name); this says what to run instead.

    python tools/asv_publish.py [ASV PUBLISH ARGS ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / ".asv" / "results"
HTML = ROOT / ".asv" / "html"


def result_files() -> list[Path]:
    """Saved results of any machine (asv keeps machine.json beside them)."""
    if not RESULTS.is_dir():
        return []
    return [p for p in RESULTS.glob("*/*.json") if p.name != "machine.json"]


def main(argv: list[str]) -> int:
    if not result_files():
        print(
            "asv_publish: there are no benchmark results to publish yet (.asv/results/ is "
            "empty).  Run the benchmarks first, e.g.\n"
            "    hatch run asv:history          # the last 12 commits that changed packages/\n"
            "    hatch run asv:run 'HEAD^!'     # only the current commit\n"
            "then `hatch run asv:publish` again.",
            file=sys.stderr,
        )
        return 1
    code = subprocess.run(["asv", "publish", *argv], cwd=ROOT).returncode
    if code:
        return code
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "asv_offline.py"), str(HTML)]
    ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
