"""Hatchling build hook: compile every ``src/**/*.pyx`` with Cython and setuptools' build_ext.

This is the one copy of gradstack's Cython build: every Cython package of the monorepo
uses it (Note [One build hook]), and ``tools/rebuild.py`` drives the same code for the
development environments.  Options, all optional, come from
``[tool.hatch.build.targets.wheel.hooks.custom]`` of the package's ``pyproject.toml``::

    cython-include = ["../tensor-core/src"]   # extra dirs searched for cimported .pxd files
    cython-directives = {boundscheck = false}
    extra-compile-args = ["-O3"]
    openmp = true                             # compile and link with -fopenmp
    codegen = ["src/pkg/_codegen.py"]         # scripts that write sources first (below)

Extensions compile in parallel (``GRADSTACK_BUILD_JOBS``, default: every CPU), the largest
generated C first, and each start and end is printed (``[tensor-core 1/3] ...``).

Note [Where builds go]
~~~~~~~~~~~~~~~~~~~~~~
An *editable* install (the hatch environments) builds in place: the extension lands next to
its ``.pyx`` under ``src/``, where the editable ``.pth`` points.  Every other build (``pip
install packages/x``, ``pip wheel``, ``hatch build``, asv) writes only under the package's
``build/`` folder and force-includes the extension into the wheel from there, so building a
wheel never touches the ``.so`` files the development environment imports.  The generated C
lives in ``build/cython/`` for both (the same C either way, so neither kind regenerates it
for the other).

Note [Deferred compile in the hatch environments]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
pip and uv hide a build backend's output, so a compile inside hatch's "Syncing dependencies"
step is a silent spinner.  The hatch environments set ``GRADSTACK_DEFER_CYTHON=1``: an
editable install then only installs the package, and the environment's first command runs
``tools/rebuild.py``, which compiles with this same code, saying what it compiles.  Wheels
and sdists ignore the variable.

Note [The compiled-extension cache]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Compiling is nearly all of a fresh set-up's time, and a fresh clone (CI, a new worktree)
compiles exactly what another checkout on the same machine compiled already.  So each
compiled extension is also kept in ``~/.cache/gradstack/extensions`` (``$XDG_CACHE_HOME``
is honoured; ``GRADSTACK_BUILD_CACHE=DIR`` moves it, ``=off`` turns it off), under a key
made of everything the binary depends on: the generated C (which holds every ``.pyx``,
``.pxi`` and cimported ``.pxd`` it was made from; it names no checkout-specific path once
its "Cython Metadata" comment is left out: that comment lists the absolute paths of
numpy's headers, which differ between environments, a hatch env and an asv env, for the
same code), the compiler and its flags, numpy's version (its headers), Python's ABI and
``CACHE_FORMAT``.  An
out-of-date extension whose key is cached is copied instead of compiled.  The newest 64
entries are kept.

Note [An instance dict is made on first use]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A cdef class that declares ``cdef dict __dict__`` (tensor-core's ``TensorBase``: torch
tensors take attributes, ``t.foo = 1``) gets a ``tp_new`` from Cython that makes the dict
at once, for every object: an allocation and a free per tensor, ~3% of the 2000 tiny ops'
instructions by callgrind, for a dict that nearly every tensor leaves empty.  CPython
itself makes an instance dict on first use: its generic getattr skips a NULL dict slot,
its generic setattr and ``PyObject_GenericGetDict`` (the ``__dict__`` getter Cython
installs) create the dict there, and Cython's dealloc, traverse and clear take NULL.  So
after cythonize, ``lazy_instance_dicts`` rewrites that one statement of the generated C to
leave the slot NULL.  If a Cython version words it otherwise the C is left as it is (the
dict is then eager again, nothing else changes), and tensor-core's
``test_tensor_attributes.py`` fails on the eager dict, so the change is noticed.

Note [Sources written at build time]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A package may write some of its sources from data at build time (tensor-core writes the
Tensor methods of its op table: Note [Generated from the op table] in its ``_op_table.py``).
Each script named by ``codegen`` defines ``generate(package_root, log) -> list[Path]``: it
writes its files, each only when its text changed (so that an unchanged file compiles
nothing again), and returns every file it keeps.  The hook runs the scripts before Cython,
in every build (``tools/rebuild.py``, editable installs, wheels, wheels from an sdist).
The files are not in git (the repository's ``.gitignore``); a wheel built from a checkout
takes them as artifacts (hatchling leaves out what git ignores), a wheel from an sdist
finds them where the scripts wrote them.

Note [One build hook]
~~~~~~~~~~~~~~~~~~~~~
Each package must build alone (from its folder or from its sdist), so hatchling must find
the hook inside the package.  This file is tensor-core's ``hatch_build.py``; every other
Cython package has a symbolic link to it (git keeps links), named in its pyproject
(``[tool.hatch.build.targets.wheel.hooks.custom] path = "cython_build_hook.py"``), and its
sdist force-includes this file's *content* under that name.  The link is not called
``hatch_build.py``: hatchling always adds a file of that name to an sdist as it is, and a
link would dangle outside the repository.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
import tomllib
import warnings
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

try:  # absent when tools/rebuild.py imports this file outside a build
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # pragma: no cover - only the hook class needs it
    BuildHookInterface = object  # type: ignore[assignment,misc]

DEFER_VARIABLE = "GRADSTACK_DEFER_CYTHON"
CACHE_VARIABLE = "GRADSTACK_BUILD_CACHE"
CACHE_ENTRIES = 64
# part of every cache key: bump it when this file changes how a binary is made in a way the
# key does not already hold (the C, flags, macros, numpy, compiler and ABI are in it)
CACHE_FORMAT = 2  # 2: the key leaves out the C's "Cython Metadata" comment
# the comment at the top of a generated C file that lists its sources and include paths
CYTHON_METADATA = re.compile(rb"/\* BEGIN: Cython Metadata\n.*?\nEND: Cython Metadata \*/\n", re.S)
HOOK_TABLE = ("tool", "hatch", "build", "targets", "wheel", "hooks", "custom")
# Note [An instance dict is made on first use]: what Cython's tp_new says, and what it
# becomes
EAGER_DICT = "p->__dict__ = PyDict_New(); if (unlikely(!p->__dict__)) goto bad;"
LAZY_DICT = "p->__dict__ = NULL;  /* made on first use: Note [An instance dict ...] */"


def lazy_instance_dicts(c_file: Path) -> bool:
    """Leave the instance dict of the generated C's cdef classes to be made on first use
    (Note [An instance dict is made on first use]); True when the file changed."""
    text = c_file.read_text()
    if EAGER_DICT not in text:
        return False
    c_file.write_text(text.replace(EAGER_DICT, LAZY_DICT))
    return True


@contextmanager
def _chdir(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def default_jobs() -> int:
    """Parallel compiles: ``GRADSTACK_BUILD_JOBS``, else the CPUs this process may use."""
    env = os.environ.get("GRADSTACK_BUILD_JOBS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def cache_dir() -> Path | None:
    """Where compiled extensions are kept (Note [The compiled-extension cache]), or None."""
    env = os.environ.get(CACHE_VARIABLE, "")
    if env.lower() in {"0", "off", "no", "false"}:
        return None
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gradstack" / "extensions"


@functools.cache
def _toolchain() -> str:
    """The C compiler's identity and the flags the environment adds."""
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    try:
        version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    except OSError:
        version = "unknown"
    flags = [os.environ.get(v, "") for v in ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS")]
    return repr((cc, version, flags, sysconfig.get_config_var("EXT_SUFFIX")))


def _replace_file(src, dst, *args, **kwargs) -> tuple[str, bool]:
    """setuptools' ``copy_file`` for the in-place copy of a compiled extension: the new file
    is written under a temporary name and renamed over ``dst``.

    Note [Replace a compiled extension, never rewrite it]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    setuptools copies a freshly built extension next to its ``.pyx`` by opening the old
    file for writing, which rewrites the inode that every running interpreter has mapped:
    a test or fuzz run going on during ``hatch run rebuild`` then dies of SIGBUS or
    SIGSEGV.  A rename gives the new file a new inode; running processes keep the old one.
    """
    dst = str(dst)
    if os.path.isdir(dst):
        dst = os.path.join(dst, os.path.basename(src))
    tmp = os.path.join(os.path.dirname(dst) or ".", f".{os.path.basename(dst)}.{os.getpid()}.tmp")
    shutil.copyfile(src, tmp)
    shutil.copymode(src, tmp)
    os.replace(tmp, dst)
    return dst, True


def read_options(root: Path) -> dict:
    """The hook's options from ``root/pyproject.toml`` (for callers outside hatchling)."""
    table = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    for key in HOOK_TABLE:
        table = table.get(key, {})
    return dict(table)


class CythonPackage:
    """The Cython extensions of one package folder and how to build them.

    (A plain class, not a dataclass: hatchling loads this file without registering it in
    ``sys.modules``, where dataclasses look their module up.)
    """

    def __init__(self, root: Path, options: dict | None = None, inplace: bool = True) -> None:
        self.root = Path(root).resolve()
        self.options = dict(options or {})
        self.inplace = inplace
        self.src = self.root / "src"
        self.build = self.root / "build"
        self.name = self.root.name
        self._ext_modules: list = []
        self._cmd = None

    def generate(self, log: Callable[[str], None] = print) -> list[Path]:
        """Run the package's ``codegen`` scripts (Note [Sources written at build time]);
        the files they keep."""
        kept: list[Path] = []
        for script in self.options.get("codegen", []):
            path = self.root / script
            spec = importlib.util.spec_from_file_location(f"_codegen_{path.stem}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            kept += module.generate(self.root, log=lambda line: log(f"{self.name}: {line}"))
        return kept

    @property
    def pyx_files(self) -> list[Path]:
        return sorted(self.src.rglob("*.pyx")) if self.src.is_dir() else []

    @property
    def include_path(self) -> list[str]:
        paths = [str(self.src)]
        for entry in self.options.get("cython-include", []):
            path = (self.root / entry).resolve()
            if path.is_dir():  # a sibling package inside the monorepo checkout
                paths.append(str(path))
        # Outside the monorepo, .pxd files of installed packages are found on sys.path.
        return paths

    def cythonize(self, jobs: int = 1) -> None:
        """Generate (or keep, when up to date) the C of every extension."""
        import numpy
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension

        directives = {"language_level": 3, "embedsignature": True}
        directives.update(self.options.get("cython-directives", {}))
        compile_args = list(self.options.get("extra-compile-args", ["-O3"]))
        link_args: list[str] = []
        if self.options.get("openmp", False):
            compile_args.append("-fopenmp")
            link_args.append("-fopenmp")
        extensions = [
            Extension(
                ".".join(pyx.relative_to(self.src).with_suffix("").parts),
                # relative: the generated C then names no checkout-specific path, so two
                # clones generate the same C (Note [The compiled-extension cache])
                [str(pyx.relative_to(self.root))],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=compile_args,
                extra_link_args=link_args,
            )
            for pyx in self.pyx_files
        ]
        with _chdir(self.root), warnings.catch_warnings():
            # (build() cythonizes in the main thread, before any compile thread starts)
            warnings.simplefilter("ignore")
            self._ext_modules = cythonize(
                extensions,
                include_path=[os.path.relpath(p, self.root) for p in self.include_path],
                compiler_directives=directives,
                build_dir=str(self.build / "cython"),
                nthreads=jobs if jobs > 1 and len(extensions) > 1 else 0,
                quiet=True,
            )
            # absolute paths throughout: compiles run in threads, whatever the working directory
            dist = Distribution(
                {"ext_modules": self._ext_modules, "package_dir": {"": str(self.src)}}
            )
            dist.verbose = 0
            cmd = dist.get_command_obj("build_ext")
            cmd.inplace = self.inplace
            cmd.build_temp = str(self.build / f"temp-{sys.implementation.cache_tag}")
            cmd.build_lib = str(self.build / f"lib-{sys.implementation.cache_tag}")
            cmd.ensure_finalized()
            cmd.copy_file = _replace_file  # Note [Replace a compiled extension, never rewrite it]
        for ext in self._ext_modules:  # compiles run in threads: no relative paths
            ext.sources = [str(self.root / s) for s in ext.sources]
            for source in ext.sources:
                if source.endswith(".c"):
                    lazy_instance_dicts(Path(source))
            ext.depends = [str(self.root / d) for d in ext.depends]
        self._cmd = cmd

    def output(self, ext) -> Path:
        return Path(self._cmd.get_ext_fullpath(ext.name)).resolve()

    @property
    def outputs(self) -> list[Path]:
        return [self.output(ext) for ext in self._ext_modules]

    def out_of_date(self) -> list:
        """Extensions whose compiled file is missing or older than its C or header files."""
        stale = []
        for ext in self._ext_modules:
            target = self.output(ext)
            inputs = [self.root / s for s in [*ext.sources, *ext.depends]]
            if not target.exists() or any(
                p.exists() and p.stat().st_mtime > target.stat().st_mtime for p in inputs
            ):
                stale.append(ext)
        return stale

    def cache_path(self, ext) -> Path | None:
        """The cache entry for ``ext`` as it would be compiled now (None: no cache)."""
        where = cache_dir()
        if where is None:
            return None
        import numpy

        key = hashlib.sha256()
        for source in ext.sources:
            key.update(CYTHON_METADATA.sub(b"", Path(source).read_bytes(), count=1))
        settings = (
            CACHE_FORMAT,
            ext.name,
            ext.extra_compile_args,
            ext.extra_link_args,
            ext.define_macros,
            numpy.__version__,
            _toolchain(),
        )
        key.update(repr(settings).encode())
        return where / f"{ext.name}-{key.hexdigest()[:40]}{sysconfig.get_config_var('EXT_SUFFIX')}"

    def restore(self, ext) -> bool:
        """Copy ``ext`` from the cache into place; False when it is not cached."""
        entry = self.cache_path(ext)
        if entry is None or not entry.is_file():
            return False
        target = self.output(ext)
        target.parent.mkdir(parents=True, exist_ok=True)
        _replace_file(entry, target)  # a new mtime: newer than its C, as a compile leaves it
        os.utime(entry)  # recently used: kept by the pruning
        return True

    def store(self, ext) -> None:
        """Keep the freshly compiled ``ext`` in the cache (best effort)."""
        entry = self.cache_path(ext)
        if entry is None:
            return
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
            shutil.copy2(self.output(ext), tmp)
            os.replace(tmp, entry)
            entries = sorted(entry.parent.glob("*.so"), key=lambda p: p.stat().st_mtime)
            for old in entries[:-CACHE_ENTRIES]:
                old.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only or full cache costs a compile next time, nothing else

    def c_size(self, ext) -> tuple[int, str]:
        """The size of an extension's generated C (how long it compiles), and its name."""
        return (sum(Path(s).stat().st_size for s in ext.sources if Path(s).exists()), ext.name)

    def compile(self, extensions: list, slots: _LargestFirst, log: Callable[[str], None]) -> None:
        """Compile and link ``extensions`` (a thread each; ``slots`` says when each may
        start), saying when each starts and ends."""
        cmd, total, lock = self._cmd, len(extensions), threading.Lock()
        numbers = iter(range(1, total + 1))
        build_extension = cmd.build_extension

        def build_one(ext) -> None:
            slots.acquire(ext.name)
            try:
                with lock:
                    n = next(numbers)
                log(f"[{self.name} {n}/{total}] {ext.name}: compiling ...")
                start = time.perf_counter()
                build_extension(ext)
                self.store(ext)
                took = time.perf_counter() - start
                log(f"[{self.name} {n}/{total}] {ext.name}: done in {took:.1f} s")
            finally:
                slots.release()

        cmd.build_extension = build_one
        cmd.extensions = list(extensions)
        cmd.parallel = total if total > 1 else None  # threads; `slots` bounds the compiles
        cmd.run()  # builds, then (in place) copies each extension next to its .pyx

    def wheel_paths(self) -> dict[str, str]:
        """Compiled file -> its path inside the wheel."""
        base = self.src if self.inplace else Path(self._cmd.build_lib).resolve()
        return {str(out): out.relative_to(base).as_posix() for out in self.outputs}


class _LargestFirst:
    """At most ``jobs`` compiles at once, the largest C file first (across packages): on two
    cores, two big modules side by side and the small ones after is the shortest schedule."""

    def __init__(self, jobs: int, pending: list[tuple[int, str]]) -> None:
        self.free = jobs
        self.order = sorted(pending, key=lambda p: (-p[0], p[1]))  # (C size, module)
        self.cond = threading.Condition()

    def acquire(self, module: str) -> None:
        with self.cond:
            while not (self.free > 0 and self.order[0][1] == module):
                self.cond.wait()
            self.order.pop(0)
            self.free -= 1
            self.cond.notify_all()

    def release(self) -> None:
        with self.cond:
            self.free += 1
            self.cond.notify_all()


def build(
    packages: Iterable[CythonPackage],
    jobs: int | None = None,
    log: Callable[[str], None] = print,
) -> None:
    """Cythonize every package, then compile what is out of date, at most ``jobs`` C
    compiles at once across all packages.

    Prints a line per package and one when each compile starts and ends.
    """
    jobs = jobs or default_jobs()
    todo = []
    for pkg in packages:
        if not pkg.pyx_files:
            continue
        # in this thread, before any compile thread exists: cythonize forks its workers
        start = time.perf_counter()
        pkg.generate(log)
        pkg.cythonize(jobs)
        stale = pkg.out_of_date()
        cached = [ext for ext in stale if pkg.restore(ext)]
        stale = [ext for ext in stale if ext not in cached]
        log(
            f"{pkg.name}: {len(pkg.pyx_files)} Cython modules, {len(stale)} to compile"
            + (f", {len(cached)} from the build cache" if cached else "")
            + f" (cython {time.perf_counter() - start:.1f} s)"
        )
        if stale:
            todo.append((pkg, stale))
    slots = _LargestFirst(jobs, [pkg.c_size(ext) for pkg, stale in todo for ext in stale])
    with warnings.catch_warnings(), ThreadPoolExecutor(max_workers=max(1, len(todo))) as pool:
        # setuptools warns "setup.py install is deprecated" when build_ext is driven directly
        warnings.simplefilter("ignore")
        futures = [pool.submit(pkg.compile, stale, slots, log) for pkg, stale in todo]
        for future in futures:
            future.result()  # a compiler error propagates here


class CythonBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":  # the sdist ships .pyx/.pxd sources only
            return
        editable = version == "editable"
        pkg = CythonPackage(Path(self.root), dict(self.config), inplace=editable)
        if not pkg.pyx_files:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True  # -> cp311-cp311-linux_x86_64
        # Note [Sources written at build time]: in the wheel, though git ignores them
        root = Path(self.root).resolve()
        for path in pkg.generate(lambda line: self.app.display_info(line)):
            build_data["artifacts"].append("/" + path.resolve().relative_to(root).as_posix())
        if editable and os.environ.get(DEFER_VARIABLE) == "1":
            self.app.display_info(
                f"{pkg.name}: Cython compile deferred to tools/rebuild.py ({DEFER_VARIABLE}=1)"
            )
            return

        def log(line: str) -> None:
            self.app.display_info(line)

        build([pkg], log=log)
        if not editable:
            # The .so files are not under the package's source folder: force them into the
            # wheel (build_data["artifacts"] would be matched against wheel paths).
            build_data["force_include"].update(pkg.wheel_paths())
