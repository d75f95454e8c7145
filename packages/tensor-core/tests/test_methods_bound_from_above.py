"""Every function the Tensor's method modules call through ``ABOVE`` is bound by the
package (Note [Methods bound from above] in ``_above.py``): a method whose function no
module binds would fail only when called, so each name is checked here."""

from __future__ import annotations

import re
from pathlib import Path

import gradstack_tensor as gt
import pytest
from gradstack_tensor._above import ABOVE, bind

SRC = Path(gt.__file__).resolve().parent
USES = sorted(
    {
        (path.name, match.group(0))
        for path in SRC.glob("*.pyx")
        for match in re.finditer(r"ABOVE\.(\w+)(?:\.(\w+))?", path.read_text())
    }
)


def test_the_method_modules_call_functions_through_above():
    assert len(USES) > 100


@pytest.mark.parametrize(("module", "use"), USES, ids=[f"{m}:{u}" for m, u in USES])
def test_every_function_called_through_above_is_bound(module, use):
    _, name, *attr = use.split(".")
    value = getattr(ABOVE, name)
    if attr:
        value = getattr(value, attr[0])
    assert callable(value)


def test_a_missing_function_says_why():
    with pytest.raises(AttributeError, match="import the package gradstack_tensor"):
        ABOVE.no_such_function  # noqa: B018


def test_two_modules_binding_one_name_differently_is_an_error():
    import types

    clash = types.ModuleType("gradstack_tensor.clash")
    clash.__all__ = ["lerp"]
    clash.lerp = lambda *a: None
    with pytest.raises(ImportError, match="are both bound"):
        bind(clash)
