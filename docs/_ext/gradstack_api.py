"""The API reference, generated from the public namespaces' ``__all__`` (``hatch run docs``).

Two arrangements of the same objects:

* **torch's**: the facade ``gradstack`` laid out as PyTorch's reference is (``gradstack``,
  ``gradstack.Tensor``, ``gradstack.autograd`` with ``functional``/``graph``/``forward_ad``/
  ``profiler``, ``gradstack.nn``, ``gradstack.nn.functional`` ...), so that a torch user finds
  a name where torch documents it;
* **by layer**: each package's public namespaces (``gradstack_tensor``,
  ``gradstack_tensor.linalg``, ``gradstack_autograd.extension`` ...).

Nothing here lists names by hand: the namespaces are found by walking the packages (and the
submodules a facade module registers under torch's names, as ``gradstack.distributions``
does), their names come from ``__all__``, and ``gradstack.Tensor``'s from the class.  A new
name or a new public module appears in the reference on the next build, and
``tests/test_docs_reference.py`` fails if one has no entry.

Note [One entry per object]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Most objects are reachable under several names (``gradstack.sin`` is
``gradstack_tensor.sin``; ``gradstack.no_grad`` is ``gradstack.autograd.no_grad``).
Documenting each name in full would double the build and fill search results with copies,
so each function, class and module gets one full entry, under the first name it has in
the order of ``FACADE_ORDER`` then the layers (torch's place first: ``no_grad`` is
``gradstack.no_grad``, as torch documents ``torch.no_grad``).  Every other name of it is a
row of its namespace's table that links to that entry.  Plain values (dtypes, constants)
are cheap and have no identity worth sharing: each name gets its own entry.

Note [Which modules are namespaces]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A module is public when no part of its dotted name starts with ``_``.  Public modules whose
every name is already exported by one of their ancestors (``gradstack_nn.modules.conv``:
all of it is in ``gradstack_nn``; ``gradstack.autograd.grad_mode``: all of it is in
``gradstack.autograd``) are where code lives, not where users look: they get no section of
their own, only a line under that ancestor saying they exist.  This keeps the reference
independent of how a package arranges its implementation modules (nn-mini's are being
regrouped by concept) while still failing the test when such a module grows a name that
no namespace exports.

Note [References to other names of an entry]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Docstrings name objects as their own module sees them: ``:func:`gradstack_tensor.erf```,
``:func:`F.gelu``` (nn-mini's modules import functional as F), ``:meth:`eq_``` in a Tensor
method.  Sphinx finds only the names that have an entry, so a reference Sphinx did not find
is looked up as Python would look it up (in the entry's context, then in the globals of the
module that defines the documented object), and linked to the one entry of the object it
names (Note [One entry per object]).  An object found that way but exported by no namespace
(a private helper a docstring points at) is shown as code without a link.  What resolves to
no object at all is a broken reference, and fails the build.

Note [Values are rows]
~~~~~~~~~~~~~~~~~~~~~~
A value (``gradstack.float32``, ``gradstack.e``) is a short ``py:data`` entry with its repr,
except a value named as a Python builtin (``gradstack.bool``, ``gradstack.int``,
``gradstack.float``: torch's dtype aliases), which is only a row of its namespace's table.
As objects of Sphinx's Python domain those would capture the ``bool`` and ``int`` of every
signature's annotations (Sphinx resolves a ``class`` reference to ``data`` objects too, and
searches loosely by the last name), linking ``-> bool`` to the dtype.

Note [Attribute docstrings are prose]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
napoleon reads the first line of a property's or attribute's docstring as Google style's
``type: description``, so the docstring "True: gradstack's tensors live on the CPU." became an
attribute of type ``True``.  gradstack's docstrings are numpy style, where that line is
prose (the type, when given, is in the signature or the text): the extension gives napoleon's
numpy parser a version that parses an attribute's docstring as any other docstring.

Note [Excluded names]
~~~~~~~~~~~~~~~~~~~~~
``EXCLUDED`` is empty on purpose.  An entry there needs its reason next to it; the test
reports an excluded name that no longer exists.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

# The layers, bottom first: (page name, distribution, import name, title).
LAYERS = [
    ("tensor-core", "gradstack-tensor-core", "gradstack_tensor", "tensors, dtypes and ops"),
    ("graph-engine", "gradstack-graph-engine", "gradstack_autograd", "autograd"),
    ("functional-api", "gradstack-functional-api", "gradstack_functional", "transforms"),
    ("profiler", "gradstack-profiler", "gradstack_profiler", "the profiler"),
    ("nn-mini", "gradstack-nn-mini", "gradstack_nn", "modules, optimizers, data"),
    ("distributed", "gradstack-distributed", "gradstack_distributed", "MPI"),
]
FACADE = "gradstack"
TENSOR = "gradstack.Tensor"  # a class, documented as a namespace, as torch.Tensor is

# torch's reference, in its order: the page of each namespace of the facade.  A namespace
# not named here (one added later) gets a page after these, in alphabetical order, if it
# sits at most two levels deep or in PROMOTED; deeper ones join their nearest ancestor's.
FACADE_ORDER = [
    "gradstack",
    "gradstack.Tensor",
    "gradstack.autograd",
    "gradstack.nn",
    "gradstack.nn.functional",
    "gradstack.nn.init",
    "gradstack.optim",
    "gradstack.func",
    "gradstack.linalg",
    "gradstack.special",
    "gradstack.distributions",
    "gradstack.utils.data",
    "gradstack.distributed",
    "gradstack.profiler",
    "gradstack.testing",
    "gradstack.utils.checkpoint",
    "gradstack.random",
    "gradstack.cuda",
    "gradstack.accelerator",
    "gradstack.backends",
    "gradstack.utils.benchmark",
    "gradstack.serialization",
    "gradstack.return_types",
    "gradstack.utils",
]
PROMOTED = {
    "gradstack.nn.functional",
    "gradstack.nn.init",
    "gradstack.utils.data",
    "gradstack.utils.benchmark",
    "gradstack.utils.checkpoint",
}
# torch's name for a facade page, where it is not the page's own name with torch for gradstack
TITLES = {"gradstack": "gradstack (torch)"}

# Note [Excluded names]: {qualified name: reason}
EXCLUDED: dict[str, str] = {}


# ----------------------------------------------------------------------------- the model


@dataclass
class Entry:
    """One public name of one namespace."""

    namespace: str
    name: str
    obj: object
    kind: str  # "class", "function", "module", "method", "property", "attribute", "data"
    canonical: str = ""  # the full name of the object's one full entry (Note [One entry ...])

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}"

    @property
    def is_full(self) -> bool:
        return self.canonical == self.qualname


@dataclass
class Namespace:
    name: str  # the dotted import name (or gradstack.Tensor)
    module: object
    entries: list[Entry] = field(default_factory=list)
    subsumed: list[str] = field(default_factory=list)  # Note [Which modules are namespaces]


@dataclass
class Page:
    slug: str  # the file name under api/, without .rst
    title: str
    namespaces: list[Namespace]
    intro: str = ""


def _kind(obj: object, member_of_class: bool = False) -> str:
    if isinstance(obj, types.ModuleType):
        return "module"
    if isinstance(obj, type):
        return "class"
    if member_of_class:
        if isinstance(obj, property):
            return "property"
        if inspect.isroutine(obj):
            return "method"
        return "attribute"
    if inspect.isroutine(obj):
        return "function"
    return "data"


def public_names(module: types.ModuleType) -> list[str]:
    """``__all__``, or for a module without one the public names it defines itself."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not n.startswith("_") or n == "__version__"][:]
    out = []
    for name, obj in vars(module).items():
        if name.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            out.append(name)
    return out


