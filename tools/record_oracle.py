"""Record torch's side of the oracle corpora (``hatch run record-oracle``).

The test suite compares gradstack with torch 2.13.  Where torch's output is a deterministic
function of the program and torch's version, it is recorded once, checked in, and read by
the tests instead of running torch every time:

- ``tests/real_programs/oracle/<program>.json``: what each real program printed under
  torch (Note [Recorded oracle output] in ``tests/real_programs/oracle.py``);
- ``tests/dropin_programs/oracle/<program>.json``: the same for the short programs of our
  own that reach issue 35's namespaces (``tests/test_dropin_programs.py``);
- ``tests/fuzz/oracle/seed-<seed>.json.gz``: the bounded fuzz run's programs and torch's
  events (Note [Recorded fuzz oracle] in ``tests/fuzz/gsfuzz/oracle.py``).

Each is recorded twice, in separate processes; what differs between the two runs is marked
to run torch live at test time.  A record made from other code or another torch version is
stale, and the tests then fail with this command.

    hatch run record-oracle                  # every corpus, only what is stale or missing
    hatch run record-oracle real_programs    # one corpus (real_programs, dropin_programs, fuzz)
    hatch run record-oracle --force          # record everything again
    hatch run record-oracle --check          # run torch again; exit 1 if a record would change
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("real_programs", "dropin_programs", "fuzz")
FUZZ_SEED, FUZZ_COUNT = 20261201, 2000  # tests/fuzz/test_fuzz_programs.py's bounded run


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _capability() -> str:
    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def real_programs(force: bool, check: bool, jobs: int, corpus: str = "real_programs") -> int:
    """Record the programs of ``corpus`` (``real_programs`` or ``dropin_programs``)."""
    oracle = _module("real_programs_oracle", ROOT / "tests" / "real_programs" / "oracle.py")
    folder = oracle.PROGRAMS_DIR if corpus == "real_programs" else ROOT / "tests" / corpus
    programs = oracle.programs(folder)
    todo = []
    for program in programs:
        try:
            oracle.load(program)
            if force or check:
                todo.append(program)
        except oracle.StaleRecord:
            todo.append(program)
    print(
        f"record_oracle: {corpus}: {len(programs)} programs, {len(todo)} to "
        f"{'check' if check else 'record'} (each run twice under torch)",
        flush=True,
    )
    capability = _capability()
    changed = []

    def one(program: Path) -> tuple[Path, dict, float]:
        start = time.perf_counter()
        return program, oracle.record(program, capability=capability), time.perf_counter() - start

    # each recording runs two torch processes side by side
    with ThreadPoolExecutor(max_workers=max(1, jobs // 2)) as pool:
        for program, rec, took in pool.map(one, todo):
            path = oracle.record_path(program)
            old = json.loads(path.read_text()) if path.is_file() else None
            why = oracle.differs(program, old, rec)
            note = "" if rec["deterministic"] else " (not deterministic: runs live)"
            if why:
                changed.append(f"{program.stem}: {why}")
            if not check:
                oracle.write(rec, program)
            state = why or "unchanged"
            print(f"  {program.stem}: {state}{note} ({took:.1f} s)", flush=True)
    return _verdict(corpus, changed, check)


def fuzz(force: bool, check: bool, jobs: int) -> int:
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    run_fuzz = _module("run_fuzz", ROOT / "tests" / "fuzz" / "run_fuzz.py")
    run_fuzz.load_gsfuzz()
    from gsfuzz import oracle, runner

    body = oracle.read(FUZZ_SEED)
    try:
        oracle.check(body, FUZZ_SEED, FUZZ_COUNT)
        stale = None
    except oracle.StaleRecord as exc:
        stale = str(exc)
    if stale is None and not (force or check):
        print(f"record_oracle: fuzz: {oracle.record_path(FUZZ_SEED).name} is up to date")
        return 0
    print(
        f"record_oracle: fuzz: seed {FUZZ_SEED}, {FUZZ_COUNT} programs, generated and run "
        f"under torch twice ({jobs} processes) ...",
        flush=True,
    )
    runs = []
    for k in (1, 2):
        start = time.perf_counter()

        def progress(done: int, k: int = k) -> None:
            print(f"  run {k}: {done} of {FUZZ_COUNT} programs", flush=True)

        runs.append(runner.record(FUZZ_SEED, FUZZ_COUNT, jobs=jobs, progress=progress))
        print(f"  run {k} took {time.perf_counter() - start:.0f} s", flush=True)
    entries = []
    for a, b in zip(*runs):
        entries.append(a if oracle.same_entry(a, b) else {"i": a["i"], "live": True})
    live = [e["i"] for e in entries if e.get("live")]
    crashed = [e["i"] for e in entries if "oracle_crash" in e]
    print(
        f"  {len(live)} programs not deterministic under torch (run live: {live[:20]}), "
        f"{len(crashed)} crash torch itself {crashed[:20]}"
    )
    changed = []
    if body is None or stale is not None:
        changed.append(stale or "no record")
    elif [json.dumps(e, sort_keys=True) for e in body["programs"][:FUZZ_COUNT]] != [
        json.dumps(e, sort_keys=True) for e in entries
    ]:
        changed.append("torch's side differs from the record")
    if not check:
        path = oracle.write(FUZZ_SEED, entries, _capability())
        print(f"  wrote {path.relative_to(ROOT)} ({path.stat().st_size / 1e6:.1f} MB)")
    return _verdict("fuzz", changed, check)


def _verdict(corpus: str, changed: list[str], check: bool) -> int:
    if not changed:
        print(f"record_oracle: {corpus}: the records agree with torch")
        return 0
    verb = "would change" if check else "recorded"
    print(f"record_oracle: {corpus}: {len(changed)} {verb}:")
    for line in changed:
        print(f"  {line}")
    return 1 if check else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="*", help=f"any of {', '.join(CORPORA)} (default: all)")
    parser.add_argument("--force", action="store_true", help="record even what is up to date")
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    unknown = set(args.corpus) - set(CORPORA)
    if unknown:
        parser.error(
            f"unknown corpus {', '.join(sorted(unknown))}; choose from {', '.join(CORPORA)}"
        )
    code = 0
    for corpus in args.corpus or CORPORA:
        if corpus == "fuzz":
            code |= fuzz(args.force, args.check, args.jobs)
        else:
            code |= real_programs(args.force, args.check, args.jobs, corpus)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
