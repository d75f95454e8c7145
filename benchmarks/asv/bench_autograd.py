"""graph-engine: per-op recording overhead on tiny tensors, forward and backward of deep
chains and wide graphs, a small dense network, and higher-order gradients.

Forward (recording the graph) and backward (running it) are timed separately: ``setup``
records the graph and ``time_backward`` runs it once per timed call (``number = 1``, see
Note [Fresh state per timed call] in _common.py).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ._common import one_thread, optional, require, rng, tensor

rounds = 1  # see Note [One round] in _common.py

gt = optional("gradstack_tensor")
ag = optional("gradstack_autograd")


def _leaf(shape, seed=0, low=0.5, high=1.5, dtype=np.float32):
    return tensor(rng(seed).uniform(low, high, size=shape).astype(dtype), requires_grad=True)


@cache
def _tiny_inputs():
    require(gt, ag)
    return _leaf((2, 3), 0), _leaf((2, 3), 1), tensor(np.full((2, 3), 1.5, np.float32))


class PerOpOverhead:
    """100 ops on (2, 3) tensors per timed call: the cost of recording one node.  No setup:
    see Note [Micro-benchmarks have no setup] in _common.py."""

    def time_mul_no_grad_inputs_x100(self):
        _, _, c = _tiny_inputs()
        for _ in range(100):
            c * c

    def time_mul_under_no_grad_x100(self):
        x, y, _ = _tiny_inputs()
        with ag.no_grad():
            for _ in range(100):
                x * y

    def time_mul_recorded_x100(self):
        x, y, _ = _tiny_inputs()
        for _ in range(100):
            x * y

    def time_add_scalar_recorded_x100(self):
        x, _, _ = _tiny_inputs()
        for _ in range(100):
            x + 1.0

    def time_sin_recorded_x100(self):
        x, _, _ = _tiny_inputs()
        for _ in range(100):
            x.sin()

    def time_matmul_recorded_x100(self):
        x, y, _ = _tiny_inputs()
        yt = y.t()
        for _ in range(100):
            x @ yt

    def time_sum_recorded_x100(self):
        x, _, _ = _tiny_inputs()
        for _ in range(100):
            x.sum()


class TutorialLoop:
    """The tutorial's profiler loop: 1000 x ``z = (z / x) * y`` on (2, 3) tensors (2000 ops),
    then ``z.sum().backward()``."""

    number = 1

    def setup(self):
        require(gt, ag)
        self.x = _leaf((2, 3), 0)
        self.y = _leaf((2, 3), 1)
        self.z0 = tensor(np.ones((2, 3), np.float32), requires_grad=True)
        self.loss = self._forward()

    def _forward(self):
        x, y, z = self.x, self.y, self.z0
        for _ in range(1000):
            z = (z / x) * y
        return z.sum()

    def time_forward(self):
        self._forward()

    def time_backward(self):
        self.loss.backward()

    def time_forward_backward(self):
        self._forward().backward()


class DeepChain:
    """A chain of ``depth`` ops on a 4-element tensor: alternately ``* 1.0001`` and
    ``+ 0.0001``.  The engine must not recurse (principle 2) and must free as it goes."""

    params = [[1_000, 20_000]]
    param_names = ["depth"]
    number = 1

    def setup(self, depth):
        require(gt, ag)
        self.x = _leaf((4,), 0, dtype=np.float64)
        self.loss = self._forward(depth)

    def _forward(self, depth):
        y = self.x
        for _ in range(depth // 2):
            y = y * 1.0001
            y = y + 0.0001
        return y.sum()

    def time_forward(self, depth):
        self._forward(depth)

    def time_backward(self, depth):
        self.loss.backward()

    def time_grad(self, depth):
        ag.grad(self._forward(depth), self.x)


class DeepChainMemory:
    """Peak memory of a 400-op chain on a 65,536-element float32 tensor, forward then
    backward (``sin`` saves its input: 200 saved 256 KiB tensors).  asv's peakmem is the
    process's high-water mark, so the graph is built inside the measured function."""

    def setup(self):
        require(gt, ag)
        self.x = _leaf((65_536,), 0)

    def peakmem_forward_backward(self):
        y = self.x
        for _ in range(200):
            y = (y * 0.999).sin()
        y.sum().backward()

    def peakmem_forward_only(self):
        y = self.x
        for _ in range(200):
            y = (y * 0.999).sin()
        y.sum()