def _is_public(name: str) -> bool:
    return not any(part.startswith("_") for part in name.split("."))


def walk_modules(top: str) -> dict[str, types.ModuleType]:
    """Every public module under ``top``, by the name it is reached by: the files of the
    package tree, and the modules a package registers in ``sys.modules`` under its own name
    (``gradstack.distributions``'s submodules) or exports in ``__all__`` (``gradstack.linalg``,
    which is ``gradstack_tensor.linalg``)."""
    found: dict[str, types.ModuleType] = {}
    todo: list[tuple[str, types.ModuleType | None]] = [(top, None)]
    while todo:
        name, module = todo.pop(0)
        if name in found or not _is_public(name):
            continue
        if module is None:
            module = importlib.import_module(name)
        found[name] = module
        if hasattr(module, "__path__"):
            for info in pkgutil.iter_modules(module.__path__, name + "."):
                todo.append((info.name, None))
        exported = public_names(module)
        for attr, value in list(vars(module).items()):
            if attr.startswith("_") or not isinstance(value, types.ModuleType):
                continue
            full = f"{name}.{attr}"
            registered = sys.modules.get(full) is value
            ours = value.__name__.split(".")[0].startswith("gradstack")
            if registered or (attr in exported and ours):
                todo.append((full, value))
    return found


