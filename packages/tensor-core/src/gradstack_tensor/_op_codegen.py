"""Write the Tensor methods of the op table's rows, and their stub, at build time.

Note [Generated from the op table] in ``_op_table.py`` says why.  The build hook
(``hatch_build.py``, option ``codegen``) calls :func:`generate` before Cython runs; it reads
``_op_table.py`` alone (Note [The table is read at build time]) and writes, next to it:

- ``_op_methods.pxi``: a C global ``OP_<NAME>`` per op of the table, and the cdef class
  ``OpTableMethods`` with one method per row that has the ``"method"`` form (and its
  in-place method and aliases); ``_tensor_elementwise.pyx`` includes it, and its
  ``ElementwiseMethods`` derives from ``OpTableMethods``;
- ``_op_methods.pyi``: the stub of ``OpTableMethods``, which ``_tensor.pyi``'s ``Tensor``
  inherits.

A file is rewritten only when its text changes (its date then tells Cython and the test
session's staleness check what to recompile).  Run it by hand with
``python packages/tensor-core/src/gradstack_tensor/_op_codegen.py`` (the hook does the
same); ``tests/test_op_table.py`` checks that the files on disk are what the table gives.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["OUTPUTS", "load_table", "render_pxi", "render_pyi", "generate"]

HERE = Path(__file__).resolve().parent
# the files written, relative to the package folder
OUTPUTS = ("_op_methods.pxi", "_op_methods.pyi")
_HEADER = (
    "Generated from _op_table.py by _op_codegen.py at build time: do not edit, not in git\n"
    "(Note [Generated from the op table] in _op_table.py)."
)


def load_table(folder: Path = HERE) -> ModuleType:
    """``_op_table.py`` of ``folder``, loaded alone (it declares no op so).

    The table imports its vocabulary from ``._op_row``, so it is loaded as a module of a
    stand-in package whose path is ``folder``: the relative import finds ``_op_row.py``
    beside it, and nothing compiled is imported.
    """
    package = "_gradstack_op_table_for_codegen"
    stand_in = ModuleType(package)
    stand_in.__path__ = [str(folder)]
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == package}
    sys.modules[package] = stand_in
    try:
        return importlib.import_module(package + "._op_table")
    finally:
        for key in [k for k in sys.modules if k.split(".")[0] == package]:
            del sys.modules[key]
        sys.modules.update(saved)


def _constant(name: str) -> str:
    return "OP_" + name.upper()


def _docstring(doc: str, indent: str) -> list[str]:
    """``doc`` as a docstring's lines at ``indent``."""
    if '"""' in doc:
        raise ValueError(f"a docstring of the op table holds triple quotes: {doc[:40]!r}")
    prefix = "r" if "\\" in doc else ""
    lines = doc.splitlines()
    if len(lines) == 1:
        return [f'{indent}{prefix}"""{lines[0]}"""']
    out = [f'{indent}{prefix}"""{lines[0]}']
    out += [f"{indent}{line}" if line else "" for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


def _call_args(row, check_name: str) -> str:
    """The tuple the generated method dispatches: ``(self, other, alpha)``."""
    names = list(row.param_names)
    kinds = row.arg_kinds
    if names and len(kinds) > 1 and kinds[1] == "Tensor":
        # torch's signature takes a Tensor only: the TypeError for a number
        names[0] = f'_tensor_other({names[0]}, "{check_name}")'
    return "(" + ", ".join(["self", *names]) + ("," if not names else "") + ")"


def _method(row, name: str, constant: str, doc: str) -> list[str]:
    params = ", ".join(["self"] + ([row.params] if row.params else []))
    lines = [f"    def {name}({params}):"]
    lines += _docstring(doc, " " * 8)
    lines.append(f"        return dispatch({constant}, {_call_args(row, name)})")
    return lines + [""]


def _methods(table: ModuleType) -> list[tuple[str, object]]:
    """(name, row) of every generated method, in-place method and alias."""
    out = []
    for row in table.ROWS:
        if "method" not in row.forms:
            continue
        out.append((row.name, row))
        if row.inplace_form:
            out.append((row.inplace_name, row))
        for alias in (*row.aliases, *row.method_aliases):
            if alias.endswith("_") and not row.inplace_form:
                raise ValueError(f"op {row.name!r}: alias {alias!r} of no in-place form")
            out.append((alias, row))
    return out


def render_pxi(table: ModuleType) -> str:
    """The text of ``_op_methods.pxi``."""
    lines = [f"# {line}" for line in _HEADER.splitlines()]
    lines += ["", "# every op of the table as a C global: OP_MUL is OPS['mul']"]
    for row in table.ROWS:
        names = [row.name] + ([row.inplace_name] if row.inplace_form else [])
        lines += [f'cdef Op {_constant(n)} = OPS["{n}"]' for n in names]
    lines += [
        "",
        "",
        "@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx",
        "cdef class OpTableMethods(TensorBase):",
        '    """The Tensor methods declared by the op table: one per row with a method form',
        "    (and its in-place method); each dispatches its op.",
        "",
        "    A link of the Tensor's class chain (``TensorBase`` <- ``OpTableMethods`` <-",
        "    ``ElementwiseMethods`` <- ...); written at build time from ``_op_table.py``",
        '    (Note [Generated from the op table])."""',
        "",
    ]
    _methods(table)  # (checks the aliases)
    aliases = []
    for row in table.ROWS:
        if "method" not in row.forms:
            continue
        lines += _method(row, row.name, _constant(row.name), row.doc)
        if row.inplace_form:
            lines += _method(row, row.inplace_name, _constant(row.inplace_name), row.inplace_doc)
        for alias in (*row.aliases, *row.method_aliases):
            target = row.inplace_name if alias.endswith("_") else row.name
            aliases.append(f"    {alias} = {target}")
    lines += aliases
    return "\n".join(lines).rstrip() + "\n"


def _stub_params(row) -> str:
    kinds = row.arg_kinds
    parts = ["self"]
    for i, p in enumerate(row.params.split(",") if row.params else []):
        p = p.strip()
        if p == "*":
            parts.append("*")
            continue
        name, _, default = p.partition("=")
        kind = kinds[i + 1] if i + 1 < len(kinds) else ""
        annotation = "Tensor" if kind == "Tensor" else "Any"
        parts.append(f"{name.strip()}: {annotation}" + (" = ..." if default else ""))
    return ", ".join(parts)


def render_pyi(table: ModuleType) -> str:
    """The text of ``_op_methods.pyi``."""
    lines = [
        '"""Stub of the Tensor methods generated from the op table (``OpTableMethods``).',
        "",
        *_HEADER.splitlines(),
        '"""',
        "",
        "from typing import Any",
        "",
        "from ._tensor import Tensor",
        "",
        "class OpTableMethods:",
    ]
    for name, row in sorted(_methods(table), key=lambda m: m[0]):
        lines.append(f"    def {name}({_stub_params(row)}) -> Tensor: ...")
    return "\n".join(lines) + "\n"


def generate(package_root: Path | None = None, log=print) -> list[Path]:
    """Write the generated files of tensor-core (``package_root``: the folder with
    ``src/``, default this checkout's), each only when its text changed; returns them all
    (the build hook's protocol: Note [Sources written at build time] in hatch_build.py)."""
    folder = HERE if package_root is None else Path(package_root) / "src" / "gradstack_tensor"
    table = load_table(folder)
    paths = []
    for name, text in zip(OUTPUTS, (render_pxi(table), render_pyi(table))):
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            log(f"{name} written from the op table")
        paths.append(path)
    return paths


if __name__ == "__main__":
    generate()
