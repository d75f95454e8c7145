"""gradstack side by side with PyTorch, HIPS autograd, MyGrad and numpy by hand.

``hatch run compare`` (the ``compare`` hatch env: the workspace packages, ``torch==2.13.0``
CPU, ``autograd``, ``mygrad``, matplotlib) runs the headline workloads for every framework
in ONE process, on one thread, on the same inputs:

* ``tinymodel_step``: the tutorial's TinyModel (batch 16, 1000-100-10, ReLU), loss
  ``(ideal - pred).pow(2).sum()``, one SGD step (zero_grad, forward, backward, step);
* ``mlp_step``: 784-512-512-10 with ReLU, batch 256, mean cross-entropy, one SGD step;
* ``tiny_ops_2000``: the tutorial's profiler loop, 1000 x ``z = (z / x) * y`` on (2, 3)
  tensors, then ``z.sum().backward()``;
* ``elementwise_1m``: ``(sin(x) * cos(x) + x * x).tanh().sum()`` over 2**20 float32
  elements, forward and backward;
* ``hessian_100``: the 100x100 Hessian of ``(x.sin() * x.cos()).sum() + (x ** 3).sum()``;
* ``chain_20000``: 20,000 ops alternating ``* 1.0001`` and ``+ 0.0001`` on a 4-element
  float64 tensor, then backward (float64: MyGrad turns a float32 tensor times a Python
  float into float64, and 20,000 float32 roundings would then differ by 2e-4);
* ``jacobian_small``: the Jacobian of the tutorial's ``exp_adder`` on 3-element inputs.

It prints the median time of each, the ratio to PyTorch, and the largest absolute
difference of each framework's numbers (loss, gradients, updated weights, Hessian,
Jacobian) from the hand-written numpy reference; any disagreement beyond the workload's
tolerance fails the run (exit 1).  The table goes to ``build/benchmarks/benchmarks.md``
with the date and the machine, and a bar plot of the ratios to
``build/benchmarks/benchmarks.png``; ``--update-docs`` writes them to ``docs/`` instead, for
a commit that means to publish new numbers.

Usage::

    hatch run compare                          # everything, writes build/benchmarks/*
    hatch run compare --update-docs            # the same, into docs/benchmarks.* (commit it)
    hatch run compare --quick                  # fewer repeats
    hatch run compare --only mlp_step chain_20000 --no-write
    hatch run compare --threads default        # every framework at its default threads
    hatch run compare --before old=/path/to/other/env/bin/python --no-write
                                               # also an older gradstack, in the same rounds

The frameworks take turns, one sample each per round (Note [Interleaved rounds]); each
cell is a median, and a ratio is the median of the per-round ratios.  gradstack's ratios to
numpy by hand and to PyTorch are also given at the 10th percentile of the samples (Note
[Threads are chosen before numpy loads]).
"""

from __future__ import annotations

import os
import sys  # noqa: E402

# Note [Threads are chosen before numpy loads]
# One thread everywhere (the default), or every framework's own default (`--threads
# default`: users do not pin threads); either must hold before numpy/torch start their
# thread pools, so the option is read here, ahead of argparse.
DEFAULT_THREADS = "--threads=default" in sys.argv or any(
    a == "--threads" and b == "default" for a, b in zip(sys.argv, sys.argv[1:])
)
PLOT_STEM = "benchmarks-default-threads" if DEFAULT_THREADS else "benchmarks"
if not DEFAULT_THREADS:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import importlib  # noqa: E402
import importlib.metadata  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402

if str(Path(__file__).resolve().parent) not in sys.path:  # the peers, beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_peers import (  # noqa: E402
    NotSupported,
    _optional,
    autograd_impls,
    mygrad_impls,
    numpy_impls,
)

ROOT = Path(__file__).resolve().parents[1]
FRAMEWORKS = ["gradstack", "torch", "autograd", "mygrad", "numpy"]
TITLES = {
    "gradstack": "gradstack",
    "torch": "PyTorch",
    "autograd": "HIPS autograd",
    "mygrad": "MyGrad",
    "numpy": "numpy (by hand)",
}
DISTRIBUTIONS = {"torch": "torch", "autograd": "autograd", "mygrad": "mygrad"}


# ============================================================================ frameworks


def gradstack_api():
    """gradstack's torch-shaped namespace: the facade when installed, else the layers."""
    facade = _optional("gradstack")
    if facade is not None and hasattr(facade, "tensor"):
        functional = getattr(getattr(facade, "autograd", None), "functional", None)
        return SimpleNamespace(
            label="gradstack",
            tensor=facade.tensor,
            no_grad=facade.no_grad,
            grad=facade.autograd.grad,
            nn=getattr(facade, "nn", None),
            optim=getattr(facade, "optim", None),
            functional=functional,
            manual_seed=facade.manual_seed,
        )
    gt = _optional("gradstack_tensor")
    ag = _optional("gradstack_autograd")
    if gt is None or ag is None:
        return None
    nn = _optional("gradstack_nn")
    optim = (getattr(nn, "optim", None) or _optional("gradstack_nn.optim")) if nn else None
    return SimpleNamespace(
        label="gradstack",
        tensor=gt.tensor,
        no_grad=ag.no_grad,
        grad=ag.grad,
        nn=nn,
        optim=optim,
        functional=_optional("gradstack_functional"),
        manual_seed=gt.manual_seed,
    )


