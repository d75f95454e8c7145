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
LIBRARIES = ("gradstack", "torch")
BEGIN = "<!-- benchmarks/models_vs_torch.py: begin -->"
END = "<!-- benchmarks/models_vs_torch.py: end -->"


class Result:
    """Everything measured for one model."""

    def __init__(self, name):
        self.name = name
        self.samples = {}  # (library, threads) -> [seconds per step, one per round]
        self.error = {}  # (library, threads) -> error text
        self.memory = {}  # library -> bytes
        self.losses = {}  # library -> [loss per step]
        self.param_diff = None
        self.split = {}  # library -> profile_step's dict; "numpy" -> seconds

    def median(self, key):
        s = self.samples.get(key)
        return statistics.median(s) if s else None

    def p10(self, key):
        s = self.samples.get(key)
        return p10(s) if s else None

    def ratio(self, threads, stat="median"):
        a, b = self.samples.get(("gradstack", threads)), self.samples.get(("torch", threads))
        if not a or not b:
            return None
        if stat == "median" and len(a) == len(b):
            return statistics.median(x / y for x, y in zip(a, b))
        return getattr(self, stat)(("gradstack", threads)) / getattr(self, stat)(("torch", threads))

    def loss_diff(self):
        """The largest relative difference of gradstack's losses from torch's, and whether
        every loss is within (RTOL, ATOL)."""
        a, b = self.losses.get("gradstack"), self.losses.get("torch")
        if a is None or b is None:
            return None, False
        a, b = np.asarray(a), np.asarray(b)
        rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)))
        return rel, bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))

    def failed(self):
        diff, ok = self.loss_diff()
        return bool(self.error) or (self.losses and not ok)


def _ask(workers, key, result, *request):
    kind, value = workers.ask(key, *request)
    if kind != "ok":
        result.error.setdefault(key, value)
        return None
    return value


def measure(workers, name, args) -> Result:
    """Set up, check, time, and measure the memory (and the split) of one model."""
    result = Result(name)
    keys = [(lib, t) for t in args.thread_settings for lib in LIBRARIES]
    state = None
    for key in sorted(keys, key=lambda k: k[0] != "torch"):  # torch first: its weights
        value = _ask(workers, key, result, "setup", name, state, args.min_sample)
        if key[0] == "torch" and state is None:
            state = value
    timed = [k for k in keys if k not in result.error]
    if not args.no_check and state is not None:
        for lib in LIBRARIES:
            key = (lib, args.thread_settings[0])
            if key in timed:
                value = _ask(workers, key, result, "check", name, state, args.check_steps, 7)
                if value is not None:
                    result.losses[lib], result.split[f"params_{lib}"] = value
        pg, pt = result.split.pop("params_gradstack", None), result.split.pop("params_torch", None)
        if pg is not None and pt is not None:
            result.param_diff = max(float(np.max(np.abs(pg[k] - pt[k]))) for k in pt)
    for r in range(args.rounds):
        k = r % len(timed) if timed else 0
        for key in timed[k:] + timed[:k]:
            if key in result.error:
                continue
            value = _ask(workers, key, result, "sample")
            if value is not None:
                result.samples.setdefault(key, []).append(value)
    if not args.no_memory:
        for lib in LIBRARIES:
            key = (lib, args.thread_settings[0])
            if key in timed and key not in result.error:
                result.memory[lib] = _ask(workers, key, result, "memory")
    if args.split:
        for lib in LIBRARIES:
            if (lib, "1") in timed and (lib, "1") not in result.error:
                result.split[lib] = _ask(workers, (lib, "1"), result, "profile")
        gemms = (result.split.get("torch") or {}).get("gemms")
        if gemms:
            result.split["numpy"] = _ask(workers, ("numpy", "1"), result, "gemm", gemms, 0.05)
    return result


# =============================================================================== output


def fmt_bytes(n):
    if n is None:
        return ""
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def fmt_ratio(r):
    return "" if r is None else f"{r:.2f}x"


def _cell_error(result, threads):
    for lib in LIBRARIES:
        err = result.error.get((lib, threads))
        if err:
            return f"{lib} fails: {err.splitlines()[0][:120]}"
    return None


def model_table(results, thread_settings) -> list[str]:
    head = "| model |"
    rule = "|---|"
    for t in thread_settings:
        label = "1 thread" if t == "1" else "default threads"
        head += f" gradstack, {label} | torch, {label} | ratio (p10) |"
        rule += "---:|---:|---:|"
    head += " peak memory gradstack / torch | losses vs torch |"
    rule += "---:|---|"
    lines = [head, rule]
    for res in results:
        row = f"| {MODELS[res.name].title} |"
        for t in thread_settings:
            err = _cell_error(res, t)
            if err:
                row += f" {err} | | |"
                continue
            gs, th = ("gradstack", t), ("torch", t)
            row += (
                f" {fmt_time(res.median(gs))} (p10 {fmt_time(res.p10(gs))}) |"
                f" {fmt_time(res.median(th))} (p10 {fmt_time(res.p10(th))}) |"
                f" **{fmt_ratio(res.ratio(t))}** ({fmt_ratio(res.ratio(t, 'p10'))}) |"
            )
        mem = res.memory
        row += f" {fmt_bytes(mem.get('gradstack'))} / {fmt_bytes(mem.get('torch'))} |"
        diff, ok = res.loss_diff()
        if diff is None:
            row += " not checked |"
        else:
            steps = len(res.losses["torch"])
            row += f" {'agree' if ok else 'DISAGREE'}: {steps} steps, max rel. diff {diff:.1e} |"
        lines.append(row)
    return lines


