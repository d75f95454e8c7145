"""The models people train, step for step: gradstack against PyTorch (issue 34).

The models are ``benchmarks/model_zoo.py``'s (a character GPT, an LSTM language model,
LeNet-5, a ResNet with BatchNorm2d, a GRU seq2seq with attention, an MLP with
BatchNorm1d and Dropout, an EmbeddingBag classifier, a VAE, minGPT's gpt-mini), one code
for both libraries.  Each library runs in processes of its own (``library_worker.py``), one
per thread setting: one thread (``OMP/OPENBLAS/MKL_NUM_THREADS=1``,
``set_num_threads(1)``, pinned to one core) and the libraries' defaults (nothing pinned:
both cores here).  For every model it reports:

- the median time of a full training step (zero_grad, forward, loss, backward, clip where
  the model clips, optimizer step) and its 10th percentile, for both libraries and both
  thread settings, and the ratio gradstack / torch: the median of the per-round ratios
  (the libraries take turns, one sample each per round, in a rotating order: Note
  [Interleaved rounds] in tools/compare.py), and the ratio of the 10th percentiles;
- the peak memory of one step (Note [Peak memory of a step] in ``library_worker.py``);
- the check: from the same weights (torch's initial ``state_dict``, copied into gradstack
  as numpy arrays) and the same batches, after ``manual_seed`` on both sides (gradstack
  draws torch's random numbers: the dropout masks and the VAE's noise are the same), the
  losses of the first ``--check-steps`` steps agree with torch's to float32 tolerance
  (``rtol=RTOL``, ``atol=ATOL``); the table gives the largest relative difference;
- with ``--split``, the split of each step into GEMM time and the rest
  (``gemm_split.py``; ``model_gemm_split.py`` prints that table alone).

A model gradstack cannot run (a missing op, an error) is reported with its error, not
worked around.  Usage (``hatch run models`` runs it in the ``compare`` env)::

    python benchmarks/models_vs_torch.py                     # all models, both thread settings
    python benchmarks/models_vs_torch.py --only lenet5 vae --rounds 5
    python benchmarks/models_vs_torch.py --threads 1 --split
    python benchmarks/models_vs_torch.py --update-docs       # the section of docs/benchmarks.md
    python benchmarks/models_vs_torch.py --before old=/path/to/other/env/bin/python
                                        # also an older gradstack, in the same rounds

This is a benchmark, not a test: the goals are reported, never asserted.  It exits 1 when
a model fails to run or its losses disagree.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from library_worker import Workers, fmt_time, load_words, p10  # noqa: E402
from model_zoo import MODELS  # noqa: E402

RTOL, ATOL = 2e-4, 1e-5  # the check's float32 tolerance on the losses
BEGIN = "<!-- benchmarks/models_vs_torch.py: begin -->"
END = "<!-- benchmarks/models_vs_torch.py: end -->"


def gradstacks(libraries) -> list[str]:
    """The gradstack builds among ``libraries``: ``gradstack`` and ``gradstack@LABEL``."""
    return [lib for lib in libraries if lib.startswith("gradstack")]


class Result:
    """Everything measured for one model."""

    def __init__(self, name):
        self.name = name
        self.samples = {}  # (library, threads) -> [seconds per step, one per round]
        self.error = {}  # (library, threads) -> error text
        self.memory = {}  # library -> bytes
        self.losses = {}  # library -> [loss per step]
        self.param_diff = {}  # library -> largest difference of the weights after the check
        self.split = {}  # library -> [GEMM seconds per round]; "numpy" -> [limit per round]

    def median(self, key):
        s = self.samples.get(key)
        return statistics.median(s) if s else None

    def p10(self, key):
        s = self.samples.get(key)
        return p10(s) if s else None

    def ratio(self, threads, stat="median", lib="gradstack"):
        """``lib``'s time over torch's: the median of the per-round ratios, or with
        ``stat="p10"`` the ratio of the 10th percentiles."""
        key, ref = (lib, threads), ("torch", threads)
        a, b = self.samples.get(key), self.samples.get(ref)
        if not a or not b:
            return None
        if stat == "median" and len(a) == len(b):
            return statistics.median(x / y for x, y in zip(a, b))
        return getattr(self, stat)(key) / getattr(self, stat)(ref)

    def loss_diff(self, lib="gradstack"):
        """The largest relative difference of ``lib``'s losses from torch's, and whether
        every loss is within (RTOL, ATOL)."""
        a, b = self.losses.get(lib), self.losses.get("torch")
        if a is None or b is None:
            return None, False
        a, b = np.asarray(a), np.asarray(b)
        rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))
        return rel, bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))

    def failed(self):
        checked = [lib for lib in self.losses if lib != "torch"]
        return bool(self.error) or any(not self.loss_diff(lib)[1] for lib in checked)


def _ask(workers, key, result, *request):
    kind, value = workers.ask(key, *request)
    if kind != "ok":
        result.error.setdefault(key, value)
        return None
    return value


def measure(workers, name, args) -> Result:
    """Set up, check, time, and measure the memory (and the split) of one model."""
    result = Result(name)
    keys = [(lib, t) for t in args.thread_settings for lib in args.libraries]
    state = None
    for key in sorted(keys, key=lambda k: k[0] != "torch"):  # torch first: its weights
        value = _ask(workers, key, result, "setup", name, state, args.min_sample)
        if key[0] == "torch" and state is None:
            state = value
    timed = [k for k in keys if k not in result.error]
    first = args.thread_settings[0]
    if not args.no_check and state is not None:
        params = {}
        for lib in args.libraries:
            if (lib, first) in timed:
                value = _ask(
                    workers, (lib, first), result, "check", name, state, args.check_steps, 7
                )
                if value is not None:
                    result.losses[lib], params[lib] = value
        for lib in gradstacks(params):
            if "torch" in params:
                ref = params["torch"]
                result.param_diff[lib] = max(
                    float(np.max(np.abs(params[lib][k] - ref[k]))) for k in ref
                )
    gemms = None
    if args.split and ("torch", "1") in timed:  # torch's GEMMs, for numpy's limit
        gemms = (_ask(workers, ("torch", "1"), result, "profile") or {}).get("gemms")
    profiled = [k for k in timed if k[1] == "1"] if args.split else []
    for r in range(args.rounds):  # Note [Interleaved rounds] in tools/compare.py
        k = r % len(timed) if timed else 0
        for key in timed[k:] + timed[:k]:
            if key in result.error:
                continue
            value = _ask(workers, key, result, "sample")
            if value is not None:
                result.samples.setdefault(key, []).append(value)
            if key in profiled:  # Note [The split in the same rounds] in gemm_split.py
                value = _ask(workers, key, result, "profile")
                if value is not None:
                    result.split.setdefault(key[0], []).append(value["gemm"])
        if gemms:
            value = _ask(workers, ("numpy", "1"), result, "gemm", gemms, 0.02)
            if value is not None:
                result.split.setdefault("numpy", []).append(value)
    if not args.no_memory:
        for lib in args.libraries:
            if (lib, first) in timed and (lib, first) not in result.error:
                result.memory[lib] = _ask(workers, (lib, first), result, "memory")
    return result


# =============================================================================== output


def fmt_bytes(n):
    if n is None:
        return ""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def fmt_ratio(r):
    return "" if r is None else f"{r:.2f}x"


def _cell_error(result, libraries, threads):
    for lib in libraries:
        err = result.error.get((lib, threads))
        if err:
            return f"{lib} fails: {err.splitlines()[0][:120]}"
    return None


def model_table(results, thread_settings, libraries) -> list[str]:
    builds = gradstacks(libraries)
    head, rule = "| model |", "|---|"
    for t in thread_settings:
        label = "1 thread" if t == "1" else "default threads"
        head += f" torch, {label} |"
        rule += "---:|"
        for lib in builds:
            head += f" {lib}, {label} | {lib} / torch (p10) |"
            rule += "---:|---:|"
    head += " peak memory " + " / ".join([*builds, "torch"]) + " | losses vs torch |"
    rule += "---:|---|"
    lines = [head, rule]
    width = sum(1 + 2 * len(builds) for _ in thread_settings)
    for res in results:
        row = f"| {MODELS[res.name].title} |"
        for t in thread_settings:
            err = _cell_error(res, libraries, t)
            if err:
                row += f" {err} |" + " |" * (width // len(thread_settings) - 1)
                continue
            th = ("torch", t)
            row += f" {fmt_time(res.median(th))} (p10 {fmt_time(res.p10(th))}) |"
            for lib in builds:
                key = (lib, t)
                row += (
                    f" {fmt_time(res.median(key))} (p10 {fmt_time(res.p10(key))}) |"
                    f" **{fmt_ratio(res.ratio(t, lib=lib))}**"
                    f" ({fmt_ratio(res.ratio(t, 'p10', lib))}) |"
                )
        row += " " + " / ".join(fmt_bytes(res.memory.get(lib)) for lib in [*builds, "torch"])
        checks = []
        for lib in builds:
            diff, ok = res.loss_diff(lib)
            if diff is not None:
                who = "" if lib == "gradstack" else f"{lib}: "
                checks.append(f"{who}{'agree' if ok else 'DISAGREE'}, max rel. diff {diff:.1e}")
        if checks:
            row += f" | {len(res.losses['torch'])} steps: " + "; ".join(checks) + " |"
        else:
            row += " | not checked |"
        lines.append(row)
    return lines


def _per_round(a, b, fn):
    """The median over rounds of ``fn(a[r], b[r])``, or None."""
    if not a or not b or len(a) != len(b):
        return None
    return statistics.median(fn(x, y) for x, y in zip(a, b))


def split_table(results, libraries) -> list[str]:
    """The split of each step (Note [The split in the same rounds] in gemm_split.py)."""
    lines = [
        "| model | numpy limit (the GEMMs alone) | gradstack GEMM | GEMM / limit (goal <= 1.05) "
        "| gradstack else | torch else | else ratio (goal <= 0.7) | torch GEMM+conv+RNN "
        "| gradstack step | torch step |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    med = statistics.median
    for res in results:
        limit, th_gemm = res.split.get("numpy"), res.split.get("torch")
        th_steps = res.samples.get(("torch", "1"))
        for lib in gradstacks(libraries):
            title = MODELS[res.name].title + ("" if lib == "gradstack" else f", {lib}")
            gs_gemm, gs_steps = res.split.get(lib), res.samples.get((lib, "1"))
            if not gs_gemm or not th_gemm or not gs_steps or not th_steps or not limit:
                lines.append(f"| {title} | not measured | | | | | | | | |")
                continue
            gs_else = [s - g for s, g in zip(gs_steps, gs_gemm)]
            th_else = [s - g for s, g in zip(th_steps, th_gemm)]
            lines.append(
                f"| {title} | {fmt_time(med(limit))} | {fmt_time(med(gs_gemm))} "
                f"| {fmt_ratio(_per_round(gs_gemm, limit, lambda a, b: a / b))} "
                f"| {fmt_time(med(gs_else))} | {fmt_time(med(th_else))} "
                f"| {fmt_ratio(_per_round(gs_else, th_else, lambda a, b: a / b))} "
                f"| {fmt_time(med(th_gemm))} | {fmt_time(med(gs_steps))} "
                f"| {fmt_time(med(th_steps))} |"
            )
    return lines


def versions() -> str:
    import importlib.metadata as md

    out = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    for dist in ("gradstack", "torch"):
        try:
            out.append(f"{dist} {md.version(dist)}")
        except md.PackageNotFoundError:
            pass
    return ", ".join(out)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def section(results, args, loads) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    failures = [r for r in results if r.failed()]
    lines = [
        BEGIN,
        "## The models people train: gradstack against PyTorch (issue 34)",
        "",
        f"Measured {now} with `{args.command}` on {cpu_model()}, {os.cpu_count()} cores "
        f"({versions()}); the host's {loads[0]} at the start, {loads[1]} at the end "
        "(other jobs shared the machine: the libraries took turns, so the load hit both "
        "alike, and the ratios move less than the times; at default threads a loaded host "
        "hurts the library whose threads wait for each other most).  "
        + (
            "gradstack ran as a plain install has it: without scipy, which is not one of "
            "its dependencies (Note [Measured as users install it] in "
            "`benchmarks/library_worker.py`).  "
            if not args.with_scipy
            else "Both workers could import scipy (`--with-scipy`).  "
        )
        + f"Each cell is the median time of a full training step over {args.rounds} rounds "
        f"(each sample loops the step for at least {args.min_sample} s) and its 10th "
        "percentile; a ratio is gradstack's time over torch's, the median of the per-round "
        "ratios, with the ratio of the 10th percentiles in brackets.  Peak memory: the most "
        "memory one step holds at once beyond what was live when it began (the weights, "
        "the optimizer's state, the last step's gradients), measured at one thread "
        "(gradstack: tracemalloc, numpy's buffers and the step's Python objects; torch: "
        "its CPU allocator's records in its profiler; Note [Peak memory of a step] in "
        "`benchmarks/library_worker.py`).  Losses: the first "
        f"{args.check_steps} steps from torch's initial weights copied into gradstack, the "
        "same batches and `manual_seed` on both sides (gradstack draws torch's random "
        "numbers, so dropout and the VAE's noise are the same), compared with "
        f"`rtol={RTOL}, atol={ATOL}`.",
        "",
        *model_table(results, args.thread_settings, args.libraries),
        "",
    ]
    if len(args.libraries) > 2:
        lines += [
            "Builds: "
            + ", ".join(f"`{lib}` is the gradstack of `{py}`" for lib, py in args.before.items())
            + "; `gradstack` is this checkout's.",
            "",
        ]
    if failures:
        lines += ["Failures:", ""]
        for res in failures:
            for key, err in res.error.items():
                lines.append(f"- {res.name}, {key[0]} ({key[1]} threads): `{err[:300]}`")
            for lib in gradstacks(res.losses):
                diff, ok = res.loss_diff(lib)
                if diff is not None and not ok:
                    lines.append(
                        f"- {res.name}: losses {lib} {res.losses[lib]} vs torch "
                        f"{res.losses['torch']}"
                    )
        lines.append("")
    if args.split:
        lines += [
            "### Where the time goes: GEMMs and everything else (one thread)",
            "",
            "The numpy limit is torch's GEMMs of the step (its `mm`/`addmm`/`bmm` calls, "
            "its convolutions and RNN layers as the GEMMs of an im2col or of one time step) "
            "timed alone with `np.matmul` on contiguous float32 arrays.  gradstack's GEMM "
            "time is what its profiler gives to the GEMM ops and their backward nodes, "
            "copies around them included; torch's is the time of its GEMM, convolution and "
            'RNN primitives.  "Else" is the unprofiled step less that time (Note [What '
            "counts as GEMM time] in `benchmarks/gemm_split.py`).  Every part is measured "
            "in the same rounds as the steps: in each round each library runs one profiled "
            "step after its timed sample, and numpy one pass over the GEMMs; a cell is a "
            "median over the rounds, a ratio the median of the per-round ratios (Note [The "
            "split in the same rounds]).",
            "",
            *split_table(results, args.libraries),
            "",
        ]
    lines += [
        "Reproduce: `hatch run models --split --update-docs` rewrites this section "
        "(without `--update-docs` it prints the tables; `--only lenet5 vae`, `--threads 1`, "
        "`--quick` narrow it down; `--before old=PATH/bin/python` times another build of "
        "gradstack in the same rounds), `hatch run models-split` prints the split alone; the "
        "models are in `benchmarks/model_zoo.py`, the asv suite of their steps in "
        "`benchmarks/asv/bench_models.py`.",
        END,
    ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, text: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace the section between ``begin`` and ``end`` in ``path``; a new section goes
    after this script's section, else after tools/compare.py's keep marker (so that
    ``hatch run compare`` keeps it), else at the end."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    if begin in old and end in old:
        new = old[: old.index(begin)] + text.rstrip("\n") + old[old.index(end) + len(end) :]
    else:
        marker = "<!-- tools/compare.py keeps the sections below this line"
        anchor = END if END in old else marker
        at = old.find(anchor)
        if at < 0:
            new = old.rstrip("\n") + "\n\n" + text
        else:
            eol = old.index("\n", at) + 1
            new = old[:eol] + "\n" + text + "\n" + old[eol:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, encoding="utf-8")


def print_result(res, args):
    for t in args.thread_settings:
        err = _cell_error(res, args.libraries, t)
        if err:
            print(f"  {t:>7s} threads: {err}", flush=True)
            continue
        line = f"  {t:>7s} threads: torch {fmt_time(res.median(('torch', t))):>10s}"
        for lib in gradstacks(args.libraries):
            line += (
                f"  {lib} {fmt_time(res.median((lib, t))):>10s} {fmt_ratio(res.ratio(t, lib=lib))}"
                f" (p10 {fmt_ratio(res.ratio(t, 'p10', lib))})"
            )
        print(line, flush=True)
    if res.memory:
        mem = ", ".join(f"{lib} {fmt_bytes(v)}" for lib, v in res.memory.items())
        print(f"  peak memory: {mem}")
    for lib in gradstacks(res.losses):
        diff, ok = res.loss_diff(lib)
        if diff is not None:
            print(
                f"  {lib}: losses {'agree' if ok else 'DISAGREE'} (max rel. diff {diff:.1e}; "
                f"weights after: max abs diff {res.param_diff.get(lib, float('nan')):.1e})"
            )


def parse_args(argv=None, split_only=False):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(MODELS), help="these models only")
    parser.add_argument("--rounds", type=int, default=9, help="samples per median")
    parser.add_argument("--min-sample", type=float, default=0.1, help="seconds per sample")
    parser.add_argument("--threads", choices=["1", "default", "both"], default="both")
    parser.add_argument("--check-steps", type=int, default=5, help="steps of the loss check")
    parser.add_argument("--no-check", action="store_true", help="skip the loss check")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak memory")
    parser.add_argument("--split", action="store_true", help="also the GEMM split")
    parser.add_argument("--quick", action="store_true", help="3 rounds of >= 0.02 s")
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
    parser.add_argument("--md", type=Path, help="write the section to this file")
    parser.add_argument(
        "--update-docs", action="store_true", help="rewrite the section of docs/benchmarks.md"
    )
    args = parser.parse_args(argv)
    if split_only:
        if args.update_docs:
            parser.error(
                "the split alone does not rewrite the docs: run models_vs_torch.py --split"
            )
        args.split, args.threads, args.no_memory, args.no_check = True, "1", True, True
    if args.quick:
        args.rounds, args.min_sample = 3, 0.02
    args.thread_settings = {"1": ["1"], "default": ["default"], "both": ["1", "default"]}[
        args.threads
    ]
    if args.split and "1" not in args.thread_settings:
        parser.error("--split measures at one thread: use --threads 1 or both")
    args.before = dict(spec.partition("=")[::2] for spec in args.before)
    for label, python in args.before.items():
        if not label or not Path(python).exists():
            parser.error(f"--before wants LABEL=PYTHON with an existing python: {label}={python}")
    args.before = {f"gradstack@{label}": python for label, python in args.before.items()}
    args.libraries = ["gradstack", *args.before, "torch"]
    script = "model_gemm_split.py" if split_only else "models_vs_torch.py"
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--update-docs"]
    args.command = " ".join(["python", f"benchmarks/{script}", *shown])
    return args


def run(args) -> int:
    names = args.only or list(MODELS)
    keys = [(lib, t) for t in args.thread_settings for lib in args.libraries]
    if args.split:
        keys.append(("numpy", "1"))
    loads = [load_words()]
    print(f"{cpu_model()}, {os.cpu_count()} cores; {versions()}; {loads[0]}", flush=True)
    results = []
    hide = () if args.with_scipy else ("scipy",)
    with Workers(keys, hide, executables=args.before) as workers:
        for name in names:
            print(f"\n{MODELS[name].title}", flush=True)
            res = measure(workers, name, args)
            print_result(res, args)
            results.append(res)
    loads.append(load_words())
    print("\n" + "\n".join(model_table(results, args.thread_settings, args.libraries)))
    if args.split:
        print("\n" + "\n".join(split_table(results, args.libraries)))
    text = section(results, args, loads)
    target = ROOT / "docs" / "benchmarks.md" if args.update_docs else args.md
    if target is not None:
        write_section(target, text)
        print(f"\nwrote {target}")
    failed = [r.name for r in results if r.failed()]
    if failed:
        print(f"\nFAILED (errors or disagreeing losses): {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
