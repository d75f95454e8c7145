"""DistributedDataParallel throughput: the MLP step (784-512-512-10, float32, batch 256 per
rank, MSE loss, SGD) at 1 and 2 ranks, one thread each, and how much of the gradient
all-reduce hides behind backward.

    python benchmarks/distributed_ddp.py                    # launches 1 and 2 ranks itself
    python benchmarks/distributed_ddp.py --nproc 1 2 3 --steps 40 --bucket-cap-mb 25 1

For each world size and bucket size it measures, in interleaved rounds (the median of
per-round medians):

- ``step``: a DDP training step (forward, backward with the bucketed all-reduce, SGD step);
- ``compute``: the same step inside ``no_sync()`` (no communication at all);
- ``allreduce``: all-reducing buffers of the sizes of DDP's buckets, alone (blocking);
- ``single``: the step of the bare model in one process (no DDP), the 1-rank baseline.

Throughput is ``world x 256 / step``; the speed-up is against ``single``.  The share of
the all-reduce hidden behind backward is ``1 - (step - compute) / allreduce`` (clipped to
0..1): 1 when the communication costs no time at all on the step, 0 when it adds its
whole standalone time.  Goal of issue 14: 2 ranks >= 1.8x the samples/s of 1 rank.  This
is a benchmark, not a test: the goal is reported, never asserted.  On a shared machine the
figures are noise; compare runs on a quiet one.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (and its BLAS) is imported

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

BATCH = 256
SIZES = (784, 512, 512, 10)
LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nproc", type=int, nargs="+", default=[1, 2])
    p.add_argument("--bucket-cap-mb", type=float, nargs="+", default=[25.0, 0.25])
    p.add_argument(
        "--view", choices=["off", "on", "both"], default="both",
        help="gradient_as_bucket_view: off (torch's default), on, or both",
    )  # fmt: skip
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=15, help="steps per measurement")
    p.add_argument("--out", help=argparse.SUPPRESS)  # where a rank job writes its figures
    return p.parse_args(argv)


def mlp(torch):
    layers = []
    for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(SIZES) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def worker(args) -> None:
    """One rank of a job: measure, and rank 0 writes the figures to ``args.out``."""
    import gradstack as torch
    import gradstack.distributed as dist
    import gradstack.nn.functional as F
    from gradstack.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)
    x, y = torch.randn(BATCH, SIZES[0]), torch.randn(BATCH, SIZES[-1])

    def timed(model, opt, context=None):
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.steps):
            if context is not None:
                with context():
                    F.mse_loss(model(x), y).backward()
            else:
                F.mse_loss(model(x), y).backward()
            opt.step()
            opt.zero_grad()
        return (time.perf_counter() - start) / args.steps

    results = {}
    single = mlp(torch)
    single_opt = torch.optim.SGD(single.parameters(), lr=0.01)
    views = {"off": [False], "on": [True], "both": [False, True]}[args.view]
    for cap, view in [(c, v) for c in args.bucket_cap_mb for v in views]:
        ddp = DDP(mlp(torch), bucket_cap_mb=cap, gradient_as_bucket_view=view)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        params = list(ddp.module.parameters())
        for _ in range(3):  # warm up (and let DDP rebuild its buckets)
            timed(ddp, opt)
        buffers = [torch.zeros(sum(params[i].numel() for i in b)) for b in ddp.bucket_indices()]

        def allreduce(buffers=buffers):
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.steps):
                for buf in buffers:
                    dist.all_reduce(buf)
            return (time.perf_counter() - start) / args.steps

        rows = {"step": [], "compute": [], "allreduce": [], "single": []}
        for _ in range(args.rounds):
            rows["step"].append(timed(ddp, opt))
            rows["compute"].append(timed(ddp, opt, ddp.no_sync))
            rows["allreduce"].append(allreduce())
            if world == 1:
                rows["single"].append(timed(single, single_opt))
        med = {k: statistics.median(v) for k, v in rows.items() if v}
        med["buckets"] = [len(b) for b in ddp.bucket_indices()]
        med["bucket_mb"] = [round(b.numel() * 4 / 2**20, 2) for b in buffers]
        results[f"{cap:g}{' view' if view else ''}"] = med
    if rank == 0:
        Path(args.out).write_text(json.dumps({"world": world, "results": results}))
    dist.destroy_process_group()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if any(v in os.environ for v in LAUNCHER_VARIABLES):
        worker(args)
        return 0
    print(
        f"# DDP MLP step {'-'.join(map(str, SIZES))}, float32, batch {BATCH} per rank, one "
        f"thread per rank; {platform.processor() or platform.machine()}, {os.cpu_count()} "
        f"cores, load average {os.getloadavg()[0]:.1f}; medians of {args.rounds} rounds of "
        f"{args.steps} steps"
    )
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.nproc:
            out = Path(tmp) / f"world{n}.json"
            cmd = [sys.executable, "-m", "gradstack.distributed.run", "-n", str(n), __file__]
            cmd += [*argv, "--out", str(out)]
            subprocess.run(cmd, check=True)
            figures[n] = json.loads(out.read_text())["results"]
    base = figures[min(figures)]
    single = next(iter(base.values())).get("single")
    print(
        "| ranks | bucket_cap_mb (view: gradient_as_bucket_view) | buckets (MiB) | step "
        "| compute (no_sync) | all-reduce alone | samples/s | vs 1 process "
        "| hidden behind backward |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    if single:
        print(f"| 1 (no DDP) | - | - | {single * 1e3:.2f} ms | - | - | {BATCH / single:,.0f} "
              "| 1.00x | - |")  # fmt: skip
    for n, by_cap in figures.items():
        for cap, f in by_cap.items():
            rate = n * BATCH / f["step"]
            exposed = max(0.0, f["step"] - f["compute"])
            hidden = 1 - exposed / f["allreduce"] if f["allreduce"] > 0 else float("nan")
            hidden = min(1.0, max(0.0, hidden))
            speedup = f"{rate / (BATCH / single):.2f}x" if single else "-"
            print(
                f"| {n} | {cap} | {f['bucket_mb']} | {f['step'] * 1e3:.2f} ms | "
                f"{f['compute'] * 1e3:.2f} ms | {f['allreduce'] * 1e3:.2f} ms | {rate:,.0f} | "
                f"{speedup} | {hidden:.0%} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
