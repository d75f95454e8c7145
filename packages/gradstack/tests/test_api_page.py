"""Every public name of the torch.autograd API page (seeds/001) resolves under gradstack.

The page is parsed for its ``autosummary`` entries, its ``autoclass`` lines and the
objects its text cross-references (``:func:`torch.randn```, ``:class:`Tensor``` ...).
Names are resolved as Sphinx resolves them on that page: relative to
``torch.autograd`` (the page's ``currentmodule``), or absolute when they start with
``torch.``; ``torch`` becomes ``gradstack``.  A copy of the page lives in ``data/``.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent / "data" / "001_662edad8bc62b084.txt"
CURRENT_MODULE = "torch.autograd"
LATER_LAYERS = {"functional": "gradstack_functional", "profiler": "gradstack_profiler"}


def page_lines() -> list[str]:
    """The page's reST lines, without the `` | ... | `` wrapper of the stored copy."""
    out = []
    for raw in PAGE.read_text(encoding="utf-8").splitlines():
        line = re.sub(r"^\s?\|\s?", "", raw)
        line = re.sub(r"\s?\|\s*$", "", line)
        out.append(line)
    return out


def autosummary_entries(lines: list[str]) -> list[str]:
    names = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. autosummary::":
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                entry = lines[i].strip()
                if entry and not entry.startswith(":"):
                    names.append(entry)
                i += 1
        else:
            i += 1
    return names


def autoclass_entries(lines: list[str]) -> list[str]:
    return [
        m.group(1)
        for line in lines
        if (m := re.match(r"\s*\.\. auto(?:class|function|module)::\s*(\S+)", line))
    ]


def role_references(lines: list[str]) -> list[str]:
    text = "\n".join(lines)
    return [m.lstrip("~") for m in re.findall(r":(?:func|class|meth|attr):`([^`<>]+)`", text)]


def page_names() -> list[str]:
    lines = page_lines()
    names = autosummary_entries(lines) + autoclass_entries(lines) + role_references(lines)
    return list(dict.fromkeys(names))


def candidates(name: str) -> list[str]:
    """Where Sphinx would look for ``name`` on this page, in torch's namespace."""
    if name.startswith("torch."):
        return [name]
    return [f"{CURRENT_MODULE}.{name}", f"torch.{name}"]


def resolve(dotted: str):
    """Import/getattr ``dotted`` step by step (submodules imported as needed)."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    path = parts[0]
    for part in parts[1:]:
        path = f"{path}.{part}"
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(path)
    return obj


def resolve_any(names: list[str]):
    errors = []
    for n in names:
        try:
            return resolve(n)
        except (AttributeError, ImportError) as e:
            errors.append(f"{n}: {e!r}")
    raise LookupError("; ".join(errors))


def test_the_parser_finds_the_pages_names():
    names = page_names()
    for expected in [
        "backward",
        "grad",
        "functional.jacobian",
        "functional.hvp",
        "no_grad",
        "inference_mode",
        "torch.Tensor.retain_grad",
        "Function",
        "Function.forward",
        "function.FunctionCtx.set_materialize_grads",
        "gradcheck",
        "gradgradcheck",
        "torch.autograd.profiler.profile",
        "profiler.profile.total_average",
        "torch.autograd.profiler.emit_nvtx",
        "profiler.load_nvprof",
        "detect_anomaly",
        "set_detect_anomaly",
        "torch.autograd.graph.saved_tensors_hooks",
        "torch.autograd.graph.save_on_cpu",
        "torch.randn",
        "Tensor",
        "torch.autograd.backward",
        "torch.Tensor.backward",
    ]:
        assert expected in names, expected
    assert len(names) >= 45


def test_every_name_resolves_in_torch():
    """Sanity check of the resolution rules: torch itself has every name."""
    pytest.importorskip("torch")
    missing = []
    for name in page_names():
        try:
            resolve_any(candidates(name))
        except LookupError as e:
            missing.append(str(e))
    assert not missing, missing


def _skip_if_layer_missing(name: str):
    for key, module in LATER_LAYERS.items():
        if f"{key}." in f"{name}." or name.startswith(f"torch.autograd.{key}"):
            try:
                importlib.import_module(module)
            except ImportError:
                pytest.skip(f"{module} is not installed yet (needed for {name})")


@pytest.mark.parametrize("name", page_names())
def test_every_name_resolves_in_gradstack(name):
    _skip_if_layer_missing(name)
    gradstack_names = [re.sub(r"^torch\b", "gradstack", c) for c in candidates(name)]
    obj = resolve_any(gradstack_names)
    assert obj is not None


def test_names_are_the_layers_own_objects():
    """The facade re-exports; it does not wrap (DESIGN: it adds no behaviour)."""
    import gradstack
    import gradstack_autograd

    for name in [
        "backward",
        "grad",
        "no_grad",
        "enable_grad",
        "set_grad_enabled",
        "inference_mode",
        "Function",
        "Variable",
        "gradcheck",
        "gradgradcheck",
        "detect_anomaly",
        "set_detect_anomaly",
    ]:
        assert getattr(gradstack.autograd, name) is getattr(gradstack_autograd, name), name
    assert gradstack.autograd.function.FunctionCtx is gradstack_autograd.FunctionCtx
    assert (
        gradstack.autograd.graph.saved_tensors_hooks is gradstack_autograd.graph.saved_tensors_hooks
    )
