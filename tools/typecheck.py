"""Type-check every typed package of the workspace with mypy (``hatch run lint``).

A package is typed when each of its compiled modules (``.pyx``) has a stub (``.pyi``)
beside it: the pure-Python packages, the profiler, whose one extension is small enough
to describe, and graph-engine (a stub per module of its core).  tensor-core is not: its
public ``Tensor`` is described by the stub that tests/test_tensor_stub.py keeps true.  Each
typed package must ship a ``py.typed`` marker (PEP 561), so that its users' type checkers
read its annotations too.  mypy's
settings, and what they relax and why, are in the root ``pyproject.toml``
(Note [What the type check relaxes]).

    python tools/typecheck.py [MYPY ARGS ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def typed_packages() -> list[Path]:
    """Packages whose every ``.pyx`` has a ``.pyi`` stub beside it (none: pure Python)."""
    return sorted(
        p
        for p in (ROOT / "packages").iterdir()
        if (p / "pyproject.toml").is_file()
        and all(pyx.with_suffix(".pyi").is_file() for pyx in (p / "src").rglob("*.pyx"))
    )


def main(argv: list[str]) -> int:
    packages = typed_packages()
    srcs = [p / "src" for p in packages]
    unmarked = [
        str(top.relative_to(ROOT))
        for src in srcs
        for top in src.iterdir()
        if (top / "__init__.py").is_file() and not (top / "py.typed").is_file()
    ]
    if unmarked:
        print(f"typecheck: add a py.typed marker (an empty file) to {', '.join(unmarked)}")
        return 1
    print(f"typecheck: mypy over {', '.join(p.name for p in packages)}", flush=True)
    env = dict(os.environ, MYPYPATH=os.pathsep.join(str(s) for s in srcs))
    cmd = [sys.executable, "-m", "mypy", *argv, *(str(s.relative_to(ROOT)) for s in srcs)]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
