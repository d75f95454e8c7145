"""The uses half of the census: which torch names a body of torch code uses, and how often.

``tools/census.py`` (``hatch run census --scan DIR_OR_GITDIR ...``) calls :func:`scan`,
which reads ``.py`` files, notebooks' code cells and d2l's PyTorch cells with :mod:`ast`
(Note [What counts as a use]) and counts each torch name a program reaches; the counts are
saved in ``tools/census_usage.json``.  :func:`resolve` looks a dotted name up under torch
or gradstack, for both halves.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
import types
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

_IMPORT_USE = "(module)"


def _import(path: str) -> types.ModuleType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(path)


def resolve(path: str, root: str = "gradstack") -> tuple[bool, object]:
    """Whether ``path`` (a dotted name under ``root``) resolves, and to what."""
    parts = path.split(".")
    assert parts[0] == root, path
    obj: object = _import(root)
    for i, part in enumerate(parts[1:], start=1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(obj, part)
            continue
        except AttributeError:
            pass
        except Exception:  # a lazy attribute that fails to load is not there
            return False, None
        if not isinstance(obj, types.ModuleType):
            return False, None
        try:
            obj = _import(".".join(parts[: i + 1]))
        except Exception:
            return False, None
    return True, obj


# ---------------------------------------------------------------------------------------
# The uses
#
# Note [What counts as a use]
# Each occurrence, in a program's syntax tree, of a name that resolves to torch:
# - an attribute chain from a name bound by an import of torch (``torch.nn.functional.relu``,
#   ``nn.Linear``, ``F.relu`` after ``import torch.nn.functional as F``), counted once at its
#   longest chain and cut after the first object that is not a module (``torch.Tensor.add``
#   keeps one more level: a Tensor method);
# - a name bound by ``from torch... import name`` (the import line is one use, each later
#   reference another);
# - an attribute of an expression that is a tensor (Tensor methods and attributes such as
#   ``x.view``, ``x.shape``), where a light inference says it is one: the result of a
#   torch function, of a tensor method, of arithmetic or indexing on a tensor, of calling an
#   ``nn`` module instance; a name assigned one of those in the same function or at module
#   level; a parameter annotated ``Tensor``; the parameters of ``forward``.  Names that
#   only a tensor has (``unsqueeze``, ``backward``, ``requires_grad_`` ...: Tensor's names
#   that no builtin type, numpy array or nn.Module has) count on any expression;
# - ``import torch.x.y`` and ``from torch.x.y import ...`` also count one use of the module
#   ``torch.x.y`` (a namespace must be importable under gradstack at that path).
# Chains that do not exist in torch 2.13 (a typo, a removed name) are counted apart.


def _tensor_only_names() -> set[str]:
    import numpy as np
    import torch

    shared: set[str] = set()
    for kind in (list, dict, str, set, tuple, bytes, int, float, complex, object):
        shared |= set(dir(kind))
    shared |= set(dir(np.ndarray)) | set(dir(np.generic))
    shared |= set(dir(torch.nn.Module)) | set(dir(torch.optim.Optimizer))
    shared |= {"apply_", "type", "to", "cpu", "cuda", "float", "double", "half", "long", "int"}
    shared |= {"add", "sub", "mul", "div", "update", "remove", "insert", "get", "data"}
    shared |= {"grad", "size", "shape", "dtype", "device", "norm", "sum", "mean", "max", "min"}
    return {n for n in dir(torch.Tensor) if not n.startswith("_")} - shared


# torch functions whose result is not a tensor (for the inference of tensor expressions)
_NOT_TENSOR_FUNCTIONS = re.compile(
    r"^(is_\w+|set_\w+|get_\w+|manual_seed|seed|initial_seed|no_grad|enable_grad|"
    r"inference_mode|device|dtype|Size|Generator|typename|numel|save|load|compile|"
    r"use_deterministic_algorithms|finfo|iinfo|broadcast_shapes|result_type|"
    r"promote_types|can_cast|autocast)$"
)
_NOT_TENSOR_METHODS = {
    "item", "tolist", "numpy", "size", "dim", "numel", "element_size", "nelement",
    "ndimension", "is_contiguous", "data_ptr", "stride", "backward", "register_hook",
    "equal", "storage", "untyped_storage", "is_floating_point", "is_complex", "__len__",
    "type", "get_device", "storage_offset", "register_post_accumulate_grad_hook",
}  # fmt: skip
_TENSOR_ATTRIBUTES = {"grad", "data", "T", "mT", "H", "mH", "real", "imag"}
# attributes (not methods) that only a tensor has, counted on any expression
_TENSOR_ONLY_PROPERTIES = {"requires_grad", "grad_fn", "is_leaf", "retains_grad"}


class _Scope:
    def __init__(self, parent: _Scope | None):
        self.parent = parent
        self.tensors: set[str] = set()
        self.modules: set[str] = set()  # names bound to nn.Module instances

    def is_tensor(self, name: str) -> bool:
        return name in self.tensors or (self.parent is not None and self.parent.is_tensor(name))

    def is_module(self, name: str) -> bool:
        return name in self.modules or (self.parent is not None and self.parent.is_module(name))


class UseCounter:
    """Counts the torch names one program uses (Note [What counts as a use])."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.tensor_names = {n for n in dir(torch.Tensor) if not n.startswith("_")}
        self.tensor_only = _tensor_only_names()
        self.counts: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self._cut_cache: dict[str, str | None] = {}

    # -- resolution against torch ------------------------------------------------------
    def cut(self, chain: str) -> str | None:
        """The torch name a dotted chain uses (Note [What counts as a use]), or None."""
        if chain in self._cut_cache:
            return self._cut_cache[chain]
        parts = chain.split(".")
        obj: object = self.torch
        result: str | None = None
        i = 1
        while i < len(parts):
            part = parts[i]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    nxt = getattr(obj, part)
            except Exception:
                nxt = None
                if isinstance(obj, types.ModuleType):
                    try:
                        nxt = _import(".".join(parts[: i + 1]))
                    except Exception:
                        nxt = None
            if nxt is None:
                self._cut_cache[chain] = None
                return None
            if not isinstance(nxt, types.ModuleType):
                end = i + 1
                if nxt is self.torch.Tensor and i + 1 < len(parts):
                    end = i + 2 if hasattr(nxt, parts[i + 1]) else end
                result = ".".join(parts[:end])
                break
            obj = nxt
            i += 1
        else:
            result = None  # a module alone: not a name
        self._cut_cache[chain] = result
        return result

    # -- reading a program -------------------------------------------------------------
    def count_source(self, sources: list[str]) -> None:
        """Count the uses in a program given as one source, or as a notebook's cells."""
        whole = "\n".join(sources)
        try:
            trees = [ast.parse(whole)]
        except (SyntaxError, ValueError):
            trees = []
            for cell in sources:
                try:
                    trees.append(ast.parse(cell))
                except (SyntaxError, ValueError):
                    continue
        aliases: dict[str, str] = {}
        foreign: set[str] = set()
        for tree in trees:
            self._collect_imports(tree, aliases, foreign)
        for tree in trees:
            _Visitor(self, aliases, foreign - set(aliases)).visit(tree)

    def _collect_imports(self, tree: ast.AST, aliases: dict[str, str], foreign: set[str]) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    foreign.add(alias.asname or alias.name.split(".")[0])
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "torch" or alias.name.startswith("torch."):
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                        else:
                            aliases["torch"] = "torch"
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "torch" or node.module.startswith("torch."):
                    for alias in node.names:
                        if alias.name != "*":
                            aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def record(self, chain: str) -> str | None:
        name = self.cut(chain)
        if name is not None:
            self.counts[name] += 1
        elif chain.count(".") >= 1:
            # a chain that does not exist in torch 2.13, counted at its first missing part
            self.unknown[self._first_missing(chain)] += 1
        return name

    def _first_missing(self, chain: str) -> str:
        parts = chain.split(".")
        obj: object = self.torch
        for i, part in enumerate(parts[1:], start=1):
            if not isinstance(obj, types.ModuleType):
                return ".".join(parts[: i + 1])
            try:
                obj = getattr(obj, part)
            except Exception:
                try:
                    obj = _import(".".join(parts[: i + 1]))
                except Exception:
                    return ".".join(parts[: i + 1])
        return chain


