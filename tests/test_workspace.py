"""The monorepo's own rules, as tests: layering, package metadata, one build hook, and the
tooling's guards (stale extensions, skips that would hide a missing dependency).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
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
TOP_IMPORT = re.compile(r"^(?:from|import)\s+(gradstack(?:_[a-z]+)?)\b", re.M)

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
    # Its test modules too, at their top: they run against its wheel installed alone
    # (`hatch run wheel-tests`), where such an import stops the collection.  An import
    # inside a test is allowed: conftest turns a missing layer there into a skip.
    owner = _import_name(pkg)
    bad = []
    sources = [(f, IMPORT) for f in (pkg / "src").rglob("*")]
    sources += [(f, TOP_IMPORT) for f in (pkg / "tests").rglob("*.py")]
    for f, pattern in sources:
        if f.suffix not in {".py", ".pyx", ".pxd", ".pxi", ".pyi"}:
            continue
        for m in pattern.finditer(f.read_text(errors="ignore")):
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


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOK = PACKAGES / "tensor-core" / "hatch_build.py"
CYTHON_PACKAGES = [p for p in PACKAGE_DIRS if any((p / "src").rglob("*.pyx"))]


def _hook_config(pkg: Path) -> tuple[str, dict]:
    build = tomllib.loads((pkg / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    hook = build["targets"]["wheel"]["hooks"]["custom"].get("path", "hatch_build.py")
    return hook, build["targets"]["sdist"]


def test_one_build_hook():
    """Note [One build hook]: one file; every other Cython package links to it, and its
    sdist carries the file's content under the name its pyproject gives the hook."""
    assert HOOK.is_file() and not HOOK.is_symlink()
    assert len(CYTHON_PACKAGES) >= 2
    for pkg in CYTHON_PACKAGES:
        name, sdist = _hook_config(pkg)
        hook = pkg / name
        assert hook.resolve() == HOOK.resolve(), f"{hook} is not tensor-core's hook"
        if hook.is_symlink():
            assert name != "hatch_build.py", "hatchling would ship the link itself"
            assert sdist["force-include"] == {"../tensor-core/hatch_build.py": name}
    copies = [p for p in PACKAGES.glob("*/*.py") if p.read_bytes() == HOOK.read_bytes()]
    assert copies == [HOOK] or all(p == HOOK or p.is_symlink() for p in copies)


def test_sdist_carries_the_hook_as_a_file(tmp_path):
    """The sdist of a package that links to the hook, built from its folder, holds the hook
    as a regular file with its content, and no link."""
    from hatchling.builders.sdist import SdistBuilder

    linked = [p for p in CYTHON_PACKAGES if (p / _hook_config(p)[0]).is_symlink()]
    assert linked
    for pkg in linked:
        name = _hook_config(pkg)[0]
        path = next(SdistBuilder(str(pkg)).build(directory=str(tmp_path)))
        with tarfile.open(path) as tf:
            assert not [m.name for m in tf.getmembers() if m.issym()]
            (member,) = [m for m in tf.getmembers() if m.name.endswith(f"/{name}")]
            assert member.isfile()
            assert tf.extractfile(member).read() == HOOK.read_bytes()


def test_wheel_builds_write_under_build_only():
    """Note [Where builds go]: only editable builds put extensions into src/."""
    hook = _load("gradstack_hatch_build_test", HOOK)
    for pkg in CYTHON_PACKAGES:
        wheel = hook.CythonPackage(pkg, hook.read_options(pkg), inplace=False)
        wheel.cythonize()  # a no-op when the C is up to date
        assert wheel.outputs and all(pkg / "build" in out.parents for out in wheel.outputs)
        editable = hook.CythonPackage(pkg, hook.read_options(pkg), inplace=True)
        editable.cythonize()
        assert all(pkg / "src" in out.parents for out in editable.outputs)
        # the wheel gets each extension at its import path either way
        assert sorted(wheel.wheel_paths().values()) == sorted(editable.wheel_paths().values())


