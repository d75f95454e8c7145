"""emit_nvtx: one NVTX range per op and backward node, through the `nvtx` package."""

from __future__ import annotations

import sys
import types

import gradstack_tensor as gt
import pytest
from gradstack_profiler import emit_nvtx, record_function


class FakeNvtx(types.ModuleType):
    """Records push_range/pop_range calls, checking that pops match pushes."""

    def __init__(self):
        super().__init__("nvtx")
        self.calls = []
        self.depth = 0

    def push_range(self, message=None, color=None, domain=None, category=None, payload=None):
        self.calls.append(("push", message))
        self.depth += 1

    def pop_range(self, domain=None):
        assert self.depth > 0, "pop without push"
        self.calls.append(("pop", None))
        self.depth -= 1


@pytest.fixture
def fake_nvtx(monkeypatch):
    fake = FakeNvtx()
    monkeypatch.setitem(sys.modules, "nvtx", fake)
    return fake


def pushed(fake):
    return [m for kind, m in fake.calls if kind == "push"]


def test_a_range_per_op(fake_nvtx):
    a = gt.ones(2, 3)
    with emit_nvtx():
        b = a * 2
        b.sum()
    assert fake_nvtx.depth == 0
    assert [m.split(",")[0] for m in pushed(fake_nvtx)] == ["aten::mul", "aten::sum"]
    assert fake_nvtx.calls[1] == ("pop", None) and len(fake_nvtx.calls) == 4


def test_forward_and_backward_ranges_share_sequence_numbers(fake_nvtx):
    a = gt.ones(2, 3, requires_grad=True)
    with emit_nvtx():
        with record_function("forward"):
            loss = (a * 3).sum()
        loss.backward()
    assert fake_nvtx.depth == 0
    messages = pushed(fake_nvtx)
    assert messages[0] == "forward"
    backward = [m for m in messages if "stashed seq" in m]
    assert [m.split(",")[0] for m in backward] == ["SumBackward0", "MulBackward0"]
    assert "AccumulateGrad" in messages
    forward_seq = {}
    for m in messages:
        if ", seq = " in m:
            name, seq = m.split(", seq = ")
            forward_seq.setdefault(name, int(seq.split(",")[0]))
    if forward_seq:  # graph-engine exposes current_sequence_nr
        mul_backward = next(m for m in backward if m.startswith("MulBackward0"))
        assert int(mul_backward.rsplit("= ", 1)[1]) == forward_seq["aten::mul"]


def test_record_shapes_appends_sizes(fake_nvtx):
    with emit_nvtx(record_shapes=True):
        gt.ones(2, 3) * gt.ones(3)
    (message,) = pushed(fake_nvtx)
    assert message.startswith("aten::mul") and message.endswith("sizes = [[2, 3], [3]]")


def test_ranges_close_when_an_op_raises(fake_nvtx):
    with pytest.raises(RuntimeError):
        with emit_nvtx():
            gt.ones(2, 3) + gt.ones(4)
    assert fake_nvtx.depth == 0 and len(fake_nvtx.calls) == 2


def test_disabled_does_nothing(fake_nvtx):
    before = gt.registered_layers()
    with emit_nvtx(enabled=False):
        assert gt.registered_layers() == before
        gt.ones(2) * 2
    assert fake_nvtx.calls == []


def test_missing_nvtx_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nvtx", None)  # makes `import nvtx` fail
    before = gt.registered_layers()
    with pytest.raises(ImportError, match=r"pip install nvtx.*gradstack-profiler\[nvtx\]"):
        with emit_nvtx():
            pass
    assert gt.registered_layers() == before


def test_a_module_that_is_not_nvidias(monkeypatch):
    monkeypatch.setitem(sys.modules, "nvtx", types.ModuleType("nvtx"))
    with pytest.raises(ImportError, match="not NVIDIA's nvtx"):
        with emit_nvtx():
            pass


def test_with_the_real_nvtx_package():
    real = pytest.importorskip("nvtx")
    if not hasattr(real, "push_range"):
        pytest.skip("an `nvtx` module that is not NVIDIA's")
    a = gt.ones(2, 3, requires_grad=True)
    with emit_nvtx(record_shapes=True):
        with record_function("block"):
            (a * 2).sum().backward()