def _exports(module: types.ModuleType) -> dict[str, object]:
    return {n: getattr(module, n) for n in public_names(module) if hasattr(module, n)}


def _shareable(obj: object) -> bool:
    """Objects whose identity names them (Note [One entry per object])."""
    return isinstance(obj, (type, types.ModuleType)) or inspect.isroutine(obj)


def namespaces_of(top: str) -> list[Namespace]:
    """The namespaces of one package (Note [Which modules are namespaces])."""
    modules = walk_modules(top)
    names = list(modules)
    exported_ids: dict[str, set[int]] = {
        n: {id(v) for v in _exports(m).values() if _shareable(v)} | set(_exports(m))  # type: ignore[arg-type]
        for n, m in modules.items()
    }
    result: dict[str, Namespace] = {}
    for name in names:
        module = modules[name]
        exports = _exports(module)
        ancestors = [a for a in names if name.startswith(a + ".")]
        owner = None
        if ancestors and exports:
            for ancestor in sorted(ancestors, key=len):
                have = exported_ids[ancestor]
                if all(
                    (id(v) in have) if _shareable(v) else (k in have) for k, v in exports.items()
                ):
                    owner = ancestor
                    break
        elif ancestors and not exports:
            owner = max(ancestors, key=len)
        if owner is not None and name != top:
            # noted under the closest ancestor that has a section (ancestors come first)
            holder = max((a for a in ancestors if a in result), key=len, default=top)
            result[holder].subsumed.append(name)
            continue
        ns = Namespace(name, module)
        for attr, obj in exports.items():
            ns.entries.append(Entry(name, attr, obj, _kind(obj)))
        result[name] = ns
    return list(result.values())


def tensor_namespace() -> Namespace:
    import gradstack

    ns = Namespace(TENSOR, gradstack.Tensor)
    for attr in sorted(dir(gradstack.Tensor)):
        if attr.startswith("_"):
            continue
        obj = inspect.getattr_static(gradstack.Tensor, attr)
        ns.entries.append(Entry(TENSOR, attr, obj, _kind(obj, member_of_class=True)))
    return ns


def _page_of_facade(ns: str, has_page: set[str]) -> str:
    depth = ns.count(".")
    if ns in FACADE_ORDER or ns in PROMOTED or depth <= 1:
        return ns
    parts = ns.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:cut])
        if candidate in has_page:
            return candidate
    return ns


