"""``gradstack.utils.benchmark.Timer`` (torch.utils.benchmark's) and ``gradstack.vmap``,
as torch's tutorials use them."""

from __future__ import annotations

import gradstack
import pytest
from gradstack.utils.benchmark import Measurement, Timer


def test_timeit_measures_the_statement_with_the_given_globals():
    calls = []
    m = Timer("f(x)", globals={"f": calls.append, "x": 1}).timeit(50)
    assert isinstance(m, Measurement) and m.number_per_run == 50
    assert len(calls) == 51  # one warm-up run, then the 50 timed
    assert len(m.times) == 1 and m.times[0] > 0 and m.mean == m.median == m.times[0]
    text = repr(m)
    assert "f(x)" in text and "1 measurement, 50 runs per measurement, 1 thread" in text


def test_timer_runs_with_its_threads_and_restores_them():
    before = gradstack.get_num_threads()
    seen = []
    Timer("seen.append(get())", globals={"seen": seen, "get": gradstack.get_num_threads},
          num_threads=2).timeit(1)  # fmt: skip
    assert seen == [2, 2] and gradstack.get_num_threads() == before


def test_autorange_blocks():
    t = Timer(lambda: sum(range(10)))
    m = t.blocked_autorange(min_run_time=0.01)
    assert len(m.raw_times) >= 1 and sum(m.raw_times) >= 0.01 and m.median > 0
    a = t.adaptive_autorange(max_run_time=0.05)
    assert a.median > 0


@pytest.mark.parametrize("bad", [0, -3, 1.5, True])
def test_timeit_refuses_a_bad_number(bad):
    with pytest.raises(ValueError, match="positive int"):
        Timer("pass").timeit(bad)


def test_vmap_is_torch_vmap():
    from gradstack import vmap

    assert vmap is gradstack.func.vmap and "vmap" in gradstack.__all__
    assert vmap(lambda a: a * 2)(gradstack.ones(2, 3)).tolist() == [[2.0] * 3] * 2
