"""gradstack.distributed, gradstack.nn.parallel and gradstack.utils.data.distributed are
gradstack-distributed's objects, where torch keeps them; importing them starts no MPI."""

from __future__ import annotations

import importlib
import subprocess
import sys

import gradstack as torch
import gradstack_distributed


def test_names_where_torch_has_them():
    import gradstack.distributed as dist
    import gradstack.nn.parallel
    import gradstack.utils.data
    import gradstack.utils.data.distributed

    assert torch.distributed is dist  # `import gradstack` is enough, as with torch
    assert (
        torch.nn.parallel.DistributedDataParallel is gradstack_distributed.DistributedDataParallel
    )
    assert gradstack.nn.parallel.distributed.DistributedDataParallel is dist.DistributedDataParallel
    assert gradstack.utils.data.distributed.DistributedSampler is dist.DistributedSampler
    assert gradstack.utils.data.DistributedSampler is dist.DistributedSampler  # as torch
    for name in dist.__all__:
        assert getattr(dist, name) is getattr(gradstack_distributed, name)
    assert {"init_process_group", "all_reduce", "ReduceOp", "new_group"} <= set(dist.__all__)
    run = importlib.import_module("gradstack.distributed.run")
    assert run.main is gradstack_distributed.run.main
    # torch.distributed.algorithms.join, reachable after `import gradstack` as after `import torch`
    import gradstack_distributed.algorithms.join as join

    for name in ("Join", "Joinable", "JoinHook"):
        assert getattr(torch.distributed.algorithms, name) is getattr(join, name)
        assert getattr(torch.distributed.algorithms.join, name) is getattr(join, name)
    assert issubclass(
        torch.nn.parallel.DistributedDataParallel, torch.distributed.algorithms.Joinable
    )
    assert callable(torch.nn.parallel.DistributedDataParallel.join)


def test_sampler_feeds_a_dataloader():
    from gradstack.utils.data import DataLoader, Sampler, TensorDataset
    from gradstack.utils.data.distributed import DistributedSampler

    data = TensorDataset(torch.arange(10.0))
    sampler = DistributedSampler(data, num_replicas=3, rank=1, shuffle=False)
    assert isinstance(sampler, Sampler)
    batches = [b[0].tolist() for b in DataLoader(data, batch_size=2, sampler=sampler)]
    assert batches == [[1.0, 4.0], [7.0, 0.0]]  # indices 1, 4, 7 and the padding's 0


def test_import_gradstack_starts_no_mpi():
    code = (
        "import sys, gradstack; "
        "print('mpi4py' in sys.modules, gradstack.distributed.is_initialized())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
