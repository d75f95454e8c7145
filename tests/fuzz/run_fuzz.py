"""The long fuzz run and its tools: ``hatch run fuzz [run|show|shrink|worker] ...``.

    hatch run fuzz                                # 50,000 programs of seed 1, 2 processes
    hatch run fuzz run --seed 7 --count 2000 --out /tmp/fuzz.jsonl --shrink 3
    hatch run fuzz show 1 128                     # program 128 of seed 1 and its verdict
    hatch run fuzz shrink 1 128                   # its minimal repro, as a torch script

``run`` prints the counts per category (see tests/fuzz/gsfuzz/compare.py); ``--out`` writes
one JSON line per failing program; ``--shrink N`` prints minimal repros of the first N
programs of each failure signature.  Exit status 1 when any program failed.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_gsfuzz():
    """Import tests/fuzz/gsfuzz as the package ``gsfuzz`` (tests/ is not on sys.path)."""
    if "gsfuzz" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "gsfuzz",
            HERE / "gsfuzz" / "__init__.py",
            submodule_search_locations=[str(HERE / "gsfuzz")],
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["gsfuzz"] = module
        spec.loader.exec_module(module)
    return sys.modules["gsfuzz"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="fuzz", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run programs and count the outcomes")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--count", type=int, default=50_000)
    r.add_argument("--start", type=int, default=0)
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--chunk", type=int, default=500)
    r.add_argument("--timeout", type=float, default=120.0, help="seconds without progress: a hang")
    r.add_argument("--out", help="write failing records here (JSON lines)")
    r.add_argument(
        "--shrink",
        type=int,
        default=0,
        metavar="N",
        help="minimal repros of N programs per signature",
    )
    for name in ("show", "shrink"):
        p = sub.add_parser(name, help=f"{name} one program")
        p.add_argument("seed", type=int)
        p.add_argument("index", type=int)
    w = sub.add_parser("worker", help="(internal) the child process of run")
    w.add_argument("seed", type=int)
    w.add_argument("start", type=int)
    w.add_argument("stop", type=int)
    mode = w.add_mutually_exclusive_group()
    mode.add_argument("--oracle", action="store_true", help="torch's side from the record")
    mode.add_argument("--record", action="store_true", help="run torch's side only, print it")
    args = parser.parse_args(argv)
    load_gsfuzz()
    from gsfuzz import runner

    if args.cmd == "worker":
        mode = "oracle" if args.oracle else "record" if args.record else "live"
        runner.worker(args.seed, args.start, args.stop, mode)
        return 0
    if args.cmd in ("show", "shrink"):
        from gsfuzz.generate import generate
        from gsfuzz.shrink import check, repro_script, shrink

        program = generate(args.seed, args.index)
        verdict = check(program)
        if verdict is None:
            print(program.script())
            print("# gradstack and torch agree")
            return 0
        if args.cmd == "shrink":
            program, verdict = shrink(program, verdict)
        print(repro_script(program, verdict))
        print(f"# signature: {verdict.signature}")
        return 1
    if args.cmd is None:
        args = parser.parse_args(["run", *(argv or [])])

    out = open(args.out, "w") if args.out else None  # noqa: SIM115 - written as chunks end

    def progress(counts, failures):
        bad = counts["programs"] - counts["ok"]
        print(f"... {counts['programs']} programs, {bad} failing", file=sys.stderr, flush=True)
        if out:
            for rec in failures:
                out.write(json.dumps(rec, default=str) + "\n")
            out.flush()

    summary = runner.run(
        args.seed,
        args.count,
        start=args.start,
        jobs=args.jobs,
        chunk=args.chunk,
        timeout=args.timeout,
        progress=progress,
    )
    if out:
        out.close()
    sigs = collections.Counter(rec.get("signature", rec["cat"]) for rec in summary.failures)
    print(summary.table())
    if sigs:
        print("\nfailure signatures (count, signature, first index):")
        first = {}
        for rec in summary.failures:
            first.setdefault(rec.get("signature", rec["cat"]), rec["i"])
        for sig, n in sigs.most_common():
            print(f"{n:>7}  {sig}  (#{first[sig]})")
    if args.shrink:
        from gsfuzz.generate import generate
        from gsfuzz.shrink import repro_script, shrink

        seen = collections.Counter()
        for rec in summary.failures:
            sig = rec.get("signature", rec["cat"])
            if rec["cat"] in ("crash", "harness_error") or seen[sig] >= args.shrink:
                continue
            seen[sig] += 1
            program, verdict = shrink(generate(args.seed, rec["i"]))
            if verdict is not None:
                print("\n" + repro_script(program, verdict))
    return 1 if summary.counts["programs"] != summary.counts["ok"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