def build() -> tuple[list[Page], list[Page]]:
    """The facade's pages (torch's order) and the layers' pages, every entry's canonical
    name set (Note [One entry per object])."""
    facade = namespaces_of(FACADE)
    facade.insert(1, tensor_namespace())
    names = [ns.name for ns in facade]
    has_page = {n for n in names if n in FACADE_ORDER or n in PROMOTED or n.count(".") <= 1}
    pages: dict[str, Page] = {}
    for ns in facade:
        slug = _page_of_facade(ns.name, has_page)
        if slug not in pages:
            torch_name = slug.replace("gradstack", "torch", 1)
            pages[slug] = Page(slug, TITLES.get(slug, f"{slug} ({torch_name})"), [])
        pages[slug].namespaces.append(ns)
    rank = {n: i for i, n in enumerate(FACADE_ORDER)}
    facade_pages = sorted(pages.values(), key=lambda p: (rank.get(p.slug, len(rank)), p.slug))
    for page in facade_pages:
        page.namespaces.sort(key=lambda ns: (ns.name != page.slug, ns.name))

    layer_pages = []
    for slug, dist, top, what in LAYERS:
        layer_pages.append(
            Page(f"layers/{slug}", f"{slug} ({top}): {what}", namespaces_of(top), intro=dist)
        )

    canonical: dict[int, str] = {}
    for page in [*facade_pages, *layer_pages]:
        for ns in page.namespaces:
            for entry in ns.entries:
                if entry.kind == "module":
                    target = entry.obj.__name__  # type: ignore[attr-defined]
                    entry.canonical = _module_target(target, entry.qualname)
                    continue
                if ns.name == TENSOR or not _shareable(entry.obj):
                    entry.canonical = entry.qualname
                    continue
                key = id(entry.obj)
                if entry.kind == "class" and entry.obj is _tensor_class():
                    entry.canonical = TENSOR
                    continue
                canonical.setdefault(key, entry.qualname)
                entry.canonical = canonical[key]
    return facade_pages, layer_pages


def _tensor_class():
    import gradstack

    return gradstack.Tensor


_MODULE_TARGETS: dict[str, str] = {}


def _module_target(module_name: str, qualname: str) -> str:
    """A module's entry is its namespace section: its import name, or the facade name under
    which it is reachable (``gradstack.linalg`` for ``gradstack_tensor.linalg``)."""
    return qualname if qualname.startswith(FACADE + ".") else module_name


def all_namespaces() -> list[Namespace]:
    facade, layers = build()
    return [ns for page in [*facade, *layers] for ns in page.namespaces]


# ----------------------------------------------------------------------------- rendering

_SIGNATURE_LINE = re.compile(r"^[\w.]+\(.*\)(\s*->.*)?$")


def summary(obj: object) -> str:
    """The first paragraph of the docstring, on one line (rST as written)."""
    doc = inspect.getdoc(obj) if not isinstance(obj, (int, float, str, dict)) else None
    if not doc or (not _shareable(obj) and doc == inspect.getdoc(type(obj))):
        return ""
    lines = doc.strip().splitlines()
    if lines and _SIGNATURE_LINE.match(lines[0].strip()):
        lines = lines[1:]
    para = []
    for line in lines:
        if not line.strip():
            if para:
                break
            continue
        if set(line.strip()) <= set("-=~"):
            break
        para.append(line.strip())
    text = " ".join(para)
    if text.endswith("::"):
        text = text[:-1]
    # an unbalanced inline literal or role would spill into the next cell
    if text.count("``") % 2 or text.count("`") % 2:
        return ""
    return text


_ROLE = re.compile(r":(?:py:)?(func|meth|class|mod|obj|attr|data|exc):`(~?)([^`<>]+)`")


def _rewrite_refs(text: str, obj: object, canon: dict[int, str]) -> str:
    """The references of a summary pointed at their entries, as the entry itself would
    resolve them (Note [References to other names of an entry]): a table row is not inside
    the object's entry, so the build-time resolver cannot see whose docstring it is."""
    scope = vars(obj) if isinstance(obj, types.ModuleType) else _defining_scope(obj)

    def repl(match: re.Match) -> str:
        role, tilde, target = match.groups()
        bare = target.lstrip(".")
        owner = getattr(obj, "__objclass__", None)
        member = [owner, getattr(owner, bare, None)] if owner is not None else []
        for chain in (_locate(bare, scope) if scope else [], _locate(bare), member):
            if chain and chain[-1] is not None and id(chain[-1]) in canon:
                shown = bare.rsplit(".", 1)[-1] if tilde else target
                return f":py:{role}:`{shown} <{canon[id(chain[-1])]}>`"
        return match.group(0)

    return _ROLE.sub(repl, text)


