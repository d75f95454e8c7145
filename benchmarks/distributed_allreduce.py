"""All-reduce bandwidth of gradstack.distributed (float32 SUM) on N ranks of this machine:
the input of the cost model in docs/distributed.md.

    python benchmarks/distributed_allreduce.py            # launches 2 ranks itself
    python benchmarks/distributed_allreduce.py --nproc 3
    python benchmarks/distributed_allreduce.py --sizes 256 16384 --rounds 15   # float32s

For each size it prints the median time of ``dist.all_reduce`` (which includes the
signature check, Note [Every collective checks its peers]), the time of mpi4py's bare
blocking ``Allreduce`` on the same array, the algorithm bandwidth (bytes / time) and the
bus bandwidth, ``2 (N - 1) / N x bytes / time``: what each rank sends and receives in a
ring all-reduce, comparable across N.  A benchmark, not a test; on a shared machine the
figures are noise.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")
SIZES = [2**8, 2**12, 2**16, 2**18, 2**20, 2**22, 2**24]  # float32 elements: 1 KiB .. 64 MiB


def worker(rounds: int, sizes) -> None:
    import gradstack as torch
    import gradstack.distributed as dist
    from mpi4py import MPI

    dist.init_process_group("mpi")
    comm, world = MPI.COMM_WORLD, dist.get_world_size()
    if dist.get_rank() == 0:
        library = MPI.Get_library_version().splitlines()[0].strip()
        print(f"# all-reduce, float32 SUM, {world} ranks, {library}")
        print("| size | gradstack all_reduce | mpi4py Allreduce | algbw | busbw |")
        print("|---:|---:|---:|---:|---:|")
    for n in sizes:
        t = torch.ones(n)
        a = t.numpy()
        reps = max(3, min(200, 2**22 // n))
        times = {"gradstack": [], "mpi4py": []}
        for _ in range(rounds):
            for name, call in (
                ("gradstack", lambda t=t: dist.all_reduce(t)),
                ("mpi4py", lambda a=a: comm.Allreduce(MPI.IN_PLACE, a, MPI.SUM)),
            ):
                comm.Barrier()
                start = time.perf_counter()
                for _ in range(reps):
                    call()
                times[name].append((time.perf_counter() - start) / reps)
        ours, bare = (statistics.median(times[k]) for k in ("gradstack", "mpi4py"))
        size = n * 4
        if dist.get_rank() == 0:
            label = f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size / 2**10:g} KiB"
            algbw = size / ours / 1e9
            busbw = 2 * (world - 1) / world * algbw
            print(
                f"| {label} | {ours * 1e6:,.1f} us | {bare * 1e6:,.1f} us | {algbw:.2f} GB/s "
                f"| {busbw:.2f} GB/s |",
                flush=True,
            )
    dist.destroy_process_group()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sizes", type=int, nargs="+", default=SIZES, help="float32 elements")
    args = p.parse_args(argv)
    if any(v in os.environ for v in LAUNCHER_VARIABLES):
        worker(args.rounds, args.sizes)
        return 0
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    cmd = [sys.executable, "-m", "gradstack.distributed.run", "-n", str(args.nproc), __file__]
    cmd += ["--rounds", str(args.rounds), "--sizes", *map(str, args.sizes)]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())
