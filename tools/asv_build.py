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

Note [One compile for every package of a commit]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Built one wheel after another, each package compiled its extensions alone: graph-engine's
waited for tensor-core's last (largest-first leaves one core idle at the end of each
package), and a commit's cold build took 65 s on two cores.  When the measured commit's
build hook offers its build API (``CythonPackage``, ``read_options``, ``build``: every
commit since the hook became one shared file), this script first compiles the extensions
of every Cython package of the commit in one schedule (the hook's own ``build``, which is
what ``hatch run rebuild`` calls: largest C first across packages, as many at once as
there are CPUs) into the packages' ``build/`` folders, where the wheel builds find them
up to date; the wheels are then only packed, on every core at once.  A commit whose hook
is older builds package by package, as before.

Note [Extensions reused by their sources]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The compiled-extension cache is keyed by the generated C, so a commit whose C is cached
still spent the time of generating it (Cython over every module: most of the 13 s that a
second, unchanged commit took).  So this script keeps each extension a second time, with
its generated C, under a key made of its sources (``by-source/`` in the extension cache,
the newest ``SOURCE_ENTRIES`` kept): the module's ``.pyx``; every ``.pxd``, ``.pxi`` and
C header of the folders Cython searches (the package's ``src`` and its ``cython-include``
folders, so an edit to any header that a module could see changes its key); any other
file Cython's dependency scan names (a ``.pyx`` included as text); and what makes C and
binary of them: the commit's build hook file (its Cython directives, the C rewrite after
Cython), the package's hook options (flags, OpenMP), Cython's and numpy's versions, the
compiler, the Python ABI.  Before the compile, an extension whose key is kept gets its C
and binary back, both newer than its sources, so Cython regenerates nothing and the
compiler compiles nothing for it: the second of two commits whose Cython did not change
builds in the seconds its wheels take to pack.  An edited ``.pyx`` misses only its own
key; it and what the C cache does not hold are built as before, then kept.  The paths
are those the hook's ``build`` uses; they are checked against the hook after each build,
and an extension whose paths differ is neither restored (it is compiled) nor kept.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
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
    """``pip ARGS`` for this process's python: by uv where it is on the PATH (asv's
    environments have no pip of their own: Note [asv's environments are made by uv] in
    tools/asv_env.py), else by the environment's pip."""
    uv = shutil.which("uv")
    if uv is not None:
        cmd = [uv, "pip", *args, "--python", sys.executable]
    else:
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

# Note [Extensions reused by their sources]: bump when the key or an entry's layout changes
SOURCE_FORMAT = 1
SOURCE_ENTRIES = 160  # about four commits' worth of distinct extensions (36 a commit)
# the files of the Cython search path that a module may read besides its own .pyx
HEADER_SUFFIXES = {".pxd", ".pxi", ".h", ".hpp", ".c", ".cpp", ".inc"}
HOOK_API = ("CythonPackage", "read_options", "build", "cache_dir")


def load_hook(build_dir: Path):
    """The measured commit's build hook module, or None when it has no build API
    (Note [One compile for every package of a commit])."""
    path = build_dir / "packages" / "tensor-core" / "hatch_build.py"
    if not path.is_file():
        return None
    name = f"_gradstack_asv_hook_{os.getpid()}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - an old hook may fail in any way
        say(f"asv_build: the commit's build hook does not load ({exc}): package by package")
        return None
    if not all(hasattr(module, attr) for attr in HOOK_API):
        return None
    return module


