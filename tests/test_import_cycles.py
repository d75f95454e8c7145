"""No package of the stack has an import circle inside it.

A module imports the modules it builds on, never one that builds on it, so that each
package reads bottom-up and a module can be understood (and moved) with what it imports.
This test reads the source of every package (``.py``, ``.pyx``), builds the graph of its
own modules, with an edge for each ``from .x import ...`` / ``from package.x import ...``
(``cimport`` too, and imports inside functions: a lazy import is still a dependency), and
fails on a strongly connected component of more than one module, naming it and one
circle through it.  An import of a package's ``__init__`` is not an edge (a package
re-exports its modules, so its ``__init__`` is never part of a circle), but
``from . import x`` is an edge to the module ``x``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    top
    for pkg in (ROOT / "packages").iterdir()
    if (pkg / "src").is_dir()
    for top in (pkg / "src").iterdir()
    if (top / "__init__.py").is_file()
)

# `from .x import a, b`, `from pkg.x cimport a`, `from . import (a, b)` (a statement's
# first line; the names up to its end or its closing parenthesis)
FROM_IMPORT = re.compile(
    r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+c?import[ \t]+(\([^)]*\)|[^\n]*)", re.M
)

# Circles that other work removes, listed so that the test of every other package stays a
# gate; a listed package without a circle fails, so that its entry goes.  None today.
KNOWN: dict[str, str] = {}


def _modules(top: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module of the package ``top``."""
    out = {}
    for f in top.rglob("*"):
        if f.suffix in (".py", ".pyx") and "__pycache__" not in f.parts:
            name = ".".join(f.relative_to(top.parent).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = f
    return out


def import_graph(top: Path) -> dict[str, set[str]]:
    """The edges between the modules of one package (see the module docstring)."""
    mods = _modules(top)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        package = m.split(".") if f.name.startswith("__init__") else m.split(".")[:-1]
        text = f.read_text(errors="ignore")
        for dots, rest, names in FROM_IMPORT.findall(text):
            if dots:
                base = package[: len(package) - (len(dots) - 1)]
                target = ".".join(base + ([rest] if rest else []))
            elif rest.split(".")[0] == top.name:
                target = rest
            else:
                continue  # another package, or the standard library
            names = re.sub(r"#[^\n]*", "", names).strip("() \n")
            candidates = [f"{target}.{n.split()[0]}" for n in names.split(",") if n.strip()]
            for t in [c for c in candidates if c in mods] or [target]:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and not mods[t].name.startswith("__init__"):
                    edges[m].add(t)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    with an explicit stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _one_circle(edges: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest circle through the first module of ``component`` (breadth first)."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v] & inside):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return component


def test_the_checker_finds_a_circle(tmp_path):
    top = tmp_path / "pkg"
    (top / "sub").mkdir(parents=True)
    (top / "__init__.py").write_text("from . import a, b\n")
    (top / "a.py").write_text("def f():\n    from .sub.c import g\n")
    (top / "b.py").write_text("from .a import f\n")
    (top / "sub" / "__init__.py").write_text("")
    (top / "sub" / "c.py").write_text("from ..b import f  # noqa\nfrom .. import (\n    a,\n)\n")
    edges = import_graph(top)
    assert edges["pkg.b"] == {"pkg.a"} and edges["pkg.sub.c"] == {"pkg.b", "pkg.a"}
    assert edges["pkg"] == {"pkg.a", "pkg.b"}  # (and no edge into an __init__)
    assert circles(edges) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    assert circles({"x": {"y"}, "y": set()}) == []


@pytest.mark.parametrize("top", SOURCES, ids=[t.name for t in SOURCES])
def test_no_import_circle_inside_a_package(top):
    edges = import_graph(top)
    found = circles(edges)
    report = "import circles:\n" + "\n".join(
        f"  {len(c)} modules: {', '.join(c)}\n  e.g. {' -> '.join(_one_circle(edges, c))}"
        for c in found
    )
    if top.name in KNOWN:
        assert found, f"{top.name} has no import circle any more: remove it from KNOWN"
        pytest.xfail(f"{KNOWN[top.name]}; {report}")
    assert not found, report
