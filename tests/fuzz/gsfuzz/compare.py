"""Comparing gradstack's record of a program with PyTorch's.

:func:`compare` walks the two event lists of :func:`.execute.execute` side by side and
returns the first difference as a :class:`Verdict`, or None when they agree.  Its category:

- ``wrong_value``: a forward result differs (dtype, shape, ``requires_grad`` or values),
  including the final state of every variable;
- ``wrong_grad``: what ``backward()``/``autograd.grad`` produced (``.grad``, hook
  arguments, returned gradients) differs;
- ``wrong_second_order``: the same after a ``create_graph=True`` pass;
- ``raise_where_torch_works`` / ``works_where_torch_raises``: one library raised and the
  other did not;
- ``wrong_error_type``: both raised, with different builtin exception classes;
- ``numpy_wording``: both raised the same class, but gradstack's message speaks numpy's
  words (axis, ufunc, "tuple index out of range") where torch's does not.

``crash`` (the process died) and ``harness_error`` (the fuzzer itself failed) are given by
:mod:`.runner`.

Note [Tolerances]
Integers and bools must be equal.  Floats must have NaN and infinities at the same places
and, elsewhere, ``|gs - torch| <= atol * max(1, max|torch|) + rtol * |torch|`` with the
tolerance of the result's dtype (:data:`TOLERANCE`): an error relative to the tensor's
scale, so that a cancellation inside a gradient sum is not a failure, while a wrong entry is.
The values of the programs are multiples of 0.25 of moderate size, so sums and products are
exact in every float dtype and only transcendental ops round.  A float64 result can carry
the rounding of float32 or float16 intermediates (``x32.sin().double()``, promotion in
``x64 % x32``), so a result is compared with the tolerance of the least precise float dtype
among all the values the program produced in torch (:func:`_floor_dtype`), never stricter
than its own.

Note [Bugs of the oracle]
A program that torch refuses for a reason that is a bug of torch itself, not a rule of its
API, is counted as ``torch_bug`` (not a gradstack failure) when gradstack runs it: only the
messages in :data:`TORCH_BUGS`, each with the reason it is torch's bug.  Likewise a
gradient that torch gets wrong by a known bug of its formula (:func:`_torch_grad_bug`),
and a tensor hook that torch calls with None (:func:`_torch_hook_got_none`).

Note [Torch disagrees with itself]
Two last-bit effects make torch's result depend on the code path or on the element's
position, not on the math, so gradstack cannot match them by computing the same function:

- the sign of a zero from a contraction (matmul, mm, bmm, mv, dot, addmm): ``0.0 * -0.75``
  is -0.0, and whether the result keeps that sign depends on which kernel torch picks
  (``torch.dot([0.], [-0.75])`` is +0.0, ``[[0.]] @ [[-1.25]]`` as an mm is -0.0,
  float32 and float64 batched products differ again);
- atan2's last bit: torch's vectorized atan2 computes the tail of a tensor (the elements
  after the last full SIMD vector) with the scalar function, one ulp apart from the vector
  one (``torch.atan2(x, x)`` of 18 equal floats: the last two differ from the others);
- a contraction's last bits: torch's blocked float32 kernels sum the same products in an
  order that depends on the element's position (one ``matmul`` of a (4, 4) by a (4, 2)
  float32 matrix gives 0.85914099 in row 1 and 0.85914087 in row 3, two ulps apart, for
  the same products; fuzz seed 2 #2978), where numpy's BLAS gives one value; up to four
  ulps are taken as such.

- an in-place op that reads elements it has already written (Note [An in-place op that
  reads what it writes], execute.py): torch's result depends on its loop order;
- the last bit of any float op: torch's SLEEF and vectorized kernels round differently
  from numpy's libm (``cosh``, ``tan`` of float32: one ulp, which ``.to(int64)`` of
  665485.97 against 665486.0 exposes; fuzz seed 13 #1124), and from themselves between
  the SIMD body and the scalar tail of a tensor (``exp2`` of nine equal float64 values:
  eight ...095 and one ...0951, so ``argmax`` picks another element; seed 12 #5654).

A zero's sign is invisible to the comparison (-0.0 == 0.0) and one ulp is within every
tolerance, but either can decide a later value exactly: ``1 / -0.0`` is -inf, a max over
values one ulp apart picks another index.  So :func:`compare` notes such a divergence at
the statement that made it (only there: zeros of opposite sign in a contraction's result,
or values at most one ulp apart, not all equal, in any op's float result, four in a
contraction's) and, after it, counts
a difference of values as ``oracle_divergence`` (not compared further) instead of a failure:
after a signed zero or an aliasing, any difference of values; after a last bit, only a difference
of integer or bool values (an index, a comparison), since the float values themselves
still agree within tolerance.  Dtypes, shapes, ``requires_grad`` and errors are still
compared, and a program with no such divergence is compared exactly as before.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

__all__ = ["CATEGORIES", "TOLERANCE", "Verdict", "compare", "diff"]

CATEGORIES = (
    "crash",
    "wrong_value",
    "wrong_grad",
    "wrong_second_order",
    "raise_where_torch_works",
    "works_where_torch_raises",
    "wrong_error_type",
    "numpy_wording",
    "harness_error",
    "torch_bug",
    "oracle_divergence",
)
PHASE_CATEGORY = {"fwd": "wrong_value", "bwd1": "wrong_grad", "bwd2": "wrong_second_order"}

TORCH_BUGS = (
    # atan2's backward formula negates its other operand even when that operand is a bool
    # tensor that does not require grad (``torch.atan2(b, x)`` with ``b`` bool): the
    # forward is valid and the gradient w.r.t. ``x`` is defined
    re.compile(r"Negation, the `-` operator, on a bool tensor is not supported"),
    # the gradient of ``True ** x`` (a bool base, a tensor exponent): torch's formula makes
    # a Scalar of the bool base and fails its own internal assert (it asks to be reported
    # as a bug); the gradient is ``log(1) * 1 ** x = 0`` (fuzz seed 10 #5337)
    re.compile(r"INTERNAL ASSERT FAILED at \S*Scalar\.cpp\S* .*unknown ivalue tag"),
)

# Note [Torch disagrees with itself]: statement tags whose result's zero sign is torch's
# kernel choice (a sum of products starts from +0 or from the first product), and whose
# last bits depend on the element's position (up to four ulps)
_CONTRACTION_TAGS = frozenset(
    ["linalg.matmul", "linalg.mm", "linalg.bmm", "linalg.mv", "linalg.dot", "linalg.addmm"]
)

# ``x ** False``: torch's pow backward tests ``exponent == 0`` only for a number, not for
# the bool False, and computes ``grad * 0 * x ** -1``, NaN at ``x == 0`` (the derivative
# of the constant 1 is 0; ``x ** 0`` gives 0 there).  Matched in the program's source.
_POW_FALSE = re.compile(r"pow_?\([^()]*\bFalse\)|\*\*\s*False\b")

TOLERANCE = {  # dtype -> (rtol, atol)
    "float16": (1e-2, 2e-3),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
}

# numpy's vocabulary in an error message (gradstack leaking its backend)
_NUMPY_WORDS = re.compile(
    r"numpy|ndarray|ufunc|\baxis\b|\baxes\b|operands could not be broadcast|tuple index out of "
    r"range|list index out of range|repeated axis|NoneType|unsupported operand type|"
    r"cannot reshape array|zero-size array|object of type|not subscriptable",
    re.IGNORECASE,
)


@dataclasses.dataclass
class Verdict:
    category: str
    stmt: int  # statement index (len(stmts): the final snapshot)
    tag: str
    phase: str
    detail: str
    gs_error: str = ""
    torch_error: str = ""

    @property
    def signature(self) -> str:
        """Groups verdicts that probably share a cause."""
        errs = ""
        if self.gs_error or self.torch_error:
            errs = f"|{self.gs_error.split(':')[0]}/{self.torch_error.split(':')[0]}"
        return f"{self.category}|{self.tag}|{self.phase}{errs}"

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["signature"] = self.signature
        return d


def _desc(s) -> str:
    if s is None:
        return "None"
    if s[0] == "tensor":
        _, dt, shape, arr, rg = s
        vals = (
            np.array2string(arr, threshold=20, precision=6)
            if arr.size <= 40
            else f"<{arr.size} values>"
        )
        return f"tensor({vals}, dtype={dt}, shape={list(shape)}{', requires_grad' if rg else ''})"
    if s[0] == "seq":
        return f"seq[{len(s[1])}]"
    return repr(s[1:])


def _values_differ(a: np.ndarray, b: np.ndarray, dtype: str, floor: str) -> str | None:
    if a.shape != b.shape:
        return f"array shapes {a.shape} vs {b.shape}"
    if dtype not in TOLERANCE:
        bad = a != b
        if bad.any():
            return _first_bad(a, b, bad)
        return None
    rtol, atol = max(TOLERANCE[dtype], TOLERANCE[floor])
    x, y = a.astype(np.float64), b.astype(np.float64)
    nx, ny = np.isnan(x), np.isnan(y)
    if (nx != ny).any():
        return "NaN at different places: " + _first_bad(a, b, nx != ny)
    fx, fy = np.isfinite(x), np.isfinite(y)
    special = ~(fx & fy) & ~(nx | ny)
    if (special & (x != y)).any():
        return "inf at different places: " + _first_bad(a, b, special & (x != y))
    both = fx & fy
    if not both.any():
        return None
    scale = max(1.0, float(np.max(np.abs(y[both]))))
    bad = np.zeros(x.shape, dtype=bool)
    bad[both] = np.abs(x[both] - y[both]) > atol * scale + rtol * np.abs(y[both])
    if bad.any():
        return _first_bad(a, b, bad)
    return None


def _first_bad(a, b, bad) -> str:
    idx = np.argwhere(bad)[:3]
    parts = [
        f"at {tuple(int(i) for i in ix)}: gradstack {a[tuple(ix)]!r} torch {b[tuple(ix)]!r}"
        for ix in idx
    ]
    return f"{int(bad.sum())} of {bad.size} differ; " + "; ".join(parts)


def diff(g, t, path: str = "", floor: str = "float64") -> str | None:
    """Why snapshot ``g`` (gradstack) differs from ``t`` (torch), or None.

    ``floor``: the least precise float dtype of the program (Note [Tolerances]).
    """
    if g is None or t is None:
        if g is None and t is None:
            return None
        return f"{path}: gradstack {_desc(g)} vs torch {_desc(t)}"
    if g[0] != t[0]:
        return f"{path}: gradstack {_desc(g)} vs torch {_desc(t)}"
    if t[0] == "tensor":
        _, gdt, gshape, garr, grg = g
        _, tdt, tshape, tarr, trg = t
        if gdt != tdt:
            return f"{path}: dtype {gdt} vs torch {tdt}"
        if gshape != tshape:
            return f"{path}: shape {list(gshape)} vs torch {list(tshape)}"
        if grg != trg:
            return f"{path}: requires_grad {grg} vs torch {trg}"
        why = _values_differ(garr, tarr, tdt, floor)
        if why:
            return f"{path}: values: {why}; gradstack {_desc(g)} vs torch {_desc(t)}"
        return None
    if t[0] == "seq":
        if len(g[1]) != len(t[1]):
            return f"{path}: {len(g[1])} items vs torch {len(t[1])}"
        for k, (x, y) in enumerate(zip(g[1], t[1])):
            why = diff(x, y, f"{path}[{k}]", floor)
            if why:
                return why
        return None
    if t[0] == "py" and g[1] == t[1] and t[1] == "float":
        if (
            g[2] == t[2]
            or (g[2] != g[2] and t[2] != t[2])
            or abs(g[2] - t[2]) <= 1e-6 * max(1, abs(t[2]))
        ):
            return None
    if g != t:
        return f"{path}: gradstack {g!r} vs torch {t!r}"
    return None


def _dtypes(s, out: set) -> None:
    if s is None:
        return
    if s[0] == "tensor":
        out.add(s[1])
    elif s[0] == "seq":
        for x in s[1]:
            _dtypes(x, out)


def _floor_dtype(events) -> str:
    """The least precise float dtype among the values of ``events``."""
    seen: set = set()
    for e in events:
        if e.kind == "snap":
            _dtypes(e.value, seen)
    for dt in ("float16", "float32"):
        if dt in seen:
            return dt
    return "float64"


def _tensors(g, t):
    """The pairs of (gradstack, torch) tensor snapshots inside ``g`` and ``t``."""
    if g is None or t is None or g[0] != t[0]:
        return
    if t[0] == "tensor":
        yield g, t
    elif t[0] == "seq" and len(g[1]) == len(t[1]):
        for x, y in zip(g[1], t[1]):
            yield from _tensors(x, y)


def _zero_signs_differ(g, t) -> bool:
    """Whether a float zero has opposite signs in ``g`` and ``t`` (equal otherwise)."""
    for gs, ts in _tensors(g, t):
        a, b = gs[3], ts[3]
        if a.shape == b.shape and a.dtype.kind == "f" and b.dtype == a.dtype:
            if ((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))).any():
                return True
    return False


def _last_bits_differ(g, t, ulps: int = 1) -> bool:
    """Whether float values differ, each by at most ``ulps`` ulps of torch's value."""
    found = False
    for gs, ts in _tensors(g, t):
        a, b = gs[3], ts[3]
        if a.shape != b.shape or a.dtype.kind != "f" or b.dtype != a.dtype:
            continue
        fin = np.isfinite(a) & np.isfinite(b)
        d = np.abs(a[fin] - b[fin])
        if (d > ulps * np.spacing(np.abs(b[fin]))).any():
            return False
        found = found or bool((d > 0).any())
    return found


