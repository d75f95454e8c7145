"""Worker: the same runs as join_train.py in torch (the oracle), DDP on gloo.

    python join_train_torch.py OUT_DIR N

Forks N ranks on this machine (gloo over the loopback); rank r writes
OUT_DIR/torch_rank{r}.npz and OUT_DIR/torch_rank{r}.json.
"""

import json
import os
import socket
import sys
import types
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from join_cases import CASES, run_case


def worker(rank: int, world: int, port: int, out: Path) -> None:
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    lib = types.SimpleNamespace(
        nn=torch.nn,
        optim=torch.optim,
        float64=torch.float64,
        no_grad=torch.no_grad,
        from_numpy=torch.from_numpy,
        DDP=torch.nn.parallel.DistributedDataParallel,
    )
    arrays, errors = {}, {}
    for case in [c for c in CASES if c in os.environ.get("JOIN_CASES", c).split(",")]:
        state, errors[case] = run_case(case, rank, lib)
        arrays.update({f"{case}/{k}": v for k, v in state.items()})
        dist.barrier()
    np.savez(out / f"torch_rank{rank}.npz", **arrays)
    (out / f"torch_rank{rank}.json").write_text(json.dumps(errors))
    dist.destroy_process_group()


if __name__ == "__main__":
    out, world = Path(sys.argv[1]), int(sys.argv[2])
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(worker, args=(world, port, out), nprocs=world, start_method="fork")