def versions() -> dict:
    out = {"numpy": np.__version__, "python": platform.python_version()}
    for name in (
        "gradstack-tensor-core",
        "gradstack-graph-engine",
        "gradstack-functional-api",
        "gradstack-profiler",
        "gradstack-nn-mini",
        "gradstack",
        *DISTRIBUTIONS.values(),
    ):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


# ============================================================================ inputs


def tinymodel_inputs():
    r = np.random.default_rng(0)
    # float32 throughout, as the torch-shaped models: a float32 array divided by numpy's
    # float64 sqrt is float64 (NEP 50), which made numpy by hand's step run in float64
    # (dgemm) until 2026-11-28 and its ratios to gradstack look better than they were
    w1 = (r.uniform(-1, 1, (100, 1000)) / np.sqrt(1000)).astype(np.float32)
    w2 = (r.uniform(-1, 1, (10, 100)) / np.sqrt(100)).astype(np.float32)
    params = [
        w1,
        r.uniform(-0.03, 0.03, 100).astype(np.float32),
        w2,
        r.uniform(-0.1, 0.1, 10).astype(np.float32),
    ]
    assert all(p.dtype == np.float32 for p in params)
    return dict(
        x=r.standard_normal((16, 1000)).astype(np.float32),
        ideal=r.standard_normal((16, 10)).astype(np.float32),
        params=params,
        lr=1e-3,
    )


def mlp_inputs():
    r = np.random.default_rng(1)
    params = []
    for fan_in, fan_out in [(784, 512), (512, 512), (512, 10)]:
        bound = 1 / np.sqrt(fan_in)
        params.append(r.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        params.append(r.uniform(-bound, bound, fan_out).astype(np.float32))
    labels = r.integers(0, 10, 256)
    return dict(
        x=r.standard_normal((256, 784)).astype(np.float32),
        labels=labels,
        onehot=np.eye(10, dtype=np.float32)[labels],
        params=params,
        lr=1e-2,
    )


def tiny_ops_inputs():
    r = np.random.default_rng(2)
    x = r.uniform(0.5, 1.5, (2, 3)).astype(np.float32)
    y = (x * r.uniform(0.999, 1.001, (2, 3))).astype(np.float32)  # (y/x)**1000 stays finite
    return dict(x=x, y=y, z=np.ones((2, 3), np.float32))


def elementwise_inputs():
    return dict(x=np.random.default_rng(3).uniform(-2, 2, 1 << 20).astype(np.float32))


def hessian_inputs():
    return dict(x=np.random.default_rng(4).uniform(-1, 1, 100))


def chain_inputs():
    return dict(x=np.random.default_rng(5).uniform(0.5, 1.5, 4))  # float64: MyGrad promotes


def jacobian_inputs():
    r = np.random.default_rng(6)
    return dict(x=r.random(3).astype(np.float32), y=r.random(3).astype(np.float32))


# ============================================================================ a runner
# Each implementation takes the inputs and returns (run, result): `run()` is what is timed
# (it may consume and rebuild its own state), `result()` runs the workload once more on
# fresh state and returns the numbers to compare, as a list of numpy arrays.


# ---------------------------------------------------------------------------- torch-like
# PyTorch and gradstack share one implementation: gradstack is torch-shaped.


def _torchlike_linear_params(T, params):
    return [T.tensor(p.copy(), requires_grad=True) for p in params]


def torchlike_tinymodel(T, inp):
    nn, optim = T.nn, T.optim
    if nn is None or optim is None:
        raise NotSupported("nn-mini not installed")

    def build():
        model = nn.Sequential(nn.Linear(1000, 100), nn.ReLU(), nn.Linear(100, 10))
        with T.no_grad():
            for param, value in zip(model.parameters(), inp["params"], strict=True):
                param.copy_(T.tensor(value))
        return model, optim.SGD(model.parameters(), lr=inp["lr"])

    x, ideal = T.tensor(inp["x"]), T.tensor(inp["ideal"])
    model, opt = build()

    def step(model, opt):
        opt.zero_grad()
        loss = (ideal - model(x)).pow(2).sum()
        loss.backward()
        opt.step()
        return loss

    def result():
        m, o = build()
        loss = step(m, o)
        return [np.array(loss.item())] + [p.detach().numpy().copy() for p in m.parameters()]

    return (lambda: step(model, opt)), result


def torchlike_mlp(T, inp):
    nn, optim = T.nn, T.optim
    if nn is None or optim is None:
        raise NotSupported("nn-mini not installed")

    def build():
        model = nn.Sequential(
            nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10)
        )
        with T.no_grad():
            for param, value in zip(model.parameters(), inp["params"], strict=True):
                param.copy_(T.tensor(value))
        return model, optim.SGD(model.parameters(), lr=inp["lr"])

    x, labels = T.tensor(inp["x"]), T.tensor(inp["labels"])
    criterion = nn.CrossEntropyLoss()
    model, opt = build()

    def step(model, opt):
        opt.zero_grad()
        loss = criterion(model(x), labels)
        loss.backward()
        opt.step()
        return loss

    def result():
        m, o = build()
        loss = step(m, o)
        return [np.array(loss.item())] + [p.detach().numpy().copy() for p in m.parameters()]

    return (lambda: step(model, opt)), result


