"""What needs no MPI job: names and numbers as torch's, errors before init, the sampler
(against torch's own), bucket assignment, the launcher's command line, and the error when
no MPI library can be loaded."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import gradstack_distributed as dist
import gradstack_tensor as gt
import pytest
import torch
import torch.distributed as tdist
from gradstack_distributed import run
from gradstack_distributed.reducer import assign_buckets
from torch.utils.data.distributed import DistributedSampler as TorchSampler


def test_reduce_ops_are_torchs():
    for name in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
        ours, theirs = getattr(dist.ReduceOp, name), getattr(tdist.ReduceOp, name)
        assert int(ours) == int(theirs) and repr(ours) == repr(theirs)
    with pytest.raises(TypeError, match="use its members"):
        dist.ReduceOp("sum")


def test_before_init_torchs_errors():
    assert dist.is_available() and dist.is_mpi_available()
    assert not dist.is_initialized() and dist.group.WORLD is None
    message = (
        "Default process group has not been initialized, please make sure to call "
        "init_process_group."
    )
    for call in (
        dist.get_rank,
        dist.get_world_size,
        dist.barrier,
        dist.destroy_process_group,
        lambda: dist.all_reduce(gt.ones(2)),
        lambda: dist.new_group([0]),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


def test_backends_other_than_mpi_are_refused():
    assert dist.Backend("MPI") == "mpi" and dist.Backend.MPI == "mpi"
    for name in ("gloo", "nccl"):
        with pytest.raises(ValueError, match=f"runs on MPI only: backend must be 'mpi'.*{name}"):
            dist.init_process_group(name)
    with pytest.raises(TypeError, match="timeout must be a datetime.timedelta"):
        dist.init_process_group("mpi", timeout="10s")
    assert not dist.is_initialized()


@pytest.mark.parametrize("n", [0, 1, 5, 10, 11, 12, 13, 97])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_layout_is_torchs(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = dist.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        if n == 0 and not drop_last:  # torch fails on an empty data set (division by zero)
            assert len(ours) == len(theirs) == 0
            continue
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_sampler_shuffles_the_same_way_on_every_rank_and_per_epoch():
    data = list(range(23))
    samplers = [dist.DistributedSampler(data, 3, r, seed=4) for r in range(3)]
    epoch0 = [list(s) for s in samplers]
    union = sorted(i for part in epoch0 for i in part)
    assert len(union) == 24 and set(union) == set(data)  # one index padded, once
    assert epoch0 != [list(dist.DistributedSampler(data, 3, r, shuffle=False)) for r in range(3)]
    assert [list(s) for s in samplers] == epoch0  # same epoch, same order
    for s in samplers:
        s.set_epoch(1)
    epoch1 = [list(s) for s in samplers]
    union1 = sorted(i for p in epoch1 for i in p)
    assert epoch1 != epoch0 and len(union1) == 24 and set(union1) == set(data)
    other_seed = [list(dist.DistributedSampler(data, 3, r, seed=5)) for r in range(3)]
    assert other_seed != epoch0


def test_sampler_arguments():
    with pytest.raises(
        ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"
    ):
        dist.DistributedSampler(range(5), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="call init_process_group first"):
        dist.DistributedSampler(range(5))


def test_bucket_assignment_is_torchs():
    # torch._C._distributed_c10d._compute_bucket_assignment_by_size is the reference
    compute = torch._C._distributed_c10d._compute_bucket_assignment_by_size
    tensors = [torch.empty(n, dtype=d) for n, d in [
        (300, torch.float32), (10, torch.float32), (500, torch.float64), (260, torch.float32),
        (1, torch.float64), (700, torch.float32), (40, torch.float32),
    ]]  # fmt: skip
    order = list(reversed(range(len(tensors))))
    for limits in ([1024, 2048], [400, 4000], [4096, 4096]):
        theirs, _ = compute([tensors[i] for i in order], limits)
        theirs = [[order[i] for i in b] for b in theirs]
        sizes = [t.numel() * t.element_size() for t in tensors]
        ours = assign_buckets(sizes, [str(t.dtype) for t in tensors], order, *limits)
        assert ours == theirs, limits


def test_launcher_command_line(tmp_path):
    args = run._parser().parse_args(["-n", "3", "--hostfile", "hosts", "s.py", "--lr", "1"])
    cmd = run.build_command(args, run.find_mpiexec())
    assert cmd[1:5] == ["-n", "3", "-f", "hosts"]  # MPICH's Hydra takes -f
    assert cmd[5:] == [sys.executable, "s.py", "--lr", "1"]
    assert Path(cmd[0]).parent == Path(sys.executable).parent  # the wheel's mpiexec
    args = run._parser().parse_args(["--nproc-per-node", "2", "-m", "pkg.train"])
    assert run.build_command(args, "mpiexec")[-3:] == [sys.executable, "-m", "pkg.train"]
    assert run.main(["-n", "0", "x.py"]) == 2
    with pytest.raises(FileNotFoundError, match="was not found"):
        run.find_mpiexec(str(tmp_path / "no-mpiexec"))
    assert isinstance(args, argparse.Namespace)


def test_launcher_and_plain_mpiexec_run_a_script(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import os, gradstack_distributed as dist\n"
        "dist.init_process_group()\n"
        "print(f'rank {dist.get_rank()} of {dist.get_world_size()} "
        'threads={os.environ.get("OMP_NUM_THREADS")}\')\n'
        "dist.destroy_process_group()\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "OMP_NUM_THREADS"}
    launcher = [sys.executable, "-m", "gradstack_distributed.run", "-n", "2", str(script)]
    assert _ranks_threads(launcher, env) == ["rank 0 of 2 threads=1", "rank 1 of 2 threads=1"]
    mpiexec = [run.find_mpiexec(), "-n", "2", sys.executable, str(script)]
    assert _ranks_threads(mpiexec, env) == [
        "rank 0 of 2 threads=None",
        "rank 1 of 2 threads=None",
    ]


def _ranks_threads(cmd, env) -> list:
    """Run ``cmd`` (2 ranks printing ``rank r of 2 threads=...``): its ranks' lines, sorted
    (they reach mpiexec's stdout concurrently and may interleave)."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return sorted(re.findall(r"rank \d of 2 threads=(?:None|\d+)", done.stdout))


def test_missing_mpi_says_what_to_install():
    code = (
        "import sys; sys.modules['mpi4py'] = None\n"  # as if mpi4py were not installed
        "import gradstack_distributed as dist\n"
        "print(dist.is_available())\n"
        "try:\n"
        "    dist.init_process_group('mpi')\n"
        "except dist.MPIUnavailableError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "False"
    assert 'pip install "gradstack-distributed[mpich]"' in lines[1]
    assert "MPI4PY_LIBMPI" in lines[1]


def test_import_does_not_start_mpi():
    code = (
        "import sys, gradstack_distributed as dist\n"
        "print('mpi4py.MPI' in sys.modules)\n"
        "print(dist.is_available())\n"
        "from mpi4py import MPI\n"
        "print(MPI.Is_initialized())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["False", "True", "False"], done.stderr
