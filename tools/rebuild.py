"""Recompile the Cython packages of the workspace in place (``hatch run rebuild``).

Editable installs do not recompile ``.pyx`` files on import, so every test and example
command runs this first.  It re-runs each Cython package's build hook through an editable
``pip install`` without build isolation: a no-op when nothing changed, a compile of what
changed otherwise, and a full build on a fresh clone whose ``.so`` files do not exist yet.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cython_packages() -> list[Path]:
    """Package folders whose sources hold at least one ``.pyx`` file, bottom layer first."""
    order = ["tensor-core", "graph-engine", "functional-api", "profiler", "nn-mini", "gradstack"]
    found = [p for p in (ROOT / "packages").iterdir() if any((p / "src").rglob("*.pyx"))]
    return sorted(found, key=lambda p: order.index(p.name) if p.name in order else len(order))


def main() -> int:
    for pkg in cython_packages():
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--editable",
            str(pkg),
        ]
        result = subprocess.run(cmd, cwd=ROOT)
        if result.returncode != 0:
            print(
                f"rebuild: building {pkg.name} failed (command: {' '.join(cmd)})", file=sys.stderr
            )
            return result.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
