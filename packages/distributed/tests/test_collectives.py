"""Every collective against numpy, on 2 ranks and on 3 (oversubscribed on 2 cores).

The worker (workers/collectives.py) runs each call on every rank and saves what each
rank passed and got; here numpy computes what each rank should have got from all ranks'
inputs.  Values are small integers or halves, so every result is exact in every dtype.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SHAPES = ["scalar", "5", "3x4"]
OPS = ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]


class Results:
    def __init__(self, directory, world):
        self.world = world
        self.arrays = [np.load(directory / f"rank{r}.npz") for r in range(world)]
        self.facts = [json.loads((directory / f"rank{r}.json").read_text()) for r in range(world)]

    def inputs(self, case):
        return np.stack([a[f"{case}/in"] for a in self.arrays])

    def out(self, case, rank):
        return self.arrays[rank][f"{case}/out"]


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def results(request, tmp_path_factory, mpi_launch_ok):
    out = tmp_path_factory.mktemp(f"collectives{request.param}")
    mpi_launch_ok("collectives.py", request.param, out)
    return Results(out, request.param)


def reference(op: str, stacked: np.ndarray, world: int) -> np.ndarray:
    dtype = stacked.dtype
    if dtype == np.bool_:
        reducer = {
            "SUM": np.logical_or, "MAX": np.logical_or, "BOR": np.logical_or,
            "PRODUCT": np.logical_and, "MIN": np.logical_and, "BAND": np.logical_and,
            "BXOR": np.logical_xor,
        }[op]  # fmt: skip
        return reducer.reduce(stacked, axis=0)
    if op in ("SUM", "AVG"):
        total = np.add.reduce(stacked, axis=0, dtype=dtype)
        if op == "SUM":
            return total
        if dtype.kind == "f":
            return np.divide(total, world).astype(dtype)
        return (np.trunc(total.astype(np.float64) / world)).astype(dtype)  # toward zero
    ufunc = {
        "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum,
        "BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor,
    }[op]  # fmt: skip
    return ufunc.reduce(stacked, axis=0, dtype=dtype)


def assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_all_reduce(results, op, dtype):
    for shape in SHAPES:
        case = f"all_reduce/{op}/{dtype}/{shape}"
        errors = [f[case] for f in results.facts]
        if dtype == "bool" and op == "AVG":
            assert (
                errors
                == [["RuntimeError", "Cannot use ReduceOp.AVG with boolean inputs"]] * results.world
            )
            continue
        if dtype.startswith("float") and op in ("BAND", "BOR", "BXOR"):
            message = f"Cannot use ReduceOp.{op} with non-integral dtype"
            assert errors == [["RuntimeError", message]] * results.world
            continue
        assert errors == [None] * results.world
        expected = reference(op, results.inputs(case), results.world)
        for r in range(results.world):
            assert_same(results.out(case, r), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_async_all_reduce_and_broadcast_and_reduce(results, dtype):
    w = results.world
    for shape in SHAPES:
        key = f"{dtype}/{shape}"
        expected = reference("MAX", results.inputs(f"async/{key}"), w)
        for r in range(w):
            assert results.facts[r][f"async/{key}"] == [True, True, 1]
            assert_same(results.out(f"async/{key}", r), expected)
            assert_same(results.out(f"broadcast/{key}", r), results.inputs(f"broadcast/{key}")[-1])
        assert results.facts[0][f"reduce/{key}"] is None
        assert_same(
            results.out(f"reduce/{key}", 0), reference("SUM", results.inputs(f"reduce/{key}"), w)
        )
        for r in range(1, w):  # the other ranks keep their input
            assert_same(results.out(f"reduce/{key}", r), results.inputs(f"reduce/{key}")[r])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gathers_and_scatter(results, dtype):
    w = results.world
    for shape in SHAPES:
        key = f"{dtype}/{shape}"
        for r in range(w):
            assert_same(results.out(f"all_gather/{key}", r), results.inputs(f"all_gather/{key}"))
            stacked = results.inputs(f"all_gather_into_tensor/{key}")
            assert_same(results.out(f"all_gather_into_tensor/{key}", r), stacked)
            if shape != "scalar":
                cat = results.arrays[r][f"all_gather_into_tensor/{key}/cat"]
                assert_same(cat, np.concatenate(list(stacked)))
            parts = results.arrays[w - 1][f"scatter/{key}/in"]
            assert_same(results.out(f"scatter/{key}", r), parts[r])
        assert_same(results.out(f"gather/{key}", 0), results.inputs(f"gather/{key}"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_send_recv_ring(results, dtype):
    w = results.world
    for shape in SHAPES:
        key = f"{dtype}/{shape}"
        sent = results.inputs(f"ring/{key}")
        for r in range(w):
            assert results.facts[r][f"recv_from/{key}"] == (r - 1) % w
            assert_same(results.out(f"ring/{key}", r), sent[(r - 1) % w])


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
@pytest.mark.parametrize("op", ["SUM", "AVG", "MIN", "MAX", "PRODUCT"])
def test_reduce_scatter_tensor(results, op, dtype):
    w = results.world
    case = f"reduce_scatter_tensor/{op}/{dtype}"
    full = reference(op, results.inputs(case), w)
    for r in range(w):
        assert_same(results.out(case, r), full[3 * r : 3 * r + 3])


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reduce_scatter_list(results, dtype):
    w = results.world
    case = f"reduce_scatter/{dtype}"
    full = reference("SUM", results.inputs(case), w)
    for r in range(w):
        assert_same(results.out(case, r), full[r])
    for r in range(w):
        kind, message = results.facts[r]["error/reduce_scatter_list"]
        assert kind == "ValueError" and "one tensor per rank" in message


def test_errors_are_clear_and_on_every_rank(results):
    w = results.world
    facts = results.facts
    for r in range(w):
        kind, message = facts[r]["error/noncontiguous"]
        assert kind == "RuntimeError"
        assert "`tensor` is not contiguous (shape (3, 4), strides (1, 3))" in message
        assert ".contiguous()" in message
        kind, message = facts[r]["error/shape"]
        assert kind == "RuntimeError" and "the ranks of the group disagree" in message
        for q in range(w):
            assert (
                f"rank {q} called all_reduce with gradstack.float32 of shape ({2 + q},)" in message
            )
        kind, message = facts[r]["error/dtype"]
        assert kind == "RuntimeError"
        assert "rank 0 called all_reduce with gradstack.float32" in message
        assert "rank 1 called all_reduce with gradstack.float64" in message
        kind, message = facts[r]["error/kind"]
        assert "rank 0 called all_reduce" in message and "rank 1 called broadcast" in message
        assert facts[r]["error/band_float"] == [
            "RuntimeError",
            "Cannot use ReduceOp.BAND with non-integral dtype",
        ]
        kind, message = facts[r]["error/not_tensor"]
        assert (
            kind == "TypeError"
            and "Expected parameter `tensor` of type gradstack.Tensor" in message
        )
        assert facts[r]["error/op"][0] == "TypeError"
        assert facts[r]["error/send_self"] == [
            "ValueError",
            "Invalid destination rank: should not be the same as rank of the current process.",
        ]
        assert facts[r]["error/init_twice"] == [
            "ValueError",
            "trying to initialize the default process group twice!",
        ]
        root = (r + 1) % w
        assert facts[r]["error/gather_list_off_root"] == [
            "ValueError",
            "Argument ``gather_list`` must NOT be specified on non-destination ranks.",
        ], root
    assert facts[0]["error/recv_shape"] is None  # the sender's data left
    kind, message = facts[1]["error/recv_shape"]
    assert kind == "RuntimeError"
    assert "rank 0 sent gradstack.float32 of shape (3,)" in message
    assert "the receiving tensor is gradstack.float32 of shape (4,)" in message


def test_groups_destroy_and_reinit(results):
    w = results.world
    for r in range(w):
        f = results.facts[r]
        assert f["world"] == [r, w, "mpi", True]
        assert f["after_destroy"] is False and f["reinit"] == [float(w)]
        g = f["group"]
        if r in (0, w - 1):
            assert g["rank"] == (0 if r == 0 else 1) and g["size"] == 2
            assert g["result"] == [1.0 + w, 1.0 + w] and g["returned"] == "None"
            assert g["ranks"] == [0, w - 1] and g["global_of_1"] == w - 1
            assert g["warned"] == []
        else:  # not a member: skipped with torch's warning, tensor untouched
            assert g["rank"] == -1 and g["size"] == -1
            assert g["result"] == [r + 1.0, r + 1.0]
            assert g["warned"] == [
                f"Running all_reduce on global rank {r} which does not belong to the given group."
            ]
