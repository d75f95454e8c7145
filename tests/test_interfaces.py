"""The packages talk to each other only through public interfaces.

Each package of the stack is versioned separately, so what one imports from another is
the contract between them.  A lower layer's interface for the layers above is public and
documented: ``gradstack_tensor.extension`` (Python) and ``gradstack_tensor/extension.pxd``
(Cython), ``gradstack_tensor.kernels``, and ``gradstack_autograd.extension``.  This test
reads the source of every package and fails on any import of, or attribute access to,
another package's ``_private`` module (``gradstack_tensor._tensor``,
``from gradstack_autograd import _core``, ``gradstack_tensor._kernels.fusable`` ...).
A package's own private modules are its business.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p for p in (ROOT / "packages").iterdir() if (p / "src").is_dir())
TOP_NAMES = {
    next(d.name for d in (p / "src").iterdir() if d.is_dir() and d.name.startswith("gradstack"))
    for p in PACKAGES
}

# `from a.b cimport c`, `cimport a.b`, `from a cimport _b` in .pyx/.pxd/.pxi files
CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport\s+(.+)|cimport\s+([\w.]+))", re.M)


def _own_top(path: Path) -> str:
    src = next(p for p in path.parents if p.name == "src")
    return path.relative_to(src).parts[0]


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module (or package) in the sources of the stack."""
    parts = dotted.split(".")
    for pkg in PACKAGES:
        base = pkg / "src" / Path(*parts)
        if base.is_dir() or any(base.parent.glob(base.name + ".*")):
            return True
    return False


def _private_use(own: str, module: str, names=()) -> list[str]:
    """The private modules of another package of the stack used by ``import module`` or
    ``from module import names``: ``module`` itself, or ``names`` that are modules.

    Private *names* of public modules and classes are not modules: torch's own
    (``Tensor._make_subclass``, ``nn.init._calculate_fan_in_and_fan_out``) stay allowed.
    """
    parts = module.split(".")
    if parts[0] not in TOP_NAMES or parts[0] == own:
        return []
    if any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
        return [module]
    return [
        f"{module}.{n}"
        for n in names
        if n.startswith("_") and not n.startswith("__") and _is_module(f"{module}.{n}")
    ]


def _python_violations(path: Path, own: str) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    aliases = {}  # local name -> module of another package
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out += _private_use(own, a.name)
                aliases[(a.asname or a.name).split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out += _private_use(own, node.module, [a.name for a in node.names])
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = aliases.get(node.value.id)
            if (
                base
                and base.split(".")[0] in TOP_NAMES
                and base.split(".")[0] != own
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and _is_module(f"{base}.{node.attr}")
            ):
                out.append(f"{base}.{node.attr}")
    return [f"{path.relative_to(ROOT)}: {v}" for v in out]


def _cython_violations(path: Path, own: str) -> list[str]:
    out = []
    for m in CIMPORT.finditer(path.read_text()):
        if m.group(3):
            out += _private_use(own, m.group(3))
        else:
            names = [n.strip().split(" as ")[0].strip("() ") for n in m.group(2).split(",")]
            out += _private_use(own, m.group(1), [n for n in names if n])
    # Python-level imports in Cython sources
    for m in re.finditer(
        r"^\s*(?:from\s+([\w.]+)\s+import\s+(.+)|import\s+([\w.]+))", path.read_text(), re.M
    ):
        if m.group(3):
            out += _private_use(own, m.group(3))
        else:
            names = [n.strip().split(" as ")[0].strip("() ") for n in m.group(2).split(",")]
            out += _private_use(own, m.group(1), [n for n in names if n])
    return [f"{path.relative_to(ROOT)}: {v}" for v in out]


def _violations() -> list[str]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((pkg / "src").rglob("*")):
            if path.suffix == ".py":
                out += _python_violations(path, _own_top(path))
            elif path.suffix in (".pyx", ".pxd", ".pxi"):
                out += _cython_violations(path, _own_top(path))
    return out


def test_no_package_uses_another_packages_private_names():
    violations = _violations()
    assert not violations, "imports of another package's private names:\n" + "\n".join(violations)


@pytest.mark.parametrize(
    "source",
    [
        "from gradstack_tensor._tensor import _data",
        "from gradstack_tensor import _kernels",
        "import gradstack_autograd._core as core",
        "import gradstack_tensor\nx = gradstack_tensor._kernels.fusable",
    ],
)
def test_the_check_finds_private_imports(tmp_path, source):
    """The checker itself: each of these, in another package's source, is reported."""
    path = tmp_path / "src" / "gradstack_nn" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text(source + "\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _python_violations(path, "gradstack_nn")
    finally:
        ROOT = saved


def test_the_check_finds_private_cimports(tmp_path):
    path = tmp_path / "src" / "gradstack_autograd" / "_core.pyx"
    path.parent.mkdir(parents=True)
    path.write_text("from gradstack_tensor._tensor cimport Tensor, wrap\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _cython_violations(path, "gradstack_autograd")
    finally:
        ROOT = saved


def test_own_private_modules_are_allowed(tmp_path):
    path = tmp_path / "src" / "gradstack_tensor" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text("from gradstack_tensor._tensor import _data\nfrom ._kernels import x\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert _python_violations(path, "gradstack_tensor") == []
    finally:
        ROOT = saved


def test_public_interfaces_are_documented():
    """Every name of the public interfaces has a docstring (they are the contract)."""
    import gradstack_autograd.extension as ag_ext
    import gradstack_tensor.extension as ext
    import gradstack_tensor.kernels as kernels

    for module in (ext, kernels, ag_ext):
        assert module.__doc__ and module.__all__
        for name in module.__all__:
            obj = getattr(module, name)
            assert getattr(obj, "__doc__", None), f"{module.__name__}.{name} has no docstring"
