"""The op sweep: every differentiable op against torch's kernel, at three sizes (issue 34).

The ops come from gradstack's registries, not from a hand list: every op of
``gradstack_tensor.OPS`` whose entry in graph-engine's derivative table is differentiable,
plus the ``nn.functional`` calls the models of ``model_zoo.py`` make (``op_cases.FUNCTIONAL``:
gelu, silu, mish, softplus, layer_norm, softmax, cross_entropy, embedding, pooling,
conv2d, the LSTM and GRU cells, dropout, masked_fill ...).  ``benchmarks/op_cases.py``
says how to call each at about 100, 10**4 and 10**6 float32 elements; an op it has no
case for is listed as such.

Each library runs in a process of its own at one thread, pinned to the same core
(``library_worker.py``).  For every op and size both run the same call after
``manual_seed(0)``, and their outputs and gradients are compared (largest difference
relative to the largest value; above 1e-3 the row says so).  Then the forward (inputs
that require grad: the graph is recorded, as in training) and the forward + backward
(``autograd.grad`` with a fixed random output gradient) are timed in interleaved rounds;
a ratio is gradstack's time over torch's, the median of the per-round ratios.

Usage (``hatch run op-sweep`` runs it in the ``compare`` env)::

    python benchmarks/op_sweep.py                       # all: build/benchmarks/op-sweep.md
    python benchmarks/op_sweep.py --only gelu softmax   # names containing these words
    python benchmarks/op_sweep.py --sizes 1e4 --rounds 3
    python benchmarks/op_sweep.py --before old=/path/to/other/env/bin/python  # before/after
    python benchmarks/op_sweep.py --update-docs         # docs/op-sweep.md and its summary
                                                        # in docs/benchmarks.md

A benchmark, not a test: the goals (no op above 1.5x at 10**4 and 10**6 elements, the
median op at or below 1.0x) are reported, never asserted.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from library_worker import Workers, fmt_time, load_words  # noqa: E402
from models_vs_torch import cpu_model, versions, write_section  # noqa: E402
from op_cases import FUNCTIONAL, NO_TORCH_TWIN, case  # noqa: E402

SIZES = {"100": 100, "1e4": 10_000, "1e6": 1_000_000}
MODES = ("fwd", "fwd+bwd")
GS, TH = ("gradstack", "1"), ("torch", "1")  # with --before, more gradstack builds
NO_CASE = "no case in benchmarks/op_cases.py: add one (tests/test_op_cases.py lists them)"
BEGIN = "<!-- benchmarks/op_sweep.py: begin -->"
END = "<!-- benchmarks/op_sweep.py: end -->"


class Row:
    """One op at every size: ratios, times, the check, or why it did not run."""

    def __init__(self, name):
        self.name = name
        self.note = {}  # size -> text (no case, an error)
        self.shape = {}  # size -> the main input's shape
        self.diff = {}  # size -> largest relative difference
        self.samples = {}  # (size, mode, library) -> [seconds]
        self.one_sample = set()  # sizes timed by one sample (Note [Slow ops])
        self.build_note = {}  # (size, build) -> why an older build did not run

    def ratio(self, size, mode, lib="gradstack"):
        a, b = self.samples.get((size, mode, lib)), self.samples.get((size, mode, "torch"))
        if not a or not b:
            return None
        return statistics.median(x / y for x, y in zip(a, b))

    def median(self, size, mode, library):
        s = self.samples.get((size, mode, library))
        return statistics.median(s) if s else None


def compare(a_arrays, b_arrays) -> float:
    """The largest difference over outputs and gradients, relative to the largest value."""
    worst = 0.0
    for a, b in zip(a_arrays, b_arrays):
        if a is None or b is None:
            if (a is None) != (b is None):
                return float("inf")
            continue
        a, b = _as_real(a), _as_real(b)
        if a.shape != b.shape:
            return float("inf")
        if a.size:
            finite = np.isfinite(b)
            if not np.array_equal(finite, np.isfinite(a)):
                return float("inf")
            scale = max(1.0, float(np.max(np.abs(b[finite]), initial=0.0)))
            worst = max(worst, float(np.max(np.abs(a[finite] - b[finite]), initial=0.0)) / scale)
    return worst


def _as_real(a) -> np.ndarray:
    """float64 values; a complex array's real and imaginary parts side by side."""
    a = np.asarray(a)
    if np.iscomplexobj(a):
        return np.stack([a.real, a.imag]).astype(np.float64)
    return a.astype(np.float64)