def _underline(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def _role(entry: Entry) -> str:
    return {
        "module": "mod",
        "class": "class",
        "function": "func",
        "method": "meth",
        "property": "attr",
        "attribute": "attr",
        "data": "data",
    }[entry.kind]


def _entry_rst(entry: Entry) -> list[str]:
    q = entry.qualname
    if entry.kind == "class":
        return [f".. autoclass:: {q}", "   :members:", ""]
    if entry.kind == "function":
        return [f".. autofunction:: {q}", ""]
    if entry.kind == "method":
        return [f".. automethod:: {q}", ""]
    if entry.kind == "property":
        return [f".. autoproperty:: {q}", ""]
    if entry.kind == "attribute":
        return [f".. autoattribute:: {q}", ""]
    if entry.name in _BUILTIN_NAMES:
        raise ValueError(f"{q}: a value named as a builtin has no entry (Note [Values ...])")
    return [
        f".. py:data:: {entry.name}",
        f"   :module: {entry.namespace}",
        "   :no-contents-entry:",
        "",
        f"   {_value_text(entry.obj)}.",
        "",
    ]


_BUILTIN_NAMES = frozenset(dir(builtins))


def _value_text(obj: object) -> str:
    """A value's row (Note [Values are rows])."""
    value = repr(obj)
    if len(value) > 60 or "\n" in value or "`" in value:
        value = ""
    kind = type(obj).__name__
    return f"``{value}``, a ``{kind}``" if value else f"a ``{kind}``"


def render_namespace(
    ns: Namespace, level: str, canon: dict[int, str], taken: set[str]
) -> list[str]:
    out = [f".. _ns-{ns.name}:", "", _underline(ns.name, level)]
    if ns.name == TENSOR:
        out += [f".. autoclass:: {TENSOR}", "   :no-members:", ""]
        out += [".. py:currentmodule:: gradstack", ""]
    else:
        # a module named as a function of its parent (gradstack.autograd.gradcheck, as in
        # torch) leaves the name to the function's entry
        clash = ["   :no-index:"] if ns.name in taken else []
        out += [f".. automodule:: {ns.name}", "   :no-members:", *clash, ""]
    if ns.entries:
        out += [".. list-table::", "   :widths: 30 70", ""]
        for entry in sorted(ns.entries, key=lambda e: e.name.lower()):
            if entry.kind == "data" and entry.name in _BUILTIN_NAMES:
                out += [f"   * - ``{entry.name}``", f"     - {_value_text(entry.obj)}"]
                continue
            link = f":py:{_role(entry)}:`{entry.name} <{entry.canonical}>`"
            text = _rewrite_refs(summary(entry.obj), entry.obj, canon)
            if not entry.is_full:
                text = (f"(:py:{_role(entry)}:`{entry.canonical}`) {text}").strip()
            out += [f"   * - {link}", f"     - {text}"]
        out.append("")
    if ns.subsumed:
        out.append(
            "Modules whose names are all listed above or in an enclosing namespace: "
            + ", ".join(f"``{m}``" for m in ns.subsumed)
            + "."
        )
        out.append("")
        for module in ns.subsumed:  # targets for :mod: links (Note [Which modules ...])
            out += [f".. py:module:: {module}", ""]
    full = [
        e
        for e in ns.entries
        if e.is_full and e.kind != "module" and not (e.kind == "data" and e.name in _BUILTIN_NAMES)
    ]
    if ns.name != TENSOR:  # gradstack.Tensor is its own page
        full = [e for e in full if e.qualname != TENSOR]
    order = {"class": 0, "function": 1, "method": 1, "property": 2, "attribute": 2, "data": 3}
    for entry in sorted(full, key=lambda e: (order[e.kind], e.name.lower())):
        out += _entry_rst(entry)
    return out


def render_page(page: Page, canon: dict[int, str], taken: set[str]) -> str:
    out = [_underline(page.title, "=")]
    if page.intro:
        out += [
            f"The distribution ``{page.intro}``; install it alone with "
            f"``pip install --find-links dist {page.intro}`` (:doc:`/docs/guides/installing`).",
            "",
        ]
    for ns in page.namespaces:
        out += render_namespace(ns, "-", canon, taken)
    return "\n".join(out) + "\n"


def render_index(facade: list[Page], layers: list[Page]) -> str:
    out = [
        _underline("API reference", "="),
        "Generated from the docstrings of every public name (the namespaces' ``__all__``).",
        "Each function and class has one full entry, under the name torch documents it;",
        "its other names link to it.",
        "",
        _underline("The torch-shaped namespace: import gradstack as torch", "-"),
        ".. toctree::",
        "   :maxdepth: 1",
        "",
    ]
    out += [f"   {p.title} <{p.slug}>" for p in facade]
    out += ["", _underline("By layer", "-"), ".. toctree::", "   :maxdepth: 1", ""]
    out += [f"   {p.title} <{p.slug}>" for p in layers]
    return "\n".join(out) + "\n"


def write(outdir: Path) -> list[Path]:
    """Write api/index.rst and one .rst per page into ``outdir``; only files whose text
    changed are rewritten (Sphinx then rereads only those)."""
    facade, layers = build()
    canon = canonical_names((facade, layers))
    taken = {
        e.qualname
        for p in [*facade, *layers]
        for ns in p.namespaces
        for e in ns.entries
        if e.is_full and e.kind not in ("module", "data")
    }
    files = {outdir / "index.rst": render_index(facade, layers)}
    for page in [*facade, *layers]:
        files[outdir / f"{page.slug}.rst"] = render_page(page, canon, taken)
    written = []
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    stale = {p for p in outdir.rglob("*.rst")} - set(files)
    for path in stale:
        path.unlink()
    return written


# ----------------------------------------------------------------------------- aliases


def canonical_names(pages: tuple[list[Page], list[Page]] | None = None) -> dict[int, str]:
    """id(object) -> the name of its one full entry, for every function, class, module and
    Tensor member of the reference."""
    facade, layers = pages or build()
    out: dict[int, str] = {}
    for page in [*facade, *layers]:
        for ns in page.namespaces:
            out.setdefault(id(ns.module), ns.name)
            for entry in ns.entries:
                if _shareable(entry.obj) or ns.name == TENSOR:
                    out.setdefault(id(entry.obj), entry.canonical)
    return out


def _locate(path: str, scope: dict | None = None) -> list[object]:
    """The objects ``path`` names, first part looked up in ``scope`` (a module's globals)
    or imported (gradstack's packages only), the rest by attribute; the last is the
    object, the one before it its owner."""
    parts = path.split(".")
    chain: list[object] = []
    if scope is not None:
        if parts[0] not in scope:
            return []
        chain = [scope[parts[0]]]
        rest = parts[1:]
    else:
        if not parts[0].startswith("gradstack"):
            return []
        for cut in range(len(parts), 0, -1):
            try:
                chain = [importlib.import_module(".".join(parts[:cut]))]
            except ImportError:
                continue
            rest = parts[cut:]
            break
        else:
            return []
    for part in rest:
        try:
            chain.append(getattr(chain[-1], part))
        except AttributeError:
            return []
    return chain


def _documented_object(node) -> object | None:
    """The object whose entry holds ``node`` (its desc node's signature names it)."""
    from sphinx import addnodes

    parent = node
    while parent is not None and not isinstance(parent, addnodes.desc):
        parent = parent.parent
    if parent is None:
        return None
    for sig in parent.findall(addnodes.desc_signature):
        module, fullname = sig.get("module"), sig.get("fullname")
        if module and fullname:
            chain = _locate(f"{module}.{fullname}")
            return chain[-1] if chain else None
    return None


def _defining_scope(obj: object) -> dict | None:
    owner = getattr(obj, "__objclass__", None) or obj
    module = sys.modules.get(getattr(owner, "__module__", None) or "")
    if module is None and isinstance(obj, property) and obj.fget is not None:
        module = sys.modules.get(obj.fget.__module__)
    return vars(module) if module is not None else None


def resolve_alias(app, env, node, contnode):
    """Note [References to other names of an entry]: a Python reference that Sphinx did not
    find, resolved through the object it names."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip(".~")
    canon = app.env._gradstack_canonical  # set at builder-inited
    domain = env.get_domain("py")
    module, cls = node.get("py:module"), node.get("py:class")
    chains = []
    for path in filter(
        None,
        [
            f"{module}.{cls}.{target}" if module and cls else None,
            f"{module}.{target}" if module else None,
            target,
        ],
    ):
        chains.append(_locate(path))
    documented = _documented_object(node)
    if documented is not None:
        scope = _defining_scope(documented)
        if scope is not None:
            chains.append(_locate(target, scope))
        if isinstance(documented, type):  # a bare method name in a class's own docstring
            chains.append([documented, getattr(documented, target, None)])
    last = target.rsplit(".", 1)[-1]
    names: list[str | None] = []
    for chain in chains:
        if not chain or chain[-1] is None:
            continue
        names.append(canon.get(id(chain[-1])))
        if len(chain) > 1 and isinstance(chain[-2], type):  # a member, maybe inherited
            names += [f"{canon[id(c)]}.{last}" for c in chain[-2].__mro__ if id(c) in canon]
    # the one documented object of that name (a leading dot asks Sphinx for the same)
    objtypes = set(domain.objtypes_for_role(node.get("reftype", "obj")) or [])
    names += [n for n in _unique_by_last_name(domain, last, objtypes)]
    for name in names:
        if name and name in domain.objects:
            return domain.resolve_xref(
                env, node["refdoc"], app.builder, "obj", name, node, contnode
            )
    # an object that exists but is exported by no namespace has no entry on purpose: it is
    # shown as code, unlinked (a name that exists nowhere still fails the build)
    if any(chain and chain[-1] is not None for chain in chains):
        return contnode
    return None


def _unique_by_last_name(domain, last: str, objtypes: set[str]) -> list[str]:
    found = [
        name
        for name, entry in domain.objects.items()
        if (name == last or name.endswith("." + last))
        and entry.objtype in objtypes
        and not entry.aliased
    ]
    return found if len(found) == 1 else []


def _prose_attribute_docstring(self) -> list[str]:
    """Note [Attribute docstrings are prose]."""
    lines = self._dedent(self._consume_to_end())
    return self.__class__(lines, self._config).lines()


def setup(app):  # the Sphinx extension: generate before Sphinx reads the sources
    from sphinx.ext.napoleon import docstring as napoleon_docstring

    # Note [Attribute docstrings are prose]
    napoleon_docstring.NumpyDocstring._parse_attribute_docstring = _prose_attribute_docstring

    def generate(app):
        write(Path(app.confdir) / "api")
        app.env._gradstack_canonical = canonical_names()

    def front_door(app, exception):  # Note [The repository is the source folder]
        if exception is None and app.builder.format == "html":
            target = app.builder.get_target_uri(app.config.root_doc)
            (Path(app.outdir) / "index.html").write_text(
                f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>gradstack</title>'
                f'<meta http-equiv="refresh" content="0; url={target}"></head>'
                f'<body><a href="{target}">gradstack documentation</a></body></html>\n',
                encoding="utf-8",
            )

    app.connect("builder-inited", generate)
    app.connect("build-finished", front_door)
    app.connect("missing-reference", resolve_alias)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
