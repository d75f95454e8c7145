"""Compile the workspace's Cython extensions in place (``hatch run rebuild``).

Editable installs do not recompile ``.pyx`` files on import, so every hatch command runs
this first.  It uses the packages' own build code (``packages/tensor-core/hatch_build.py``,
see its Note [Deferred compile in the hatch environments]): Cython regenerates the C of
what changed (a ``.pyx``, an included ``.pxi``, a cimported ``.pxd`` of any package), then
the C compiler builds what is out of date, several extensions at a time, and each line
says what is compiling::

    tensor-core: 3 Cython modules, 2 to compile (cython 14.2 s)
    graph-engine: 1 Cython modules, 1 to compile (cython 9.8 s)
    compiling 3 extension(s), 2 at a time
    [1/3] gradstack_tensor._kernels  compiling ...

Nothing changed: about a second, and one line per package.  ``GRADSTACK_BUILD_JOBS=N``
sets how many compile at once (default: every CPU).

A compiled extension whose ``.pyx`` is gone (a module that was renamed or split, such as
graph-engine's old ``_core``) is removed, with a line saying so: left in place, it would
still be importable and hide the change.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "packages" / "tensor-core" / "hatch_build.py"
# Note [rebuild is never silent for long]
# Generating the C of every module of a fresh clone (a minute and more on a loaded machine)
# and compiling a large extension (_tensor.c: minutes) print nothing of their own, so a
# heartbeat says what is still in progress after HEARTBEAT seconds without a line.
HEARTBEAT = 8.0

# bottom layer first: a package's cimported .pxd files are cythonized before its users
LAYERS = ["tensor-core", "graph-engine", "functional-api", "profiler", "nn-mini", "distributed"]


def load_hook():
    """The build hook module (one copy for every package: Note [One build hook])."""
    spec = importlib.util.spec_from_file_location("gradstack_hatch_build", HOOK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def cython_packages() -> list[Path]:
    """Package folders whose sources hold at least one ``.pyx`` file, bottom layer first."""
    found = [p for p in (ROOT / "packages").iterdir() if any((p / "src").rglob("*.pyx"))]
    return sorted(found, key=lambda p: (LAYERS.index(p.name) if p.name in LAYERS else 99, p.name))


def remove_orphans(package: Path, log) -> None:
    """Delete the compiled extensions (and generated C) under ``package/src`` whose
    ``.pyx`` no longer exists."""
    for ext in sorted((package / "src").rglob("*.so")):
        stem = ext.name.split(".", 1)[0]
        pyx = ext.with_name(stem + ".pyx")
        if not pyx.exists():
            ext.unlink()
            c_file = ext.with_name(stem + ".c")
            if c_file.exists():
                c_file.unlink()
            log(f"removed {ext.relative_to(ROOT)} (its .pyx is gone)")


def main(argv: list[str]) -> int:
    hook = load_hook()
    packages = [
        hook.CythonPackage(path, hook.read_options(path), inplace=True)
        for path in cython_packages()
    ]
    start = time.perf_counter()
    lock = threading.Lock()
    state = {"last": time.monotonic(), "compiling": {}}  # module -> when its compile began

    def log(line: str) -> None:  # compiles report from several threads: one write per line
        with lock:
            sys.stdout.write(f"rebuild: {line}\n")
            sys.stdout.flush()
            state["last"] = time.monotonic()
            if line.endswith(": compiling ..."):
                state["compiling"][line.split("] ")[-1].split(":")[0]] = time.monotonic()
            elif ": done in " in line:
                state["compiling"].pop(line.split("] ")[-1].split(":")[0], None)

    def heartbeat(stop: threading.Event) -> None:
        """Note [rebuild is never silent for long]"""
        while not stop.wait(1.0):
            if time.monotonic() - state["last"] < HEARTBEAT:
                continue
            now = time.monotonic()
            busy = ", ".join(f"{m} ({now - t:.0f} s)" for m, t in state["compiling"].items())
            log(f"still compiling {busy}" if busy else "still generating C with Cython ...")

    for path in cython_packages():
        remove_orphans(path, log)
    modules = sum(len(pkg.pyx_files) for pkg in packages)
    log(f"checking {modules} Cython modules of {len(packages)} packages for changes ...")
    stop = threading.Event()
    beat = threading.Thread(target=heartbeat, args=(stop,), daemon=True)
    beat.start()
    try:
        hook.build(packages, log=log)
    except Exception as exc:  # a Cython or C compiler error: its output is above
        print(f"rebuild: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        stop.set()
        beat.join()
    log(f"extensions up to date ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