def torchlike_tiny_ops(T, inp):
    def run():
        x, y, z = (T.tensor(inp[k], requires_grad=True) for k in "xyz")
        w = z
        for _ in range(1000):
            w = (w / x) * y
        w.sum().backward()
        return x, y, z

    def result():
        return [t.grad.numpy().copy() for t in run()]

    return run, result


def torchlike_elementwise(T, inp):
    x = T.tensor(inp["x"], requires_grad=True)

    def run():
        x.grad = None
        out = (x.sin() * x.cos() + x * x).tanh().sum()
        out.backward()
        return out

    def result():
        out = run()
        return [np.array(out.item()), x.grad.numpy().copy()]

    return run, result


def hessian_fn(x):
    return (x.sin() * x.cos()).sum() + (x**3).sum()


def torchlike_hessian(T, inp):
    x = T.tensor(inp["x"])
    if T.functional is not None:

        def run():
            return T.functional.hessian(hessian_fn, x)
    else:  # functional-api not installed yet: rows of grad-of-grad, as hessian does

        def run():
            xr = x.detach().requires_grad_(True)
            (g,) = T.grad(hessian_fn(xr), xr, create_graph=True)
            return T.tensor(
                np.stack(
                    [
                        T.grad(g[i], xr, retain_graph=True)[0].detach().numpy()
                        for i in range(g.shape[0])
                    ]
                )
            )

    return run, lambda: [run().detach().numpy().copy()]


def torchlike_chain(T, inp):
    def run():
        x = T.tensor(inp["x"], requires_grad=True)
        y = x
        for _ in range(10_000):
            y = y * 1.0001
            y = y + 0.0001
        y.sum().backward()
        return y, x

    def result():
        y, x = run()
        return [y.detach().numpy().copy(), x.grad.numpy().copy()]

    return run, result


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


def torchlike_jacobian(T, inp):
    x, y = T.tensor(inp["x"]), T.tensor(inp["y"])
    if T.functional is not None:

        def run():
            return T.functional.jacobian(exp_adder, (x, y))
    else:  # functional-api not installed yet: one backward per output row

        def run():
            xr, yr = x.detach().requires_grad_(True), y.detach().requires_grad_(True)
            out = exp_adder(xr, yr)
            rows = [T.grad(out[i], (xr, yr), retain_graph=True) for i in range(out.shape[0])]
            return tuple(T.tensor(np.stack([r[k].numpy() for r in rows])) for k in range(2))

    return run, lambda: [j.detach().numpy().copy() for j in run()]


# ============================================================================ workloads


@dataclass
class Workload:
    name: str
    title: str
    inputs: object
    torchlike: object
    rtol: float
    atol: float


WORKLOADS = [
    Workload(
        "tinymodel_step",
        "TinyModel step (batch 16, 1000-100-10)",
        tinymodel_inputs,
        torchlike_tinymodel,
        1e-4,
        1e-4,
    ),
    Workload(
        "mlp_step", "MLP step (batch 256, 784-512-512-10)", mlp_inputs, torchlike_mlp, 1e-4, 1e-5
    ),
    Workload(
        "tiny_ops_2000",
        "2000 tiny ops + backward (z = (z / x) * y)",
        tiny_ops_inputs,
        torchlike_tiny_ops,
        1e-3,
        1e-5,
    ),
    Workload(
        "elementwise_1m",
        "1M-element chain, forward + backward",
        elementwise_inputs,
        torchlike_elementwise,
        1e-4,
        1e-4,
    ),
    Workload("hessian_100", "Hessian 100x100", hessian_inputs, torchlike_hessian, 1e-9, 1e-9),
    Workload(
        "chain_20000", "20,000-op chain + backward", chain_inputs, torchlike_chain, 1e-10, 1e-10
    ),
    Workload(
        "jacobian_small",
        "Jacobian of exp_adder (3 + 3 inputs)",
        jacobian_inputs,
        torchlike_jacobian,
        1e-6,
        1e-6,
    ),
]


WORKLOADS_BY_NAME = {w.name: w for w in WORKLOADS}


