"""Object collectives, ``all_to_all``/``all_to_all_single``, ``P2POp`` with
``batch_isend_irecv``, and ``monitored_barrier``, on 2 ranks and on 3.

The worker (workers/more_collectives.py) makes each call on every rank and pickles what
it got; here the values torch's semantics give are computed from the ranks' inputs, and
the shared value cases are compared with torch's own gloo on as many processes
(workers/more_collectives_torch.py).  The argument errors' words are checked against
torch's on a one-process gloo group.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

WORKERS = Path(__file__).resolve().parent / "workers"


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def facts(request, tmp_path_factory, mpi_launch_ok):
    out = tmp_path_factory.mktemp(f"more{request.param}")
    mpi_launch_ok("more_collectives.py", request.param, out)
    return [pickle.loads((out / f"rank{r}.pkl").read_bytes()) for r in range(request.param)]


def obj_of(r: int):
    return {"rank": r, "items": list(range(r + 1)), "text": "x" * (100 * r), "t": (r, None)}


def skipped(name: str, r: int) -> str:
    return f"Running {name} on global rank {r} which does not belong to the given group."


def test_object_collectives(facts):
    w = len(facts)
    src = w - 1
    for r, f in enumerate(facts):
        assert f["all_gather_object"] == [obj_of(i) for i in range(w)]
        objs, same_list = f["broadcast_object_list"]
        assert same_list  # filled in place
        assert objs[:3] == [src, "foo", {1: [2, 3]}]
        np.testing.assert_array_equal(objs[3], np.arange(3.0) * src)
        assert f["gather_object"] == ([obj_of(i) for i in range(w)] if r == 1 else None)
        assert f["scatter_object_list"] == [("obj", r, "y" * (50 * r))]
        if r in (0, w - 1):
            assert f["group_all_gather_object"] == ["ok", None, []]
            assert f["group_all_gather_object_out"] == [("g", 0), ("g", w - 1)]
            assert f["group_scatter_object_list_out"] == ["a" if r == 0 else "b"]
        else:
            assert f["group_all_gather_object"] == ["ok", None, [skipped("all_gather_object", r)]]
            assert f["group_all_gather_object_out"] == ["untouched"] * 2
            assert f["group_scatter_object_list_out"] == [None]
        assert f["error/scatter_output"] == [
            "ValueError",
            "Expected argument scatter_object_output_list to be a list of size at least 1.",
        ]
        assert f["error/gather_list_off_root"] == [
            "ValueError",
            "Argument ``gather_list`` must NOT be specified on non-destination ranks.",
        ]


def test_objects_holding_tensors(facts):
    w = len(facts)
    for f in facts:
        assert f["all_gather_object_tensors"] == ["ok", None, []]
        got = f["all_gather_object_tensors_out"]
        assert len(got) == w
        for i, o in enumerate(got):
            kind, dtype, grad, contiguous, values = o["loss"]
            assert [kind, dtype, grad, contiguous] == ["Tensor", "gradstack.float32", False, True]
            np.testing.assert_array_equal(values, np.float32(0.5 + i))
            assert o["w"][:3] == ["Tensor", "gradstack.float32", True]
            np.testing.assert_array_equal(o["w"][4], np.ones((2, 3), np.float32))
            assert o["p"][:3] == ["Parameter", "gradstack.float32", True]
            np.testing.assert_array_equal(o["p"][4], np.full(2, float(i), np.float32))
            # a transposed tensor arrives transposed (torch's pickle keeps strides too)
            assert o["ints"][:4] == ["Tensor", "gradstack.int64", False, False]
            np.testing.assert_array_equal(o["ints"][4], np.arange(4).reshape(2, 2).T)
        kind, message = f["error/nonleaf"]
        assert kind == "RuntimeError"
        assert message.startswith("Cowardly refusing to serialize non-leaf tensor")


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64", "bool"])
def test_all_to_all(facts, dtype):
    w = len(facts)
    for r, f in enumerate(facts):
        got = f[f"all_to_all/{dtype}"]
        assert len(got) == w
        for i in range(w):  # rank i's part for rank r
            value = (i + r) % 2 if dtype == "bool" else (100 * i + r) % 7
            expected = np.full((i + r + 1, 2), value).astype(dtype)
            assert got[i].dtype == expected.dtype
            np.testing.assert_array_equal(got[i], expected)


def test_all_to_all_non_contiguous(facts):
    w = len(facts)
    for r, f in enumerate(facts):
        for i, (contiguous, got) in enumerate(f["all_to_all/noncontiguous"]):
            assert contiguous is False
            np.testing.assert_array_equal(got, np.full((3, 2), 10 * i + r, np.float32))
        assert len(f["all_to_all/noncontiguous"]) == w


def test_all_to_all_single(facts):
    w = len(facts)
    for r, f in enumerate(facts):
        expected = np.concatenate(
            [np.arange(w * 2, dtype=np.float64)[2 * r : 2 * r + 2] + 100 * i for i in range(w)]
        )
        np.testing.assert_array_equal(f["all_to_all_single/equal"], expected)
        np.testing.assert_array_equal(f["all_to_all_single/inplace"], expected)
        done, got = f["all_to_all_single/async"]
        assert done is True
        np.testing.assert_array_equal(got, expected)
        parts = [
            np.full(((i + r) % 3, 3), 1000 * i + 10 * r, dtype=np.int32) + np.arange(3)
            for i in range(w)
        ]
        uneven = np.concatenate(parts).astype(np.int32)
        got = f["all_to_all_single/uneven"]
        assert got.dtype == np.int32 and got.shape == uneven.shape
        np.testing.assert_array_equal(got, uneven)
        assert f["after_errors"] == ["ok", uneven.sum(), []]


def test_all_to_all_errors(facts):
    w = len(facts)
    for f in facts:
        assert f["error/a2a_divide"] == [
            "RuntimeError",
            "Tensor's dim 0 does not divide equally across group size",
        ]
        assert f["error/a2a_nsplits"] == [
            "RuntimeError",
            "Number of tensor splits not equal to group size",
        ]
        assert f["error/a2a_sum"] == ["RuntimeError", "Split sizes doesn't match total dim 0 size"]
        kind, message = f["error/a2a_dtype"]
        assert kind == "ValueError"
        assert message.startswith("Invalid usage of tensors with different dtypes")
        kind, message = f["error/a2a_mismatch"]  # every rank raises, naming the same pair
        assert kind == "RuntimeError"
        assert "rank 0 sends 4 bytes to rank 0, which expects 8 bytes from it" in message
        kind, message = f["error/a2a_list_len"]
        assert kind == "ValueError"
        assert f"`output_tensor_list` must hold {w} tensors" in message


def test_batch_isend_irecv(facts):
    w = len(facts)
    for r, f in enumerate(facts):
        prv = (r - 1) % w
        assert f["batch"] == [[True] * 4, [float(prv)] * 3, [10.0 + prv] * 3, 4]
        assert f["batch_tag"] == [prv, 7 * prv]
        assert (
            f["p2pop_repr"]
            == f"P2POp(irecv group_src={prv}, group_dst={r}, (3,), gradstack.float32)"
        )
        assert f["error/p2p_op"] == [
            "ValueError",
            "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
            "``torch.distributed.irecv``.",
        ]
        kind, message = f["error/p2p_tensor"]
        assert kind == "TypeError" and "Expected parameter `tensor`" in message
        assert f["error/p2p_list"] == [
            "ValueError",
            "Invalid ``p2p_op_list``. Each op is expected to to be of type "
            "``torch.distributed.P2POp``.",
        ]
        assert f["error/p2p_empty"] == [
            "IndexError",
            "batch_isend_irecv: `p2p_op_list` is empty; give at least one P2POp",
        ]
        if r in (0, w - 1):
            assert f["error/p2p_groups"] == ["ValueError", "All ops need to use the same group."]


def test_monitored_barrier(facts):
    w = len(facts)
    for r, f in enumerate(facts):
        assert f["monitored"] == ["ok", None, []]
        assert f["monitored_all"] == ["ok", None, []]
        assert f["monitored_float"][:2] == ["ok", None]
        assert f["monitored_float"][2] == [
            "Please specify timeout arg as a timedelta. Converting current value of 60.0 "
            "assuming it represents seconds"
        ]
        assert f["error/monitored_type"] == [
            "TypeError",
            "Expected timeout argument to be of type datetime.timedelta, got 5",
        ]
        warned = [] if r in (0, w - 1) else [skipped("monitored_barrier", r)]
        assert f["monitored_group"] == ["ok", None, warned]
        assert f["monitored_after"] == ["ok", None, []]
    for r in range(1, w):
        assert facts[r]["monitored_no_root"] == [
            "DistBackendError",
            f"Rank {r} timed out in monitoredBarrier after 500 ms.",
        ]
    missing = ", ".join(str(i) for i in range(1, w))
    assert facts[0]["monitored_missing"] == [
        "DistBackendError",
        "[Rank 0]: Rank 1 failed to pass monitoredBarrier in 500 ms",
    ]
    assert facts[0]["monitored_missing_all"] == [
        "DistBackendError",
        f"[Rank 0]: Ranks {missing} failed to pass monitoredBarrier in 500 ms",
    ]


def test_argument_errors_are_torchs(tmp_path):
    """The words of the argument errors above, from torch 2.13 on a one-process gloo group."""
    torch = pytest.importorskip("torch")
    tdist = torch.distributed
    tdist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1
    )
    try:
        seen = {}

        def record(case, fn):
            try:
                fn()
            except Exception as exc:  # noqa: BLE001
                seen[case] = [type(exc).__name__, str(exc).split("\n")[0]]

        z = torch.zeros(2)
        record("nsplits", lambda: tdist.all_to_all_single(z, z, input_split_sizes=[1, 1]))
        record("sum", lambda: tdist.all_to_all_single(z, z, input_split_sizes=[3]))
        record("dtype", lambda: tdist.all_to_all_single(z, z.double()))
        record("p2p_op", lambda: tdist.P2POp(tdist.all_reduce, z, 0))
        record("p2p_list", lambda: tdist.batch_isend_irecv([1, 2]))
        record("p2p_empty", lambda: tdist.batch_isend_irecv([]))
        record("scatter_output", lambda: tdist.scatter_object_list([], None, src=0))
        record("monitored_type", lambda: tdist.monitored_barrier(timeout=5))
        out = [None]
        tdist.all_gather_object(out, obj_of(0))
        assert out == [obj_of(0)]
        tdist.monitored_barrier(timeout=timedelta(seconds=5))
    finally:
        tdist.destroy_process_group()
    assert seen["nsplits"][1].endswith("Number of tensor splits not equal to group size")
    assert seen["sum"][1].endswith("Split sizes doesn't match total dim 0 size")
    assert seen["dtype"][0] == "ValueError"
    assert seen["dtype"][1].startswith("Invalid usage of tensors with different dtypes")
    assert seen["p2p_op"] == [
        "ValueError",
        "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
        "``torch.distributed.irecv``.",
    ]
    assert seen["p2p_list"] == [
        "ValueError",
        "Invalid ``p2p_op_list``. Each op is expected to to be of type "
        "``torch.distributed.P2POp``.",
    ]
    assert seen["p2p_empty"][0] == "IndexError"
    assert seen["scatter_output"] == [
        "ValueError",
        "Expected argument scatter_object_output_list to be a list of size at least 1.",
    ]
    assert seen["monitored_type"] == [
        "TypeError",
        "Expected timeout argument to be of type datetime.timedelta, got 5",
    ]


@pytest.fixture(scope="module")
def torch_facts(facts, tmp_path_factory):
    """The shared value cases on torch's gloo, one process per rank (no MPI), on as many
    ranks as ``facts``."""
    pytest.importorskip("torch")
    world = len(facts)
    out = tmp_path_factory.mktemp(f"torch{world}")
    store = out / "store"
    worker = WORKERS / "more_collectives_torch.py"
    procs = [
        subprocess.Popen(
            [sys.executable, str(worker), str(r), str(world), str(store), str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for r in range(world)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-4000:]
    return [pickle.loads((out / f"rank{r}.pkl").read_bytes()) for r in range(world)]


def test_values_equal_torch_gloo(facts, torch_facts):
    for f, t in zip(facts, torch_facts):
        for key in ["all_gather_object", "gather_object", "scatter_object_list", "batch"]:
            assert f[key] == t[key], key
        objs, _ = f["broadcast_object_list"]
        assert objs[:3] == t["broadcast_object_list"][:3]
        np.testing.assert_array_equal(objs[3], t["broadcast_object_list"][3])
        for key in ["all_to_all_single/equal", "all_to_all_single/uneven"]:
            assert f[key].dtype == t[key].dtype, key
            np.testing.assert_array_equal(f[key], t[key])
        for dtype in ["float32", "int64", "bool"]:
            key = f"all_to_all_equal/{dtype}"
            assert len(f[key]) == len(t[key])
            for mine, theirs in zip(f[key], t[key]):
                assert mine.dtype == theirs.dtype
                np.testing.assert_array_equal(mine, theirs)