class WideGraph:
    """``width`` branches off one leaf (``(x * c_i).sin()``) summed pairwise: many nodes
    ready at once, and one leaf accumulating ``width`` incoming gradients."""

    params = [[100, 2_000]]
    param_names = ["width"]
    number = 1

    def setup(self, width):
        require(gt, ag)
        self.x = _leaf((16,), 0)
        self.consts = [1.0 + i / width for i in range(width)]
        self.loss = self._forward()

    def _forward(self):
        x = self.x
        total = None
        for c in self.consts:
            branch = (x * c).sin()
            total = branch if total is None else total + branch
        return total.sum()

    def time_forward(self, width):
        self._forward()

    def time_backward(self, width):
        self.loss.backward()


class ManyLeaves:
    """``width`` separate leaves multiplied by one shared tensor and summed: the cost of
    many AccumulateGrad nodes."""

    params = [[100, 2_000]]
    param_names = ["width"]
    number = 1

    def setup(self, width):
        require(gt, ag)
        self.leaves = [_leaf((8,), i) for i in range(width)]
        self.w = _leaf((8,), 10_000)
        self.loss = self._forward()

    def _forward(self):
        total = None
        for leaf in self.leaves:
            term = (leaf * self.w).sum()
            total = term if total is None else total + term
        return total

    def time_forward(self, width):
        self._forward()

    def time_backward(self, width):
        self.loss.backward()


class DenseNetwork:
    """Raw-tensor two-layer network (batch 64, 256-256-10, float32): matmul, addmm-like
    broadcasting, relu and their backward formulas, without nn-mini."""

    number = 1

    def setup(self):
        require(gt, ag)
        one_thread()
        r = rng()
        self.xb = tensor(r.standard_normal((64, 256)).astype(np.float32))
        self.w1 = tensor((r.standard_normal((256, 256)) / 16).astype(np.float32), True)
        self.b1 = tensor(np.zeros(256, np.float32), True)
        self.w2 = tensor((r.standard_normal((256, 10)) / 16).astype(np.float32), True)
        self.b2 = tensor(np.zeros(10, np.float32), True)
        self.loss = self._forward()

    def _forward(self):
        h = (self.xb @ self.w1 + self.b1).relu()
        out = h @ self.w2 + self.b2
        return (out * out).mean()

    def time_forward(self):
        self._forward()

    def time_backward(self):
        self.loss.backward()


def _hessian_fn(x):
    return (x.sin() * x.cos()).sum() + (x**3).sum()


class HigherOrder:
    """Gradients of gradients of ``(x.sin() * x.cos()).sum() + (x ** 3).sum()``."""

    params = [[10, 1_000]]
    param_names = ["n"]
    number = 1

    def setup(self, n):
        require(gt, ag)
        self.x = _leaf((n,), 0, -1.0, 1.0, np.float64)
        self.v = tensor(rng(1).standard_normal(n))
        self.g = ag.grad(_hessian_fn(self.x), self.x, create_graph=True)[0]

    def time_grad_create_graph(self, n):
        ag.grad(_hessian_fn(self.x), self.x, create_graph=True)

    def time_second_order(self, n):
        # a Hessian-vector product: d/dx <grad f(x), v>
        ag.grad((self.g * self.v).sum(), self.x)

    def time_third_order(self, n):
        g = ag.grad(_hessian_fn(self.x), self.x, create_graph=True)[0]
        g2 = ag.grad(g.sum(), self.x, create_graph=True)[0]
        ag.grad(g2.sum(), self.x)