def _torch_grad_bug(program, ge, te, floor: str) -> bool:
    """A gradient torch gets wrong by a known bug of its formula (Note [Bugs of the oracle]):
    with ``x ** False`` in the program, the only differences are NaNs of torch's where
    gradstack has a number."""
    if not _POW_FALSE.search(program.text()):
        return False
    for gs, ts in _tensors(ge.value, te.value):
        a, b = gs[3], ts[3]
        if a.shape != b.shape or a.dtype.kind != "f" or gs[1] != ts[1]:
            return False
        if (np.isnan(a) & ~np.isnan(b)).any():
            return False
        if _values_differ(a, np.where(np.isnan(b), a, b), ts[1], floor):
            return False
    return True


_HOOK_CALLED_WITH_NONE = re.compile(r"^AttributeError: 'NoneType' object has no attribute")


def _torch_hook_got_none(program, te, phase) -> bool:
    """torch calls a tensor hook with None where a formula left the gradient undefined
    (``norm(p=0)``'s backward), against its documented ``hook(grad) -> Tensor or None``:
    the hook's first method call fails (fuzz seed 11 #7101).  gradstack hands the hook the
    zeros that gradient is (Note [Bugs of the oracle])."""
    return (
        phase in ("bwd1", "bwd2")
        and "register_hook(" in program.text()
        and _HOOK_CALLED_WITH_NONE.search(te.value[1]) is not None
    )


