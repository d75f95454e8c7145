"""The op table (``_op_table.py``) is the one place an op is declared (issue 32).

Everything else that names the ops is derived from its rows: the registry and the in-place
forms, the Tensor methods and their stub (written at build time, Note [Generated from the
op table]), the function forms, the profiler's names (``Op.aten``).  These tests fail when
a derived place lists an op by hand again, when the generated files are older than the
table, or when a derived form does not say what its row says.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re
from pathlib import Path

import gradstack_tensor as gt
import pytest
from gradstack_tensor import _op_codegen, _op_table, functions
from gradstack_tensor._op_table import ROWS

SRC = Path(gt.__file__).resolve().parent
DECLARED = {r.name for r in ROWS} | {r.inplace_name for r in ROWS if r.inplace_form}
METHOD_ROWS = [r for r in ROWS if "method" in r.forms]
FUNCTION_ROWS = [r for r in ROWS if "function" in r.forms]
# every name a generated form answers to
GENERATED = (
    {r.name for r in METHOD_ROWS + FUNCTION_ROWS}
    | {r.inplace_name for r in METHOD_ROWS if r.inplace_form}
    | {a for r in METHOD_ROWS for a in (*r.aliases, *r.method_aliases)}
)


def test_generated_files_are_what_the_table_gives():
    """A stale build (the table edited, ``hatch run rebuild`` not run) fails here."""
    table = _op_codegen.load_table(SRC)
    assert (SRC / "_op_methods.pxi").read_text() == _op_codegen.render_pxi(table), (
        "_op_methods.pxi is older than the op table: run `hatch run rebuild`"
    )
    assert (SRC / "_op_methods.pyi").read_text() == _op_codegen.render_pyi(table)


def test_every_built_in_op_is_declared_by_a_row():
    assert DECLARED <= set(gt.OPS)
    tensor_core_ops = {
        name
        for name, op in gt.OPS.items()
        if op.kernel is None or op.kernel.__module__.startswith("gradstack_tensor.")
    }
    assert tensor_core_ops - DECLARED == set(), "declared outside the op table"
    for path in sorted(SRC.glob("*.py")) + sorted(SRC.glob("*.pyx")):
        if path.name in ("_dispatch.pyx", "_op_table.py"):
            continue
        calls = re.findall(r"\b(register_op|new_op|declare_op)\(", path.read_text())
        assert not calls, f"{path.name} declares ops ({calls}): give them a row of the table"


def test_rows_become_ops():
    for row in ROWS:
        op = gt.OPS[row.name]
        assert op.aten == row.aten
        assert (op.inplace, op.is_view) == (row.writes, row.view)
        assert (op.ufunc is None) == (row.kind == _op_table.OTHER)
        if row.inplace_form:
            twin = gt.OPS[row.inplace_name]
            assert twin.inplace and twin.kind == op.kind and twin.ufunc is op.ufunc
            assert twin.aten == (None if row.aten is None else row.aten + "_")


def _lists(path: Path) -> list[list[str]]:
    """The literal collections (list, tuple, set, dict keys) of a module that hold two or
    more names of generated ops, as ``functions.py``'s ``_UNARY`` did."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            names = [i.value for i in items if isinstance(i, ast.Constant) and i.value in GENERATED]
            if len(names) >= 2:
                found.append(names)
    return found


def test_nothing_lists_the_generated_ops_again():
    """The generated forms are nowhere written by hand: no method of theirs in the Tensor's
    modules, no line of theirs in the hand-written stub, no name of theirs in
    ``functions.py``, no hand-listed ``OP_`` constant."""
    for path in sorted(SRC.glob("_tensor*.pyx")):
        text = path.read_text()
        defined = set(re.findall(r"^    def (\w+)\(", text, re.M))
        defined |= set(re.findall(r"^    (\w+) = \w+$", text, re.M))
        assert not defined & GENERATED, f"{path.name} writes generated methods by hand"
    text = (SRC / "_tensor_elementwise.pyx").read_text()
    assert not re.findall(r"^cdef Op OP_\w+ = ", text, re.M), "hand-listed op constants"
    stub = set(re.findall(r"^    def (\w+)\(", (SRC / "_tensor.pyi").read_text(), re.M))
    assert not stub & GENERATED, "generated methods written in _tensor.pyi"
    assert not _lists(SRC / "functions.py"), "functions.py lists generated ops"
    assert not (SRC / "_op_table.pyx").exists()


def test_the_check_sees_a_list_written_by_hand(tmp_path):
    fake = tmp_path / "functions.py"
    fake.write_text('_UNARY = {"exp": "e ** input", "log": "log"}\n_T = {"maximum", "sum", "x"}\n')
    assert _lists(fake) == [["exp", "log"]]


@pytest.mark.parametrize("row", METHOD_ROWS, ids=lambda r: r.name)
def test_methods_say_what_their_rows_say(row):
    method = inspect.getattr_static(gt.Tensor, row.name)
    assert inspect.cleandoc(method.__doc__) == row.doc
    if row.inplace_form:
        inplace = inspect.getattr_static(gt.Tensor, row.inplace_name)
        assert inspect.cleandoc(inplace.__doc__) == row.inplace_doc
    for alias in (*row.aliases, *row.method_aliases):
        target = row.inplace_name if alias.endswith("_") else row.name
        assert getattr(gt.Tensor, alias) is getattr(gt.Tensor, target)


@pytest.mark.parametrize("row", FUNCTION_ROWS, ids=lambda r: r.name)
def test_functions_say_what_their_rows_say(row):
    fn = getattr(functions, row.name)
    assert fn.__name__ == row.name and fn.__module__ == "gradstack_tensor.functions"
    params = list(inspect.signature(fn).parameters)
    assert params[: 1 + len(row.param_names)] == ["input", *row.param_names]
    assert ("out" in params) == (row.out is not None)
    assert fn.__doc__.startswith(row.doc.split("\n\n")[0])
    assert getattr(gt, row.name) is fn
    for alias in row.aliases:
        assert getattr(functions, alias) is fn


@pytest.mark.parametrize(
    "row", [r for r in FUNCTION_ROWS if len(r.arg_kinds) == 2], ids=lambda r: r.name
)
def test_argument_kinds_are_checked_as_the_row_says(row):
    fn, t = getattr(gt, row.name), gt.tensor([1, 2])
    first, second = row.arg_kinds
    for args, kind, label in (((2, t), first, "input"), ((t, 2), second, row.param_names[0])):
        if kind == "Tensor":
            with pytest.raises(TypeError, match=f"argument '{label}'.* must be Tensor, not int"):
                fn(*args)
    if second == "Tensor":
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            getattr(t, row.name)(2)


def test_a_row_needs_a_docstring_and_an_elementwise_op_a_ufunc():
    with pytest.raises(ValueError, match="needs its docstring"):
        _op_table.op("x", _op_table.UNARY, ufunc=abs, args=_op_table.TENSOR)
    with pytest.raises(ValueError, match="has a ufunc"):
        _op_table.op("x", _op_table.UNARY)
    with pytest.raises(ValueError, match="unknown kind"):
        _op_table.op("x", "ternary")


@pytest.mark.parametrize("module", [_op_table, _op_codegen], ids=lambda m: m.__name__)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
