"""profile_memory: bytes of the tensors ops create, and of those freed (README, "Memory")."""

from __future__ import annotations

import gc

import gradstack_tensor as gt
import pytest
from gradstack_profiler import profile, record_function
from gradstack_tensor import Op


def test_outputs_count_as_allocated():
    a = gt.ones(4, 8)  # float32: 128 bytes
    with profile(profile_memory=True) as prof:
        b = a * 2
        c = b.sum(1)
        d = a.double()  # 256 bytes
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::mul"].cpu_memory_usage == 128
    assert rows["aten::mul"].self_cpu_memory_usage == 128
    assert rows["aten::sum"].cpu_memory_usage == 4 * 4
    assert rows["aten::to"].cpu_memory_usage == 4 * 8 * 8
    del b, c, d


def test_views_and_in_place_ops_allocate_nothing():
    a = gt.ones(4, 8)
    with profile(profile_memory=True) as prof:
        v = a.view(32)
        t = a.t()
        a.mul_(2)
    for evt in prof.events():
        assert evt.cpu_memory_usage == 0, evt
    del v, t


def test_frees_inside_an_event_count_against_it():
    a = gt.ones(16)  # 64 bytes per float32 result
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            tmp = a * 2
            del tmp  # freed inside the block
            kept = a + 1
    (block,) = [e for e in prof.events() if e.name == "block"]
    assert block.cpu_memory_usage == 64  # 128 created, 64 freed
    assert block.self_cpu_memory_usage == -64
    assert sum(c.cpu_memory_usage for c in block.cpu_children) == 128
    del kept


def test_frees_outside_any_event_are_memory_events():
    a = gt.ones(16)
    with profile(profile_memory=True) as prof:
        tmp = a * 2
        del tmp
        gc.collect()
    names = [e.name for e in prof.events()]
    assert names == ["aten::mul", "[memory]"]
    mem = prof.events()[1]
    assert mem.cpu_memory_usage == -64 and mem.cpu_time_total == 0
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["[memory]"].cpu_memory_usage == -64
    assert prof.total_average().cpu_memory_usage == 0


def test_an_outer_op_does_not_count_its_inner_ops_output_again():
    composite = Op("mem_composite_for_test")
    composite.set_kernel(lambda t: (t * 2) + 1)
    a = gt.ones(16)
    with profile(profile_memory=True) as prof:
        out = composite(a)
    outer = prof.events()[0]
    assert outer.name == "gradstack::mem_composite_for_test"
    # t * 2 (64 B, freed inside) and + 1 (64 B, returned by both ops)
    assert outer.cpu_memory_usage == 64
    assert outer.self_cpu_memory_usage == -64
    assert [c.cpu_memory_usage for c in outer.cpu_children] == [64, 64]
    del out


def test_memory_columns_only_with_profile_memory():
    a = gt.ones(8)
    with profile(profile_memory=True) as prof:
        b = a * 2
    table = prof.table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "32 B" in table
    assert "CPU Mem: bytes of tensors created" in table
    with profile() as plain:
        b = a * 2
    assert "CPU Mem" not in plain.table()
    assert plain.events()[0].cpu_memory_usage == 0
    del b


def test_tensors_freed_after_the_profile_are_not_recorded():
    a = gt.ones(8)
    with profile(profile_memory=True) as prof:
        b = a * 2
    del b
    gc.collect()
    assert [e.name for e in prof.events()] == ["aten::mul"]


@pytest.mark.parametrize(
    "shape,dtype,nbytes", [((3,), gt.float64, 24), ((2, 2), gt.int64, 32), ((5,), gt.bool, 5)]
)
def test_bytes_follow_the_dtype(shape, dtype, nbytes):
    a = gt.ones(*shape, dtype=dtype)
    with profile(profile_memory=True) as prof:
        b = a.clone()
    assert prof.events()[0].cpu_memory_usage == nbytes
    del b