def _int_values_differ(g, t) -> bool:
    """Whether the first differing tensor of ``g`` and ``t`` has integer or bool values."""
    for gs, ts in _tensors(g, t):
        if diff(gs, ts) is not None:
            return ts[1] not in TOLERANCE
    return False


def compare(gs_events, torch_events, program) -> Verdict | None:
    """The first difference between the two records, or None."""
    stmts = program.stmts
    n = len(stmts)
    floor = _floor_dtype(torch_events)
    diverged = ""  # Note [Torch disagrees with itself]: "" or what diverged, and where

    def info(i):
        if i >= n:
            return "final", "fwd"
        return stmts[i].tag, stmts[i].phase

    for k, te in enumerate(torch_events):
        if k >= len(gs_events):
            tag, phase = info(te.stmt)
            return Verdict("harness_error", te.stmt, tag, phase, "gradstack's record ended early")
        ge = gs_events[k]
        tag, phase = info(min(te.stmt, ge.stmt))
        if te.kind == "error" and ge.kind == "error":
            if te.stmt != ge.stmt:  # gradstack raised later (it ran what torch refused)
                tag, phase = info(te.stmt)
                return Verdict(
                    "works_where_torch_raises", te.stmt, tag, phase, "", ge.value[1], te.value[1]
                )
            if te.value[0] != ge.value[0]:
                return Verdict(
                    "wrong_error_type",
                    te.stmt,
                    tag,
                    phase,
                    f"{ge.value[0]} vs torch {te.value[0]}",
                    ge.value[1],
                    te.value[1],
                )
            gm, tm = _NUMPY_WORDS.search(ge.value[1]), _NUMPY_WORDS.search(te.value[1])
            if gm and not tm:
                return Verdict(
                    "numpy_wording",
                    te.stmt,
                    tag,
                    phase,
                    f"says {gm.group(0)!r}",
                    ge.value[1],
                    te.value[1],
                )
            return None
        if te.kind == "error":
            tag, phase = info(te.stmt)
            if any(p.search(te.value[1]) for p in TORCH_BUGS) or _torch_hook_got_none(
                program, te, phase
            ):  # Note [Bugs of the oracle]
                return Verdict("torch_bug", te.stmt, tag, phase, "", "", te.value[1])
            return Verdict("works_where_torch_raises", te.stmt, tag, phase, "", "", te.value[1])
        if ge.kind == "error":
            tag, phase = info(ge.stmt)
            return Verdict("raise_where_torch_works", ge.stmt, tag, phase, "", ge.value[1], "")
        if (ge.stmt, ge.expr) != (te.stmt, te.expr):
            return Verdict(
                "harness_error", te.stmt, tag, phase, f"records out of step: {ge.expr} vs {te.expr}"
            )
        if te.aliased and not diverged:
            diverged = f"aliasing in {tag} at statement {te.stmt}"
        why = diff(ge.value, te.value, te.expr, floor)
        if why and ": values: " in why:
            if diverged.startswith(("zero sign", "aliasing")) or (
                diverged and _int_values_differ(ge.value, te.value)
            ):
                return Verdict("oracle_divergence", te.stmt, tag, phase, f"{diverged}; {why}")
            if phase in ("bwd1", "bwd2") and _torch_grad_bug(program, ge, te, floor):
                return Verdict("torch_bug", te.stmt, tag, phase, f"x ** False: {why}")
        if why:
            cat = PHASE_CATEGORY[phase] if te.stmt < n else "wrong_value"
            return Verdict(cat, te.stmt, tag if te.stmt < n else f"final.{te.expr}", phase, why)
        if not diverged and te.stmt < n:
            if tag in _CONTRACTION_TAGS and _zero_signs_differ(ge.value, te.value):
                diverged = f"zero sign of {tag} at statement {te.stmt}"
            elif tag in _CONTRACTION_TAGS and _last_bits_differ(ge.value, te.value, ulps=4):
                diverged = f"last bits of {tag} at statement {te.stmt}"
            elif _last_bits_differ(ge.value, te.value):  # any op (atan2, exp2, cosh ...)
                diverged = f"last bit of {tag} at statement {te.stmt}"
    if len(gs_events) > len(torch_events):
        ge = gs_events[len(torch_events)]
        tag, phase = info(ge.stmt)
        return Verdict("harness_error", ge.stmt, tag, phase, "gradstack's record is longer")
    return None