@dataclass
class Cell:
    median: float | None = None
    p10: float | None = None  # the 10th percentile of the samples (load moves it least)
    note: str = ""
    max_abs_diff: float | None = None
    agrees: bool | None = None
    samples: list = field(default_factory=list)  # one per round (Note [Interleaved rounds])


@dataclass
class Report:
    cells: dict = field(default_factory=dict)  # (workload, framework) -> Cell
    failures: list = field(default_factory=list)


# Note [Interleaved rounds]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# This host's speed drifts by up to 2x within minutes (a shared machine).  Timing one
# framework's samples after another's put the drift into the ratios.  So every framework
# gets one sample per round (each in its own process: Note [One process per framework]),
# in an order that rotates from round to round, and a ratio is the median of the
# per-round ratios (two samples seconds apart see nearly the same machine).
# A sample loops the workload for at least ``min_sample`` seconds, with the loop count
# fixed per framework before the first round.


def loops_per_sample(run, min_sample: float) -> int:
    """How many calls of ``run`` make a sample of at least ``min_sample`` seconds."""
    run()  # warm-up
    start = time.perf_counter()
    run()
    once = time.perf_counter() - start
    return max(1, int(min_sample / max(once, 1e-9)))


def time_per_call(run, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        run()
    return (time.perf_counter() - start) / number


def p10(samples: list[float]) -> float:
    """The 10th percentile (linear interpolation; the minimum below 10 samples' worth)."""
    ordered = sorted(samples)
    pos = 0.1 * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def implementation(fw: str):
    """One framework's table {workload name: (inputs -> (run, result))}, or a note saying
    why it cannot run.  Imports only that framework (Note [One process per framework])."""
    if fw == "gradstack" or fw.startswith("gradstack@"):
        gs = gradstack_api()
        if gs is None:
            return "not installed"
        return {w.name: (lambda inp, w=w: w.torchlike(gs, inp)) for w in WORKLOADS}
    if fw == "torch":
        torch = _optional("torch")
        if torch is None:
            return "not installed"
        if not DEFAULT_THREADS:
            torch.set_num_threads(1)
        T = SimpleNamespace(
            label="torch",
            tensor=torch.tensor,
            no_grad=torch.no_grad,
            grad=torch.autograd.grad,
            nn=torch.nn,
            optim=torch.optim,
            functional=torch.autograd.functional,
            manual_seed=torch.manual_seed,
        )
        return {w.name: (lambda inp, w=w: w.torchlike(T, inp)) for w in WORKLOADS}
    if fw == "autograd":
        return autograd_impls() or "not installed"
    if fw == "mygrad":
        return mygrad_impls() or "not installed"
    return numpy_impls()


# Note [One process per framework]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Each framework runs in a process of its own, as its users run it.  In one shared process
# the frameworks changed each other's numbers: numpy by hand allocates its temporaries
# with glibc's malloc, which returns freed blocks above its (adaptive) mmap threshold to
# the system, so that the next step page-faults them in again; whether that happened
# depended on what the other frameworks had left in the heap, and the MLP step of numpy
# by hand took 13 ms or 20 ms depending on the order of the frameworks.  So that the
# measure is the computation and not malloc's policy, every worker starts with glibc told
# to keep what is freed (``MALLOC_MMAP_THRESHOLD_`` 32 MiB, its maximum, and
# ``MALLOC_TRIM_THRESHOLD_`` 1 GiB: ``MALLOC_SETTINGS``), which is what a careful
# hand-written numpy program would do; gradstack's block cache keeps its own blocks either
# way (Note [Inside a gradstack op] in tensor-core), torch and the numpy-based frameworks
# gain from it as numpy by hand does.  With one thread, every worker runs on the same core
# (the first one it may use): the cores of this host differ in speed, and the scheduler
# tends to keep a process on the core it started on.  A worker imports
# only its framework (``implementation``), builds each workload when asked, returns its
# numbers, and times one sample per request; the parent asks for the samples round by
# round (Note [Interleaved rounds]).


def _worker(conn, fw: str) -> None:
    """The loop of one framework's process: requests in, answers out, over ``conn``."""
    if not DEFAULT_THREADS and hasattr(os, "sched_setaffinity"):
        # one core for every worker: this host's two cores differ by 15-50% in speed, and
        # the scheduler would keep some frameworks on the slow one (Note [One process per
        # framework])
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    table = implementation(fw)
    state = None  # (run, loops per sample) of the current workload
    while True:
        request = conn.recv()
        kind = request[0]
        if kind == "exit":
            return
        try:
            if kind == "setup":
                state = None
                if isinstance(table, str):
                    conn.send(("note", table))
                    continue
                w = WORKLOADS_BY_NAME[request[1]]
                run, result = table[w.name](w.inputs())
                numbers = [np.asarray(a) for a in result()]
                state = (run, loops_per_sample(run, request[2]))
                conn.send(("ok", numbers))
            elif kind == "sample":
                run, number = state
                conn.send(("ok", time_per_call(run, number)))
        except NotSupported as exc:
            conn.send(("note", f"n/a: {exc}"))
        except Exception as exc:  # noqa: BLE001 - reported by the parent, fails the run
            traceback.print_exc(limit=3)
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


MALLOC_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


class _PipeConn:
    """send/recv of pickled objects over two binary streams (a ``--worker`` process's)."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    def send(self, obj):
        pickle.dump(obj, self.writer, protocol=pickle.HIGHEST_PROTOCOL)
        self.writer.flush()

    def recv(self):
        return pickle.load(self.reader)


def _serve_as_worker(fw: str) -> int:
    """``compare.py --worker FW``: the worker loop over stdin/stdout (whose prints go to
    stderr), for a framework of another environment (``--before``)."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _worker(_PipeConn(sys.stdin.buffer, channel), fw)
    return 0


class Workers:
    """One process per framework (Note [One process per framework]), closed on exit.

    A framework of another environment (``executables``: ``--before``) runs
    ``compare.py --worker`` under that environment's python, so that it imports its own
    packages (a multiprocessing child would take this process's sys.path)."""

    def __init__(self, frameworks, executables=None):
        import multiprocessing
        import subprocess

        ctx = multiprocessing.get_context("spawn")
        self.conns, self.procs = {}, []
        saved = {k: os.environ.get(k) for k in MALLOC_SETTINGS}
        os.environ.update(MALLOC_SETTINGS)  # read by glibc when a worker starts
        try:
            for fw in frameworks:
                python = (executables or {}).get(fw)
                if python is not None:
                    argv = [python, str(Path(__file__).resolve()), "--worker", fw]
                    if DEFAULT_THREADS:
                        argv += ["--threads", "default"]
                    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                    self.conns[fw] = _PipeConn(proc.stdout, proc.stdin)
                else:
                    parent, child = ctx.Pipe()
                    proc = ctx.Process(target=_worker, args=(child, fw), daemon=True)
                    proc.start()
                    self.conns[fw] = parent
                self.procs.append(proc)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def ask(self, fw, *request):
        self.conns[fw].send(request)
        return self.conns[fw].recv()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for conn in self.conns.values():
            try:
                conn.send(("exit",))
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs:
            if hasattr(proc, "join"):
                proc.join(timeout=30)
                if proc.is_alive():
                    proc.terminate()
            else:
                try:
                    proc.wait(timeout=30)
                except Exception:  # noqa: BLE001 - a stuck worker is killed
                    proc.kill()


def compare_arrays(got: list, ref: list, rtol: float, atol: float) -> tuple[float, bool]:
    if len(got) != len(ref):
        return float("inf"), False
    worst, ok = 0.0, True
    for a, b in zip(got, ref, strict=True):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape:
            return float("inf"), False
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
        ok &= bool(np.allclose(a, b, rtol=rtol, atol=atol))
    return worst, ok


def run_all(workloads, repeat: int, min_sample: float, executables=None) -> Report:
    report = Report()
    order = ["numpy", *[f for f in FRAMEWORKS if f != "numpy"]]
    with Workers(order, executables) as workers:
        for w in workloads:
            print(f"\n{w.title}", flush=True)
            ref = None
            timed = []
            for fw in order:
                cell = report.cells.setdefault((w.name, fw), Cell())
                kind, value = workers.ask(fw, "setup", w.name, min_sample)
                if kind == "ok":
                    if fw == "numpy":
                        ref = value
                    else:
                        cell.max_abs_diff, cell.agrees = compare_arrays(value, ref, w.rtol, w.atol)
                    timed.append(fw)
                elif kind == "note":
                    cell.note = value
                else:
                    cell.note = f"error: {value.split(':')[0]}"
                    report.failures.append(f"{w.name} / {fw}: {value}")
            for r in range(repeat):  # Note [Interleaved rounds]
                k = r % len(timed) if timed else 0
                for fw in timed[k:] + timed[:k]:
                    cell = report.cells[(w.name, fw)]
                    kind, value = workers.ask(fw, "sample")
                    if kind == "ok":
                        cell.samples.append(value)
                    else:
                        cell.note = f"error: {value.split(':')[0]}"
                        report.failures.append(f"{w.name} / {fw}: {value}")
                timed = [fw for fw in timed if not report.cells[(w.name, fw)].note]
            for fw in order:
                cell = report.cells[(w.name, fw)]
                if fw in timed and cell.samples:
                    cell.median, cell.p10 = statistics.median(cell.samples), p10(cell.samples)
                line = f"  {TITLES[fw]:16s} "
                line += f"{fmt_time(cell.median):>10s}" if cell.median is not None else cell.note
                if cell.max_abs_diff is not None:
                    line += f"   max |diff| vs numpy {cell.max_abs_diff:.2e}"
                    if not cell.agrees:
                        line += "   DISAGREES"
                        report.failures.append(
                            f"{w.name} / {fw}: numbers differ from numpy by up to "
                            f"{cell.max_abs_diff:.3e} (rtol {w.rtol}, atol {w.atol})"
                        )
                print(line, flush=True)
    return report


# ============================================================================ output


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ratio(report, w, fw, to="torch", stat="median"):
    """``fw``'s time over ``to``'s on workload ``w``: the median of the per-round ratios
    (Note [Interleaved rounds]), or with ``stat="p10"`` the ratio of the two 10th
    percentiles."""
    cell, ref = report.cells.get((w, fw)), report.cells.get((w, to))
    if cell is None or ref is None:
        return None
    a, b = getattr(cell, stat), getattr(ref, stat)
    if a is None or b is None:
        return None
    if stat == "median" and len(cell.samples) == len(ref.samples) and cell.samples:
        return statistics.median(x / y for x, y in zip(cell.samples, ref.samples, strict=True))
    return a / b


def threads_words() -> str:
    if DEFAULT_THREADS:
        return (
            f"each framework's default threads ({os.cpu_count()} cores; nothing pinned, as "
            "users run them)"
        )
    return "one thread (`OMP/OPENBLAS/MKL_NUM_THREADS=1`, `torch.set_num_threads(1)`)"


def ratios_table(report: Report, workloads) -> list[str]:
    """gradstack (and any ``--before`` build of it) against numpy by hand and against
    torch, at the median and the p10."""
    lines = [
        "| workload | gradstack / numpy by hand (median) | (p10) "
        "| gradstack / PyTorch (median) | (p10) |",
        "|---|---:|---:|---:|---:|",
    ]
    for w in workloads:
        for fw in [f for f in FRAMEWORKS if f.startswith("gradstack")]:
            cells = []
            for to in ("numpy", "torch"):
                for stat in ("median", "p10"):
                    r = ratio(report, w.name, fw, to=to, stat=stat)
                    cells.append("" if r is None else f"{r:.2f}x")
            title = w.title if fw == "gradstack" else f"{w.title}, {TITLES[fw]}"
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


HOW_TO_RUN = """\
## Running the benchmarks

Three tools, for three questions.  All of them pin numpy's BLAS and the Cython kernels to
one thread, except `hatch run compare --threads default`, which leaves every framework at
its default thread settings (as users run them) and writes
`benchmarks-default-threads.md`/`.png` beside the one-thread table.

### How does gradstack compare with its peers? `hatch run compare`

Runs the table above (tools/compare.py) in its own hatch env `compare` (the workspace
packages, `torch==2.13.0` CPU through pip, `autograd`, `mygrad`, matplotlib), checks that
every framework computed the same numbers, and writes the table and the plot to
`build/benchmarks/` (git-ignored).  Each framework runs in a process of its own (with one
thread, all of them on the same core), started with glibc told to keep the memory it
frees, so that no framework pays page faults for its temporaries; the frameworks take
turns, one sample each per round, and a ratio is the median of the per-round ratios, so
that the host's drift cancels (Note [One process per framework], Note [Interleaved
rounds] in tools/compare.py).  `hatch run compare --update-docs` rewrites
`docs/benchmarks.md` and `docs/benchmarks.png` instead, for a commit that publishes new
numbers.  `hatch run compare --quick` takes fewer samples;
`hatch run compare --only mlp_step --no-write` runs one workload without writing.

### Did my change make something slower? `hatch run bench`

pytest-benchmark suites in `benchmarks/pytest/` (forward, backward and step timed
separately; skipped by `hatch run test`).  Each run is saved under `.benchmarks/` and
compared with the newest earlier save, as a report (min, median, mean, stddev, rounds): it
does not fail, because medians move by 30-130% between two runs of unchanged code on a
shared machine.  To fail on a regression, compare the minimum, which load barely moves:
`hatch run bench --benchmark-compare-fail=min:25%`.  The first run on a machine becomes the
baseline.  Compare saved runs with
`hatch run pytest-benchmark compare 0001 0002 --columns=min,median`.

### How did performance change over the history? asv

The asv suites (`benchmarks/asv/`, one module per layer, configured by `asv.conf.json`)
build wheels of every package of each measured commit into their own virtualenv
(`tools/asv_build.py`; packages a commit does not have are skipped, and benchmarks of
missing layers show as skipped).  Results live in `.asv/` (git-ignored), under the
explicit machine name `gradstack-bench-2core` (override with `GRADSTACK_ASV_MACHINE`).

| command | what it does |
|---|---|
| `hatch run asv:history` | benchmarks the last 12 commits of `packages/` (`-n 20`, `--rerun`) |
| `hatch run asv:run HEAD~3..HEAD` | benchmarks a commit range (`"HEAD^!"` for one commit) |
| `hatch run asv:continuous main HEAD` | runs two commits and fails on a regression (factor 1.2) |
| `hatch run asv:compare A B` | compares two commits' saved results, exit 1 on a regression |
| `hatch run asv:publish` | builds the dashboard in `.asv/html`, made to work offline |
| `hatch run asv:preview` | serves the dashboard on http://127.0.0.1:8080 |
| `hatch run asv:screenshot` | renders the dashboard in headless Chromium into `.asv/screenshots/` |
| `hatch run asv:dashboard-test` | the dashboard test (tests/test_asv_dashboard.py) |

asv's dashboard loads its JavaScript from CDNs and falls back to an error page without
internet; `hatch run asv:publish` runs `tools/asv_offline.py`, which fetches those files
from the npm registry (`npm pack`, so the first publish needs npm and the registry; it says
so while it fetches) into the ignored cache `.asv/vendor/`, copies them next to the page
and points the page at them.

The dashboard test renders the published dashboard in headless Chromium (Debian's
`chromium`, which `tools/asv_screenshot.py` installs with apt-get when it is missing), and
checks that the page did not fall back to asv's error page, that the summary grid's
sparklines and a benchmark's plot have drawn pixels (a script the test server adds to the
page counts them on each canvas), and that the screenshots are not blank.  It takes about
half a minute and needs results of at least two commits, so it runs only when asked
(`GRADSTACK_DASHBOARD_TEST=1`, which the asv env sets); with too few results it says what
to run:

    hatch run asv:history && hatch run asv:publish && hatch run asv:dashboard-test
"""


def markdown(report: Report, workloads, repeat: int) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    v = versions()
    lines = [
        "# gradstack compared with PyTorch, HIPS autograd, MyGrad and numpy",
        "",
        f"Measured {now} on {cpu_model()}, {os.cpu_count()} cores, {threads_words()}, "
        f"Python {v['python']}, numpy {v['numpy']}.",
        "Each cell is the median over "
        f"{repeat} samples of the time per call, and in brackets the ratio to PyTorch "
        "(below 1 is faster than PyTorch): the frameworks took turns, one sample each per "
        "round in a rotating order, and a ratio is the median of the per-round ratios, so "
        "that the host's drift cancels.  Every framework ran on the same inputs and its "
        "numbers (loss, gradients, updated weights, Hessian, Jacobian) were checked against "
        "the hand-written numpy reference: the last column is the largest absolute "
        "difference over all frameworks.",
        "",
        "| workload | " + " | ".join(TITLES[f] for f in FRAMEWORKS) + " | max abs diff |",
        "|---|" + "---:|" * len(FRAMEWORKS) + "---:|",
    ]
    for w in workloads:
        row = [w.title]
        diffs = []
        for fw in FRAMEWORKS:
            cell = report.cells.get((w.name, fw), Cell(note="not run"))
            if cell.median is None:
                row.append(cell.note or "")
                continue
            r = ratio(report, w.name, fw)
            row.append(fmt_time(cell.median) + (f" ({r:.2f}x)" if r is not None else ""))
            if cell.max_abs_diff is not None:
                diffs.append(cell.max_abs_diff)
        row.append(f"{max(diffs):.1e}" if diffs else "")
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "gradstack's ratios to numpy by hand (the limit for an autograd on numpy) and to "
        "PyTorch: the median of the per-round ratios, and the ratio of the 10th "
        "percentiles of the samples (load moves the 10th percentile least):",
        "",
        *ratios_table(report, workloads),
        "",
        f"![ratio to PyTorch]({PLOT_STEM}.png)",
        "",
        "Versions: "
        + ", ".join(f"{k} {val}" for k, val in v.items() if k not in ("python", "numpy"))
        + ".",
        "",
        "Notes: gradstack runs through its public torch-shaped API (`gradstack` facade, or "
        "the layer packages when the facade is absent); where functional-api or nn-mini is "
        "not installed, the Hessian/Jacobian fall back to one `grad` per row and the model "
        "steps are not available.  HIPS autograd and numpy hold the weights as plain arrays "
        "and update them in place; MyGrad has no higher-order derivatives and no Jacobian "
        "function (its Jacobian is one backward per row).",
        "",
        "Reproduce with `hatch run compare --update-docs` (see tools/compare.py).",
        "",
        HOW_TO_RUN,
    ]
    return "\n".join(lines)


