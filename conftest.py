"""Workspace-wide pytest configuration.

Note [Never test a stale extension]
The packages are installed editable, and editable installs do not recompile Cython on
import.  ``hatch run test`` rebuilds first; this guard catches plain ``pytest`` runs after a
``.pyx``/``.pxd`` edit (or on a fresh clone whose ``.so`` files were never built) and stops
the session instead of testing old machine code.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


def _stale_extensions() -> list[str]:
    problems = []
    for pyx in ROOT.glob("packages/*/src/**/*.pyx"):
        src_dir = pyx.relative_to(ROOT).parts[:3]  # packages/<name>/src
        src = ROOT.joinpath(*src_dir)
        top = pyx.relative_to(src).parts[0]
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin is None or src not in Path(spec.origin).resolve().parents:
            continue  # installed from a wheel: nothing in-tree to compare with
        deps = [pyx, *src.rglob("*.pxd")]
        built = [*pyx.parent.glob(f"{pyx.stem}.*.so"), *pyx.parent.glob(f"{pyx.stem}.*.pyd")]
        rel = pyx.relative_to(ROOT).as_posix()
        if not built:
            problems.append(f"{rel} (not compiled)")
        elif max(p.stat().st_mtime for p in deps) > min(b.stat().st_mtime for b in built):
            problems.append(f"{rel} (edited since it was compiled)")
    return problems


def pytest_sessionstart(session):
    problems = _stale_extensions()
    if problems:
        pytest.exit(
            "Cython extensions out of date: "
            + "; ".join(problems)
            + ". Run `hatch run rebuild` (or use `hatch run test`, which rebuilds first).",
            returncode=3,
        )