# Note [Slow ops]
# ~~~~~~~~~~~~~~~
# A few ops take seconds per call at 10**6 elements (gradstack's polygamma, element by
# element: about 20 s forward and backward).  Timing them for every round would make the
# sweep last half an hour, so an op whose first call took longer than ``--slow`` seconds
# (either library) gets one sample per mode; at that length one sample varies little
# next to a ratio of 10x, and the table marks the size with "(1)".


def sweep(workers, ops, sizes, args) -> list[Row]:
    rows = []
    start = time.perf_counter()
    for i, (name, kind) in enumerate(ops):
        row = Row(name)
        rows.append(row)
        if name in NO_TORCH_TWIN:
            row.note = {s: "no torch twin: " + NO_TORCH_TWIN[name] for s in sizes}
            continue
        if case(name, 100, np.random.default_rng(0), kind) is None:
            row.note = {s: NO_CASE for s in sizes}
            continue
        for size in sizes:
            n = SIZES[size]
            answers = {
                key: workers.ask(key, "op_setup", name, kind, n, args.min_sample)
                for key in args.keys
            }
            if answers[TH][0] != "ok":
                row.note[size] = "torch: " + answers[TH][1].splitlines()[0][:100]
                continue
            failed = [key for key in args.keys if answers[key][0] != "ok"]
            if GS in failed:
                text = answers[GS][1].splitlines()[0][:140]
                row.note[size] = f"gradstack fails: {text}"
                continue
            for key in failed:  # an older build without the op: the others are timed
                text = answers[key][1].splitlines()[0][:140]
                row.build_note[size, key[0]] = f"{key[0]} fails: {text}"
            keys = [key for key in args.keys if key not in failed]
            row.shape[size] = answers[GS][1]["shape"]
            row.diff[size] = compare(answers[GS][1]["arrays"], answers[TH][1]["arrays"])
            slowest = max(max(answers[key][1]["once"].values()) for key in keys)
            rounds = 1 if slowest > args.slow else args.rounds  # Note [Slow ops]
            if rounds < args.rounds:
                row.one_sample.add(size)
            for mode in MODES:
                for r in range(rounds):
                    k = r % len(keys)
                    for key in keys[k:] + keys[:k]:
                        kind_, value = workers.ask(key, "op_sample", mode)
                        if kind_ != "ok":
                            row.note[size] = f"{key[0]} fails while timed: {value[:100]}"
                            break
                        row.samples.setdefault((size, mode, key[0]), []).append(value)
        cells = "  ".join(
            f"{s}: {fmt_ratio(row.ratio(s, 'fwd'))}/{fmt_ratio(row.ratio(s, 'fwd+bwd'))}"
            if s not in row.note
            else f"{s}: {row.note[s][:60]}"
            for s in sizes
        )
        print(
            f"[{i + 1}/{len(ops)} {time.perf_counter() - start:5.0f} s] {name:34s} {cells}",
            flush=True,
        )
    return rows


def fmt_ratio(r):
    return "" if r is None else f"{r:.2f}x"


def sort_key(row, sizes):
    """Worst first: the fwd+bwd ratio at the largest size measured, else the next size."""
    for size in reversed(sizes):
        r = row.ratio(size, "fwd+bwd")
        if r is not None:
            return -r
    return float("inf")


def full_table(rows, sizes, builds=("gradstack",)) -> list[str]:
    head = "| op | shape at the largest size |"
    rule = "|---|---|"
    for s in sizes:
        for lib in builds:
            who = "" if lib == "gradstack" else f" ({lib})"
            head += f" fwd {s}{who} | fwd+bwd {s}{who} |"
            rule += "---:|---:|"
    big = sizes[-1]
    head += f" gradstack / torch fwd+bwd at {big} | check |"
    rule += "---:|---|"
    lines = [head, rule]
    for row in sorted(rows, key=lambda r: sort_key(r, sizes)):
        cells = []
        for s in sizes:
            for lib in builds:
                if s in row.note:
                    cells += [row.note[s].replace("|", "/") if lib == builds[0] else "", ""]
                else:
                    mark = " (1)" if s in row.one_sample else ""
                    cells += [fmt_ratio(row.ratio(s, m, lib)) + mark for m in MODES]
        times = ""
        if big not in row.note and row.median(big, "fwd+bwd", "torch") is not None:
            times = (
                f"{fmt_time(row.median(big, 'fwd+bwd', 'gradstack'))} / "
                f"{fmt_time(row.median(big, 'fwd+bwd', 'torch'))}"
            )
        worst = max(row.diff.values(), default=None)
        check = "" if worst is None else ("ok" if worst <= 1e-3 else f"DIFFERS ({worst:.1e})")
        shape = row.shape.get(big, next(iter(row.shape.values()), ""))
        lines.append(f"| {row.name} | {shape} | " + " | ".join(cells) + f" | {times} | {check} |")
    return lines


