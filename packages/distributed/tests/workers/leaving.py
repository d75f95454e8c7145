"""Worker: one rank leaves the job while the others wait in a call (Note [No rank left
waiting]).

    python -m gradstack_distributed.run -n N leaving.py WAY CALL

Rank 1 makes CALL three times, then leaves by WAY; the other ranks make CALL in a loop and
must raise DistBackendError naming rank 1 (the group timeout is the default 30 minutes, so
only the departure can end them; the launch's hard limit turns a hang into a failure).

WAY:  end (the script ends, no destroy_process_group), exit0, exit3 (sys.exit), caught (an
      exception caught, then the script ends), destroy (destroy_process_group, then the
      end), abort (an uncaught exception), sigterm, sigkill, _exit0, _exit3 (os._exit).
CALL: all_reduce, broadcast, barrier, all_gather, recv (the others receive from rank 1),
      send (the others send rank 1 a 4 MiB tensor, which it must receive), ddp (a DDP
      training step).

Printed: ``rank 1 leaving at T`` (time.time() just before it leaves) and on each other
rank ``rank R raised at T: <Type>: <message>``; a survivor then re-raises (uncaught: the
abort hook ends the job).
"""

import os
import signal
import sys
import time

import gradstack_autograd  # noqa: F401 - the autograd layer, for DDP
import gradstack_distributed as dist
import gradstack_nn as nn
import gradstack_tensor as gt

way, call = sys.argv[1], sys.argv[2]
LEAVER = 1
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
survivors = [r for r in range(world) if r != LEAVER]

if call == "ddp":
    gt.manual_seed(0)
    model = dist.DistributedDataParallel(nn.Linear(8, 4))
    x = gt.randn(16, 8)


def step() -> None:
    if call == "all_reduce":
        dist.all_reduce(gt.ones(4))
    elif call == "broadcast":
        dist.broadcast(gt.ones(4), src=0)
    elif call == "barrier":
        dist.barrier()
    elif call == "all_gather":
        dist.all_gather([gt.zeros(3) for _ in range(world)], gt.ones(3))
    elif call == "recv":
        if rank == LEAVER:
            for r in survivors:
                dist.send(gt.ones(4), dst=r)
        else:
            dist.recv(gt.zeros(4), src=LEAVER)
    elif call == "send":
        big = 1 << 20  # 4 MiB of float32: MPI's rendezvous, the send waits for the receive
        if rank == LEAVER:
            for r in survivors:
                dist.recv(gt.zeros(big), src=r)
        else:
            dist.send(gt.ones(big), dst=LEAVER)
    elif call == "ddp":
        model(x).sum().backward()
    else:
        raise ValueError(call)


dist.barrier()
print(f"rank {rank} ready", flush=True)
if rank == LEAVER:
    for _ in range(3):
        step()
    time.sleep(0.2)  # the others are waiting in their fourth call by now
    print(f"rank {rank} leaving at {time.time():.6f}", flush=True)
    if way == "end":
        pass
    elif way == "exit0":
        sys.exit(0)
    elif way == "exit3":
        sys.exit(3)
    elif way == "caught":
        try:
            raise ValueError("caught on purpose")
        except ValueError:
            pass
    elif way == "destroy":
        dist.destroy_process_group()
    elif way == "abort":
        raise ValueError("uncaught on purpose")
    elif way == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    elif way == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
    elif way == "_exit0":
        os._exit(0)
    elif way == "_exit3":
        os._exit(3)
    else:
        raise ValueError(way)
else:
    try:
        for _ in range(1000):
            step()
    except dist.DistBackendError as exc:
        print(f"rank {rank} raised at {time.time():.6f}: {type(exc).__name__}: {exc}", flush=True)
        raise
    print(f"rank {rank} finished its loop", flush=True)  # must not happen
