"""Build, install and uninstall gradstack's packages inside an asv environment.

asv.conf.json calls this script (from the checkout asv runs in, ``{conf_dir}``) with the
python of the asv env being set up::

    python tools/asv_build.py build BUILD_DIR WHEEL_DIR   # one wheel per packages/* of the commit
    python tools/asv_build.py install WHEEL_DIR           # pip install --no-index --no-deps
    python tools/asv_build.py uninstall                   # every gradstack distribution

Note [Building old commits]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
asv measures old commits with today's benchmarks and today's asv.conf.json.  A package that
did not exist yet at a commit (the profiler, say) must not break that commit's build: this
script builds whatever ``packages/*/pyproject.toml`` the checkout has, bottom layer first, and
installs whatever wheels came out.  The build runs without isolation (the build dependencies
are asv's ``matrix.req``), and the install never consults an index: a distribution always
comes from the wheel of the measured commit (see pitfall P10 in the tooling notes).

Note [asv builds say what they build]
asv runs this script with its output captured, and shows it only when the build fails, so
a commit's build (minutes when its extensions must compile) looked like a hang.  Each
package's wheel is built by hatchling's PEP 517 hook in this process's python (what ``pip
wheel --no-build-isolation`` would call, without pip hiding the hook's lines), and every
line, prefixed with the commit, also goes to the file named by ``GRADSTACK_ASV_LOG``
when it is set: ``tools/asv_history.py`` prints that file as it grows.  The compiled
extensions come from the cache shared with the hatch environments (Note [One pin for the
extension cache] in pyproject.toml), so a commit whose C another checkout compiled
builds in seconds; the lines say which did ("N to compile, M from the build cache").
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

# bottom layer first: a Cython package that cimports another is built after it
LAYERS = ["tensor-core", "graph-engine", "functional-api", "profiler", "nn-mini", "gradstack"]
DISTRIBUTIONS = [
    "gradstack",
    "gradstack-nn-mini",
    "gradstack-profiler",
    "gradstack-functional-api",
    "gradstack-graph-engine",
    "gradstack-tensor-core",
]


def package_dirs(build_dir: Path) -> list[Path]:
    """The package folders present in a checkout, in build order."""
    root = build_dir / "packages"
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if (p / "pyproject.toml").is_file()]
    return sorted(
        found, key=lambda p: (LAYERS.index(p.name) if p.name in LAYERS else len(LAYERS), p.name)
    )


def pip(*args: str) -> int:
    cmd = [sys.executable, "-m", "pip", *args]
    print("asv_build:", " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode


def say(line: str) -> None:
    """Print ``line``, and append it to $GRADSTACK_ASV_LOG (Note [asv builds say what they
    build])."""
    print(line, flush=True)
    log = os.environ.get("GRADSTACK_ASV_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def _commit(build_dir: Path) -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short=8", "HEAD"], cwd=build_dir, capture_output=True, text=True
    )
    return out.stdout.strip() or build_dir.name


# hatchling's PEP 517 hook, as pip calls it without build isolation
BUILD_WHEEL = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"


def build(build_dir: Path, wheel_dir: Path) -> int:
    dirs = package_dirs(build_dir)
    if not dirs:
        print(f"asv_build: no packages/*/pyproject.toml under {build_dir}", file=sys.stderr)
        return 1
    wheel_dir.mkdir(parents=True, exist_ok=True)
    for old in wheel_dir.glob("*.whl"):  # a rebuilt cache dir must hold this commit's only
        old.unlink()
    commit = _commit(build_dir)
    say(f"asv_build {commit}: building {len(dirs)} wheels ({', '.join(d.name for d in dirs)})")
    for pkg in dirs:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", BUILD_WHEEL, str(wheel_dir)],
            cwd=pkg,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip():
                say(f"asv_build {commit}: {line.rstrip()}")
        if proc.wait():
            say(f"asv_build {commit}: building {pkg.name} failed")
            return proc.returncode
        say(f"asv_build {commit}: {pkg.name} built in {time.perf_counter() - start:.1f} s")
    say(f"asv_build {commit}: built " + ", ".join(sorted(w.name for w in wheel_dir.glob("*.whl"))))
    return 0


def install(wheel_dir: Path) -> int:
    wheels = sorted(str(w) for w in wheel_dir.glob("*.whl"))
    if not wheels:
        print(f"asv_build: no wheels in {wheel_dir}", file=sys.stderr)
        return 1
    return pip("install", "--no-deps", "--no-index", "--force-reinstall", "-q", *wheels)


def uninstall() -> int:
    return pip("uninstall", "-y", "-q", *DISTRIBUTIONS)


def main(argv: list[str]) -> int:
    usage = __doc__.split("\n\n")[1]
    if not argv:
        print(usage, file=sys.stderr)
        return 2
    command, *rest = argv
    if command == "build" and len(rest) == 2:
        return build(Path(rest[0]).resolve(), Path(rest[1]).resolve())
    if command == "install" and len(rest) == 1:
        return install(Path(rest[0]).resolve())
    if command == "uninstall" and not rest:
        return uninstall()
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
