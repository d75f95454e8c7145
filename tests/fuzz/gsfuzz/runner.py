"""Running many programs in child processes and counting the outcomes.

A child process (``run_fuzz.py worker``) generates and runs the programs of one chunk of
indices, printing ``S <index>`` before each and ``R <json record>`` after it.  The parent
reads those lines: when the child dies (a segfault, an abort) or stops printing for
``timeout`` seconds, the program it had started is a ``crash`` and a new child carries on
with the next index.  ``jobs`` children run at once.

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

__all__ = ["Summary", "run", "run_one", "worker"]

SCRIPT = Path(__file__).resolve().parent.parent / "run_fuzz.py"


def run_one(seed: int, index: int, mark=None) -> dict:
    """Generate, run and compare program ``(seed, index)``; a JSON-able record.

    ``mark()`` is called after torch's part (generation and torch's run) and before
    gradstack's, so that the parent can tell whose crash killed the child.
    """
    import gradstack
    import torch

    from .compare import compare
    from .execute import execute
    from .generate import generate

    try:
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


def worker(seed: int, start: int, stop: int) -> None:
    """The child's loop (``run_fuzz.py worker SEED START STOP``)."""
    import warnings

    warnings.simplefilter("ignore")
    out = sys.stdout

    def mark():
        out.write("G\n")
        out.flush()

    for i in range(start, stop):
        out.write(f"S {i}\n")
        out.flush()
        rec = run_one(seed, i, mark)
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


def _chunk(seed: int, start: int, stop: int, timeout: float) -> list[dict]:
    """Run indices [start, stop) in children, restarting after a crash."""
    records = []
    i = start
    while i < stop:
        env = dict(os.environ)
        env.setdefault("OMP_NUM_THREADS", "1")
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), "worker", str(seed), str(i), str(stop)],
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
) -> Summary:
    """Run programs ``start .. start+count-1`` of stream ``seed``.

    ``progress(counts, failures_of_the_chunk)`` is called as each chunk ends.
    """
    t0 = time.monotonic()
    bounds = [(a, min(a + chunk, start + count)) for a in range(start, start + count, chunk)]
    counts = collections.Counter()
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(_chunk, seed, a, b, timeout) for a, b in bounds]
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
