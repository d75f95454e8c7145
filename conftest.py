"""Workspace-wide pytest configuration: two guards that keep a green run honest, the
import of the packages' test helpers (Note [Test helpers import by name]) and the run of
the docstring examples every package tests (Note [Examples run as a reader runs them]).

Note [Never test a stale extension]
The packages are installed editable, and editable installs do not recompile Cython on
import.  ``hatch run test`` rebuilds first; this guard catches plain ``pytest`` runs after
an edit to a ``.pyx``, to a ``.pxi`` it includes or to a ``.pxd`` it cimports (its own
package's or another's), or on a fresh clone whose ``.so`` files were never built, and
stops the session instead of testing old machine code.

Note [A missing dependency fails, it does not skip]
``pytest.importorskip`` turns a missing import into a skip, which hides a broken install:
a package whose lower layer is missing, or a run without the test oracle, would pass with
thousands of tests skipped.  Here such skips become failures, centrally:

* a skip because a ``gradstack*`` module cannot be imported always fails: every gradstack
  module a package's tests import is a declared dependency of that package (or the
  package itself);
* PyTorch is the oracle: without it the session stops at once and says how to get it,
  unless ``GRADSTACK_WITHOUT_TORCH=1`` says that this run is meant to go without it (the
  per-package wheel tests of ``tools/dist.py``, which test an install with only the
  package's own dependencies).  Then the oracle comparisons are skipped, and counted in
  the summary.
"""

from __future__ import annotations

import doctest
import importlib.abc
import importlib.util
import os
import pkgutil
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
WITHOUT_TORCH = os.environ.get("GRADSTACK_WITHOUT_TORCH") == "1"

# --------------------------------------------------------------------------- test helpers

# Note [Test helpers import by name]
# The tests run with ``--import-mode=importlib``, which keeps the tests folders off
# ``sys.path``, so a test cannot ``import op_db``.  A helper module of tensor-core's,
# graph-engine's or functional-api's tests (``op_db.py``, ``torch_compare.py`` ...) imports
# as ``gradstack_tensor_tests_<name>``, ``gradstack_autograd_tests_<name>`` or
# ``gradstack_functional_tests_<name>``, names no other package's tests use; this finder
# finds those names in the package's tests folder.
_TEST_HELPERS = {
    "gradstack_tensor_tests_": ROOT / "packages" / "tensor-core" / "tests",
    "gradstack_autograd_tests_": ROOT / "packages" / "graph-engine" / "tests",
    "gradstack_functional_tests_": ROOT / "packages" / "functional-api" / "tests",
}


class _TestHelperFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        for prefix, folder in _TEST_HELPERS.items():
            file = folder / f"{fullname.removeprefix(prefix)}.py"
            if fullname.startswith(prefix) and file.is_file():
                return importlib.util.spec_from_file_location(fullname, file)
        return None


if not any(isinstance(f, _TestHelperFinder) for f in sys.meta_path):
    sys.meta_path.append(_TestHelperFinder())

# --------------------------------------------------------------------------- docstring examples

# Note [Examples run as a reader runs them]
# Every package's ``tests/test_docs.py`` runs the examples in the docstrings of each of its
# modules (the API reference shows them: docs/_ext/gradstack_api.py): its test asks for
# ``docstring_module``, one module of the package its ``DOCSTRING_PACKAGE`` names, and
# calls ``run_docstring_examples``.  A reader runs an example in a session of their own:
# the names the module defines or imports are there (the examples use them unqualified),
# but ``float``, ``round`` or ``sum`` are Python's, not the ops of the same name that the
# module's namespace holds, and ``gt`` is gradstack_tensor.  (``as_reader=False``: the
# module's namespace as it is, doctest.testmod's.)


def pytest_generate_tests(metafunc):
    if "docstring_module" in metafunc.fixturenames:
        package = importlib.import_module(metafunc.module.DOCSTRING_PACKAGE)
        prefix = package.__name__ + "."
        names = {package.__name__} | {
            m.name for m in pkgutil.walk_packages(package.__path__, prefix)
        }
        metafunc.parametrize("docstring_module", sorted(names))