def test_stale_guard_follows_includes_and_cimports(tmp_path):
    """Note [Never test a stale extension]: an extension depends on the .pxi files it
    includes and the .pxd files it cimports, from its own package or another."""
    guard = _load("gradstack_root_conftest", ROOT / "conftest.py")
    low = tmp_path / "low" / "src" / "low_pkg"
    high = tmp_path / "high" / "src" / "high_pkg"
    low.mkdir(parents=True)
    high.mkdir(parents=True)
    (low / "__init__.py").write_text("")
    (low / "core.pxd").write_text("cdef class Core:\n    cdef int n\n")
    (low / "core.pyx").write_text("cdef class Core:\n    pass\n")
    (high / "__init__.py").write_text("")
    (high / "ops.pxd").write_text("from low_pkg.core cimport Core\n")
    (high / "_part.pxi").write_text('include "_inner.pxi"\n')
    (high / "_inner.pxi").write_text("cdef int inner = 1\n")
    (high / "engine.pyx").write_text(
        "cimport numpy as cnp\n"
        "from libc.math cimport exp\n"
        "from . cimport ops\n"
        "from low_pkg.core cimport (\n    Core,  # the class\n)\n"
        'include "_part.pxi"\n'
    )
    srcs = [tmp_path / "low" / "src", tmp_path / "high" / "src"]
    deps = guard.extension_dependencies(high / "engine.pyx", srcs)
    assert {d.name for d in deps} == {
        "engine.pyx",
        "ops.pxd",
        "_part.pxi",
        "_inner.pxi",
        "core.pxd",
    }
    assert {d.name for d in guard.extension_dependencies(low / "core.pyx", srcs)} == {
        "core.pyx",
        "core.pxd",
    }


def test_the_workspace_guard_sees_cross_package_dependencies():
    """graph-engine's extensions cimport tensor-core's interface: the guard must see it."""
    guard = _load("gradstack_root_conftest", ROOT / "conftest.py")
    tensor_src = PACKAGES / "tensor-core" / "src"
    engine = sorted((PACKAGES / "graph-engine" / "src").rglob("*.pyx"))
    assert engine
    seen = set().union(*(guard.extension_dependencies(pyx) for pyx in engine))
    assert any(tensor_src in d.parents and d.suffix == ".pxd" for d in seen), seen
    for pyx in engine:  # and every .pxi each includes
        for name in re.findall(r"""^include\s+["']([^"']+)["']""", pyx.read_text(), re.M):
            assert pyx.parent / name in guard.extension_dependencies(pyx)


SKIPS = """
import pytest

def test_missing_layer():
    pytest.importorskip("gradstack_no_such_layer")

def test_missing_layer_by_message():
    pytest.skip("gradstack_nn is not installed yet (needed for torch.nn.Linear)")

def test_missing_oracle():
    pytest.skip("could not import 'torch': No module named 'torch'")

def test_a_plain_skip():
    pytest.skip("expanded views are read-only")
"""


def _run_pytest(tmp_dir: Path, **env) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_dir), "-q", "-rfs", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    return result.stdout + result.stderr


@pytest.fixture
def skip_tests():
    # inside the repository, so that the root conftest.py applies to it
    folder = ROOT / "build" / "selftest-skips"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_skips.py").write_text(SKIPS)
    yield folder
    (folder / "test_skips.py").unlink()


def test_skips_that_hide_a_missing_dependency_fail(skip_tests):
    """Note [A missing dependency fails, it does not skip]."""
    out = _run_pytest(skip_tests, GRADSTACK_WITHOUT_TORCH="")
    assert "3 failed, 1 skipped" in out, out
    assert "gradstack_no_such_layer is missing" in out and "torch (the test oracle)" in out
    out = _run_pytest(skip_tests, GRADSTACK_WITHOUT_TORCH="1")
    assert "2 failed, 2 skipped" in out, out
    assert "1 test items skipped because they compare with torch" in out, out


def test_ci_runs_the_readme_commands():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    # the README's two commands, after installing hatch once
    assert '\npython -m pip install "hatch>=1.16"' in readme
    assert "\nhatch run examples:all " in readme and "\nhatch run test " in readme
    assert '\nstep python -m pip install --quiet "hatch>=1.16"' in ci
    for command in ("hatch run test", "hatch run lint", "hatch run dist", "hatch run wheel-tests"):
        assert f"\n{command}" in ci.replace("step ", ""), command
        assert command in readme, command


