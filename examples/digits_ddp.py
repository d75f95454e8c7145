"""The digits MLP of ``digits.py`` trained data-parallel on 2 MPI ranks with gradstack's
DistributedDataParallel; it reaches the single-process example's test accuracy.

Every rank builds the same model and draws the same batch order as ``digits.py`` (same
seed, same calls), then computes forward and backward on its half of each global batch
of 32; DDP averages the gradients across ranks during backward, so each optimizer step
equals the single-process step on the whole batch (up to float32 rounding).  Each rank's
loss is a sum over its samples divided by the global batch size (times the number of
ranks, which DDP's average divides out), so that a last batch that does not split evenly
still gives the global mean.  The test accuracy is computed in parallel too: each rank
scores its shard from ``DistributedSampler`` and an ``all_reduce`` adds the counts.

    python examples/digits_ddp.py [--nproc 2] [--epochs 30]      # launches itself
    python -m gradstack.distributed.run -n 2 examples/digits_ddp.py
    mpiexec -n 2 python examples/digits_ddp.py

Run without an MPI launcher it starts itself through ``gradstack.distributed.run``.  It
saves the weights to ``examples/out/digits_ddp.gsz`` and exits with status 1 if the test
accuracy is below 95%.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import gradstack as torch
import gradstack.distributed as dist
import gradstack.nn.functional as F
import numpy as np
from digits import TARGET_ACCURACY, make_model  # examples/digits.py, beside this file
from gradstack.nn.parallel import DistributedDataParallel as DDP
from gradstack.utils.data.distributed import DistributedSampler
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

OUT = Path(__file__).resolve().parent / "out"
# set by MPICH's and Intel MPI's launchers, Open MPI's, and PMIx (srun, prterun)
LAUNCHER_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nproc", type=int, default=2, help="ranks, when it launches itself")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32, help="global batch size")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def relaunch(args, argv) -> int:
    """Not under an MPI launcher: run this script on ``--nproc`` ranks."""
    cmd = [sys.executable, "-m", "gradstack.distributed.run", "-n", str(args.nproc), __file__]
    print(f"launching: {' '.join(cmd[1:])} {' '.join(argv)}", flush=True)
    return subprocess.run(cmd + list(argv)).returncode


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    if not any(v in os.environ for v in LAUNCHER_VARIABLES):
        return relaunch(args, argv)

    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    say = print if rank == 0 else (lambda *a, **k: None)

    torch.manual_seed(args.seed)  # the same seed and calls as digits.py, on every rank
    digits = load_digits()
    x_np = (digits.data / 16.0).astype(np.float32)
    x_train, x_test, y_train, y_test = train_test_split(
        x_np, digits.target, test_size=0.2, random_state=args.seed, stratify=digits.target
    )
    x_train, x_test = torch.from_numpy(x_train), torch.from_numpy(x_test)
    y_train = torch.from_numpy(y_train.astype(np.int64))
    y_test = torch.from_numpy(y_test.astype(np.int64))
    say(f"digits: {len(x_train)} training and {len(x_test)} test images; {world} ranks")

    model = DDP(make_model())  # rank 0's initial weights on every rank
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    n = len(x_train)
    say(f"training {args.epochs} epochs, global batches of {args.batch_size} over {world} ranks")
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(n)  # the same order on every rank
        total = torch.zeros(())
        for first in range(0, n, args.batch_size):
            batch = order[first : first + args.batch_size]
            mine = batch[rank::world]  # this rank's part of the global batch
            logits = model(x_train[mine])
            loss = F.cross_entropy(logits, y_train[mine], reduction="sum") * (world / len(batch))
            optimizer.zero_grad()
            loss.backward()  # gradients averaged over the ranks
            optimizer.step()
            total += loss.detach() * (len(batch) / world)
        dist.all_reduce(total)  # the epoch's summed loss over every rank's samples
        if epoch % 5 == 0 or epoch == args.epochs:
            say(f"epoch {epoch:3d}  training loss {total.item() / n:.4f}", flush=True)
    elapsed = time.perf_counter() - start

    # test accuracy: each rank scores its shard, the counts are added
    sampler = DistributedSampler(x_test, shuffle=False)
    shard = list(sampler)
    # the sampler pads the last round with repeated indices; score each image once
    shard = [i for j, i in enumerate(shard) if rank + j * world < len(x_test)]
    idx = torch.tensor(shard, dtype=torch.int64)
    model.eval()
    with torch.no_grad():
        correct = (model(x_test[idx]).argmax(dim=1) == y_test[idx]).sum().to(torch.float64)
    counts = torch.stack([correct, torch.tensor(float(len(shard)), dtype=torch.float64)])
    dist.all_reduce(counts)
    test_acc = counts[0].item() / counts[1].item()
    say(
        f"test accuracy {test_acc:.4f} ({int(counts[0].item())} of {int(counts[1].item())}); "
        f"training took {elapsed:.1f} s on {world} ranks"
    )
    if rank == 0:
        OUT.mkdir(exist_ok=True)
        torch.save(model.module.state_dict(), OUT / "digits_ddp.gsz")
        say(f"weights: {OUT / 'digits_ddp.gsz'}")
    dist.destroy_process_group()
    if test_acc < TARGET_ACCURACY:
        say(f"test accuracy {test_acc:.4f} is below {TARGET_ACCURACY}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
