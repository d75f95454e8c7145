"""Worker: a fault on one rank must end every rank, never hang.

    python -m gradstack_distributed.run -n 2 faults.py MODE

exception     rank 1 raises while rank 0 waits in a barrier
group_timeout init_process_group(timeout=1 s); rank 1 sleeps, rank 0's all_reduce times out
call_timeout  the default timeout, but all_reduce(..., timeout=1) on rank 0
wait_timeout  all_reduce(async_op=True).wait(timeout=1) on rank 0
Rank 1 prints "rank 1 woke" if it ever finishes sleeping (it must not: the abort ends it).
"""

import datetime
import sys
import time

import gradstack_distributed as dist
import gradstack_tensor as gt

mode = sys.argv[1]
timeout = datetime.timedelta(seconds=1) if mode == "group_timeout" else None
dist.init_process_group("mpi", timeout=timeout)
rank = dist.get_rank()
print(f"rank {rank} ready", flush=True)
if rank == 1:
    if mode == "exception":
        raise ValueError("boom on purpose")
    time.sleep(60)
    print("rank 1 woke", flush=True)
    sys.exit(0)
try:
    if mode == "exception":
        dist.barrier()
    elif mode == "group_timeout":
        dist.all_reduce(gt.ones(3))
    elif mode == "call_timeout":
        dist.all_reduce(gt.ones(3), timeout=1.0)
    elif mode == "wait_timeout":
        dist.all_reduce(gt.ones(3), async_op=True).wait(timeout=datetime.timedelta(seconds=1))
except dist.DistBackendError as exc:
    print(f"caught DistBackendError: {exc}", flush=True)
    raise
print("rank 0 went on", flush=True)