def summary(rows, sizes, builds=("gradstack",)) -> list[str]:
    lines = [
        "| build | size | mode | ops timed | median ratio | ops above 1.5x | ops above 1.0x |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for lib in builds:
        for s in sizes:
            for m in MODES:
                ratios = [r for r in (row.ratio(s, m, lib) for row in rows) if r is not None]
                if not ratios:
                    continue
                lines.append(
                    f"| {lib} | {s} | {m} | {len(ratios)} | {statistics.median(ratios):.2f}x "
                    f"| {sum(r > 1.5 for r in ratios)} | {sum(r > 1.0 for r in ratios)} |"
                )
    return lines


def worst(rows, size, mode, count=20, lib="gradstack") -> list[tuple[str, float, str]]:
    measured = [(row.name, row.ratio(size, mode, lib), row) for row in rows]
    measured = [m for m in measured if m[1] is not None]
    measured.sort(key=lambda m: -m[1])
    return [
        (
            name,
            r,
            f"{fmt_time(row.median(size, mode, lib))} vs "
            f"{fmt_time(row.median(size, mode, 'torch'))}",
        )
        for name, r, row in measured[:count]
    ]


def worst_table(rows, sizes, count=20, builds=("gradstack",)) -> list[str]:
    lines = []
    for lib in builds:
        for s in [s for s in ("1e4", "1e6") if s in sizes]:
            who = "" if lib == "gradstack" else f" ({lib})"
            lines += [
                f"The {count} worst ops at {s} elements, forward + backward{who}:",
                "",
                "| op | gradstack / torch | gradstack vs torch |",
                "|---|---:|---|",
            ]
            lines += [
                f"| {n} | {r:.2f}x | {t} |" for n, r, t in worst(rows, s, "fwd+bwd", count, lib)
            ]
            lines.append("")
    return lines


def failures(rows) -> list[str]:
    out = []
    for row in rows:
        notes = sorted(set(row.note.values()))
        notes += sorted(
            {f"{text} (timed for the other builds)" for text in row.build_note.values()}
        )
        for note in notes:
            out.append(f"- `{row.name}`: {note}")
    return out


def page(rows, sizes, args, loads) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# The op sweep: gradstack / torch for every differentiable op (issue 34)",
        "",
        f"Measured {now} with `{args.command}` on {cpu_model()}, one thread, float32 "
        f"({versions()}); the host's {loads[0]} at the start, {loads[1]} at the end "
        "(other jobs shared it; the libraries took turns, so the load hit both alike).  "
        "Each ratio is gradstack's time over torch's, the median of "
        f"{args.rounds} per-round ratios; `fwd` is the call with inputs that require "
        "grad (the graph is recorded), `fwd+bwd` the call and `autograd.grad` of its "
        "output.  Sizes are the main input's elements: 100, 10^4 and 10^6 (shapes in "
        "`benchmarks/op_cases.py`).  Sorted by the fwd+bwd ratio at the largest size, worst "
        "first.  The check compares outputs and gradients with torch's (largest difference "
        "relative to the largest value, 1e-3 allowed).  A ratio marked (1) is one sample: "
        f"the op took more than {args.slow} s per call (Note [Slow ops] in the script).  "
        "Made by `benchmarks/op_sweep.py` (`hatch run op-sweep`); the ops come from "
        "gradstack's op registry and derivative table, plus the `nn.functional` calls of "
        "the models.",
        "",
        "## Summary",
        "",
        *summary(rows, sizes, args.builds),
        "",
        *worst_table(rows, sizes, builds=args.builds),
        "## Every op",
        "",
        *full_table(rows, sizes, args.builds),
        "",
    ]
    if len(args.builds) > 1:
        lines[4:4] = [
            "Builds: "
            + ", ".join(f"`{lib}` is the gradstack of `{py}`" for lib, py in args.before.items())
            + "; `gradstack` is this checkout's.",
            "",
        ]
    notes = failures(rows)
    if notes:
        lines += ["## Not timed", "", *notes, ""]
    return "\n".join(lines)


