"""Run one program of ``programs/`` under torch or, with its import lines changed, gradstack.

``python run_program.py torch|gradstack programs/NAME.py``: the program's text is run as
``__main__`` after the same seeds (the library's ``manual_seed(0)``, ``random.seed(0)``,
``numpy.random.seed(0)``), in the current directory.  For gradstack only the import lines
change (Note [Only the import lines change]); nothing else in the program is touched.

Note [Only the import lines change]
A line that imports torch is rewritten to import the same path from gradstack, binding the
same name: ``import torch`` -> ``import gradstack as torch``, ``import torch.nn as nn`` ->
``import gradstack.nn as nn``, ``from torch.utils.data import X`` -> ``from
gradstack.utils.data import X``, ``import torch.nn.functional`` -> ``import gradstack as
torch; import gradstack.nn.functional``.  A program's header may list import lines to drop
under both libraries (``# drop-import: from torchvision import datasets``): lines that
import a package neither library provides and that the program imports without using.

Note [Notebooks run cell by cell]
A program whose header says ``# notebook: <path of the .ipynb>`` is a notebook's code
cells, in order, each below a ``# %%`` line (jupytext's percent format).  It runs as
Jupyter runs it: cell by cell in one namespace, and a cell whose last statement is an
expression shows that value, here through Python's own ``sys.displayhook`` (``repr``,
nothing for ``None``), as the notebook's ``Out[n]`` does.  A cell that raises stops the
run, as "Run All" does.
"""

from __future__ import annotations

import ast
import random
import re
import sys
from pathlib import Path

_IMPORT = re.compile(r"^(\s*)import torch((?:\.\w+)*)(\s+as\s+\w+)?\s*(#.*)?$")
_FROM = re.compile(r"^(\s*)from torch((?:\.\w+)*) import (.*)$")


def to_gradstack(line: str) -> str:
    """``line`` with torch's module path replaced by gradstack's (other lines unchanged)."""
    m = _IMPORT.match(line)
    if m:
        indent, path, alias, _ = m.groups()
        if alias:
            return f"{indent}import gradstack{path}{alias}"
        if path:
            return f"{indent}import gradstack as torch; import gradstack{path}"
        return f"{indent}import gradstack as torch"
    m = _FROM.match(line)
    if m:
        indent, path, names = m.groups()
        return f"{indent}from gradstack{path} import {names}"
    return line


def program_text(path: Path, library: str) -> str:
    text = path.read_text()
    dropped = set(re.findall(r"^# drop-import: (.*)$", text, re.M))
    lines = []
    for line in text.splitlines():
        if line.strip() in dropped and not line.startswith("#"):
            continue
        lines.append(to_gradstack(line) if library == "gradstack" else line)
    return "\n".join(lines) + "\n"


def run_cells(text: str, filename: str, namespace: dict) -> None:
    """Run ``text``'s ``# %%`` cells in ``namespace`` (Note [Notebooks run cell by cell])."""
    for cell in re.split(r"^# %%.*\n", text, flags=re.M):
        tree = ast.parse(cell, filename)
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            body = ast.Module(body=tree.body[:-1], type_ignores=[])
            exec(compile(body, filename, "exec"), namespace)
            shown = ast.Interactive(body=[last])
            exec(compile(shown, filename, "single"), namespace)
        else:
            exec(compile(tree, filename, "exec"), namespace)


def main() -> None:
    library, path = sys.argv[1], Path(sys.argv[2]).resolve()
    lib = __import__(library)
    import numpy as np

    lib.manual_seed(0)
    random.seed(0)
    np.random.seed(0)  # noqa: NPY002 - the programs may draw from numpy's global state
    text = program_text(path, library)
    sys.argv = [str(path)]
    namespace = {"__name__": "__main__", "__file__": str(path)}
    if re.search(r"^# notebook: ", text, re.M):
        run_cells(text, str(path), namespace)
    else:
        exec(compile(text, str(path), "exec"), namespace)


if __name__ == "__main__":
    main()
