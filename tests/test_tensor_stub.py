"""The typed stub of ``Tensor`` (``gradstack_tensor/_tensor.pyi``) lists the class's API.

mypy users of the pure-Python packages see ``Tensor`` through the stub (the class is
compiled), so a method added to the class without its stub line would be invisible to
them, and a stub line without a method would type-check code that fails.  The methods of
the op table are stubbed in ``_op_methods.pyi``, which the build writes from the table and
``Tensor``'s stub inherits (Note [Generated from the op table] in ``_op_table.py``).  Also: every
compiled module that a Python module of tensor-core imports has a stub, and the package
ships ``py.typed``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import gradstack_tensor as gt

SRC = Path(gt.__file__).resolve().parent


def _stub_names(path: Path, cls: str) -> set[str]:
    tree = ast.parse(path.read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    return {n.name for n in node.body if isinstance(n, ast.FunctionDef)}


def test_stub_lists_every_tensor_method_and_attribute():
    stub = _stub_names(SRC / "_tensor.pyi", "Tensor")
    generated = _stub_names(SRC / "_op_methods.pyi", "OpTableMethods")
    assert not stub & generated, "written by hand in _tensor.pyi, and generated from the table"
    stub |= generated
    ignored = set(dir(object)) | {
        "__pyx_vtable__",
        "__dict__",
        "__weakref__",
        "__array_priority__",
        "__module__",
        "__doc__",
    }
    actual = {n for n in dir(gt.Tensor) if n not in ignored}
    base = {
        "_requires_grad",
        "_grad",
        "_grad_fn",
        "_output_nr",
        "_autograd_meta",
        "_fw_grad",
        "_is_inference",
    }
    assert actual - stub - base == set(), "in the class, missing from _tensor.pyi"
    dunders_of_object = {
        "__init__",
        "__eq__",
        "__ne__",
        "__hash__",
        "__repr__",
        "__format__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
    }
    assert stub - actual - dunders_of_object == set(), "in _tensor.pyi, not in the class"


def test_compiled_modules_imported_by_python_modules_have_stubs():
    compiled = {p.name.split(".")[0] for p in SRC.glob("*.so")} | {
        p.stem for p in SRC.glob("*.pyx")
    }
    imported = set()
    for py in SRC.glob("*.py"):
        imported |= set(re.findall(r"^\s*from \.(\w+) import", py.read_text(), re.M))
        for names in re.findall(r"^\s*from \. import ([\w, ]+)", py.read_text(), re.M):
            imported |= {n.strip().split(" as ")[0] for n in names.split(",")}
    missing = sorted(m for m in imported & compiled if not (SRC / f"{m}.pyi").exists())
    assert not missing, f"compiled modules without a .pyi stub: {missing}"
    assert (SRC / "py.typed").exists()