def _run_docstring_examples(name: str, *, as_reader: bool = True) -> None:
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    if not as_reader:
        result = doctest.testmod(module, optionflags=flags)
    else:
        import builtins

        import gradstack_tensor

        globs = {k: v for k, v in vars(module).items() if not hasattr(builtins, k)}
        globs["gt"] = gradstack_tensor  # the examples of Tensor's methods say ``gt.``
        runner = doctest.DocTestRunner(optionflags=flags)
        seen = set()
        for test in doctest.DocTestFinder().find(module, name, globs=globs):
            # a Cython module's ``__test__`` repeats its functions' docstrings (autotestdict)
            if test.examples and test.docstring not in seen:
                seen.add(test.docstring)
                runner.run(test)
        result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


@pytest.fixture
def run_docstring_examples():
    """``run(name, as_reader=True)``: Note [Examples run as a reader runs them]."""
    return _run_docstring_examples


@pytest.fixture
def threads():
    """Set tensor-core's kernel thread count inside a test (the fixture is the setter,
    ``gradstack_tensor.kernels.set_num_threads``); restored afterwards."""
    from gradstack_tensor import kernels

    before = kernels.get_num_threads()
    yield kernels.set_num_threads
    kernels.set_num_threads(before)


# --------------------------------------------------------------------------- stale extensions

_INCLUDE = re.compile(r"""^[ \t]*include[ \t]+["']([^"']+)["']""", re.M)
_CIMPORT = re.compile(r"^[ \t]*cimport[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)", re.M)
_FROM_CIMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+cimport[ \t]+(\([^)]*\)|[^\n]*)", re.M
)


def _src_dirs() -> list[Path]:
    return sorted(p for p in ROOT.glob("packages/*/src") if p.is_dir())


def _pxd_for(module: str, src_dirs: list[Path]) -> Path | None:
    """The workspace ``.pxd`` that ``cimport module`` reads, if any (cython, numpy and the
    C library declarations are not the workspace's)."""
    parts = module.split(".")
    for src in src_dirs:
        for candidate in (
            src.joinpath(*parts).with_suffix(".pxd"),
            src.joinpath(*parts, "__init__.pxd"),
        ):
            if candidate.is_file():
                return candidate
    return None


def _module_of(path: Path, src_dirs: list[Path]) -> list[str]:
    for src in src_dirs:
        if src in path.parents:
            return list(path.relative_to(src).with_suffix("").parts)
    return []


def extension_dependencies(pyx: Path, src_dirs: list[Path] | None = None) -> set[Path]:
    """Every workspace file whose edit changes what ``pyx`` compiles to: the ``.pyx``, its own
    ``.pxd``, the ``.pxi`` files it includes and the ``.pxd`` files it cimports, transitively,
    from any package."""
    src_dirs = _src_dirs() if src_dirs is None else src_dirs
    seen: set[Path] = set()
    todo = [pyx, pyx.with_suffix(".pxd")]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        todo += [path.parent / name for name in _INCLUDE.findall(text)]
        modules = [m.strip() for group in _CIMPORT.findall(text) for m in group.split(",")]
        modules = [m.split()[0] for m in modules if m]
        package = _module_of(path, src_dirs)[:-1]
        for base, names in _FROM_CIMPORT.findall(text):
            dots = len(base) - len(base.lstrip("."))
            if dots:  # relative: from . cimport x / from .mod cimport y
                anchor = package[: len(package) - (dots - 1)] if dots > 1 else package
                base = ".".join([*anchor, *filter(None, base.lstrip(".").split("."))])
            modules.append(base)
            # `from pkg cimport mod` may name a module as well as a declaration
            names = names.strip("()").replace("\n", ",")
            modules += [f"{base}.{n.split()[0]}" for n in names.split(",") if n.strip()]
        for module in modules:
            found = _pxd_for(module, src_dirs) if module else None
            if found is not None:
                todo.append(found)
    return seen


