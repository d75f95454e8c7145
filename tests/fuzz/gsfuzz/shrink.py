"""Reducing a failing program to a minimal one.

:func:`shrink` keeps a change when the smaller program still fails in the same way (same
category and same statement tag, and for errors the same exception classes).  Passes, each
repeated until nothing changes: cut everything after the failing statement, delete one
statement with every statement that depends on it, drop ``requires_grad=True`` from leaves,
replace literal values with simpler ones, replace weighted losses with plain sums.

:func:`repro_script` prints the result as a standalone torch script with the observed
results of both libraries in comments.
"""

from __future__ import annotations

import ast
import dataclasses
import re

import gradstack
import torch

from .compare import compare
from .execute import execute
from .program import Program, Stmt

__all__ = ["check", "repro_script", "shrink"]


def check(program: Program):
    """The verdict of ``program`` (None when gradstack and torch agree)."""
    return compare(execute(gradstack, program), execute(torch, program), program)


def _key(v):
    if v is None:
        return None
    tag = v.tag.split(".")[0] if v.tag.startswith("final") else v.tag
    return (v.category, tag, v.gs_error.split(":")[0], v.torch_error.split(":")[0])


def _without(stmts, i):
    """``stmts`` minus statement ``i`` and everything that (transitively) uses it."""
    gone = set(stmts[i].defines)
    keep = []
    for k, st in enumerate(stmts):
        if k == i:
            continue
        if gone & set(st.uses):
            gone |= set(st.defines)
            continue
        checks = tuple(c for c in st.checks if re.match(r"\w+", c).group(0) not in gone)
        keep.append(dataclasses.replace(st, checks=checks) if checks != st.checks else st)
    return keep


_NUM = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e-?\d+)?|float\('nan'\)|-?float\('inf'\)")


def _truncate(node, depth: int, keep: int):
    """The nested-list literal ``node`` with every list at ``depth`` cut to ``keep`` items."""
    if not isinstance(node, ast.List):
        return node
    if depth == 0:
        return ast.List(elts=node.elts[:keep], ctx=ast.Load()) if len(node.elts) > keep else node
    return ast.List(elts=[_truncate(e, depth - 1, keep) for e in node.elts], ctx=ast.Load())


def _smaller_leaves(st: Stmt):
    """The leaf with fewer elements: each dim of its literal or shape tuple cut to 1 (or 2)."""
    try:
        tree = ast.parse(st.code)
        call = tree.body[0].value
        first = call.args[0]
    except (SyntaxError, AttributeError, IndexError):
        return
    if isinstance(first, ast.List):
        for depth in range(8):
            for keep in (1, 2):
                new = _truncate(first, depth, keep)
                if new is not first and ast.dump(new) != ast.dump(first):
                    call.args[0] = new
                    yield dataclasses.replace(st, code=ast.unparse(tree))
                    call.args[0] = first
    elif isinstance(first, ast.Tuple):
        for k, elt in enumerate(first.elts):
            if isinstance(elt, ast.Constant) and isinstance(elt.value, int) and elt.value > 1:
                dims = list(first.elts)
                dims[k] = ast.Constant(1)
                call.args[0] = ast.Tuple(elts=dims, ctx=ast.Load())
                yield dataclasses.replace(st, code=ast.unparse(tree))
                call.args[0] = first


def _simplifications(st: Stmt):
    code = st.code
    if st.tag == "leaf":
        yield from _smaller_leaves(st)
    if "requires_grad=True" in code and st.tag == "leaf":
        yield dataclasses.replace(st, code=code.replace(", requires_grad=True", ""))
    if st.tag in ("leaf", "loss"):
        for rep in ("1.0", "0.5", "2.0"):
            new = _NUM.sub(rep, code)
            if new != code:
                yield dataclasses.replace(st, code=new)
    if st.tag == "loss":
        new = re.sub(
            r"\((\w+) \* torch\.tensor\(.*?, dtype=torch\.\w+\)\)\.sum\(\)", r"\1.sum()", code
        )
        if new != code:
            yield dataclasses.replace(st, code=new)


def shrink(program: Program, verdict=None, *, budget: int = 600) -> tuple[Program, object]:
    """A minimal program failing as ``program`` does, and its verdict."""
    verdict = verdict or check(program)
    if verdict is None:
        return program, None
    want = _key(verdict)
    runs = 0

    def fails(stmts):
        nonlocal runs
        runs += 1
        cand = Program(program.seed, program.index, stmts)
        try:
            v = check(cand)
        except Exception:  # noqa: BLE001 - a candidate the harness cannot run is no repro
            return None
        return v if _key(v) == want else None

    stmts = list(program.stmts)
    if verdict.stmt < len(stmts):
        cut = stmts[: verdict.stmt + 1]
        v = fails(cut)
        if v:
            stmts, verdict = cut, v
    changed = True
    while changed and runs < budget:
        changed = False
        for i in range(len(stmts) - 1, -1, -1):
            if i >= len(stmts) or runs >= budget:
                continue
            cand = _without(stmts, i)
            v = fails(cand)
            if v:
                stmts, verdict, changed = cand, v, True
        for i in range(len(stmts)):
            for simpler in _simplifications(stmts[i]):
                if runs >= budget:
                    break
                cand = stmts[:i] + [simpler] + stmts[i + 1 :]
                v = fails(cand)
                if v:
                    stmts, verdict, changed = cand, v, True
                    break
    return Program(program.seed, program.index, stmts), verdict


def repro_script(program: Program, verdict) -> str:
    """A standalone script: the statements, the checked values, both libraries' results."""
    lines = [
        f"# gsfuzz seed={program.seed} index={program.index}: {verdict.category} "
        f"at statement {verdict.stmt} ({verdict.tag})",
        "import torch  # or: import gradstack as torch",
        "",
    ]
    for i, st in enumerate(program.stmts):
        lines.append(st.code)
        if i == verdict.stmt:
            for c in st.checks:
                lines.append(f"print('{c} =', {c})")
    if verdict.stmt >= len(program.stmts):
        name = verdict.tag.split(".", 1)[1]
        lines.append(f"print('{name} =', {name})")
    lines.append("")
    if verdict.gs_error:
        lines.append(f"# gradstack: {verdict.gs_error}")
    if verdict.torch_error:
        lines.append(f"# torch:     {verdict.torch_error}")
    if verdict.detail:
        lines.append(f"# {verdict.detail}")
    return "\n".join(lines)
