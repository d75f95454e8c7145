"""The monorepo's own rules, as tests: layering, package metadata, identical build hooks.

Note [Why the build hook is copied]
Each Cython package must build alone from its sdist, so each carries its own
``hatch_build.py``; the copies must stay identical (one fix, every package).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "packages"

# bottom to top; a package may import itself and what its row allows (DESIGN.md)
ALLOWED = {
    "gradstack_tensor": {"gradstack_tensor"},
    "gradstack_autograd": {"gradstack_tensor", "gradstack_autograd"},
    "gradstack_functional": {"gradstack_tensor", "gradstack_autograd", "gradstack_functional"},
    "gradstack_profiler": {"gradstack_tensor", "gradstack_autograd", "gradstack_profiler"},
    "gradstack_nn": {
        "gradstack_tensor",
        "gradstack_autograd",
        "gradstack_nn",
        "gradstack_functional",
        "gradstack_profiler",
    },
    "gradstack_distributed": {
        "gradstack_tensor",
        "gradstack_autograd",
        "gradstack_functional",
        "gradstack_profiler",
        "gradstack_nn",
        "gradstack_distributed",
    },
    "gradstack": {
        "gradstack_tensor",
        "gradstack_autograd",
        "gradstack_functional",
        "gradstack_profiler",
        "gradstack_nn",
        "gradstack_distributed",
        "gradstack",
    },
}
IMPORT = re.compile(r"^\s*(?:from|import|cimport)\s+(gradstack(?:_[a-z]+)?)\b", re.M)

PACKAGE_DIRS = sorted(p for p in PACKAGES.iterdir() if (p / "pyproject.toml").exists())


def _import_name(pkg: Path) -> str:
    (name,) = [
        p.name for p in (pkg / "src").iterdir() if p.is_dir() and p.name.startswith("gradstack")
    ]
    return name


def test_every_package_of_the_design_exists():
    names = {_import_name(p) for p in PACKAGE_DIRS}
    assert names == set(ALLOWED)


@pytest.mark.parametrize("pkg", PACKAGE_DIRS, ids=lambda p: p.name)
def test_no_package_imports_a_higher_layer(pkg):
    owner = _import_name(pkg)
    bad = []
    for f in (pkg / "src").rglob("*"):
        if f.suffix not in {".py", ".pyx", ".pxd", ".pxi", ".pyi"}:
            continue
        for m in IMPORT.finditer(f.read_text(errors="ignore")):
            if m.group(1) not in ALLOWED[owner]:
                bad.append(f"{f.relative_to(ROOT)} imports {m.group(1)}")
    assert not bad, "a lower package imports a higher one:\n" + "\n".join(bad)


@pytest.mark.parametrize("pkg", PACKAGE_DIRS, ids=lambda p: p.name)
def test_package_metadata(pkg):
    meta = tomllib.loads((pkg / "pyproject.toml").read_text())
    project = meta["project"]
    assert project["name"].startswith("gradstack"), "distribution names carry the prefix"
    assert "version" in project.get("dynamic", []), "versions live in __about__.py"
    about = pkg / "src" / _import_name(pkg) / "__about__.py"
    assert re.search(r'__version__ = "\d+\.\d+\.\d+"', about.read_text())
    for doc in ("README.md", "CHANGELOG.md"):
        assert (pkg / doc).stat().st_size > 200, f"{pkg.name}/{doc} is missing or empty"
    assert (pkg / "tests").is_dir() and any((pkg / "tests").glob("test_*.py"))
    # siblings are declared with compatible-release ranges
    for dep in project.get("dependencies", []):
        if dep.startswith("gradstack"):
            assert re.search(r">=\d+\.\d+,<\d+\.\d+", dep), dep


def test_cython_build_hooks_are_identical():
    hooks = sorted(PACKAGES.glob("*/hatch_build.py"))
    assert len(hooks) >= 2
    first = hooks[0].read_text()
    for other in hooks[1:]:
        assert other.read_text() == first, f"{other} differs from {hooks[0]}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "hatch run test" in readme and "hatch run test" in ci
    assert "hatch run examples" in readme