def test_the_test_command_runs_every_test_on_every_core():
    """Note [The test command's speed]: `test` is pytest on every core without a marker
    filter (every test); `test-quick` leaves out only the tests marked slow."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["envs"]
    scripts = scripts["default"]["scripts"]
    test = scripts["test"][-1]
    assert test.startswith("pytest -n auto --dist loadscope") and " -m " not in test
    assert scripts["test-quick"][-1] == test.replace("{args}", "-m 'not slow' {args}")


def test_typed_packages_are_marked():
    typecheck = _load("gradstack_typecheck", ROOT / "tools" / "typecheck.py")
    typed = typecheck.typed_packages()
    assert {p.name for p in typed} >= {
        "functional-api", "profiler", "nn-mini", "distributed", "gradstack"
    }  # fmt: skip
    for pkg in typed:
        (top,) = [p for p in (pkg / "src").iterdir() if (p / "__init__.py").is_file()]
        assert (top / "py.typed").is_file(), f"{top} has no py.typed"


def _tiny_package(root: Path, body: str) -> Path:
    pkg = root / "tiny"
    (pkg / "src" / "tiny_pkg").mkdir(parents=True)
    (pkg / "src" / "tiny_pkg" / "__init__.py").write_text("")
    (pkg / "src" / "tiny_pkg" / "_ext.pyx").write_text(body)
    (pkg / "pyproject.toml").write_text('[project]\nname = "tiny"\nversion = "0"\n')
    return pkg


def test_compiled_extension_cache_serves_a_second_clone(tmp_path, monkeypatch):
    """Note [The compiled-extension cache]: a second checkout at another path compiles
    nothing, and gets a working extension; a changed source compiles again."""
    hook = _load("gradstack_hatch_build_cache", HOOK)
    monkeypatch.setenv("GRADSTACK_BUILD_CACHE", str(tmp_path / "cache"))
    body = "def add(int a, int b):\n    return a + b\n"
    logs: list[list[str]] = []

    def build(where: Path, text: str) -> Path:
        pkg = hook.CythonPackage(_tiny_package(where, text), {"extra-compile-args": ["-O0"]})
        lines: list[str] = []
        hook.build([pkg], jobs=1, log=lines.append)
        logs.append(lines)
        (out,) = pkg.outputs
        return out

    first = build(tmp_path / "clone1", body)
    second = build(tmp_path / "clone2", body)
    assert "1 to compile" in logs[0][0] and any("done in" in line for line in logs[0])
    assert "0 to compile, 1 from the build cache" in logs[1][0], logs[1]
    assert not any("compiling" in line for line in logs[1])
    assert second.read_bytes() == first.read_bytes()
    spec = importlib.util.spec_from_file_location("tiny_pkg._ext", second)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.add(2, 40) == 42

    build(tmp_path / "clone3", body.replace("a + b", "a * b"))
    assert "1 to compile" in logs[2][0], logs[2]


def _pins(requirements: list[str]) -> dict[str, str]:
    pins = {}
    for req in requirements:
        name, sep, version = req.partition("==")
        if sep:
            pins[name.strip().lower()] = version.strip()
    return pins


def test_every_compiling_environment_pins_the_same_cython_and_numpy():
    """Note [One pin for the extension cache] (pyproject.toml): the hatch environments that
    compile and asv's matrix generate the same C, so each finds what another compiled."""
    envs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["hatch"]["envs"]
    text = (ROOT / "asv.conf.json").read_text()
    asv = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M))["matrix"]["req"]
    want = {name: versions[0] for name, versions in asv.items() if name in ("cython", "numpy")}
    assert set(want) == {"cython", "numpy"}, asv
    for env in ("default", "examples"):
        pins = _pins(envs[env]["dependencies"])
        assert {name: pins.get(name) for name in want} == want, env


def test_the_extension_cache_key_ignores_the_include_paths_cython_lists(tmp_path, monkeypatch):
    """Note [The compiled-extension cache]: the same code generated in two environments (a
    hatch env, an asv env: numpy's headers at other absolute paths) has one key; other
    code has another."""
    import types

    hook = _load("gradstack_hatch_build_key", HOOK)
    monkeypatch.setenv("GRADSTACK_BUILD_CACHE", str(tmp_path / "cache"))
    body = "/* Generated by Cython 3.3.2 */\n\nstatic int f(void) { return 1; }\n"

    def key(include: str, code: str = body) -> Path:
        header, rest = code.split("\n", 1)
        listing = f'{{"include_dirs": ["{include}"]}}'
        metadata = f"/* BEGIN: Cython Metadata\n{listing}\nEND: Cython Metadata */\n"
        c = tmp_path / f"{abs(hash((include, code)))}.c"
        c.write_text(f"{header}\n\n{metadata}{rest}")
        ext = types.SimpleNamespace(
            name="pkg._ext", sources=[str(c)], extra_compile_args=["-O3"],
            extra_link_args=[], define_macros=[],
        )  # fmt: skip
        return hook.CythonPackage(tmp_path).cache_path(ext)

    assert key("/env/a/numpy/_core/include") == key("/asv/env/b/numpy/_core/include")
    assert key("/env/a/numpy/_core/include") != key("/env/a", body.replace("1;", "2;"))
