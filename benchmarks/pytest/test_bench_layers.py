"""Quick A/B timings of gradstack's headline workloads with pytest-benchmark.

Skipped by the normal test run (``--benchmark-skip`` in the root pytest config).  Run them
with ``hatch run bench``: results are saved under ``.benchmarks/`` and compared with the
newest earlier save, failing when a median got 50% slower.  asv (benchmarks/asv/) keeps the
per-commit history; this is for a quick check of the working tree.

Forward, backward and the optimiser step are timed separately.  Benchmarks that consume
what they were given (backward frees the graph, step moves the weights) use
``benchmark.pedantic`` with a ``setup`` that rebuilds it for every round.
"""

from __future__ import annotations

import numpy as np
import pytest

gt = pytest.importorskip("gradstack_tensor")
ag = pytest.importorskip("gradstack_autograd")


def leaf(shape, seed=0, low=0.5, high=1.5, dtype=np.float32):
    r = np.random.default_rng(seed)
    return gt.tensor(r.uniform(low, high, shape).astype(dtype), requires_grad=True)


def consumed(benchmark, make, run, rounds=30):
    """Time run(*make()) with a fresh make() before every round (untimed)."""
    benchmark.pedantic(
        run, setup=lambda: (make(), {}), rounds=rounds, iterations=1, warmup_rounds=2
    )


# ----------------------------------------------------------------------------- tensor-core


@pytest.mark.benchmark(group="tensor-core")
def test_tiny_mul_x100(benchmark):
    a, b = gt.ones(2, 3), gt.full((2, 3), 2.0)

    def run():
        for _ in range(100):
            a * b

    benchmark(run)


@pytest.mark.benchmark(group="tensor-core")
@pytest.mark.parametrize("op", ["add", "sin", "sigmoid"])
def test_elementwise_1m(benchmark, op):
    a = gt.tensor(np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32))
    fn = {"add": lambda: a + a, "sin": a.sin, "sigmoid": a.sigmoid}[op]
    benchmark(fn)


@pytest.mark.benchmark(group="tensor-core")
def test_matmul_256(benchmark):
    r = np.random.default_rng(0)
    a = gt.tensor(r.standard_normal((256, 256)).astype(np.float32))
    benchmark(lambda: a @ a)


@pytest.mark.benchmark(group="tensor-core")
def test_fused_sgd_update_1m(benchmark):
    K = pytest.importorskip("gradstack_tensor.kernels")
    r = np.random.default_rng(0)
    p, g, buf = (r.standard_normal(1 << 20).astype(np.float32) for _ in range(3))
    benchmark(lambda: K.sgd_update_(p, g, buf, 1e-3, momentum=0.9, weight_decay=1e-4))


# ----------------------------------------------------------------------------- graph-engine


def tutorial_forward(x, y, z):
    for _ in range(1000):
        z = (z / x) * y
    return z.sum()


@pytest.mark.benchmark(group="graph-engine")
def test_tutorial_loop_forward(benchmark):
    x, y, z = leaf((2, 3), 0), leaf((2, 3), 1), gt.ones(2, 3, requires_grad=True)
    benchmark(tutorial_forward, x, y, z)


@pytest.mark.benchmark(group="graph-engine")
def test_tutorial_loop_backward(benchmark):
    x, y, z = leaf((2, 3), 0), leaf((2, 3), 1), gt.ones(2, 3, requires_grad=True)
    consumed(benchmark, lambda: (tutorial_forward(x, y, z),), lambda loss: loss.backward())


def chain(x, depth):
    for _ in range(depth // 2):
        x = x * 1.0001
        x = x + 0.0001
    return x.sum()


@pytest.mark.benchmark(group="graph-engine")
def test_chain_20k_forward(benchmark):
    x = leaf((4,), dtype=np.float64)
    benchmark.pedantic(chain, args=(x, 20_000), rounds=10, warmup_rounds=1)


@pytest.mark.benchmark(group="graph-engine")
def test_chain_20k_backward(benchmark):
    x = leaf((4,), dtype=np.float64)
    consumed(benchmark, lambda: (chain(x, 20_000),), lambda loss: loss.backward(), rounds=10)


@pytest.mark.benchmark(group="graph-engine")
def test_second_order_grad(benchmark):
    x = leaf((100,), 0, -1.0, 1.0, np.float64)

    def run():
        f = (x.sin() * x.cos()).sum() + (x**3).sum()
        (g,) = ag.grad(f, x, create_graph=True)
        ag.grad(g.sum(), x)

    benchmark(run)


# ----------------------------------------------------------------------------- upper layers


@pytest.mark.benchmark(group="functional-api")
def test_hessian_100(benchmark):
    F = pytest.importorskip("gradstack_functional")
    x = gt.tensor(np.random.default_rng(0).uniform(-1, 1, 100))
    benchmark(F.hessian, lambda x: (x.sin() * x.cos()).sum() + (x**3).sum(), x)


@pytest.mark.benchmark(group="profiler")
@pytest.mark.parametrize("profiled", [False, True], ids=["off", "on"])
def test_profiler_tutorial_loop(benchmark, profiled):
    P = pytest.importorskip("gradstack_profiler")
    x, y, z = leaf((2, 3), 0), leaf((2, 3), 1), gt.ones(2, 3, requires_grad=True)

    def run():
        if profiled:
            with P.profile():
                tutorial_forward(x, y, z).backward()
        else:
            tutorial_forward(x, y, z).backward()

    benchmark(run)


def mlp_parts():
    nn = pytest.importorskip("gradstack_nn")
    optim = getattr(nn, "optim", None) or pytest.importorskip("gradstack_nn.optim")
    gt.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
    )
    r = np.random.default_rng(0)
    x = gt.tensor(r.standard_normal((256, 784)).astype(np.float32))
    target = gt.tensor(r.integers(0, 10, 256))
    return model, optim.SGD(model.parameters(), lr=1e-3), nn.CrossEntropyLoss(), x, target


@pytest.mark.benchmark(group="nn-mini")
def test_mlp_forward(benchmark):
    model, _, loss_fn, x, target = mlp_parts()
    benchmark(lambda: loss_fn(model(x), target))


@pytest.mark.benchmark(group="nn-mini")
def test_mlp_backward(benchmark):
    model, _, loss_fn, x, target = mlp_parts()
    consumed(benchmark, lambda: (loss_fn(model(x), target),), lambda loss: loss.backward())


@pytest.mark.benchmark(group="nn-mini")
def test_mlp_optimizer_step(benchmark):
    model, opt, loss_fn, x, target = mlp_parts()
    loss_fn(model(x), target).backward()
    benchmark(opt.step)


@pytest.mark.benchmark(group="nn-mini")
def test_mlp_train_step(benchmark):
    model, opt, loss_fn, x, target = mlp_parts()

    def step():
        opt.zero_grad()
        loss_fn(model(x), target).backward()
        opt.step()

    benchmark(step)