def docs_section(rows, sizes, args) -> str:
    lines = [
        BEGIN,
        "## Op sweep (issue 34)",
        "",
        "Every differentiable op of the op table and the `nn.functional` calls of the "
        "models, forward and forward + backward, at 100, 10^4 and 10^6 float32 elements, "
        "gradstack / torch at one thread: the full table, sorted by ratio, is "
        f"[op-sweep.md](op-sweep.md), made by `{args.command}` (`hatch run op-sweep "
        "--update-docs`; `--only gelu softmax` narrows it to some ops, `--before "
        "old=PATH/bin/python` times another build of gradstack in the same rounds).  Its "
        "summary:",
        "",
        *summary(rows, sizes, args.builds),
        "",
        *worst_table(rows, sizes, count=10, builds=args.builds),
        END,
    ]
    return "\n".join(lines) + "\n"


def selected(ops, only):
    if not only:
        return ops
    return [(n, k) for n, k in ops if any(word in n for word in only)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", help="ops whose names contain one of these")
    parser.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=5, help="samples per median")
    parser.add_argument("--min-sample", type=float, default=0.005, help="seconds per sample")
    parser.add_argument(
        "--slow", type=float, default=0.5, help="one sample for ops slower than this (s)"
    )
    parser.add_argument("--no-functional", action="store_true", help="the op table only")
    parser.add_argument(
        "--with-scipy",
        action="store_true",
        help="let the workers import scipy (by default they cannot, as in a plain install)",
    )
    parser.add_argument(
        "--before",
        metavar="LABEL=PYTHON",
        action="append",
        default=[],
        help="also time the gradstack of another environment (its python) as "
        "'gradstack@LABEL', in the same rounds: a before/after comparison in one run",
    )
    parser.add_argument("--md", type=Path, default=ROOT / "build" / "benchmarks" / "op-sweep.md")
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="write docs/op-sweep.md and the summary section of docs/benchmarks.md",
    )
    args = parser.parse_args(argv)
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--update-docs"]
    args.command = " ".join(["python benchmarks/op_sweep.py", *shown])
    sizes = [s for s in SIZES if s in args.sizes]
    args.before = dict(spec.partition("=")[::2] for spec in args.before)
    for label, python in args.before.items():
        if not label or not Path(python).exists():
            parser.error(f"--before wants LABEL=PYTHON with an existing python: {label}={python}")
    args.before = {f"gradstack@{label}": python for label, python in args.before.items()}
    args.builds = ["gradstack", *args.before]
    args.keys = [(lib, "1") for lib in args.builds] + [TH]
    loads = [load_words()]
    print(f"{cpu_model()}; {versions()}; {loads[0]}", flush=True)
    hide = () if args.with_scipy else ("scipy",)
    with Workers(args.keys, hide, executables=args.before) as workers:
        kind, ops = workers.ask(GS, "op_list")
        if kind != "ok":
            print(f"gradstack's op list: {ops}", file=sys.stderr)
            return 1
        if not args.no_functional:
            ops = ops + [(name, "other") for name in FUNCTIONAL]
        ops = selected(ops, args.only)
        print(f"{len(ops)} ops x {len(sizes)} sizes", flush=True)
        rows = sweep(workers, ops, sizes, args)
    loads.append(load_words())
    print("\n" + "\n".join(summary(rows, sizes, args.builds)))
    print("\n" + "\n".join(worst_table(rows, sizes, builds=args.builds)))
    text = page(rows, sizes, args, loads)
    target = ROOT / "docs" / "op-sweep.md" if args.update_docs else args.md
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    if args.update_docs:
        write_section(ROOT / "docs" / "benchmarks.md", docs_section(rows, sizes, args), BEGIN, END)
        print("wrote the op sweep's section of docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