def split_table(results) -> list[str]:
    lines = [
        "| model | numpy limit (the GEMMs alone) | gradstack GEMM | GEMM / limit (goal <= 1.05) "
        "| gradstack else | torch else | else ratio (goal <= 0.7) | torch GEMM+conv+RNN "
        "| gradstack step | torch step |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for res in results:
        gs, th, limit = res.split.get("gradstack"), res.split.get("torch"), res.split.get("numpy")
        gs_step, th_step = res.median(("gradstack", "1")), res.median(("torch", "1"))
        if not gs or not th or gs_step is None or th_step is None:
            lines.append(f"| {MODELS[res.name].title} | not measured | | | | | | | | |")
            continue
        gs_else, th_else = gs_step - gs["gemm"], th_step - th["gemm"]
        lines.append(
            f"| {MODELS[res.name].title} | {fmt_time(limit)} | {fmt_time(gs['gemm'])} "
            f"| {fmt_ratio(gs['gemm'] / limit if limit else None)} | {fmt_time(gs_else)} "
            f"| {fmt_time(th_else)} | {fmt_ratio(gs_else / th_else if th_else > 0 else None)} "
            f"| {fmt_time(th['gemm'])} | {fmt_time(gs_step)} | {fmt_time(th_step)} |"
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
        "alike, and the ratios move less than the times).  Each cell is the median time of "
        f"a full training step over {args.rounds} rounds (each sample loops the step for "
        f"at least {args.min_sample} s) and its 10th percentile; a ratio is gradstack's "
        "time over torch's, the median of the per-round ratios, with the ratio of the 10th "
        "percentiles in brackets.  Peak memory: the most tensor memory one step holds at "
        "once beyond what it started with (gradstack: tracemalloc, numpy's buffers and "
        "the Python objects of the step; torch: its CPU allocator's records in its "
        "profiler; Note [Peak memory of a step] in `benchmarks/library_worker.py`).  Losses: "
        f"the first {args.check_steps} steps from torch's initial weights copied into "
        "gradstack, the same batches and `manual_seed` on both sides (gradstack draws "
        "torch's random numbers, so dropout is on), compared with "
        f"`rtol={RTOL}, atol={ATOL}`.",
        "",
        *model_table(results, args.thread_settings),
        "",
    ]
    if failures:
        lines += ["Failures:", ""]
        for res in failures:
            for key, err in res.error.items():
                lines.append(f"- {res.name}, {key[0]} ({key[1]} threads): `{err[:300]}`")
            diff, ok = res.loss_diff()
            if diff is not None and not ok:
                lines.append(
                    f"- {res.name}: losses gradstack {res.losses['gradstack']} vs torch "
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
            "counts as GEMM time] in `benchmarks/gemm_split.py`).",
            "",
            *split_table(results),
            "",
        ]
    lines += [
        "Reproduce: `hatch run models` (all of this; `hatch run models --update-docs` "
        "rewrites this section), `hatch run models-split` (the split alone); the models "
        "are in `benchmarks/model_zoo.py`.",
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


def print_result(res, thread_settings):
    for t in thread_settings:
        err = _cell_error(res, t)
        if err:
            print(f"  {t:>7s} threads: {err}", flush=True)
            continue
        print(
            f"  {t:>7s} threads: gradstack {fmt_time(res.median(('gradstack', t))):>10s}"
            f"  torch {fmt_time(res.median(('torch', t))):>10s}"
            f"  ratio {fmt_ratio(res.ratio(t)):>6s} (p10 {fmt_ratio(res.ratio(t, 'p10'))})",
            flush=True,
        )
    if res.memory:
        print(
            f"  peak memory: gradstack {fmt_bytes(res.memory.get('gradstack'))}, torch "
            f"{fmt_bytes(res.memory.get('torch'))}"
        )
    diff, ok = res.loss_diff()
    if diff is not None:
        print(
            f"  losses {'agree' if ok else 'DISAGREE'} (max rel. diff {diff:.1e}; "
            f"weights after: max abs diff {res.param_diff:.1e})"
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
    script = "model_gemm_split.py" if split_only else "models_vs_torch.py"
    shown = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--update-docs"]
    args.command = " ".join(["python", f"benchmarks/{script}", *shown])
    return args


def run(args) -> int:
    names = args.only or list(MODELS)
    keys = [(lib, t) for t in args.thread_settings for lib in LIBRARIES]
    if args.split:
        keys.append(("numpy", "1"))
    loads = [load_words()]
    print(f"{cpu_model()}, {os.cpu_count()} cores; {versions()}; {loads[0]}", flush=True)
    results = []
    with Workers(keys, hide=() if args.with_scipy else ("scipy",)) as workers:
        for name in names:
            print(f"\n{MODELS[name].title}", flush=True)
            res = measure(workers, name, args)
            print_result(res, args.thread_settings)
            results.append(res)
    loads.append(load_words())
    print("\n" + "\n".join(model_table(results, args.thread_settings)))
    if args.split:
        print("\n" + "\n".join(split_table(results)))
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
