"""Crash fuzz: every public entry point called with hostile arguments must raise, never crash.

A segfault kills the interpreter, so the calls run in child processes: each child runs a
slice of one deterministic plan of calls and writes the index of the call it is about to
make to a progress file before making it.  When a child dies by a signal (or hangs), the
parent reads the last index, records that call as a crash (naming it), and starts a new
child after it, so that one run finds every crash and not only the first.

What is called
--------------
- every public callable (functions and classes) of the ``gradstack`` namespace and of each
  package's public modules (``gradstack.nn.functional``, ``gradstack_nn.init``,
  ``gradstack_functional`` ...), and every callable of the compiled (Cython) modules,
  private ones included, since Python can reach them;
- every method, property and slot of the classes among them (``Tensor``, ``Op``, ``Node``,
  ``nn.Module`` ...), unbound with a hostile ``self`` (``Tensor.dim(None)``), and on raw
  instances made by ``cls.__new__(cls)`` without ``__init__``;
- every ``Tensor`` method on valid tensors of several kinds (float32, int64, bool, 0-d,
  empty, non-contiguous, float16, requiring grad, non-leaf, expanded).

The arguments are hostile values: None, numbers, strings, lists, tuples, numpy arrays and
scalars, a plain object, and tensors of every kind above.

The bounded run is part of the suite (``pytest tests/test_crash_fuzz.py``); the long run,
with every pair of hostile arguments and sampled triples, is ``hatch run crash-fuzz``
(``python tests/test_crash_fuzz.py --long``), which prints its figures.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import itertools
import os
import pkgutil
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOTS = (
    "gradstack",
    "gradstack_tensor",
    "gradstack_autograd",
    "gradstack_functional",
    "gradstack_profiler",
    "gradstack_nn",
)

# Calls that would not return, or that start other programs, whatever their arguments.
# (None today: the list is where such an entry point would be named, with the reason.)
SKIP: dict[str, str] = {}

# Names whose call changes process-wide state (grad mode, kernels of the ops, observers,
# the allocator ...): they run after every other call of a child, so that they do not
# disturb the others.
MUTATOR_WORDS = ("set_", "register", "install", "seed", "push", "pop", "enable", "observer")

N_BATCHES = 4
PROGRESS_FD = 250


# ----------------------------------------------------------------------------------------
# Hostile values (made fresh for every call: in-place ops change them)


def _hostile_values():
    import gradstack as gs
    import numpy as np

    def leaf():
        return gs.rand(2, 3, dtype=gs.float64, requires_grad=True)

    return [
        ("None", lambda: None),
        ("0", lambda: 0),
        ("-1", lambda: -1),
        ("2", lambda: 2),
        ("1.5", lambda: 1.5),
        ("nan", lambda: float("nan")),
        ("True", lambda: True),
        ("'x'", lambda: "x"),
        ("[1.0, 2.0]", lambda: [1.0, 2.0]),
        ("[[1, 2], [3, 4]]", lambda: [[1, 2], [3, 4]]),
        ("()", lambda: ()),
        ("(2, 3)", lambda: (2, 3)),
        ("object()", lambda: object()),
        ("ndarray(float32, (3,))", lambda: np.ones(3, np.float32)),
        ("ndarray(int64, (2, 2))", lambda: np.arange(4).reshape(2, 2)),
        ("np.float64(2.0)", lambda: np.float64(2.0)),
        ("tensor(float32, (2, 3))", lambda: gs.rand(2, 3)),
        ("tensor(int64, (3,))", lambda: gs.tensor([1, 0, 2])),
        ("tensor(bool, (3,))", lambda: gs.tensor([True, False, True])),
        ("tensor(float32, 0-d)", lambda: gs.tensor(1.5)),
        ("tensor(float32, empty (0,))", lambda: gs.zeros(0)),
        ("tensor(float32, non-contiguous (3, 2))", lambda: gs.rand(2, 3).t()),
        ("tensor(float16, (2,))", lambda: gs.tensor([1.0, 2.0], dtype=gs.float16)),
        ("tensor(float64, (2, 3), requires_grad)", leaf),
        ("tensor(float64, (2, 3), non-leaf)", lambda: leaf() * 2),
        ("tensor(float32, expanded (3,))", lambda: gs.ones(1).expand(3)),
    ]


# receivers of bound Tensor method calls (indices into the hostile values)
TENSOR_RECEIVERS = tuple(range(16, 26))
VALID_TENSOR = 16  # tensor(float32, (2, 3))
GRAD_TENSOR = 23  # tensor(float64, (2, 3), requires_grad): takes the autograd paths


# ----------------------------------------------------------------------------------------
# Targets


def _compiled(module) -> bool:
    return str(getattr(module, "__file__", "") or "").endswith((".so", ".pyd"))


def _public_modules():
    """(name, module) of every public module of the roots and every compiled module."""
    found = {}
    for root in ROOTS:
        pkg = importlib.import_module(root)
        found[root] = pkg
        for info in pkgutil.walk_packages(pkg.__path__, root + "."):
            parts = info.name.split(".")
            module = importlib.import_module(info.name)
            if _compiled(module) or not any(p.startswith("_") for p in parts[1:]):
                found[info.name] = module
    return sorted(found.items())


def _own_names(module):
    """The names of ``module`` a caller can use: ``__all__``, else every public name;
    every name for compiled modules (Python reaches their private functions too)."""
    if _compiled(module):
        return sorted(n for n in vars(module) if not (n.startswith("__") and n.endswith("__")))
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(names)


def _is_gradstack(obj) -> bool:
    mod = getattr(obj, "__module__", None) or ""
    if not mod and hasattr(obj, "__objclass__"):
        mod = getattr(obj.__objclass__, "__module__", "") or ""
    return mod.split(".")[0] in ROOTS


def collect_targets():
    """Sorted ``(path, kind, obj)``: kind is "function", "class", or "member" (an attribute
    found in a class's ``__dict__``, called unbound)."""
    seen = set()
    functions, classes = [], []
    for mod_name, module in _public_modules():
        for name in _own_names(module):
            obj = getattr(module, name, None)
            if obj is None or id(obj) in seen or inspect.ismodule(obj):
                continue
            if inspect.isclass(obj):
                if _is_gradstack(obj):
                    seen.add(id(obj))
                    classes.append((f"{mod_name}.{name}", obj))
            elif callable(obj) and (_is_gradstack(obj) or _compiled(module)):
                seen.add(id(obj))
                functions.append((f"{mod_name}.{name}", obj))
    targets = [(path, "function", obj) for path, obj in functions]
    for path, cls in classes:
        targets.append((path, "class", cls))
        for klass in cls.__mro__:
            if not _is_gradstack(klass):
                continue
            for name in sorted(vars(klass)):
                if name in ("__new__", "__init_subclass__", "__subclasshook__", "__class__"):
                    continue
                key = (id(klass), name)
                if key in seen:
                    continue
                seen.add(key)
                targets.append(
                    (f"{klass.__module__}.{klass.__qualname__}.{name}", "member", (klass, name))
                )
    return [t for t in targets if t[0] not in SKIP]


def _is_mutator(path: str) -> bool:
    last = path.rsplit(".", 1)[-1].lower()
    return any(w in last for w in MUTATOR_WORDS)


# ----------------------------------------------------------------------------------------
# The plan: (target index, call form, argument indices)
#
# forms:  "call"    f(*args)
#         "unbound" klass.__dict__[name] called / read / written with args[0] as self
#         "raw"     the member on cls.__new__(cls) (no __init__), with args
#         "method"  getattr(tensor, name)(*args[1:]) on the receiver args[0]


def build_plan(long: bool):
    import gradstack as gs

    targets = collect_targets()
    sample = [make() for _label, make in _hostile_values()]
    n = len(sample)
    rng = random.Random(20261123)
    plan = []
    later = []
    singles = [(i,) for i in range(n)]
    pairs = list(itertools.product(range(n), repeat=2))
    tensor_methods = sorted(
        name
        for name in dir(gs.Tensor)
        if callable(getattr(gs.Tensor, name, None))
        and name not in ("__new__", "__class__", "__init_subclass__", "__subclasshook__")
    )
    for ti, (path, kind, _obj) in enumerate(targets):
        out = later if _is_mutator(path) else plan
        if kind in ("function", "class"):
            arg_sets = [()] + singles
            if long:
                arg_sets += pairs + [tuple(rng.randrange(n) for _ in range(3)) for _ in range(200)]
            else:
                arg_sets += [(VALID_TENSOR, i) for i in range(n)]
                arg_sets += [(i, VALID_TENSOR) for i in range(n)]
                arg_sets += [(i, GRAD_TENSOR) for i in range(n)]
                arg_sets += [tuple(rng.randrange(n) for _ in range(3)) for _ in range(10)]
            out.extend((ti, "call", a) for a in arg_sets)
        else:
            # with a self of another type, a method of a compiled class raises before its
            # other arguments matter (Note [Cython methods check self] in _tensor.pyx): one
            # call per hostile self checks that; the full patterns run for real instances
            klass = _obj[0]
            selves = (
                range(n)
                if not _compiled(sys.modules.get(klass.__module__))
                else [i for i in range(n) if isinstance(sample[i], klass)]
            )
            arg_sets = singles + [(i, VALID_TENSOR) for i in selves]
            arg_sets += [(i, GRAD_TENSOR) for i in selves]
            if long:
                arg_sets += [
                    (i, j, k)
                    for i, j, k in itertools.product(selves, range(n), range(n))
                    if rng.random() < 0.05
                ]
            out.extend((ti, "unbound", a) for a in arg_sets)
            raw = [(), (VALID_TENSOR,), (0,)] + ([(i,) for i in range(n)] if long else [])
            out.extend((ti, "raw", a) for a in raw)
    index = {path: ti for ti, (path, _k, _o) in enumerate(targets)}
    tensor_ti = index.get("gradstack.Tensor")
    for name in tensor_methods:
        out = later if _is_mutator(name) else plan
        for r in TENSOR_RECEIVERS:
            arg_sets = [()] + singles
            if long:
                arg_sets += pairs
            else:
                arg_sets += [tuple(rng.randrange(n) for _ in range(2)) for _ in range(4)]
            out.extend((tensor_ti, "method", (r, name) + a) for a in arg_sets)
    return targets, plan + later


def describe(targets, entry, labels) -> str:
    ti, form, args = entry
    path = targets[ti][0]
    if form == "method":
        r, name, rest = args[0], args[1], args[2:]
        return f"<{labels[r]}>.{name}({', '.join(labels[a] for a in rest)})"
    text = ", ".join(labels[a] for a in args)
    if form == "raw":
        return f"{path} on a raw instance (cls.__new__(cls))({text})"
    return f"{path}({text})"


def _run_entry(targets, entry, values):
    ti, form, args = entry
    path, kind, obj = targets[ti]
    if form == "call":
        return obj(*[values[a][1]() for a in args])
    if form == "method":
        receiver = values[args[0]][1]()
        return getattr(receiver, args[1])(*[values[a][1]() for a in args[2:]])
    klass, name = obj
    member = vars(klass)[name]
    if form == "raw":
        try:
            self = klass.__new__(klass)
        except Exception:
            return None
        vals = [values[a][1]() for a in args]
        if hasattr(member, "__get__") and not callable(member):
            member.__get__(self, klass)
            if vals and hasattr(member, "__set__"):
                member.__set__(self, vals[0])
            return None
        return getattr(self, name)(*vals)
    vals = [values[a][1]() for a in args]
    if isinstance(member, (staticmethod, classmethod)):
        return getattr(klass, name)(*vals)
    if callable(member):
        return member(*vals)
    if hasattr(member, "__get__"):
        member.__get__(vals[0], klass)
        if len(vals) > 1 and hasattr(member, "__set__"):
            member.__set__(vals[0], vals[1])
    return None


# ----------------------------------------------------------------------------------------
# The child


def worker(long: bool, start: int, end: int, progress: str) -> int:
    import gc
    import warnings

    warnings.simplefilter("ignore")
    fd = os.open(progress, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.dup2(fd, PROGRESS_FD)
    os.close(fd)
    targets, plan = build_plan(long)
    values = _hostile_values()
    for i in range(start, min(end, len(plan))):
        os.write(PROGRESS_FD, f"{i}\n".encode())
        try:
            result = _run_entry(targets, plan[i], values)
            del result
        except BaseException:  # noqa: BLE001, S110 - any exception is a pass: only crashes count
            pass
        if i % 500 == 0:
            gc.collect()
    gc.collect()
    os.write(PROGRESS_FD, b"done\n")
    return 0


# ----------------------------------------------------------------------------------------
# The parent


def _wait_for_progress(proc, progress: str, timeout: float) -> bool:
    """Wait for the child to end; kill it when its progress file has not grown for
    ``timeout`` seconds.  True when it was killed (a hang).

    Note [A hang is a call that makes no progress]
    The child writes the index of each call before making it, so a call that does not
    return stops the file growing.  The timeout applies to that, not to the child's whole
    slice: on a loaded machine (or beside pytest-xdist's other worker) a slice of tens of
    thousands of calls may take minutes without any call hanging.
    """
    size, changed = -1, time.monotonic()
    while True:
        try:
            proc.wait(timeout=0.5)
            return False
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        grown = os.path.getsize(progress) if os.path.exists(progress) else 0
        if grown != size:
            size, changed = grown, now
        elif now - changed > timeout:
            proc.kill()
            proc.wait()
            return True


def run_slice(long: bool, start: int, end: int, timeout: float):
    """Run plan[start:end] in children; returns (crashes, hangs) as lists of plan indices
    with the signal number (crashes) or None (hangs: a call that made no progress for
    ``timeout`` seconds, Note [A hang is a call that makes no progress])."""
    crashes, hangs = [], []
    i = start
    with tempfile.TemporaryDirectory(prefix="gradstack-crash-fuzz-") as tmp:
        while i < end:
            progress = os.path.join(tmp, f"progress-{i}")
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                "--start",
                str(i),
                "--end",
                str(end),
                "--progress",
                progress,
            ]
            if long:
                cmd.append("--long")
            err_path = os.path.join(tmp, f"stderr-{i}")
            with open(err_path, "wb") as err_file:
                proc = subprocess.Popen(
                    cmd, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=err_file,
                )  # fmt: skip
                hung = _wait_for_progress(proc, progress, timeout)
            rc = None if hung else proc.returncode
            err = Path(err_path).read_bytes().decode(errors="replace")[-2000:]
            lines = Path(progress).read_text().split() if os.path.exists(progress) else []
            if lines and lines[-1] == "done":
                break
            if not lines:
                raise RuntimeError(f"the crash-fuzz child made no call (exit {rc}):\n{err}")
            last = int(lines[-1])
            if hung:
                hangs.append((last, None))
            else:
                crashes.append((last, -rc if rc is not None and rc < 0 else rc))
            i = last + 1
    return crashes, hangs


def _plan_size(long: bool) -> int:
    return len(build_plan(long)[1])


def _batches(total: int, n: int):
    step = -(-total // n)
    return [(b * step, min(total, (b + 1) * step)) for b in range(n)]


def _report(long: bool, crashes, hangs) -> list[str]:
    targets, plan = build_plan(long)
    labels = [label for label, _ in _hostile_values()]
    out = []
    for i, sig in crashes:
        out.append(f"crash (signal {sig}): {describe(targets, plan[i], labels)}")
    for i, _ in hangs:
        out.append(f"hang: {describe(targets, plan[i], labels)}")
    return out


_SHORT_PLAN = None


def _short_plan_size():
    global _SHORT_PLAN
    if _SHORT_PLAN is None:
        _SHORT_PLAN = _plan_size(False)
    return _SHORT_PLAN


@pytest.mark.slow  # a slow corpus: left out by `hatch run test-quick`
@pytest.mark.parametrize("batch", range(N_BATCHES))
def test_no_call_crashes(batch):
    """A slice of the bounded plan: any crash or hang fails, naming the calls."""
    start, end = _batches(_short_plan_size(), N_BATCHES)[batch]
    crashes, hangs = run_slice(False, start, end, timeout=120)
    problems = _report(False, crashes, hangs)
    assert not problems, "\n".join(problems)


def test_plan_covers_every_surface():
    """The plan reaches the entry points the crashes were reported on (issue 11)."""
    targets, plan = build_plan(False)
    last_names = {p.rsplit(".", 1)[-1] for p, kind, _o in targets if kind == "function"}
    assert {"fill_", "clamp_", "relu", "alias_of", "sum_to_py"} <= last_names
    members = {p for p, kind, _o in targets if kind == "member"}
    assert any(p.endswith(".dim") and "Tensor" in p for p in members)
    forms = {form for _t, form, _a in plan}
    assert forms == {"call", "unbound", "raw", "method"}
    assert len(plan) > 50_000


def test_fuzz_detects_a_crash(tmp_path):
    """The harness itself: a child killed by a signal is reported with the call's index."""
    progress = tmp_path / "p"
    code = (
        "import os, signal\n"
        f"fd = os.open({str(progress)!r}, os.O_WRONLY | os.O_CREAT)\n"
        "os.write(fd, b'0\\n1\\n')\n"
        "os.kill(os.getpid(), signal.SIGSEGV)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert proc.returncode < 0
    assert progress.read_text().split()[-1] == "1"


# ----------------------------------------------------------------------------------------
# The crashes of issue 11, one by one, with torch's behaviour as the reference


@pytest.mark.parametrize(
    "name",
    [
        "dim",
        "numel",
        "size",
        "item",
        "tolist",
        "to",
        "sum",
        "backward",
        "register_hook",
        "__array__",
    ],
)
@pytest.mark.parametrize("bad", [None, 1.5, [1.0, 2.0]])
def test_unbound_tensor_methods_check_self(name, bad):
    import gradstack as gs
    import torch

    with pytest.raises(TypeError) as ours:
        getattr(gs.Tensor, name)(bad)
    assert str(ours.value).startswith(f"descriptor '{name}' for '")
    assert f"doesn't apply to a '{type(bad).__name__}' object" in str(ours.value)
    # torch's C methods say the same words ("descriptor 'dim' for 'torch._C.TensorBase'
    # objects doesn't apply to a 'NoneType' object"); its Python methods (backward,
    # register_hook, __array__) fail on the first use of self, with other words
    with pytest.raises(Exception) as theirs:  # noqa: B017 - torch only gives the words
        getattr(torch.Tensor, name)(bad)
    if str(theirs.value).startswith("descriptor"):
        assert str(theirs.value).split(" for ")[0] == str(ours.value).split(" for ")[0]
        assert str(theirs.value).split("objects ")[1] == str(ours.value).split("objects ")[1]


def test_tensor_new_without_init_is_an_empty_tensor():
    import gradstack as gs
    import torch

    t = gs.Tensor.__new__(gs.Tensor)
    ref = torch.Tensor.__new__(torch.Tensor)
    assert (t.dim(), tuple(t.shape), t.dtype.name) == (ref.dim(), tuple(ref.shape), "float32")
    assert t.tolist() == ref.tolist() == []
    assert (t + 1).tolist() == []
    with pytest.raises(RuntimeError):
        t.add_(1)  # the shared empty storage is never written


@pytest.mark.parametrize(
    "call",
    [
        lambda gs, t: gs.fill_(None, t),
        lambda gs, t: gs.clamp_([1.0, 2.0], min=t),
        lambda gs, t: gs.OPS["add_"](None, t),
        lambda gs, t: gs.OPS["mul_"](1.5, t),
        lambda gs, t: gs.OPS["add_"](),
    ],
    ids=[
        "fill_(None, t)",
        "clamp_(list, min=t)",
        "OPS['add_'](None, t)",
        "OPS['mul_'](1.5, t)",
        "OPS['add_']()",
    ],
)
def test_inplace_ops_check_their_target(call):
    import gradstack as gs

    t = gs.rand(3, requires_grad=True)
    with pytest.raises(TypeError, match="must be Tensor|positional arguments"):
        call(gs, t)


def test_autograd_core_functions_check_their_arguments():
    import gradstack as gs
    from gradstack_autograd import _layer, _native, _node, _op_node, _views

    t = gs.rand(2, 3)
    with pytest.raises(TypeError):
        _layer.alias_of(None)
    with pytest.raises(TypeError):
        _native.sum_to_py(None, t)
    with gs.no_grad():  # run_fused runs only without grad mode
        with pytest.raises(TypeError):
            _op_node.run_fused(lambda *a: a, (None,))
        with pytest.raises(TypeError):
            _op_node.run_fused(lambda a: 5, (t,))
    node = _op_node.OpNode.__new__(_op_node.OpNode)
    with pytest.raises(TypeError):
        node.apply((t,))
    # nodes made without a graph (found by the long run): no leaf, no geometry, no formula
    for cls in (_node.AccumulateGrad, _views.AsStridedBackward0, _views.CopySlices):
        raw = cls.__new__(cls)
        with pytest.raises((TypeError, RuntimeError)):
            raw.apply((2, 3))
        with pytest.raises((TypeError, RuntimeError)):
            raw.apply((t,))
    with pytest.raises(TypeError):
        _layer.AutogradLayer(0).handle(None, (), 0)
    # the functions still work on good arguments
    a = _layer.alias_of(t)
    assert a.data_ptr() == t.data_ptr() and a is not t
    assert _native.sum_to_py(t, (1, 3)).tolist() == [t.sum(0).tolist()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--long", action="store_true", help="every pair of hostile arguments")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--end", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--progress", help=argparse.SUPPRESS)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        help="seconds a call may run without returning before it counts as a hang",
    )
    args = parser.parse_args(argv)
    if args.worker:
        return worker(
            args.long, args.start, args.end if args.end is not None else 1 << 62, args.progress
        )
    t0 = time.perf_counter()
    total = _plan_size(args.long)
    targets = collect_targets()
    print(
        f"crash-fuzz ({'long' if args.long else 'bounded'}): {total} calls over "
        f"{len(targets)} entry points and members",
        flush=True,
    )
    crashes, hangs = [], []
    for b, (start, end) in enumerate(_batches(total, args.batches)):
        c, h = run_slice(args.long, start, end, args.timeout)
        crashes += c
        hangs += h
        print(
            f"  batch {b + 1}/{args.batches}: calls {start}-{end}, {len(c)} crashes, "
            f"{len(h)} hangs ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    for line in _report(args.long, crashes, hangs):
        print(line)
    print(
        f"{total} calls, {len(crashes)} crashes, {len(hangs)} hangs "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
