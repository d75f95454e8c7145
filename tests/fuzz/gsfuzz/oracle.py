"""torch's side of a bounded fuzz run, recorded once per torch version.

Note [Recorded fuzz oracle]
Both halves of torch's work for a program are deterministic functions of ``(seed,
index)`` and torch: :func:`.generate.generate` builds the program by running candidates in
torch, and :func:`.execute.execute` records torch's events.  So for the bounded run of the
test suite (``tests/fuzz/test_fuzz_programs.py``) they are recorded once, by
``hatch run record-oracle fuzz``, into ``tests/fuzz/oracle/seed-<seed>.json.gz``: for each
program its statements and torch's events (tensors as dtype, shape and raw bytes).  A test
run then only runs gradstack's half, in children that never import torch.

The record is keyed like the real programs' (Note [Recorded oracle output] in
``tests/real_programs/oracle.py``): a fingerprint of the code that decides torch's side
(``generate*.py``, ``program.py``, ``execute.py``; the encoding is ``FORMAT``) and the
seed, with the versions of torch, numpy and Python. A stale record fails the test with the
command that records it again. Each program is recorded twice, in separate processes; a
program whose two records differ is marked ``live`` and runs torch at test time, as
before. A program that kills torch itself, or hangs it, is recorded as such and counted as
``oracle_crash`` (Note [Whose crash] in runner.py). ``GRADSTACK_ORACLE=live`` runs torch
for every program.

Examples
--------
>>> from gsfuzz.execute import Event
>>> ev = Event(0, "snap", "x", ("tensor", "float32", (2,), np.ones(2, np.float32), False))
>>> back = decode_event(json.loads(json.dumps(encode_event(ev))))
>>> back.value[3].dtype, back.value[2]
(dtype('float32'), (2,))
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.metadata
import json
import os
import platform
from pathlib import Path

import numpy as np

from .execute import Event
from .program import Program, Stmt

__all__ = [
    "RECORD_COMMAND",
    "StaleRecord",
    "decode_event",
    "encode_event",
    "fingerprint",
    "load",
    "record_path",
]

HERE = Path(__file__).resolve().parent
RECORDS = HERE.parent / "oracle"
FORMAT = 1
RECORD_COMMAND = "hatch run record-oracle fuzz"
LIVE = os.environ.get("GRADSTACK_ORACLE") == "live"
# what decides torch's side (the record's own encoding is FORMAT)
SOURCES = (
    "generate.py",
    "generate_common.py",
    "generate_ops.py",
    "generate_index.py",
    "generate_backward.py",
    "program.py",
    "execute.py",
)


class StaleRecord(Exception):
    """The record is missing or was made by other code, another seed or another torch."""


def fingerprint(seed: int) -> str:
    digest = hashlib.sha256(f"seed {seed}\0".encode())
    for name in SOURCES:
        digest.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    return digest.hexdigest()


def environment() -> dict:
    """The versions a record depends on (from metadata: torch is not imported)."""
    major, minor, _ = platform.python_version_tuple()
    return {
        "torch": importlib.metadata.version("torch"),
        "numpy": importlib.metadata.version("numpy"),
        "python": f"{major}.{minor}",
    }


def record_path(seed: int) -> Path:
    return RECORDS / f"seed-{seed}.json.gz"


# --------------------------------------------------------------------------- encoding


def _encode(v):
    if isinstance(v, np.ndarray):
        return {
            "nd": v.dtype.str,
            "shape": list(v.shape),
            "b64": base64.b64encode(v.tobytes()).decode(),
        }
    if isinstance(v, tuple):
        return {"tuple": [_encode(x) for x in v]}
    if isinstance(v, list):
        return [_encode(x) for x in v]
    if isinstance(v, float) and not np.isfinite(v):
        return {"float": repr(v)}
    return v


def _decode(v):
    if isinstance(v, dict):
        if "nd" in v:
            raw = base64.b64decode(v["b64"])
            return np.frombuffer(raw, dtype=np.dtype(v["nd"])).reshape(v["shape"]).copy()
        if "tuple" in v:
            return tuple(_decode(x) for x in v["tuple"])
        if "float" in v:
            return float(v["float"])
    if isinstance(v, list):
        return [_decode(x) for x in v]
    return v


def encode_event(ev: Event) -> list:
    return [ev.stmt, ev.kind, ev.expr, _encode(ev.value), ev.aliased]


def decode_event(row: list) -> Event:
    stmt, kind, expr, value, aliased = row
    return Event(stmt, kind, expr, _decode(value), aliased)


def encode_program(program: Program) -> list:
    return [
        [st.code, list(st.defines), list(st.uses), list(st.checks), st.tag, st.phase]
        for st in program.stmts
    ]


def decode_program(seed: int, index: int, rows: list) -> Program:
    stmts = [
        Stmt(code, tuple(defines), tuple(uses), tuple(checks), tag, phase)
        for code, defines, uses, checks, tag, phase in rows
    ]
    return Program(seed, index, stmts)


def torch_side(seed: int, index: int) -> dict:
    """Generate program ``(seed, index)`` and run it in torch: one entry of a record."""
    import torch

    from .execute import execute
    from .generate import generate

    program = generate(seed, index)
    events = execute(torch, program)
    return {
        "i": index,
        "program": encode_program(program),
        "events": [encode_event(e) for e in events],
    }


def same_entry(a: dict, b: dict) -> bool:
    """Whether two recordings of one program agree (arrays byte for byte)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


# --------------------------------------------------------------------------- records


def write(seed: int, entries: list[dict], capability: str) -> Path:
    RECORDS.mkdir(exist_ok=True)
    body = {
        "format": FORMAT,
        "seed": seed,
        "fingerprint": fingerprint(seed),
        **environment(),
        "cpu_capability": capability,
        "count": len(entries),
        "programs": sorted(entries, key=lambda e: e["i"]),
    }
    path = record_path(seed)
    text = json.dumps(body, separators=(",", ":")).encode()
    # mtime=0: the same record gives the same bytes (no spurious diff in git)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        gz.write(text)
    return path


def read(seed: int) -> dict | None:
    path = record_path(seed)
    if not path.is_file():
        return None
    with gzip.open(path, "rb") as gz:
        return json.loads(gz.read())


def check(body: dict | None, seed: int, count: int) -> None:
    """Raise StaleRecord (saying how to fix it) unless ``body`` serves ``count`` programs."""
    path = record_path(seed)
    if body is None:
        raise StaleRecord(
            f"no recorded torch side for fuzz seed {seed} ({path.name}): run `{RECORD_COMMAND}`"
        )
    why = []
    if body.get("format") != FORMAT:
        why.append(f"record format {body.get('format')}, this harness reads {FORMAT}")
    if body.get("fingerprint") != fingerprint(seed):
        why.append("generate*.py, program.py or execute.py changed since")
    for name, version in environment().items():
        if body.get(name) != version:
            why.append(f"recorded with {name} {body.get(name)}, this environment has {version}")
    if body.get("count", 0) < count:
        why.append(f"it holds {body.get('count')} programs, {count} are asked for")
    if why:
        raise StaleRecord(
            f"the recorded torch side {path.name} is stale ({'; '.join(why)}): "
            f"run `{RECORD_COMMAND}`"
        )


def load(seed: int, count: int) -> dict[int, dict]:
    """index -> entry for the first ``count`` programs of ``seed`` (StaleRecord if unusable)."""
    body = read(seed)
    check(body, seed, count)
    return {e["i"]: e for e in body["programs"] if e["i"] < count}