KEEP_MARKER = (
    "<!-- tools/compare.py keeps the sections below this line when it rewrites this file. -->"
)


def kept_sections(path: Path) -> str:
    """What follows ``KEEP_MARKER`` in the file being replaced (sections of other benchmarks, e.g.
    benchmarks/functional_vs_peers.py's torch.func table), with the marker; else the marker."""
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    at = old.find(KEEP_MARKER)
    return "\n" + (old[at:] if at >= 0 else KEEP_MARKER + "\n")


def plot(report: Report, workloads, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    others = [f for f in FRAMEWORKS if f != "torch"]
    fig, ax = plt.subplots(figsize=(11, 5.5), dpi=110)
    width = 0.8 / len(others)
    colours = {
        "gradstack": "#d62728",
        "autograd": "#1f77b4",
        "mygrad": "#2ca02c",
        "numpy": "#7f7f7f",
    }
    for i, fw in enumerate(others):
        xs, ys = [], []
        for j, w in enumerate(workloads):
            r = ratio(report, w.name, fw)
            if r is not None:
                xs.append(j + (i - (len(others) - 1) / 2) * width)
                ys.append(r)
        bars = ax.bar(xs, ys, width, label=TITLES[fw], color=colours[fw])
        if fw == "gradstack":
            for x, y in zip(xs, ys, strict=True):
                ax.annotate(f"{y:.2f}", (x, y), ha="center", va="bottom", fontsize=7)
        del bars
    ax.axhline(1.0, color="black", linewidth=1)
    ax.text(len(workloads) - 0.5, 1.0, " PyTorch = 1", va="bottom", ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels([textwrap.fill(w.title, 20) for w in workloads], fontsize=7)
    ax.set_ylabel("time / PyTorch's time (log scale, lower is faster)")
    threads = "default threads" if DEFAULT_THREADS else "one thread"
    ax.set_title(f"Median time relative to PyTorch, {threads}, {cpu_model()}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def print_table(report, workloads):
    print("\n" + " " * 44 + "".join(f"{TITLES[f]:>22s}" for f in FRAMEWORKS))
    for w in workloads:
        line = f"{w.title[:43]:44s}"
        for fw in FRAMEWORKS:
            cell = report.cells.get((w.name, fw), Cell())
            r = ratio(report, w.name, fw)
            text = (
                fmt_time(cell.median) + (f" ({r:.2f}x)" if r is not None else "")
                if cell.median is not None
                else cell.note[:21]
            )
            line += f"{text:>22s}"
        print(line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="samples (rounds) per median")
    parser.add_argument(
        "--min-sample", type=float, default=0.05, help="seconds a sample loops for at least"
    )
    parser.add_argument("--quick", action="store_true", help="3 samples of >= 10 ms")
    parser.add_argument("--only", nargs="+", choices=[w.name for w in WORKLOADS])
    parser.add_argument("--no-write", action="store_true", help="write no table or plot")
    parser.add_argument(
        "--update-docs",
        action="store_true",
        help="write docs/benchmarks.md and .png (the published numbers) instead of build/",
    )
    parser.add_argument(
        "--threads",
        choices=["1", "default"],
        default="1",
        help="one thread (default) or every framework's default thread settings",
    )
    parser.add_argument("--md", type=Path, help="the table (default build/benchmarks/)")
    parser.add_argument("--png", type=Path, help="the plot (default build/benchmarks/)")
    parser.add_argument(
        "--before",
        metavar="LABEL=PYTHON",
        action="append",
        default=[],
        help="also time the gradstack of another environment (its python), as "
        "'gradstack@LABEL', in the same rounds: a before/after comparison in one run",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # (Workers' own use)
    args = parser.parse_args(argv)
    if args.worker:
        if args.worker.startswith("gradstack@"):
            FRAMEWORKS.insert(1, args.worker)
        return _serve_as_worker(args.worker)
    executables = {}
    for spec in args.before:
        label, sep, python = spec.partition("=")
        if not sep or not label or not Path(python).exists():
            parser.error(f"--before wants LABEL=PYTHON with an existing python, got {spec!r}")
        fw = f"gradstack@{label}"
        FRAMEWORKS.insert(1, fw)
        TITLES[fw] = fw
        executables[fw] = python
    out = ROOT / ("docs" if args.update_docs else "build/benchmarks")
    args.md = args.md or out / f"{PLOT_STEM}.md"
    args.png = args.png or out / f"{PLOT_STEM}.png"
    if args.quick:
        args.repeat, args.min_sample = 3, 0.01
    workloads = [w for w in WORKLOADS if not args.only or w.name in args.only]

    print(f"{cpu_model()}, {os.cpu_count()} cores, {threads_words()}; versions: {versions()}")
    report = run_all(workloads, args.repeat, args.min_sample, executables)
    print_table(report, workloads)
    print("\n" + "\n".join(ratios_table(report, workloads)))
    if not args.no_write:
        args.md.parent.mkdir(parents=True, exist_ok=True)
        text = markdown(report, workloads, args.repeat) + kept_sections(args.md)
        args.md.write_text(text, encoding="utf-8")
        plot(report, workloads, args.png)
        print(f"\nwrote {args.md} and {args.png}")
    if report.failures:
        print("\nFAILED: the frameworks disagree or crashed:", file=sys.stderr)
        for failure in report.failures:
            print(f"  - {failure}", file=sys.stderr)
        return 1
    print("\nall frameworks agree with the numpy reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
