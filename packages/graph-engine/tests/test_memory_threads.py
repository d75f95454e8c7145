"""Memory stays flat over many steps, nodes do not leak, threads get exact numbers."""

from __future__ import annotations

import gc
import sys
import threading
import tracemalloc
import weakref

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np


class _TinyModel:
    """Two matmuls and a tanh, trained with plain SGD."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.w1 = gt.from_numpy(rng.standard_normal((8, 16)) * 0.3).requires_grad_()
        self.w2 = gt.from_numpy(rng.standard_normal((16, 4)) * 0.3).requires_grad_()
        self.x = gt.from_numpy(rng.standard_normal((5, 8)))
        self.t = gt.from_numpy(rng.standard_normal((5, 4)))

    def step(self, lr=0.01):
        h = (self.x @ self.w1).tanh()
        loss = ((h @ self.w2 - self.t) ** 2).mean()
        loss.backward()
        with ag.no_grad():
            for w in (self.w1, self.w2):
                w.sub_(w.grad * lr)
                w.grad.zero_()
        return loss


def test_ten_thousand_steps_keep_memory_flat():
    model = _TinyModel()
    first = model.step().item()
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(1000):
            model.step()
        gc.collect()
        after_1k = tracemalloc.get_traced_memory()[0]
        for _ in range(9000):
            last = model.step()
        gc.collect()
        after_10k = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 9,000 more steps may not grow memory by more than a few KiB (a leak of one small
    # object per step would add hundreds of KiB)
    assert after_10k - after_1k < 16 * 1024, (after_1k, after_10k)
    assert last.item() < first  # and the model did train


def test_graph_nodes_are_freed():
    model = _TinyModel(1)
    refs = []
    for _ in range(50):
        h = (model.x @ model.w1).tanh()
        loss = ((h @ model.w2 - model.t) ** 2).mean()
        node, stack = loss.grad_fn, []
        while node is not None:  # weak references to the whole chain
            refs.append(weakref.ref(node))
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)
            node = stack.pop() if stack else None
        loss.backward()
        del h, loss, node, stack
    gc.disable()  # freed by reference counting alone
    try:
        alive = [r() for r in refs if r() is not None]
    finally:
        gc.enable()
    assert alive == []
    assert len(refs) > 50 * 6


def test_a_graph_dropped_without_backward_is_freed():
    x = gt.ones(3, requires_grad=True)
    y = (x * 2).exp().sum()
    ref = weakref.ref(y.grad_fn)
    big = x * gt.from_numpy(np.ones(3, dtype=np.float32))
    saved = weakref.ref(big)
    z = big.sin()
    del y, big
    assert ref() is None
    assert saved() is not None  # z's SinBackward0 holds it
    del z
    assert saved() is None


def _train(seed, steps=150, log=None):
    """Build and backpropagate one graph per step; every number, exactly."""
    rng = np.random.default_rng(seed)
    w = gt.from_numpy(rng.standard_normal((6, 6))).requires_grad_()
    x = gt.from_numpy(rng.standard_normal((4, 6)))
    out = []
    for _ in range(steps):
        h = (x @ w).tanh()
        loss = (h.sin() * h).sum() + (w * w).mean()
        (g,) = ag.grad(loss, w, retain_graph=True)
        loss.backward()
        with ag.no_grad():
            w.sub_(w.grad * 0.05)
        out.append((loss.item(), g.numpy().copy(), w.grad.numpy().copy()))
        w.grad = None
        if log is not None:
            log.append(seed)
    return out


def test_two_threads_get_exactly_the_sequential_numbers():
    sequential = [_train(1), _train(2)]
    results = [None, None]
    start = threading.Barrier(2)
    log = []

    def run(i):
        start.wait()
        results[i] = _train(i + 1, log=log)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: interleave
    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    # the two threads really ran at the same time: their steps interleave
    assert sum(a != b for a, b in zip(log, log[1:])) > 2, log
    for seq, par in zip(sequential, results):
        assert len(seq) == len(par) == 150
        for (l1, g1, w1), (l2, g2, w2) in zip(seq, par):
            assert l1 == l2
            assert np.array_equal(g1, g2) and np.array_equal(w1, w2)  # bitwise


def test_threads_with_their_own_grad_modes_and_hooks():
    """One thread under no_grad and with a hook, another plain, interleaved."""
    results = {}
    barrier = threading.Barrier(2)

    def plain():
        x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
        barrier.wait()
        for _ in range(200):
            (x * x).sum().backward()
        results["plain"] = x.grad.tolist()

    def hooked():
        x = gt.tensor([1.0, 2.0], dtype=gt.float64, requires_grad=True)
        x.register_hook(lambda g: g * 0.5)
        barrier.wait()
        for _ in range(200):
            with ag.no_grad():
                assert not (x * 2).requires_grad
            (x * x).sum().backward()
        results["hooked"] = x.grad.tolist()

    threads = [threading.Thread(target=plain), threading.Thread(target=hooked)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"plain": [400.0, 800.0], "hooked": [200.0, 400.0]}
