"""The cost model of docs/distributed.md: predicted DDP step times at N ranks.

    python benchmarks/distributed_cost_model.py --busbw 0.77 --latency-us 600 --compute-ms 11.9

A ring all-reduce of S bytes over N ranks runs in 2(N - 1) steps; in each, every rank
sends and receives S/N bytes, so each rank moves 2 (N - 1) / N x S bytes in and as many
out, and the time is

    T_allreduce(S, N) = 2 (N - 1) x latency + 2 (N - 1) / N x S / busbw

(``busbw`` is the bus bandwidth that benchmarks/distributed_allreduce.py prints).  DDP
all-reduces the gradients in buckets of ``bucket_cap_mb``; each bucket pays the latency
term.  A step takes the compute (forward + backward + optimizer) plus the part of the
all-reduce that backward does not hide: between ``compute + T`` (nothing hidden) and
``max(compute, T)`` (everything hidden, which needs T to fit in backward and the network
to move data without the CPU).  Compute per rank does not change with N (weak scaling: a
fixed batch per rank).  The 100M-parameter model's compute is scaled from the MLP's by
FLOPs (6 x parameters x samples per step for a dense model).
"""

from __future__ import annotations

import argparse
import math

MLP_PARAMS = 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10  # 669,706
BIG_PARAMS = 100_000_000
BATCH = 256


def allreduce_seconds(nbytes: float, n: int, busbw: float, latency: float, buckets: int) -> float:
    if n == 1:
        return 0.0
    return 2 * (n - 1) * latency * buckets + 2 * (n - 1) / n * nbytes / busbw


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--busbw", type=float, required=True, help="bus bandwidth, GB/s")
    p.add_argument("--latency-us", type=float, required=True, help="per ring step, us")
    p.add_argument("--compute-ms", type=float, required=True, help="MLP step, batch 256, ms")
    p.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 512])
    p.add_argument("--bucket-cap-mb", type=float, default=25.0)
    args = p.parse_args(argv)
    busbw, latency = args.busbw * 1e9, args.latency_us * 1e-6
    rate = 6 * MLP_PARAMS * BATCH / (args.compute_ms * 1e-3)  # FLOP/s of one rank
    print(
        f"busbw {args.busbw:g} GB/s, latency {args.latency_us:g} us per ring step, MLP "
        f"compute {args.compute_ms:g} ms (= {rate / 1e9:.0f} GFLOP/s per rank), buckets of "
        f"{args.bucket_cap_mb:g} MiB, float32 gradients, batch {BATCH} per rank"
    )
    print("| model | gradient bytes | ranks | bytes sent per rank per step | all-reduce "
          "| step, nothing hidden | step, all hidden | samples/s (nothing hidden) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, params in (("MLP 784-512-512-10", MLP_PARAMS), ("100M parameters", BIG_PARAMS)):
        nbytes = 4 * params
        buckets = max(1, math.ceil(nbytes / (args.bucket_cap_mb * 2**20)))
        compute = 6 * params * BATCH / rate
        for n in args.ranks:
            t = allreduce_seconds(nbytes, n, busbw, latency, buckets)
            sent = 2 * (n - 1) / n * nbytes
            print(
                f"| {name} | {_bytes(nbytes)} | {n} | {_bytes(sent)} | {_time(t)} | "
                f"{_time(compute + t)} | {_time(max(compute, t))} | "
                f"{n * BATCH / (compute + t):,.0f} |"
            )
    return 0


def _bytes(b: float) -> str:
    return f"{b / 2**20:,.1f} MiB" if b < 2**30 else f"{b / 2**30:,.2f} GiB"


def _time(s: float) -> str:
    return f"{s * 1e3:,.1f} ms" if s < 1 else f"{s:,.2f} s"


if __name__ == "__main__":
    raise SystemExit(main())
