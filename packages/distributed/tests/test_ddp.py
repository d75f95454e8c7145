"""DistributedDataParallel on 2 and 3 ranks (3 oversubscribe this 2-core machine).

After 100 steps of the digits MLP, DDP's parameters equal those of one process trained
on the same global batches; no_sync accumulation equals one big batch; unused parameters
keep no gradient or get the average of the ranks that used them; buckets are rebuilt in
gradient order and launched during backward.  The worker is workers/train.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

MLP = ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
TOLERANCE = {"float32": 1e-5, "float64": 1e-12}


class Results:
    def __init__(self, directory, world):
        self.world = world
        self.arrays = [np.load(directory / f"rank{r}.npz") for r in range(world)]
        self.facts = [json.loads((directory / f"rank{r}.json").read_text()) for r in range(world)]

    def params(self, prefix, rank=0, names=MLP):
        return {n: self.arrays[rank][f"{prefix}/{n}"] for n in names}


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def results(request, tmp_path_factory, mpi_launch_ok):
    out = tmp_path_factory.mktemp(f"ddp{request.param}")
    mpi_launch_ok("train.py", request.param, out)
    return Results(out, request.param)


def max_diff(a: dict, b: dict) -> float:
    return max(float(np.abs(a[n] - b[n]).max()) for n in a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opt", ["sgd_momentum", "adam"])
def test_parity_with_one_process(results, opt, dtype):
    case = f"parity/{opt}/{dtype}"
    single = results.params(f"{case}/single")
    initial = results.params(f"{case}/initial")
    assert max_diff(initial, single) > 0.05  # it trained: the comparison means something
    for r in range(results.world):
        # construction copied rank 0's initial weights (each rank drew its own)
        assert max_diff(results.params(f"{case}/initial", r), initial) == 0.0
        assert max_diff(results.params(f"{case}/ddp", r), single) <= TOLERANCE[dtype]
        assert results.params(f"{case}/ddp", r)["0.weight"].dtype == np.dtype(dtype)


def test_gradient_as_bucket_view(results):
    single = results.params("parity_view/sgd_momentum/float64/single")
    for r in range(results.world):
        assert max_diff(results.params("parity_view/sgd_momentum/float64/ddp", r), single) <= 1e-12
        adjacent = results.facts[r]["view/adjacent"]
        assert adjacent and all(adjacent)


def test_no_sync_accumulation_equals_one_big_batch(results):
    single = results.params("no_sync/single")
    for r in range(results.world):
        assert max_diff(results.params("no_sync/ddp", r), single) <= 1e-12


BRANCHY = ["body.weight", "body.bias", "head.weight", "head.bias"]
EXTRA = ["rank0_only.weight", "rank0_only.bias"]


def test_unused_parameters(results):
    w = results.world
    for r in range(w):
        facts, arrays = results.facts[r], results.arrays[r]
        # unused everywhere: .grad stays None
        assert facts["unused/grad_is_none/never.weight"] and facts["unused/grad_is_none/never.bias"]
        for n in BRANCHY + EXTRA:  # used somewhere: the average over ranks
            assert not facts[f"unused/grad_is_none/{n}"]
            local = arrays[f"unused/local/{n}"]  # each rank's own gradient (zeros if unused)
            np.testing.assert_allclose(arrays[f"unused/ddp/{n}"], local.mean(axis=0), atol=1e-15)
        assert np.abs(arrays["unused/local/rank0_only.weight"][1:]).max() == 0.0
        assert np.abs(arrays["unused/local/rank0_only.weight"][0]).max() > 0.0
        names = BRANCHY + EXTRA + ["never.weight", "never.bias"]
        assert (
            max_diff(
                results.params("unused/after", r, names), results.params("unused/after", 0, names)
            )
            == 0.0
        )


def test_unused_parameters_without_the_flag_raise_torchs_error(results):
    for r in range(results.world):
        message = results.facts[r]["unused/error"]
        assert message.startswith(
            "Expected to have finished reduction in the prior iteration before starting a "
            "new one. This error indicates that your module has parameters that were not "
            "used in producing loss."
        )
        assert "find_unused_parameters=True" in message
        assert message.endswith(
            f"Parameters which did not receive grad for rank {r}: never.weight, never.bias, "
            "rank0_only.weight, rank0_only.bias"
        )


def test_buckets_follow_the_backward_order_and_start_during_backward(results):
    f = results.facts[0]
    assert f["buckets/names"] == ["second.weight", "second.bias", "first.weight", "first.bias"]
    assert f["buckets/initial"] == [[3], [2], [1], [0]]  # reverse of parameters()
    rebuilt = f["buckets/rebuilt"]
    # rebuilt from the order the gradients became ready: the layer used last comes first
    assert sorted(i for b in rebuilt[:2] for i in b) == [0, 1]
    assert sorted(i for b in rebuilt[2:] for i in b) == [2, 3]
    # when first.weight's gradient (the last of backward) arrives, buckets already left:
    # 1 in the first iteration (bucket order blocks), 3 once buckets follow readiness
    assert f["buckets/launched_before_last_grad"] == [1, 3]
    for r in range(results.world):
        assert results.facts[r]["buckets/rebuilt"] == rebuilt  # rank 0's order, everywhere


def test_different_models_raise_on_every_rank(results):
    for r in range(results.world):
        assert results.facts[r]["mismatch/error"] == (
            "DDP expects same model across all ranks, but Rank 1 has parameter weight of "
            "shape [2, 4] and dtype gradstack.float32, while rank 0 has weight of shape "
            "[3, 4] and dtype gradstack.float32."
        )
