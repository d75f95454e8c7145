"""Wrong-typed arguments raise torch's errors: a sweep over gradstack's functions and
Tensor methods, against torch 2.13.

Every public function of ``gradstack`` that torch has too, and every Tensor method the
two share, is called with wrong-typed arguments (None, a str, a nested list, a float where
an int is wanted, an object) in a few positions, by gradstack and by torch, and the
outcomes compared:

- where torch raises, gradstack raises the same builtin class (``type``), or the
  difference is one of ``KNOWN`` (each with its reason);
- no exception from gradstack's internals escapes: numpy's (``UFuncTypeError``, a
  ``numpy.exceptions`` class) or an ``AttributeError``/``IndexError``/``KeyError`` where
  torch raises a TypeError (``leak``);
- where torch's TypeError names the argument (``argument 'input'``), gradstack's message
  names it too (``unnamed``);
- gradstack accepts no call that torch refuses (``accepted``) and refuses none that torch
  takes (``refused``).

Differences on purpose (Note [Argument errors that differ from torch's on purpose]):

- torch's own Python functions (``norm``, ``split``, ``tensordot`` ...) raise an
  AttributeError for a None input (they read ``input.dim()``): gradstack's TypeError
  names the argument instead;
- a call with the wrong number of arguments raises Python's arity TypeError here, which
  names no argument, where torch first reports the type of one of them.

These stay recorded in the known file, on purpose (issue 36): each is an accident of how
torch happens to be written, and gradstack keeps its rule that a wrong type is a
TypeError naming the argument (the checks of Note [Argument checks from torch's
signatures] in tensor-core's ``_signatures.py``):

- ``broadcast_shapes`` with a wrong-typed shape: torch's Python function lets Python's own
  error escape as a RuntimeError ("'NoneType' object is not iterable"), and takes a lone
  None as no shape; here a TypeError or ValueError says which shape is wrong;
- ``unique_consecutive(non-tensor, ...)``: torch's Python dispatcher raises RuntimeError;
- ``t["abc"]``: torch reads the str as a sequence of indices (IndexError "too many
  indices"); here the TypeError says what an index is;
- ``t.cuda(...)``: torch's AssertionError ("not compiled with CUDA") comes from its lazy CUDA
  initialisation; here the RuntimeError of every CPU-only refusal (``to("cuda")``);
- ``t.unflatten(0, None)``: torch's RuntimeError "sizes must be non-empty"; here a TypeError
  naming ``sizes``;
- refused: ``t.add(0, 1.5)``, ``t.sub(...)`` with two positional arguments (torch's deprecated
  ``add(Number alpha, Tensor other)`` overload, which warns): pass ``alpha=``; ``t.to(1.5)``
  (torch's parser reads a Python float as the dtype float64); ``broadcast_shapes(None)``.

The differences not fixed yet are recorded in ``tests/argument_errors_known.txt`` (one
line per call: category, call); the test fails on a difference that is not recorded (a
regression, or a new function), and on a recorded one that is gone (remove its line).
``python tests/test_argument_errors_torch.py`` prints every difference found, by
category; ``--record`` rewrites the file.

The sweep is deterministic (fixed values, no randomness in the calls) and takes a few
seconds.
"""

from __future__ import annotations

import collections
import operator
import re
import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import gradstack as gs  # noqa: E402

# Functions whose call changes process-wide state, reads files, or takes any object by
# design (the comparison means nothing for them).
SKIP_FUNCTIONS = {
    "save",
    "load",
    "manual_seed",
    "seed",
    "initial_seed",
    "set_default_dtype",
    "set_default_tensor_type",
    "set_grad_enabled",
    "set_printoptions",
    "set_rng_state",
    "get_rng_state",
    "use_deterministic_algorithms",
    "set_num_threads",
    "set_num_interop_threads",
    "set_anomaly_enabled",
    "set_float32_matmul_precision",
    "is_tensor",
    "is_storage",
    "compile",
    "typename",
    "set_default_device",
    "set_flush_denormal",
    "set_warn_always",
    "is_grad_enabled",
    "enable_grad",
    "no_grad",
    "inference_mode",
    "get_default_dtype",
    "set_autocast_enabled",
    "autocast",
    "empty",
    "empty_like",
    "empty_strided",  # (uninitialized values: compared as raising only)
    "rand",
    "randn",
    "randint",
    "randperm",
    "rand_like",
    "randn_like",
    "randint_like",
    "normal",
    "bernoulli",
    "multinomial",
    "poisson",  # random draws (their errors are compared)
}
SKIP_METHODS = {
    "__init__",
    "__new__",
    "__setstate__",
    "__reduce_ex__",
    "__reduce__",
    "__getstate__",
    "__del__",
    "__init_subclass__",
    "__subclasshook__",
    "__class_getitem__",
    "__format__",
    "__sizeof__",
    "__dir__",
    "__repr__",
    "__str__",
    "__hash__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__array__",
    "__array_wrap__",
    "__deepcopy__",
    "__torch_function__",
    "__torch_dispatch__",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "backward",
    "storage",
    "untyped_storage",
    "data_ptr",
    "share_memory_",
    "pin_memory",
    "numpy",
    "tolist",
    "set_",
    "resize_",
    "resize_as_",
    "map_",
    "apply_",
    "record_stream",
    "__eq__",
    "__ne__",  # (Python's comparison protocol: NotImplemented, then identity)
    "__contains__",
    "__iter__",
    "__len__",
    "__bool__",
    "__index__",
    "__int__",
    "__float__",
    "__complex__",
    "__reversed__",
    "__dlpack__",
    "__dlpack_device__",
    "__array_priority__",
    "new_empty",
    "new_empty_strided",
    "random_",
    "uniform_",
    "normal_",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
    "bernoulli",
    "bernoulli_",
    "multinomial",
}

