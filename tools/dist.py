"""Wheels of every package, and each wheel tested installed alone (``hatch run dist``,
``hatch run wheel-tests``).

    python tools/dist.py build [PACKAGE ...]   # wheels into dist/ (default: every package)
    python tools/dist.py test  [PACKAGE ...]   # each in a fresh venv, its tests against it

``build`` writes one wheel per ``packages/*`` into ``dist/``, bottom layer first.  Then any
layer installs alone, with the gradstack packages it depends on from that folder and the
rest (numpy) from the index::

    pip install --find-links dist gradstack               # the whole stack
    pip install --find-links dist gradstack-graph-engine  # tensors with autograd

``test`` does exactly that for each package in its own new virtual environment (under
``build/wheel-tests/``), adds the test tools (pytest, pytest-benchmark, hypothesis), and
runs the package's own tests against the installed wheel, from the repository root so the
workspace's pytest settings and guards apply.

Note [Wheel tests run without the oracle]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A wheel test checks the *install*: the wheel holds its compiled extensions and modules, its
declared dependencies are enough, its tests pass with nothing else present.  torch is no
dependency of any package, so these environments do not get it: they run with
``GRADSTACK_WITHOUT_TORCH=1``, and the comparisons with torch are skipped and counted (see
Note [A missing dependency fails, it does not skip] in conftest.py).  Those comparisons
run in ``hatch run test``, against the same code.  A missing *gradstack* module still fails.
The one exception: a package whose tests import torch outright (at module level, without
``pytest.importorskip``; today gradstack-distributed) cannot collect without it, so its
venv also gets ``torch==2.13.0`` (from this disk, as in the hatch env) and the oracle.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
VENVS = ROOT / "build" / "wheel-tests"
LAYERS = ["tensor-core", "graph-engine", "functional-api", "profiler", "nn-mini", "distributed"]
TEST_TOOLS = ["pytest>=8", "pytest-benchmark>=5", "hypothesis>=6.100"]


def packages(names: list[str]) -> list[Path]:
    """Package folders in build order (bottom layer first, the facade last)."""
    found = [p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()]
    found.sort(key=lambda p: (LAYERS.index(p.name) if p.name in LAYERS else len(LAYERS), p.name))
    if not names:
        return found
    unknown = set(names) - {p.name for p in found}
    if unknown:
        raise SystemExit(
            f"dist: no package {sorted(unknown)}; packages: {', '.join(p.name for p in found)}"
        )
    return [p for p in found if p.name in names]


def distribution(pkg: Path) -> str:
    return tomllib.loads((pkg / "pyproject.toml").read_text())["project"]["name"]


def requirement(pkg: Path) -> str:
    """The distribution with every optional extra it declares (the tests use them all)."""
    project = tomllib.loads((pkg / "pyproject.toml").read_text())["project"]
    extras = sorted(project.get("optional-dependencies", {}))
    return project["name"] + (f"[{','.join(extras)}]" if extras else "")


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], **kwargs)


def build(names: list[str]) -> int:
    # hatchling's own builder, in this process: no pip needed (the hatch envs are made by
    # uv and have none), no build isolation (this env has the build dependencies), and the
    # Cython build writes under each package's build/ only (Note [Where builds go] in
    # packages/tensor-core/hatch_build.py)
    from hatchling.builders.wheel import WheelBuilder

    DIST.mkdir(exist_ok=True)
    todo = packages(names)
    for n, pkg in enumerate(todo, 1):
        name = distribution(pkg)
        for old in DIST.glob(f"{name.replace('-', '_')}-*.whl"):
            old.unlink()
        print(f"dist: [{n}/{len(todo)}] {name} ...", flush=True)
        start = time.perf_counter()
        try:
            (wheel,) = WheelBuilder(str(pkg)).build(directory=str(DIST), versions=["standard"])
        except Exception as exc:  # a Cython or compiler error: its output is above
            print(f"dist: building {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
        took = time.perf_counter() - start
        print(f"dist: [{n}/{len(todo)}] {Path(wheel).name} ({took:.1f} s)", flush=True)
    print(f"dist: {len(todo)} wheels in {DIST.relative_to(ROOT)}/")
    return 0


_IMPORTS_TORCH = re.compile(r"^(?:import|from)\s+torch\b", re.M)


def needs_oracle(pkg: Path) -> bool:
    """Whether the package's tests import torch outright (Note [Wheel tests run without the
    oracle])."""
    for test in (pkg / "tests").rglob("*.py"):
        text = test.read_text(encoding="utf-8", errors="replace")
        if _IMPORTS_TORCH.search(text) and 'importorskip("torch")' not in text:
            return True
    return False


def _uv() -> str | None:
    return os.environ.get("HATCH_UV") or shutil.which("uv")


def make_venv(path: Path) -> list[str]:
    """A new virtual environment; returns the install command prefix for it."""
    shutil.rmtree(path, ignore_errors=True)
    uv = _uv()
    if uv:  # an order of magnitude faster; no torch is installed, so pip's config is not needed
        run([uv, "venv", "-q", "--python", sys.executable, path], check=True)
        return [uv, "pip", "install", "-q", "--python", str(path / "bin" / "python")]
    run([sys.executable, "-m", "venv", path], check=True)
    return [str(path / "bin" / "python"), "-m", "pip", "install", "-q"]


def test(names: list[str], pytest_args: list[str]) -> int:
    todo = packages(names)
    missing = [
        distribution(p)
        for p in todo
        if not list(DIST.glob(f"{distribution(p).replace('-', '_')}-*.whl"))
    ]
    if missing:
        print(f"dist: no wheel in dist/ for {', '.join(missing)}: run `hatch run dist` first")
        return 2
    # every build is version 0.1.0 until a release: uv would reuse the wheel it cached from
    # an earlier dist/ of the same name and version, so the gradstack ones are re-read
    fresh = []
    if _uv():
        for pkg in packages([]):
            fresh += ["--refresh-package", distribution(pkg)]
    results = []
    for pkg in todo:
        name = distribution(pkg)
        venv = VENVS / pkg.name
        start = time.perf_counter()
        req = requirement(pkg)
        oracle = ["torch==2.13.0"] if needs_oracle(pkg) else []
        if oracle:
            # where the CPU build of torch lies (pip's find-links, as the hatch env reads it:
            # Note [uv, and where torch comes from]); a --find-links on uv's command line
            # replaces UV_FIND_LINKS instead of adding to it
            for links in {
                os.environ.get("UV_FIND_LINKS", ""),
                os.environ.get("PIP_FIND_LINKS", ""),
            }:
                oracle += [arg for link in links.split() for arg in ("--find-links", link)]
        print(f"\n=== {name}: fresh venv, pip install --find-links dist '{req}' " + "=" * 10)
        if oracle:
            print("(its tests import torch outright: the venv gets torch==2.13.0 too)")
        install = make_venv(venv)
        code = run(
            [*install, "--find-links", DIST, req, *TEST_TOOLS, *oracle, *fresh], cwd=ROOT
        ).returncode
        if code == 0:
            freeze = run(
                [venv / "bin" / "python", "-m", "pip", "list", "--format=freeze"]
                if not _uv()
                else [_uv(), "pip", "freeze", "--python", venv / "bin" / "python"],
                capture_output=True,
                text=True,
            ).stdout.split()
            print("installed:", " ".join(d for d in freeze if d.lower().startswith("gradstack")))
            env = dict(os.environ, GRADSTACK_WITHOUT_TORCH="" if oracle else "1")
            env.pop("PYTHONPATH", None)
            code = run(
                [venv / "bin" / "python", "-m", "pytest", pkg / "tests", "-q", *pytest_args],
                cwd=ROOT,
                env=env,
            ).returncode
        took = time.perf_counter() - start
        results.append((name, code, took))
    print("\nwheel tests (each wheel installed alone in a fresh venv, torch only where noted):")
    for name, code, took in results:
        print(f"  {'ok  ' if code == 0 else 'FAIL'} {name:28s} {took:6.1f} s")
    failed = [name for name, code, _ in results if code]
    print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"build", "test"}:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    names = [a for a in rest if not a.startswith("-")]
    if command == "build":
        return build(names)
    return test(names, [a for a in rest if a.startswith("-")])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
