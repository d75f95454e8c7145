"""Running many programs in child processes and counting the outcomes.

A child process (``run_fuzz.py worker``) generates and runs the programs of one chunk of
indices, printing ``S <index>`` before each and ``R <json record>`` after it.  The parent
reads those lines: when the child dies (a segfault, an abort) or stops printing for
``timeout`` seconds, the program it had started is a ``crash`` and a new child carries on
with the next index.  ``jobs`` children run at once.

With ``oracle=True`` the children take torch's side of each program (the program and
torch's events) from the recorded file instead of running torch (Note [Recorded fuzz
oracle] in oracle.py); :func:`record` makes those entries, in children of the same kind.

Examples
--------
>>> summary = run(seed=1, count=4, jobs=1)      # doctest: +SKIP
>>> summary.counts["programs"]                    # doctest: +SKIP
4
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import json
import os
import selectors
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

from .compare import CATEGORIES

__all__ = ["Summary", "record", "run", "run_one", "worker"]

SCRIPT = Path(__file__).resolve().parent.parent / "run_fuzz.py"


def run_one(seed: int, index: int, mark=None, entry: dict | None = None) -> dict:
    """Generate, run and compare program ``(seed, index)``; a JSON-able record.

    ``mark()`` is called after torch's part (generation and torch's run) and before
    gradstack's, so that the parent can tell whose crash killed the child.  ``entry``, when
    given, is torch's part as recorded (Note [Recorded fuzz oracle] in oracle.py).
    """
    import gradstack

    from .compare import compare
    from .execute import execute

    if entry is not None and "oracle_crash" in entry:
        detail = f"recorded: {entry['oracle_crash']}"
        return {"i": index, "cat": "oracle_crash", "signature": "oracle_crash", "detail": detail}
    try:
        if entry is not None:
            from .oracle import decode_event, decode_program

            program = decode_program(seed, index, entry["program"])
            torch_events = [decode_event(row) for row in entry["events"]]
        else:
            import torch

            from .generate import generate

            program = generate(seed, index)
            torch_events = execute(torch, program)
        if mark:
            mark()
        verdict = compare(execute(gradstack, program), torch_events, program)
    except Exception:  # noqa: BLE001 - the harness's own failure is reported, not hidden
        return {"i": index, "cat": "harness_error", "detail": traceback.format_exc()[-1500:]}
    rec = {"i": index, "cat": "ok", "n": len(program.stmts)}
    if verdict is not None:
        rec.update(verdict.as_dict())
        rec["cat"] = verdict.category
    return rec


def worker(seed: int, start: int, stop: int, mode: str = "live") -> None:
    """The child's loop (``run_fuzz.py worker SEED START STOP [--oracle|--record]``).

    ``mode``: ``"live"`` runs both libraries, ``"oracle"`` takes torch's side from the
    record (programs recorded ``live`` still run torch), ``"record"`` runs torch's side
    only and prints its entry.
    """
    import warnings

    warnings.simplefilter("ignore")
    out = sys.stdout

    def mark():
        out.write("G\n")
        out.flush()

    entries = {}
    if mode == "oracle":
        from .oracle import load

        entries = load(seed, stop)
    for i in range(start, stop):
        out.write(f"S {i}\n")
        out.flush()
        if mode == "record":
            from .oracle import torch_side

            try:
                rec = torch_side(seed, i)
            except Exception:  # noqa: BLE001 - the harness's own failure is reported
                rec = {"i": i, "cat": "harness_error", "detail": traceback.format_exc()[-1500:]}
        else:
            entry = entries.get(i)
            rec = run_one(seed, i, mark, None if entry is None or entry.get("live") else entry)
        out.write("R " + json.dumps(rec, default=str) + "\n")
        out.flush()


@dataclasses.dataclass
class Summary:
    seed: int
    counts: collections.Counter
    failures: list  # records of every program that did not pass
    seconds: float

    def table(self) -> str:
        rows = [f"programs run                    {self.counts['programs']:>8}"]
        names = {
            "crash": "crashes",
            "wrong_value": "wrong values",
            "wrong_grad": "wrong gradients",
            "wrong_second_order": "wrong second order",
            "raise_where_torch_works": "raise where torch works",
            "works_where_torch_raises": "works where torch raises",
            "wrong_error_type": "wrong error type",
            "numpy_wording": "errors in numpy's words",
            "harness_error": "harness errors",
            "oracle_crash": "torch crashed (not compared)",
            "torch_bug": "torch's own bug (not compared)",
            "oracle_divergence": "torch vs itself (not compared on)",
        }
        for cat in CATEGORIES + ("oracle_crash",):
            rows.append(f"{names[cat]:<32}{self.counts[cat]:>8}")
        rows.append(f"passed                          {self.counts['ok']:>8}")
        rows.append(f"({self.seconds:.0f} s, seed {self.seed})")
        return "\n".join(rows)


def _chunk(seed: int, start: int, stop: int, timeout: float, mode: str = "live") -> list[dict]:
    """Run indices [start, stop) in children, restarting after a crash."""
    records = []
    i = start
    flags = [] if mode == "live" else [f"--{mode}"]
    while i < stop:
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), "worker", str(seed), str(i), str(stop), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        started = None
        in_gradstack = False
        hung = False
        while True:
            if not sel.select(timeout):
                hung = True
                os.killpg(proc.pid, signal.SIGKILL)
                break
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("S "):
                started, in_gradstack = int(line[2:]), False
            elif line.startswith("G"):
                in_gradstack = True
            elif line.startswith("R "):
                records.append(json.loads(line[2:]))
                started = None
        sel.close()
        rc = proc.wait()
        err = proc.stderr.read()[-2000:]
        proc.stdout.close()
        proc.stderr.close()
        if started is None:
            done = records[-1]["i"] if records else i - 1
            if rc == 0 or done >= stop - 1:
                break
            # killed between two programs (SIGKILL from outside, say the OOM killer): go on
            # with the next program; a child that never gets one done ends the chunk
            progressed = done >= i
            records.append(
                {
                    "i": -1,
                    "cat": "harness_error",
                    "detail": f"worker exit {rc} after #{done}: {err}",
                }
            )
            if not progressed:
                break
            i = done + 1
            continue
        why = f"no output for {timeout:.0f} s (hang)" if hung else f"exit code {rc}"
        if rc < 0:
            why = f"killed by signal {-rc} ({signal.Signals(-rc).name})" if not hung else why
        # Note [Whose crash]: torch runs first (generation, then its record); a child that
        # dies before gradstack's turn was killed by torch, which is no gradstack failure
        cat = "crash" if in_gradstack else "oracle_crash"
        records.append(
            {"i": started, "cat": cat, "signature": cat, "detail": f"{why}; stderr: {err}"}
        )
        i = started + 1
    return records


def run(
    seed: int,
    count: int,
    *,
    start: int = 0,
    jobs: int = 2,
    chunk: int = 500,
    timeout: float = 120.0,
    progress=None,
    oracle: bool = False,
) -> Summary:
    """Run programs ``start .. start+count-1`` of stream ``seed``.

    ``progress(counts, failures_of_the_chunk)`` is called as each chunk ends.  With
    ``oracle``, torch's side comes from the record (:func:`.oracle.load` must accept it).
    """
    t0 = time.monotonic()
    bounds = [(a, min(a + chunk, start + count)) for a in range(start, start + count, chunk)]
    counts = collections.Counter()
    failures = []
    mode = "oracle" if oracle else "live"
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(_chunk, seed, a, b, timeout, mode) for a, b in bounds]
        for fut in concurrent.futures.as_completed(futs):
            for rec in fut.result():
                counts["programs"] += rec["i"] >= 0  # a dead worker's record is no program
                counts[rec["cat"]] += 1
                if rec["cat"] != "ok":
                    failures.append(rec)
            if progress:
                progress(counts, [r for r in fut.result() if r["cat"] != "ok"])
    failures.sort(key=lambda r: r["i"])
    return Summary(seed, counts, failures, time.monotonic() - t0)


def record(
    seed: int, count: int, *, jobs: int = 2, chunk: int = 250, timeout: float = 120.0, progress=None
) -> list[dict]:
    """torch's side of programs ``0 .. count-1`` of ``seed``, one entry each, run in children
    (Note [Recorded fuzz oracle]): the program and torch's events, or ``oracle_crash`` when
    torch killed or hung its child.  ``progress(done)`` is called as each chunk ends."""
    bounds = [(a, min(a + chunk, count)) for a in range(0, count, chunk)]
    entries: dict[int, dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(_chunk, seed, a, b, timeout, "record") for a, b in bounds]
        for fut in concurrent.futures.as_completed(futs):
            for rec in fut.result():
                if rec.get("cat") == "harness_error":
                    raise RuntimeError(
                        f"recording fuzz program {rec['i']} failed:\n{rec['detail']}"
                    )
                if rec.get("cat") == "oracle_crash":
                    entries[rec["i"]] = {"i": rec["i"], "oracle_crash": rec["detail"][:300]}
                else:
                    entries[rec["i"]] = rec
            if progress:
                progress(len(entries))
    return [entries[i] for i in sorted(entries)]