# the wrong-typed values: (label, factory)
HOSTILE = [
    ("None", lambda lib: None),
    ("str", lambda lib: "abc"),
    ("nested list", lambda lib: [[1]]),
    ("float", lambda lib: 1.5),
    ("object", lambda lib: object()),
    ("list of str", lambda lib: ["a"]),
]

KNOWN_FILE = Path(__file__).with_name("argument_errors_known.txt")

_ARG = re.compile(r"argument '(\w+)'")
# Python's own arity errors ("takes 2 positional arguments but 3 were given", "missing 1
# required positional argument") name no argument's type
_ARITY = re.compile(r"positional argument|required (keyword-only )?argument|unexpected keyword")


def _tensor(lib):
    return lib.arange(6, dtype=lib.float32).reshape(2, 3) / 4 + 0.5


def _calls():
    """(call label, how to make it for a library) for every call of the sweep."""
    calls = []
    names = sorted(
        n
        for n in dir(gs)
        if not n.startswith("_")
        and n not in SKIP_FUNCTIONS
        and callable(getattr(gs, n, None))
        and not isinstance(getattr(gs, n), type)
        and callable(getattr(torch, n, None))
        and not isinstance(getattr(torch, n), type)
    )
    for name in names:
        for label, make in HOSTILE:
            calls.append((f"{name}({label})", _function_call(name, make, "h")))
            calls.append((f"{name}(t, {label})", _function_call(name, make, "th")))
            calls.append((f"{name}({label}, t)", _function_call(name, make, "ht")))
    methods = sorted(
        n
        for n in dir(gs.Tensor)
        if n not in SKIP_METHODS
        and (not n.startswith("_") or n in ("__getitem__", "__setitem__", "__delitem__"))
        and callable(getattr(gs.Tensor, n, None))
        and callable(getattr(torch.Tensor, n, None))
    )
    for name in methods:
        for label, make in HOSTILE:
            calls.append((f"Tensor.{name}({label})", _method_call(name, make, "h")))
            calls.append((f"Tensor.{name}(0, {label})", _method_call(name, make, "0h")))
    for name in OPERATORS:
        for label, make in HOSTILE:
            calls.append((f"t {name} {label}", _operator_call(name, make, False)))
            calls.append((f"{label} {name} t", _operator_call(name, make, True)))
    return calls


# the Python operators (a dunder called directly answers NotImplemented in torch, so the
# operators are compared as written)
OPERATORS = [
    "add",
    "sub",
    "mul",
    "truediv",
    "floordiv",
    "mod",
    "pow",
    "matmul",
    "and_",
    "or_",
    "xor",
    "lshift",
    "rshift",
    "lt",
    "le",
    "gt",
    "ge",
    "iadd",
    "isub",
    "imul",
    "itruediv",
]


def _operator_call(name, make, reflected):
    def call(lib):
        t, h = _tensor(lib), make(lib)
        fn = getattr(operator, name)
        return fn(h, t) if reflected else fn(t, h)

    return call


def _function_call(name, make, form):
    def call(lib):
        t, h = _tensor(lib), make(lib)
        args = {"h": (h,), "th": (t, h), "ht": (h, t)}[form]
        return getattr(lib, name)(*args)

    return call


def _method_call(name, make, form):
    def call(lib):
        t, h = _tensor(lib), make(lib)
        args = {"h": (h,), "0h": (0, h)}[form]
        return getattr(t, name)(*args)

    return call


