"""Worker: ranks that finish and leave early must not break the calls others still finish
(Note [No rank left waiting]: a departed rank blocks only calls it never joined).

    python -m gradstack_distributed.run -n N clean_end.py MODE

broadcast  rank 0 broadcasts and calls destroy_process_group at once; the others started
           the same broadcast asynchronously, sleep 1 s, then wait for it (rank 0 has left
           by then) and must get the data.
reduce     rank 1 (a leaf) reduces to rank 0 and leaves at once (destroy); rank 0 waits
           for the last rank, which starts asynchronously and waits 1 s later.  With 2 ranks
           rank 1 is the leaf that leaves and rank 0 the late root.
p2p        rank 1 sends three messages to rank 0 and leaves (the end of the script, no
           destroy); rank 0 sleeps 1 s, receives the three, then a fourth receive must raise
           at once (nothing more is on its way), which it catches; so must a receive from
           any rank, and an irecv's is_completed() turns True with the error.
subgroup   (3 ranks) rank 1 leaves (destroy); ranks 0 and 2 keep using their group {0, 2};
           then an all_reduce on the world must raise, naming rank 1, and is caught.

Every rank prints ``rank R ok ...`` lines; the job must end with exit code 0 and nothing on
stderr.
"""

import sys
import time

import gradstack_distributed as dist
import gradstack_tensor as gt

mode = sys.argv[1]
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
dist.barrier()

if mode == "broadcast":
    t = gt.full((4,), 7.0) if rank == 0 else gt.zeros(4)
    if rank == 0:
        dist.broadcast(t, src=0)
        dist.destroy_process_group()
        print("rank 0 ok left", flush=True)
        sys.exit(0)
    work = dist.broadcast(t, src=0, async_op=True)
    time.sleep(1.0)
    work.wait()
    print(f"rank {rank} ok got {t.tolist()}", flush=True)
elif mode == "reduce":
    late = world - 1 if world > 2 else 0
    t = gt.full((3,), float(rank + 1))
    if rank == 1:
        dist.reduce(t, dst=0)
        dist.destroy_process_group()
        print("rank 1 ok left", flush=True)
        sys.exit(0)
    if rank == late:
        work = dist.reduce(t, dst=0, async_op=True)
        time.sleep(1.0)
        work.wait()
    else:
        dist.reduce(t, dst=0)
    if rank == 0:
        print(f"rank 0 ok got {t.tolist()}", flush=True)
elif mode == "p2p":
    if rank == 1:
        for i in range(3):
            dist.send(gt.full((2,), float(i)), dst=0)
        print("rank 1 ok left", flush=True)
        sys.exit(0)  # the end of the script, without destroy_process_group
    if rank == 0:
        time.sleep(1.0)
        got = []
        for _ in range(3):
            t = gt.zeros(2)
            dist.recv(t, src=1)
            got.append(t.tolist())
        print(f"rank 0 ok got {got}", flush=True)
        start = time.monotonic()
        try:
            dist.recv(gt.zeros(2), src=1)
        except dist.DistBackendError as exc:
            print(f"rank 0 ok fourth recv raised after {time.monotonic() - start:.3f} s: {exc}")
        try:
            dist.recv(gt.zeros(2))  # from any rank: rank 1 left with nothing on its way
        except dist.DistBackendError as exc:
            print(f"rank 0 ok any-source recv raised: {exc}")
        work = dist.irecv(gt.zeros(2), src=1)
        while not work.is_completed():
            time.sleep(0.01)
        print(f"rank 0 ok irecv: success {work.is_success()}, {type(work.exception()).__name__}")
elif mode == "subgroup":
    group = dist.new_group([0, 2])
    if rank == 1:
        dist.destroy_process_group()
        print("rank 1 ok left", flush=True)
        sys.exit(0)
    time.sleep(0.5)  # rank 1 has left by now
    t = gt.full((2,), float(rank))
    dist.all_reduce(t, group=group)
    print(f"rank {rank} ok subgroup {t.tolist()}", flush=True)
    try:
        dist.all_reduce(gt.ones(2))
    except dist.DistBackendError as exc:
        print(f"rank {rank} ok world raised: {exc}", flush=True)
else:
    raise ValueError(mode)
dist.destroy_process_group()
print(f"rank {rank} ok done", flush=True)