def stale_extensions() -> list[str]:
    problems = []
    src_dirs = _src_dirs()
    for src in src_dirs:
        for pyx in sorted(src.rglob("*.pyx")):
            top = pyx.relative_to(src).parts[0]
            spec = importlib.util.find_spec(top)
            origin = spec.origin if spec is not None else None
            if origin is None or src not in Path(origin).resolve().parents:
                continue  # installed from a wheel: nothing in-tree to compare with
            built = [*pyx.parent.glob(f"{pyx.stem}.*.so"), *pyx.parent.glob(f"{pyx.stem}.*.pyd")]
            rel = pyx.relative_to(ROOT).as_posix()
            if not built:
                problems.append(f"{rel} (not compiled)")
                continue
            compiled = min(b.stat().st_mtime for b in built)
            newer = [
                d.relative_to(ROOT).as_posix()
                for d in extension_dependencies(pyx, src_dirs)
                if d.stat().st_mtime > compiled
            ]
            if newer:
                problems.append(f"{rel} (edited since it was compiled: {', '.join(sorted(newer))})")
    return problems


# --------------------------------------------------------------------------- missing dependencies

_GRADSTACK_MISSING = re.compile(
    r"could not import '(gradstack\w*)'|\b(gradstack\w*)\b[^\n]*\bnot installed"
)
_TORCH_MISSING = re.compile(r"could not import 'torch'")
_oracle_skips: list[str] = []


def _skip_message(excinfo) -> str | None:
    if excinfo is None or not isinstance(excinfo.value, pytest.skip.Exception):
        return None
    return str(excinfo.value.msg)


def _verdict(message: str) -> str | None:
    """Why a skip with this message must fail instead, or None when the skip may stand."""
    hard = _GRADSTACK_MISSING.search(message)
    if hard:
        name = hard.group(1) or hard.group(2)
        return (
            f"{name} is missing, and it is a dependency of the tests that asked for it: a "
            f"broken install fails, it does not skip (Note [A missing dependency fails, it "
            f"does not skip] in conftest.py). Skip reason: {message}"
        )
    if _TORCH_MISSING.search(message) and not WITHOUT_TORCH:
        return (
            "torch (the test oracle) is missing: use `hatch run test`, which installs "
            "torch==2.13.0, or set GRADSTACK_WITHOUT_TORCH=1 to skip the oracle comparisons "
            f"on purpose. Skip reason: {message}"
        )
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    message = _skip_message(call.excinfo) if report.skipped else None
    if message is None:
        return
    verdict = _verdict(message)
    if verdict is not None:
        report.outcome = "failed"
        report.longrepr = verdict


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if report.outcome != "skipped" or not isinstance(report.longrepr, tuple):
        return
    message = str(report.longrepr[2])
    verdict = _verdict(message)
    if verdict is not None:
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid}: {verdict}"


def _count_oracle_skip(report) -> None:
    """Counted where the reports arrive (the controlling process under pytest-xdist)."""
    if report.skipped and isinstance(report.longrepr, tuple):
        if _TORCH_MISSING.search(str(report.longrepr[2])):
            _oracle_skips.append(report.nodeid)


def pytest_runtest_logreport(report):
    _count_oracle_skip(report)


def pytest_collectreport(report):
    _count_oracle_skip(report)


# --------------------------------------------------------------------------- order


def pytest_collection_modifyitems(session, config, items):
    """The tests marked ``slow`` (the oracle corpora, minutes each) run first, so that under
    pytest-xdist the cores share the short tests at the end instead of one core finishing
    the longest alone (Note [The test command's speed] in pyproject.toml).  A stable sort:
    every worker collects the same order, as pytest-xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_sessionstart(session):
    problems = stale_extensions()
    if problems:
        pytest.exit(
            "Cython extensions out of date: "
            + "; ".join(problems)
            + ". Run `hatch run rebuild` (or use `hatch run test`, which rebuilds first).",
            returncode=3,
        )
    if not WITHOUT_TORCH and importlib.util.find_spec("torch") is None:
        pytest.exit(
            "torch (the test oracle) is not installed in this environment: run the tests with "
            "`hatch run test` (its environment installs torch==2.13.0), or set "
            "GRADSTACK_WITHOUT_TORCH=1 to run without the oracle comparisons on purpose.",
            returncode=4,
        )


def pytest_terminal_summary(terminalreporter):
    if _oracle_skips:
        terminalreporter.write_line(
            f"GRADSTACK_WITHOUT_TORCH=1: {len(_oracle_skips)} test items skipped because they "
            "compare with torch (the oracle), which this run goes without on purpose"
        )