def _outcome(call, lib):
    """None when the call returns, else the exception."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001 - every exception is an outcome here
            return e
    return None


def _is_builtin(exc):
    return type(exc).__module__ == "builtins"


def compare(label, call):
    """The categories of the differences of one call (an empty list: none)."""
    theirs = _outcome(call, torch)
    ours = _outcome(call, gs)
    if theirs is None:
        return [] if ours is None else [("refused", f"{type(ours).__name__}: {ours}")]
    if ours is None:
        return [("accepted", f"torch: {type(theirs).__name__}: {theirs}")]
    found = []
    if type(theirs) is AttributeError and type(ours) is TypeError:
        # Note [Argument errors that differ from torch's on purpose]: torch's Python
        # functions read an attribute of the None they were given
        return []
    if not _is_builtin(ours) or (
        isinstance(theirs, TypeError) and type(ours) in (AttributeError, IndexError, KeyError)
    ):
        found.append(("leak", f"{type(ours).__module__}.{type(ours).__name__}: {ours}"))
    elif type(ours) is not type(theirs) and not (
        # torch's own subclasses of the builtins (torch.AcceleratorError ...) are compared
        # as their builtin base
        isinstance(ours, type(theirs).__mro__[1]) and not _is_builtin(theirs)
    ):
        found.append(
            ("type", f"{type(ours).__name__} where torch raises {type(theirs).__name__}: {ours}")
        )
    if isinstance(theirs, TypeError) and isinstance(ours, TypeError):
        m = _ARG.search(str(theirs))
        if m and m.group(1) not in str(ours) and not _ARITY.search(str(ours)):
            found.append(("unnamed", f"torch names {m.group(1)!r}; ours: {ours}"))
    return found


def sweep():
    """Every difference: {category: [(call, detail)]}."""
    result = collections.defaultdict(list)
    for label, call in _calls():
        for category, detail in compare(label, call):
            result[category].append((label, detail))
    return result


def known():
    """The recorded differences: {(category, call)}."""
    lines = KNOWN_FILE.read_text().splitlines() if KNOWN_FILE.exists() else []
    return {tuple(line.split("\t", 1)) for line in lines if line and not line.startswith("#")}


def record(found):
    lines = sorted(
        f"{category}\t{label}" for category, items in found.items() for label, _ in items
    )
    KNOWN_FILE.write_text(
        "# Argument-error differences from torch 2.13 not fixed yet (category, call), written by\n"
        "# `python tests/test_argument_errors_torch.py --record`; see that module.\n"
        + "\n".join(lines)
        + "\n"
    )


@pytest.fixture(scope="module")
def differences():
    return sweep()


@pytest.mark.parametrize("category", ["leak", "type", "unnamed", "accepted", "refused"])
def test_argument_errors_are_torchs(differences, category):
    recorded = known()
    new = [
        f"{label}: {' '.join(detail.split())[:300]}"
        for label, detail in differences.get(category, [])
        if (category, label) not in recorded
    ]
    assert new == [], f"{len(new)} {category} differences not recorded:\n" + "\n".join(new[:40])
    found = {label for label, _ in differences.get(category, [])}
    gone = sorted(label for c, label in recorded if c == category and label not in found)
    assert gone == [], f"recorded {category} differences that are gone (remove them): {gone[:40]}"


def test_no_internal_exception_leaks(differences):
    """No call raises numpy's exceptions, or an AttributeError/IndexError/KeyError of the
    internals where torch raises a TypeError: none is recorded either."""
    assert differences.get("leak", []) == []


def test_the_issue_36_calls_raise_torchs_errors():
    t = gs.ones(2, 3)
    cases = [
        (lambda: float(t), ValueError, "only one element tensors"),
        (lambda: int(t), ValueError, "only one element tensors"),
        (lambda: gs.allclose("abc", t), TypeError, "argument 'input'"),
        (lambda: gs.isclose("abc", t), TypeError, "argument 'input'"),
        (lambda: gs.allclose(3.0, t), TypeError, "argument 'input'"),
        (lambda: gs.allclose(t, 3.0), TypeError, "argument 'other'"),
        (lambda: gs.nn.functional.bilinear(None, 0, t), TypeError, "argument 'input1'"),
        (lambda: gs.promote_types(None, t), TypeError, "argument 'type1'"),
        (lambda: gs.promote_types(gs.float32, t), TypeError, "argument 'type2'"),
        (lambda: gs.cat(None), TypeError, "argument 'tensors'"),
        (lambda: gs.cat([t, None]), TypeError, "argument 'tensors'"),
        (lambda: t.sum([[1]]), TypeError, "argument 'dim'"),
        (lambda: t.sum(0, 1), TypeError, "argument 'keepdim'"),
        (lambda: t.select(0, 1.5), TypeError, "argument 'index'"),
        (lambda: t.unsqueeze(1.5), TypeError, "argument 'dim'"),
        (lambda: t + "a", TypeError, "argument 'other'"),
    ]
    for call, exc, words in cases:
        with pytest.raises(exc, match=re.escape(words)):
            call()
    # torch raises the same classes
    tt = torch.ones(2, 3)
    for call, exc in [
        (lambda: float(tt), ValueError),
        (lambda: torch.allclose(3.0, tt), TypeError),
        (lambda: torch.promote_types(None, tt), TypeError),
        (lambda: torch.cat(None), TypeError),
        (lambda: tt.sum([[1]]), TypeError),
        (lambda: tt.sum(0, 1), TypeError),
        (lambda: tt.select(0, 1.5), TypeError),
    ]:
        with pytest.raises(exc):
            call()


if __name__ == "__main__":
    found = sweep()
    if "--record" in sys.argv:
        record(found)
    for category, items in sorted(found.items()):
        print(f"== {category}: {len(items)}")
        for label, detail in items:
            print(f"  {label}: {' '.join(detail.split())[:220]}")
    sys.exit(0)
