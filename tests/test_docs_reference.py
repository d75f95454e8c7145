"""Every public name has an entry in the API reference (docs/_ext/gradstack_api.py).

The reference is generated from the namespaces' ``__all__`` on every build, so a new name
appears by itself; these tests check the generator's decisions without building the site
(about a second): that every public module of every package is a namespace of the
reference or is covered by one, that every name a public module exports is listed, that
every listed function, class and Tensor member has exactly one full entry and that its
other names point at it, and that the pages the generator writes contain each name.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import types
from pathlib import Path

import gradstack
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


api = _load("gradstack_api", ROOT / "docs" / "_ext" / "gradstack_api.py")
TOPS = [api.FACADE] + [top for _, _, top, _ in api.LAYERS]


@pytest.fixture(scope="module")
def pages():
    return api.build()


@pytest.fixture(scope="module")
def namespaces(pages):
    facade, layers = pages
    return {ns.name: ns for page in [*facade, *layers] for ns in page.namespaces}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("api")
    api.write(out)
    return {
        p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.rst")
    }


def _public_modules():
    """(module name, module) of every public module of every package, found independently
    of the generator: the package trees on disk and what the packages export."""
    found = {}
    for top in TOPS:
        found.update(api.walk_modules(top))
    return found


def test_every_layer_and_the_facade_have_pages(pages):
    facade, layers = pages
    assert [p.slug for p in layers] == [f"layers/{slug}" for slug, _, _, _ in api.LAYERS]
    slugs = [p.slug for p in facade]
    # torch's reference order for the namespaces gradstack has
    expected = [n for n in api.FACADE_ORDER if n in slugs]
    assert slugs[: len(expected)] == expected
    for torch_area in [
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
    ]:
        assert torch_area in slugs, f"{torch_area} has no page of its own"


def test_torch_subnamespaces_sit_on_their_parents_page(pages):
    facade, _ = pages
    autograd = next(p for p in facade if p.slug == "gradstack.autograd")
    names = {ns.name for ns in autograd.namespaces}
    for sub in ("functional", "graph", "forward_ad", "profiler"):
        assert f"gradstack.autograd.{sub}" in names


def test_every_public_module_is_a_namespace_or_covered(namespaces):
    subsumed = {m for ns in namespaces.values() for m in ns.subsumed}
    missing = sorted(set(_public_modules()) - set(namespaces) - subsumed)
    assert not missing, f"public modules the reference does not know: {missing}"


def test_covered_modules_export_nothing_new(namespaces):
    """A module without a section of its own (Note [Which modules are namespaces]) exports
    only names that a namespace of the reference lists."""
    listed_ids = {id(e.obj) for ns in namespaces.values() for e in ns.entries}
    listed_names = {e.name for ns in namespaces.values() for e in ns.entries}
    modules = _public_modules()
    problems = []
    for ns in namespaces.values():
        for name in ns.subsumed:
            for attr, obj in api._exports(modules[name]).items():
                known = id(obj) in listed_ids if api._shareable(obj) else attr in listed_names
                if not known:
                    problems.append(f"{name}.{attr}")
    assert not problems, f"exported but listed nowhere: {problems}"


def test_every_exported_name_is_listed(namespaces):
    modules = _public_modules()
    problems = []
    for name, ns in namespaces.items():
        if name == api.TENSOR:
            continue
        listed = {e.name for e in ns.entries}
        exported = set(api.public_names(modules[name])) - {
            n.rsplit(".", 1)[1] for n in api.EXCLUDED if n.rsplit(".", 1)[0] == name
        }
        problems += [f"{name}.{n}" for n in sorted(exported - listed)]
    assert not problems, f"names without an entry: {problems}"


def test_the_facade_lists_gradstacks_all(namespaces):
    assert {e.name for e in namespaces["gradstack"].entries} == set(gradstack.__all__) - set(
        n.rsplit(".", 1)[1] for n in api.EXCLUDED if n.startswith("gradstack.")
    )


def test_every_public_tensor_member_is_listed(namespaces):
    members = {n for n in dir(gradstack.Tensor) if not n.startswith("_")}
    listed = {e.name for e in namespaces[api.TENSOR].entries}
    assert listed == members
    assert len(listed) > 400
    assert all(e.is_full for e in namespaces[api.TENSOR].entries)


def test_each_object_has_one_full_entry(namespaces):
    """Tensor's aliases (``absolute`` is ``abs``) keep an entry each, as in torch's page."""
    full: dict[int, list[str]] = {}
    for ns in namespaces.values():
        if ns.name == api.TENSOR:
            continue
        for e in ns.entries:
            if api._shareable(e.obj) and e.kind != "module" and e.is_full:
                if ns.name != api.TENSOR and e.obj is gradstack.Tensor:
                    continue  # gradstack.Tensor is its page (api.TENSOR)
                full.setdefault(id(e.obj), []).append(e.qualname)
    twice = {names[0]: names for names in full.values() if len(names) > 1}
    assert not twice, f"objects with several full entries: {twice}"
    for ns in namespaces.values():
        for e in ns.entries:
            if api._shareable(e.obj) and e.kind not in ("module",) and not e.is_full:
                assert id(e.obj) in full or e.obj is gradstack.Tensor or ns.name == api.TENSOR, (
                    f"{e.qualname} points at {e.canonical}, which has no full entry"
                )


def test_torch_places_come_first():
    """An object reachable from the facade has its entry under the facade's name, the one
    a torch user looks up."""
    names = api.canonical_names()
    assert names[id(gradstack.sin)] == "gradstack.sin"
    assert names[id(gradstack.no_grad)] == "gradstack.no_grad"
    assert names[id(gradstack.nn.Linear)] == "gradstack.nn.Linear"
    assert (
        names[id(gradstack.autograd.functional.jacobian)]
        == "gradstack.autograd.functional.jacobian"
    )
    assert (
        names[id(inspect.getattr_static(gradstack.Tensor, "backward"))]
        == "gradstack.Tensor.backward"
    )
    import gradstack_tensor.extension as ext

    assert names[id(ext.DispatchLayer)].startswith("gradstack")


def test_the_pages_show_every_entry(namespaces, rendered):
    """The written pages name each entry: a full entry as its directive, every name as a
    row of its namespace's table."""
    text = "\n".join(rendered.values())
    directives = set(re.findall(r"^\.\. (?:auto\w+|py:data):: (\S+)", text, re.M))
    modules = set(re.findall(r":module: (\S+)", text))
    rows = set(re.findall(r"^   \* - (?::py:\w+:`(\S+) <[^>]+>`|``(\S+)``)$", text, re.M))
    row_names = {a or b for a, b in rows}
    missing = []
    for ns in namespaces.values():
        for e in ns.entries:
            if e.name not in row_names:
                missing.append(f"{e.qualname} (no row)")
            if (
                e.is_full
                and e.kind not in ("module",)
                and not (e.kind == "data" and e.name in api._BUILTIN_NAMES)
                and not (ns.name != api.TENSOR and e.obj is gradstack.Tensor)
            ):
                if e.kind == "data":
                    if e.namespace not in modules:
                        missing.append(f"{e.qualname} (no py:data)")
                elif e.qualname not in directives:
                    missing.append(f"{e.qualname} (no entry)")
    assert not missing, missing[:50]
    assert "index.rst" in rendered and "gradstack.Tensor.rst" in rendered