class SourceCache:
    """Extensions kept by the key of their sources (Note [Extensions reused by their
    sources]): ``by-source/<module>-<key>/`` holds the generated C and the binary."""

    def __init__(self, hook, root: Path) -> None:
        where = hook.cache_dir()
        self.dir = None if where is None else Path(where) / "by-source"
        self.hook_text = Path(hook.__file__).read_bytes()
        self.root = root
        import numpy

        toolchain = hook._toolchain() if hasattr(hook, "_toolchain") else ""
        self.settings = repr(
            (
                SOURCE_FORMAT,
                _version("Cython"),
                numpy.__version__,
                sys.version,
                sysconfig.get_config_var("EXT_SUFFIX"),
                toolchain,
            )
        ).encode()

    def c_path(self, pkg, pyx: Path) -> Path:
        """Where the hook's cythonize writes the C of ``pyx`` (``build/cython/<path>.c``)."""
        return pkg.build / "cython" / pyx.relative_to(pkg.root).with_suffix(".c")

    def binary_path(self, pkg, pyx: Path) -> Path:
        """Where the hook's build_ext puts the extension of a non-editable build."""
        parts = pyx.relative_to(pkg.src).with_suffix("").parts
        lib = pkg.build / f"lib-{sys.implementation.cache_tag}"
        return lib.joinpath(*parts[:-1], parts[-1] + sysconfig.get_config_var("EXT_SUFFIX"))

    def headers(self, pkg) -> tuple[set[Path], bytes]:
        """The headers of the package's Cython search path, and their digest."""
        found: set[Path] = set()
        for folder in pkg.include_path:
            for path in Path(folder).rglob("*"):
                if path.suffix in HEADER_SUFFIXES and path.is_file():
                    found.add(path.resolve())
        digest = hashlib.sha256()
        for path in sorted(found):
            digest.update(f"\0{os.path.relpath(path, self.root)}\0".encode())
            digest.update(path.read_bytes())
        return found, digest.digest()

    def dependency_scan(self, pkg):
        """Cython's own dependency scan (what cythonize's staleness check reads: every
        cimported ``.pxd`` and included file, at any depth), or None."""
        try:
            from Cython.Build.Dependencies import DependencyTree
            from Cython.Compiler.Main import Context
            from Cython.Compiler.Options import (
                CompilationOptions,
                default_options,
                get_directive_defaults,
            )

            options = CompilationOptions(default_options)
            ctx = Context(pkg.include_path, get_directive_defaults(), options=options)
            return DependencyTree(ctx, quiet=True)
        except Exception:  # noqa: BLE001 - another Cython: the fallback in key()
            return None

    def key(self, pkg, pyx: Path, headers: tuple[set[Path], bytes], scan) -> str:
        digest = hashlib.sha256(self.settings)
        digest.update(self.hook_text)
        digest.update(repr(sorted(pkg.options.items())).encode())
        digest.update(headers[1])
        try:
            files = {Path(f).resolve() for f in scan.all_dependencies(str(pyx))}
        except Exception:  # noqa: BLE001 - without the scan: every .pyx of the package
            files = {p.resolve() for p in pkg.pyx_files}
        for path in sorted({pyx.resolve(), *files} - headers[0]):
            digest.update(f"\0{os.path.relpath(path, self.root)}\0".encode())
            digest.update(path.read_bytes())
        module = ".".join(pyx.relative_to(pkg.src).with_suffix("").parts)
        return f"{module}-{digest.hexdigest()[:40]}"

    def restore(self, entry: Path, c_file: Path, binary: Path) -> bool:
        """The kept C, then the kept binary (newer than the C and the sources): False when
        ``entry`` is not kept."""
        if not (entry / "module.c").is_file() or not (entry / "module.so").is_file():
            return False
        for src, dst in ((entry / "module.c", c_file), (entry / "module.so", binary)):
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
            shutil.copyfile(src, tmp)
            shutil.copymode(src, tmp)
            os.replace(tmp, dst)  # written now: newer than the checkout's sources
        os.utime(entry)  # recently used: kept by the pruning
        return True

    def store(self, entry: Path, c_file: Path, binary: Path) -> None:
        """Keep a freshly built extension and its C (best effort)."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp = self.dir / f".{entry.name}.{os.getpid()}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir()
            shutil.copyfile(c_file, tmp / "module.c")
            shutil.copy2(binary, tmp / "module.so")
            if entry.exists():
                shutil.rmtree(tmp)
                os.utime(entry)
                return
            os.replace(tmp, entry)
            entries = sorted(
                (e for e in self.dir.iterdir() if e.is_dir() and not e.name.startswith(".")),
                key=lambda e: e.stat().st_mtime,
            )
            for old in entries[:-SOURCE_ENTRIES]:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass  # a read-only or full cache costs a build next time, nothing else


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "?"


def compile_extensions(hook, dirs: list[Path], build_dir: Path, commit: str) -> None:
    """Compile every Cython extension of the commit in one schedule, reusing what the
    source cache keeps (Notes [One compile for every package of a commit] and
    [Extensions reused by their sources])."""

    def log(line: str) -> None:
        say(f"asv_build {commit}: {line}")

    pkgs = [hook.CythonPackage(d, hook.read_options(d), inplace=False) for d in dirs]
    pkgs = [pkg for pkg in pkgs if pkg.pyx_files]
    if not pkgs:
        return
    start = time.perf_counter()
    for pkg in pkgs:  # the sources written at build time are sources of the key
        if hasattr(pkg, "generate"):
            pkg.generate(log)
    planned: dict[str, tuple[Path, Path, Path]] = {}  # module -> (entry, C, binary)
    restored: set[str] = set()
    try:
        cache = SourceCache(hook, build_dir)
        for pkg in pkgs if cache.dir is not None else []:
            headers, scan = cache.headers(pkg), cache.dependency_scan(pkg)
            for pyx in pkg.pyx_files:
                key = cache.key(pkg, pyx, headers, scan)
                module = key.rsplit("-", 1)[0]
                planned[module] = (
                    cache.dir / key,
                    cache.c_path(pkg, pyx),
                    cache.binary_path(pkg, pyx),
                )
                if cache.restore(*planned[module]):
                    restored.add(module)
    except Exception as exc:  # noqa: BLE001 - an older hook's package: no reuse, a full build
        log(f"extensions not reused by their sources ({type(exc).__name__}: {exc})")
        planned.clear()
    total = sum(len(pkg.pyx_files) for pkg in pkgs)
    log(
        f"{total} Cython modules of {len(pkgs)} packages: {len(restored)} reused by their "
        f"sources ({time.perf_counter() - start:.1f} s), the rest built in one schedule"
    )
    hook.build(pkgs, log=log)
    for pkg in pkgs:
        for ext in getattr(pkg, "_ext_modules", []):
            if ext.name not in planned or ext.name in restored:
                continue
            entry, c_file, binary = planned[ext.name]
            if Path(ext.sources[0]).resolve() != c_file.resolve() or (
                Path(pkg.output(ext)).resolve() != binary.resolve()
            ):
                log(f"{ext.name}: the hook builds elsewhere than {c_file}: not kept")
                continue
            cache.store(entry, c_file, binary)
    log(f"extensions built in {time.perf_counter() - start:.1f} s")


def build_wheel(pkg: Path, wheel_dir: Path, commit: str) -> int:
    """One package's wheel by hatchling's hook, its lines passed on as they come."""
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
            say(f"asv_build {commit}: [{pkg.name}] {line.rstrip()}")
    if proc.wait():
        say(f"asv_build {commit}: building {pkg.name} failed")
        return proc.returncode
    say(f"asv_build {commit}: {pkg.name} built in {time.perf_counter() - start:.1f} s")
    return 0


def build(build_dir: Path, wheel_dir: Path) -> int:
    dirs = package_dirs(build_dir)
    if not dirs:
        print(f"asv_build: no packages/*/pyproject.toml under {build_dir}", file=sys.stderr)
        return 1
    wheel_dir.mkdir(parents=True, exist_ok=True)
    for old in wheel_dir.glob("*.whl"):  # a rebuilt cache dir must hold this commit's only
        old.unlink()
    commit = _commit(build_dir)
    start = time.perf_counter()
    say(f"asv_build {commit}: building {len(dirs)} wheels ({', '.join(d.name for d in dirs)})")
    hook = load_hook(build_dir)
    if hook is None:  # an old commit: package by package, each compiling its own
        for pkg in dirs:
            if build_wheel(pkg, wheel_dir, commit):
                return 1
    else:
        try:
            compile_extensions(hook, dirs, build_dir, commit)
        except Exception as exc:  # noqa: BLE001 - a compiler error: its lines are above
            say(f"asv_build {commit}: compiling failed: {type(exc).__name__}: {exc}")
            return 1
        # the extensions are up to date: the wheels only pack, on every core
        jobs = hook.default_jobs() if hasattr(hook, "default_jobs") else 2
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            codes = list(pool.map(lambda pkg: build_wheel(pkg, wheel_dir, commit), dirs))
        if any(codes):
            return 1
    wheels = ", ".join(sorted(w.name for w in wheel_dir.glob("*.whl")))
    say(f"asv_build {commit}: built {wheels} in {time.perf_counter() - start:.1f} s")
    return 0


def install(wheel_dir: Path) -> int:
    wheels = sorted(str(w) for w in wheel_dir.glob("*.whl"))
    if not wheels:
        print(f"asv_build: no wheels in {wheel_dir}", file=sys.stderr)
        return 1
    if shutil.which("uv") is not None:  # uv's spelling; bytecode compiled as pip does
        return pip(
            "install", "--no-deps", "--no-index", "--reinstall", "--compile-bytecode", "-q", *wheels
        )
    return pip("install", "--no-deps", "--no-index", "--force-reinstall", "-q", *wheels)


def uninstall() -> int:
    if shutil.which("uv") is not None:  # uv pip uninstall asks nothing (no -y)
        return pip("uninstall", "-q", *DISTRIBUTIONS)
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