def _chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``, or None when the base is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def _is_module_class(obj: object) -> bool:
    import torch

    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


class _Visitor(ast.NodeVisitor):
    def __init__(self, counter: UseCounter, aliases: dict[str, str], foreign: set[str]):
        self.c = counter
        self.aliases = aliases
        self.foreign = foreign  # names imported from other packages (plt, np ...)
        self.calls: set[int] = set()  # ids of the Attribute nodes called
        self.scope = _Scope(None)

    # -- imports: the module and each imported name are uses -----------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("torch."):
                self.c.counts[f"{_IMPORT_USE}.{alias.name}"] += 1

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        if node.module != "torch" and not node.module.startswith("torch."):
            return
        if node.module != "torch":
            self.c.counts[f"{_IMPORT_USE}.{node.module}"] += 1
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{node.module}.{alias.name}"
            try:
                is_module = isinstance(_import(full), types.ModuleType)
            except Exception:
                is_module = False
            if is_module:
                self.c.counts[f"{_IMPORT_USE}.{full}"] += 1
            else:
                self.c.record(full)

    # -- scopes and the tensor inference -------------------------------------------------
    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(default)
        outer = self.scope
        self.scope = _Scope(outer)
        args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        for arg in args:
            if arg.annotation is not None:
                chain = _chain(arg.annotation)
                if chain and self._resolve_chain(chain) == "torch.Tensor":
                    self.scope.tensors.add(arg.arg)
            if node.name == "forward" and arg.arg != "self":
                self.scope.tensors.add(arg.arg)
        self._infer_assignments(node.body)
        for statement in node.body:
            self.visit(statement)
        self.scope = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_Module(self, node: ast.Module) -> None:
        self._infer_assignments(node.body)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # ``self.x = nn.Linear(...)`` anywhere in the class binds ``self.x`` for the class
        outer = self.scope
        self.scope = _Scope(outer)
        for statement in ast.walk(node):
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    key = _target_key(target)
                    if key and key.startswith("self."):
                        if self._is_module_expr(statement.value):
                            self.scope.modules.add(key)
                        elif self._is_tensor_expr(statement.value):
                            self.scope.tensors.add(key)
        self.generic_visit(node)
        self.scope = outer

    def _infer_assignments(self, body: list[ast.stmt]) -> None:
        """Bind the names this body assigns tensors or nn modules to (a few passes)."""
        assigns: list[tuple[str, ast.expr]] = []

        def walk(nodes: list[ast.stmt]) -> None:
            for stmt in nodes:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    continue
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Assign):
                        for target in sub.targets:
                            key = _target_key(target)
                            if key:
                                assigns.append((key, sub.value))
                    elif isinstance(sub, ast.AnnAssign | ast.AugAssign) and sub.value:
                        key = _target_key(sub.target)
                        if key:
                            assigns.append((key, sub.value))

        walk(body)
        for _ in range(3):
            changed = False
            for key, value in assigns:
                if key not in self.scope.tensors and self._is_tensor_expr(value):
                    self.scope.tensors.add(key)
                    changed = True
                elif key not in self.scope.modules and self._is_module_expr(value):
                    self.scope.modules.add(key)
                    changed = True
            if not changed:
                break

    def _resolve_chain(self, chain: list[str]) -> str | None:
        base = self.aliases.get(chain[0])
        if base is None:
            return None
        return ".".join([base, *chain[1:]])

    def _torch_object(self, node: ast.AST) -> object:
        chain = _chain(node)
        if not chain:
            return None
        path = self._resolve_chain(chain)
        if path is None:
            return None
        ok, obj = resolve(path, root="torch")
        return obj if ok else None

    def _is_module_expr(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return _is_module_class(self._torch_object(node.func))
        return False

    def _is_tensor_expr(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return self.scope.is_tensor(node.id)
        if isinstance(node, ast.Attribute):
            key = _target_key(node)
            if key and self.scope.is_tensor(key):
                return True
            return node.attr in _TENSOR_ATTRIBUTES and self._is_tensor_expr(node.value)
        if isinstance(node, ast.Subscript):
            return self._is_tensor_expr(node.value)
        if isinstance(node, ast.BinOp):
            return self._is_tensor_expr(node.left) or self._is_tensor_expr(node.right)
        if isinstance(node, ast.UnaryOp):
            return self._is_tensor_expr(node.operand)
        if isinstance(node, ast.Call):
            func = node.func
            chain = _chain(func)
            if chain and chain[0] in self.aliases:
                path = self._resolve_chain(chain) or ""
                obj = self._torch_object(func)
                name = path.rsplit(".", 1)[-1]
                if obj is self.c.torch.Tensor or obj is self.c.torch.nn.Parameter:
                    return True
                if callable(obj) and not isinstance(obj, type):
                    return not _NOT_TENSOR_FUNCTIONS.match(name)
                return False
            if isinstance(func, ast.Attribute):
                if func.attr in self.c.tensor_names and self._is_tensor_expr(func.value):
                    return func.attr not in _NOT_TENSOR_METHODS
                key = _target_key(func)
                if key and self.scope.is_module(key):
                    return True
            if isinstance(func, ast.Name) and self.scope.is_module(func.id):
                return True
        return False

    # -- the uses ------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = _chain(node)
        if chain and chain[0] in self.aliases:
            path = self._resolve_chain(chain)
            if path is not None:
                self.c.record(path)
            return
        if node.attr in self.c.tensor_names and self._tensor_attribute(node):
            self.c.counts[f"torch.Tensor.{node.attr}"] += 1
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            self.calls.add(id(node.func))
        self.generic_visit(node)

    def _tensor_attribute(self, node: ast.Attribute) -> bool:
        """Whether ``node`` (``<expr>.<a Tensor name>``) is a tensor's attribute."""
        if node.attr in ("values", "indices") and isinstance(node.value, ast.Call):
            return False  # the fields of torch.max/topk/sort's named tuples
        if self._is_tensor_expr(node.value):
            return True
        if node.attr not in self.c.tensor_only:
            return False
        root = node.value
        while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
            root = root.func if isinstance(root, ast.Call) else root.value
        if isinstance(root, ast.Name) and root.id in self.foreign:
            return False  # plt.scatter, np.unique ...
        return id(node) in self.calls or node.attr in _TENSOR_ONLY_PROPERTIES

    def visit_Name(self, node: ast.Name) -> None:
        path = self.aliases.get(node.id)
        if path is not None and isinstance(node.ctx, ast.Load) and path != "torch":
            try:
                is_module = isinstance(_import(path), types.ModuleType)
            except Exception:
                is_module = False
            if not is_module:
                self.c.record(path)


def _target_key(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


# -- the corpus ---------------------------------------------------------------------------

_MAGIC = re.compile(r"^\s*[%!?]|^\s*\w+\s*=\s*!|\?\s*$")


def _clean_cell(source: str) -> str:
    """A notebook cell without IPython's magics and shell lines (each line kept, emptied)."""
    return "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())


def _notebook_cells(text: str) -> list[str]:
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError:
        return []
    cells = notebook.get("cells") or [
        cell for sheet in notebook.get("worksheets", []) for cell in sheet.get("cells", [])
    ]
    sources = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", cell.get("input", ""))
        if isinstance(source, list):
            source = "".join(source)
        sources.append(_clean_cell(source))
    return sources


_D2L_BLOCK = re.compile(r"^```\{\.python \.input[^}]*\}\n(.*?)^```", re.M | re.S)


def _d2l_cells(text: str) -> list[str]:
    """The cells of a d2l chapter tagged for PyTorch (``%%tab``/``#@tab`` pytorch or all)."""
    cells = []
    for match in _D2L_BLOCK.finditer(text):
        body = match.group(1)
        first = body.lstrip().split("\n", 1)[0]
        tag = re.match(r"(%%tab|#@tab)\b(.*)", first)
        if tag is None:
            continue  # an untagged cell is the first tab's (MXNet's)
        tabs = tag.group(2).replace(",", " ").split()
        if "pytorch" in tabs or "all" in tabs:
            cells.append(_clean_cell(body))
    return cells


def program_sources(path: str, text: str) -> list[str] | None:
    """A corpus file as the sources to count, or None when it is not a program."""
    if path.endswith(".py"):
        return [text]
    if path.endswith(".ipynb"):
        return _notebook_cells(text)
    if path.endswith(".md") and "```{.python .input" in text:
        return _d2l_cells(text)
    return None


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def corpus_files(root: Path) -> tuple[dict[str, str], Iterator[tuple[str, str]]]:
    """The repository's identity (name, commit) and its files' (path, text)."""
    if _is_git_dir(root):
        git = ["git", f"--git-dir={root}"]
        commit = subprocess.run(
            [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        url = subprocess.run(
            [*git, "config", "--get", "remote.origin.url"], capture_output=True, text=True
        ).stdout.strip()
        name = _repo_name(root, url)
        listing = subprocess.run(
            [*git, "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True
        ).stdout.decode()

        def files() -> Iterator[tuple[str, str]]:
            wanted = []
            for row in listing.split("\0"):
                if not row:
                    continue
                meta, path = row.split("\t", 1)
                _, kind, sha = meta.split()
                if kind == "blob" and path.endswith((".py", ".ipynb", ".md")):
                    wanted.append((path, sha))
            with subprocess.Popen(
                [*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            ) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                for path, sha in wanted:
                    proc.stdin.write(sha.encode() + b"\n")
                    proc.stdin.flush()
                    header = proc.stdout.readline().split()
                    if len(header) < 3:  # "<sha> missing": left out of the snapshot
                        continue
                    size = int(header[2])
                    data = proc.stdout.read(size)
                    proc.stdout.read(1)
                    yield path, data.decode("utf-8", errors="replace")
                proc.stdin.close()

        return {"name": name, "commit": commit}, files()

    def tree_files() -> Iterator[tuple[str, str]]:
        for file in sorted(root.rglob("*")):
            if file.suffix in (".py", ".ipynb", ".md") and file.is_file():
                yield str(file.relative_to(root)), file.read_text(errors="replace")

    return {"name": root.name, "commit": ""}, tree_files()


def _repo_name(root: Path, url: str) -> str:
    if url:
        match = re.search(r"github\.com[:/]([^/]+/[^/.]+)", url)
        if match:
            return match.group(1)
    # the fetched snapshots live at .../<owner>+<name>/repo
    parent = root.parent.name if root.name in ("repo", ".git") else root.name
    return parent.replace("+", "/")


def scan(roots: list[Path]) -> dict:
    """Count the torch names the programs under ``roots`` use."""
    counter = UseCounter()
    repos = []
    for root in roots:
        identity, files = corpus_files(root)
        before = sum(counter.counts.values())
        programs = 0
        for path, text in files:
            sources = program_sources(path, text)
            if not sources or "torch" not in text:
                continue
            programs += 1
            counter.count_source(sources)
        identity["programs"] = programs
        identity["uses"] = sum(counter.counts.values()) - before
        repos.append(identity)
        print(f"census: {identity['name']} @ {identity['commit'][:10]}: {programs} programs, "
              f"{identity['uses']} uses", file=sys.stderr)  # fmt: skip
    return {
        "torch": _torch_version(),
        "repositories": repos,
        "counts": dict(sorted(counter.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "not_in_torch": dict(sorted(counter.unknown.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def _torch_version() -> str:
    import torch

    return str(torch.__version__)