def test_excluded_names_exist_and_say_why():
    for qualname, reason in api.EXCLUDED.items():
        module, _, name = qualname.rpartition(".")
        assert hasattr(importlib.import_module(module), name), f"{qualname} no longer exists"
        assert len(reason) > 20, f"{qualname}: give the reason"


def test_a_new_public_name_appears(monkeypatch):
    """The pages come from __all__: a name added to a namespace is listed on the next build."""
    special_ns = gradstack.special  # gradstack_tensor.special, under torch's name

    def brand_new_special_function(x):
        """A function added after the reference was written."""
        return x

    monkeypatch.setattr(
        special_ns, "brand_new_special_function", brand_new_special_function, raising=False
    )
    monkeypatch.setattr(special_ns, "__all__", [*special_ns.__all__, "brand_new_special_function"])
    facade, _ = api.build()
    page = next(p for p in facade if p.slug == "gradstack.special")
    text = api.render_page(page, api.canonical_names((facade, [])), set())
    assert ".. autofunction:: gradstack.special.brand_new_special_function" in text


def test_values_named_as_builtins_are_rows_only(namespaces):
    """Note [Values are rows]: gradstack.bool is not an object Sphinx could link ``bool`` to."""
    entry = next(e for e in namespaces["gradstack"].entries if e.name == "bool")
    assert entry.kind == "data"
    assert isinstance(entry.obj, type(gradstack.float32))
    lines = api.render_namespace(namespaces["gradstack"], "-", {}, set())
    assert not any(line.startswith(".. py:data:: bool") for line in lines)
    assert any(line.startswith(".. py:data:: float32") for line in lines)


def test_summaries_are_the_first_paragraph():
    def f():
        """First line
        goes on here.

        Details."""

    assert api.summary(f) == "First line goes on here."
    assert api.summary(types.SimpleNamespace()) == ""
