"""profiler: the cost of profiling the tutorial loop (1000 x ``z = (z / x) * y``, 2000 ops,
then backward), off and on, and of aggregating the events into a table."""

from __future__ import annotations

from functools import cache

import numpy as np

from ._common import optional, require, rng, tensor

rounds = 1  # see Note [One round] in _common.py

gt = optional("gradstack_tensor")
ag = optional("gradstack_autograd")
P = optional("gradstack_profiler")


@cache
def _inputs():
    require(gt, ag, P, attrs=((P, "profile"),))
    r = rng()
    x = tensor(r.uniform(0.5, 1.5, (2, 3)).astype(np.float32), requires_grad=True)
    y = tensor(r.uniform(0.5, 1.5, (2, 3)).astype(np.float32), requires_grad=True)
    z = tensor(np.ones((2, 3), np.float32), requires_grad=True)
    return x, y, z


def _loop(x, y, z):
    for _ in range(1000):
        z = (z / x) * y
    z.sum().backward()


@cache
def _profiled():
    with P.profile() as prof:
        _loop(*_inputs())
    return prof


class ProfilerOverhead:
    """No setup (nothing is consumed): see Note [Micro-benchmarks have no setup]."""

    def time_off(self):
        _loop(*_inputs())

    def time_on(self):
        inputs = _inputs()
        with P.profile():
            _loop(*inputs)

    def time_on_record_function(self):
        inputs = _inputs()
        require(P, attrs=((P, "record_function"),))
        with P.profile():
            with P.record_function("tutorial_loop"):
                _loop(*inputs)

    def time_key_averages_table(self):
        _inputs()
        _profiled().key_averages().table(sort_by="self_cpu_time_total")
