"""One library in a process of its own, running the models and the ops of the benchmarks.

``benchmarks/models_vs_torch.py``, ``benchmarks/model_gemm_split.py`` and
``benchmarks/op_sweep.py`` start one worker per library and thread setting
(``python library_worker.py LIBRARY THREADS``: ``gradstack`` or ``torch`` or ``numpy``,
``1`` or ``default``) and talk to it over its stdin/stdout in pickled requests
(:class:`Workers`).  A worker imports only its own library, as its users run it (Note
[One process per framework] in tools/compare.py: in one shared process the libraries
changed each other's numbers through malloc's state).

Requests (a tuple, the kind first) and answers (``("ok", value)`` or ``("error", text)``):

``setup, model, state, min_sample``
    build the model (torch seeds 0 first; with ``state``, a ``{name: array}`` state dict,
    it is loaded), make its batches, run two warm-up steps, fix the steps per sample; the
    answer is the model's state dict as numpy arrays.
``sample``
    the seconds per step of one sample (Note [Interleaved rounds] in tools/compare.py).
``check, model, state, steps, seed``
    a fresh model from ``state``, ``manual_seed(seed)``, ``steps`` training steps on the
    batches: the losses and the state dict after them.
``memory``
    the peak memory of one step of the current model (Note [Peak memory of a step]).
``profile``
    one step of the current model under the library's profiler: the step's time and
    its GEMM events (``gemm_split.py``'s Note [What counts as GEMM time]).
``gemm, calls, min_sample`` (numpy only)
    the seconds of the given GEMMs timed alone with numpy.
``op_list`` (gradstack only)
    the ops of the sweep: ``(name, kind)`` of every differentiable op of the op table.
``op_setup, name, kind, n, min_sample``
    build the op's case at about ``n`` elements (``op_cases.case``), run it once with its
    backward after ``manual_seed(0)``; the answer is its output and gradients as numpy
    arrays (to compare the libraries), and the calls per sample are fixed.
``op_sample, mode``
    the seconds per call of the op's forward (``"fwd"``) or forward and backward
    (``"fwd+bwd"``).
"""

from __future__ import annotations

import os
import sys

LIBRARY, THREADS = (sys.argv[1], sys.argv[2]) if __name__ == "__main__" else ("", "")
if THREADS == "1":  # before numpy (and its BLAS) loads
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = "1"
# Note [Measured as users install it]
# The development environment has scipy (scikit-learn brings it), a plain install of
# gradstack does not: gradstack's erf then falls back to math.erf element by element, and
# GELU with it.  The benchmarks measure what users get, so a worker started with
# ``--hide scipy`` (the default of the scripts; ``--with-scipy`` turns it off) cannot
# import scipy: ``sys.modules["scipy"] = None`` makes every ``import scipy...`` raise
# ImportError, as in an environment without it.
if "--hide" in sys.argv:
    for _name in sys.argv[sys.argv.index("--hide") + 1].split(","):
        sys.modules[_name] = None  # type: ignore[assignment]

import pickle  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import gemm_split  # noqa: E402
from model_zoo import MODELS, state_arrays, to_tensors, train_step  # noqa: E402

BATCHES = 4  # distinct batches per model, used in turn
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# glibc keeps what is freed (Note [One process per framework] in tools/compare.py)
MALLOC_SETTINGS = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def batches_of(spec) -> list[tuple]:
    """The model's batches as numpy arrays, the same in every process."""
    index = list(MODELS).index(spec.name)
    return [spec.batch(np.random.default_rng(1000 * index + i)) for i in range(BATCHES)]


def load_library(name: str, threads: str):
    """The library's module, set to one thread or left at its defaults."""
    if name == "torch":
        import torch

        if threads == "1":
            torch.set_num_threads(1)
        return torch
    if name.startswith("gradstack"):  # "gradstack@LABEL": another build (--before)
        import gradstack

        if threads == "1":
            gradstack.set_num_threads(1)
        return gradstack
    return None


# Note [Peak memory of a step]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The measure is the tensor memory a step holds at once: the highest total of live
# allocations during the step, less what was live when it began.  Each library is asked
# through its own accounting of every allocation:
# - gradstack: tracemalloc.  numpy reports every array buffer to it (PyDataMem_UserNEW
#   tracks the pointer whichever allocator handler serves it, gradstack's block cache
#   included), so scratch arrays inside kernels count too; so do the Python objects the
#   step creates (tensors, graph nodes), which makes the figure an upper bound of the
#   tensor memory.  A buffer the block cache keeps after numpy freed it does not count.
# - torch: its CPU allocator, as the profiler reports it (profile_memory=True: one record
#   per allocation and free of c10's CPU allocator, every tensor and scratch buffer;
#   torch's C++ graph nodes are not in it).  Frees of blocks allocated before a profile
#   starts are not reported, so the profile covers two steps and the second is measured:
#   the gradients of the first, freed by the second's zero_grad, are then seen.
# Neither counts what BLAS or oneDNN allocate behind their own allocators, nor what an
# allocator caches (RSS would measure the caches, not the step).


def peak_step_bytes(lib, library: str, task, batches) -> int:
    """The peak live bytes of one step above those live at its start (Note [Peak memory
    of a step])."""
    if library.startswith("gradstack"):
        tracemalloc.start()
        try:
            train_step(lib, task, batches[0])
            tracemalloc.reset_peak()
            start, _ = tracemalloc.get_traced_memory()
            train_step(lib, task, batches[1])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return peak - start
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        train_step(lib, task, batches[0])
        with record_function("measured step"):
            train_step(lib, task, batches[1])
    events = prof.profiler.kineto_results.events()
    (mark,) = [e for e in events if e.name() == "measured step"]
    memory = sorted((e.start_ns(), e.nbytes()) for e in events if e.name() == "[memory]")
    live, at_start, peak = 0, None, 0
    for t, nbytes in memory:
        if t >= mark.start_ns() and at_start is None:
            at_start = peak = live
        live += nbytes
        if at_start is not None and t <= mark.end_ns():
            peak = max(peak, live)
    return 0 if at_start is None else peak - at_start


class ModelState:
    """The model a worker is timing, with its batches and steps per sample."""

    def __init__(self, lib, library, name, state, min_sample):
        self.spec = MODELS[name]
        self.lib, self.library = lib, library
        self.task = build_task(lib, library, self.spec, state)
        self.batches = [to_tensors(lib, b) for b in batches_of(self.spec)]
        self.turn = 0
        for _ in range(2):
            self.step()
        start = time.perf_counter()
        self.step()
        once = time.perf_counter() - start
        self.loops = max(1, int(min_sample / max(once, 1e-9)))

    def step(self):
        batch = self.batches[self.turn % BATCHES]
        self.turn += 1
        return train_step(self.lib, self.task, batch)

    def sample(self) -> float:
        start = time.perf_counter()
        for _ in range(self.loops):
            loss = self.step()
        elapsed = (time.perf_counter() - start) / self.loops
        value = float(loss.item())
        if not np.isfinite(value):
            raise FloatingPointError(f"{self.spec.name}: the loss is {value} after training")
        return elapsed


def build_task(lib, library, spec, state, dropout=True):
    if library == "torch":
        lib.manual_seed(0)
    task = spec.build(lib, dropout=dropout)
    if state is not None:
        task.model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in state.items()})
    return task


def check_losses(lib, library, name, state, steps, seed):
    """The losses of ``steps`` steps from ``state``, and the state dict after them."""
    spec = MODELS[name]
    task = build_task(lib, library, spec, state)
    batches = [to_tensors(lib, b) for b in batches_of(spec)]
    lib.manual_seed(seed)
    losses = [float(train_step(lib, task, batches[i % BATCHES]).item()) for i in range(steps)]
    return losses, state_arrays(task.model)


def op_sweep_ops() -> list[tuple[str, str]]:
    """Every op of gradstack's op table whose derivative entry is differentiable (and not
    listed as not implemented), with its kind: ``"unary"``, ``"binary"`` or ``"other"``."""
    import gradstack_tensor as gt
    from gradstack_autograd import derivatives

    # the elementwise kinds, read off ops of each kind (Op.kind is public, its constants not)
    kinds = {gt.get_op(n).kind: "unary" for n in ("neg", "sin")}
    kinds.update({gt.get_op(n).kind: "binary" for n in ("add", "div")})
    out = []
    for name, op in sorted(gt.OPS.items()):
        entry = op.derivative
        if entry is None or not entry.differentiable or name in derivatives.NOT_IMPLEMENTED:
            continue
        out.append((name, kinds.get(op.kind, "other")))
    return out


def _resolved(t):
    """``t`` without torch's lazy conjugate and negative bits (``numpy()`` refuses them)."""
    for name in ("resolve_conj", "resolve_neg"):
        if hasattr(t, name):
            t = getattr(t, name)()
    return t


class OpState:
    """One op of the sweep at one size, ready to time (``op_cases.Case``)."""

    def __init__(self, lib, name, kind, n, min_sample):
        from op_cases import case

        rng = np.random.default_rng(n)
        c = case(name, n, rng, kind)
        if c is None:
            raise LookupError(f"no case for {name!r} in benchmarks/op_cases.py")
        self.lib = lib
        lib.manual_seed(0)
        self.call = c.build(lib)
        self.tensors = [
            lib.from_numpy(np.array(a, copy=True)).requires_grad_(g)
            for a, g in zip(c.arrays, c.grad)
        ]
        self.leaves = [t for t, g in zip(self.tensors, c.grad) if g]
        if c.params is not None:
            self.leaves += c.params(self.call)
        lib.manual_seed(0)
        start = time.perf_counter()
        out = self.call(*self.tensors)
        value = np.array(_resolved(out.detach()).numpy(), copy=True)
        self.grad_out = lib.from_numpy(rng.standard_normal(value.shape).astype(value.dtype))
        grads = self.backward(out)
        once = {"fwd+bwd": time.perf_counter() - start}
        self.result = {
            "shape": c.shape,
            "arrays": [value]
            + [None if g is None else np.array(g.numpy(force=True)) for g in grads],
            "once": once,
        }
        # calls per sample; an op slower than 50 ms per call is timed one call at a time
        # (its first calls are its warm-up: a second one would cost seconds for nothing)
        self.loops = {}
        for mode in ("fwd", "fwd+bwd"):
            run = self.runner(mode)
            if mode == "fwd" or once[mode] < 0.05:
                start = time.perf_counter()
                run()
                once[mode] = time.perf_counter() - start
            if once[mode] < 0.05:
                start = time.perf_counter()
                run()
                once[mode] = time.perf_counter() - start
            self.loops[mode] = max(1, int(min_sample / max(once[mode], 1e-9)))

    def backward(self, out):
        return self.lib.autograd.grad(out, self.leaves, self.grad_out, allow_unused=True)

    def runner(self, mode):
        call, tensors = self.call, self.tensors
        if mode == "fwd":
            return lambda: call(*tensors)
        return lambda: self.backward(call(*tensors))

    def sample(self, mode) -> float:
        run, loops = self.runner(mode), self.loops[mode]
        start = time.perf_counter()
        for _ in range(loops):
            run()
        return (time.perf_counter() - start) / loops


def serve(library: str, threads: str) -> None:
    """The request loop over stdin/stdout (prints go to stderr)."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    if threads == "1" and hasattr(os, "sched_setaffinity"):
        # one core for every one-thread worker: this host's cores differ in speed
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    lib = load_library(library, threads)
    current = None
    while True:
        request = pickle.load(sys.stdin.buffer)
        kind = request[0]
        if kind == "exit":
            return
        try:
            if kind == "setup":
                current = None
                current = ModelState(lib, library, request[1], request[2], request[3])
                answer = state_arrays(current.task.model)
            elif kind == "sample":
                answer = current.sample()
            elif kind == "check":
                answer = check_losses(lib, library, *request[1:])
            elif kind == "memory":
                answer = peak_step_bytes(lib, library, current.task, current.batches)
            elif kind == "profile":
                answer = gemm_split.profile_step(lib, library, current.step)
            elif kind == "gemm":
                answer = gemm_split.time_gemms(request[1], request[2])
            elif kind == "op_list":
                answer = op_sweep_ops()
            elif kind == "op_setup":
                current = None
                current = OpState(lib, *request[1:])
                answer = current.result
            elif kind == "op_sample":
                answer = current.sample(request[1])
            else:
                raise ValueError(f"unknown request {kind!r}")
            reply = ("ok", answer)
        except Exception as exc:  # noqa: BLE001 - reported by the parent
            traceback.print_exc()
            reply = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(reply, channel, protocol=pickle.HIGHEST_PROTOCOL)
        channel.flush()


class Workers:
    """Worker processes keyed by ``(library, threads)``; closed on exit.  ``hide`` names
    modules the workers cannot import (Note [Measured as users install it]);
    ``executables`` maps a library (``"gradstack@before"``) to the python of another
    environment, whose gradstack that worker then imports (a before/after comparison in
    the same rounds: the scripts' ``--before LABEL=PYTHON``)."""

    def __init__(self, keys, hide=("scipy",), executables=None):
        self.procs = {}
        for library, threads in keys:
            env = dict(os.environ, **MALLOC_SETTINGS)
            if threads == "default":  # as users run it: nothing pinned
                for var in THREAD_VARS:
                    env.pop(var, None)
            python = (executables or {}).get(library, sys.executable)
            argv = [python, str(Path(__file__).resolve()), library, threads]
            if hide:
                argv += ["--hide", ",".join(hide)]
            self.procs[library, threads] = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
            )

    def ask(self, key, *request):
        proc = self.procs[key]
        pickle.dump(request, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()
        try:
            return pickle.load(proc.stdout)
        except EOFError:
            return ("error", f"the {key[0]} worker ({key[1]} threads) died")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.procs.values():
            try:
                pickle.dump(("exit",), proc.stdin)
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def p10(samples: list[float]) -> float:
    """The 10th percentile (linear interpolation)."""
    ordered = sorted(samples)
    pos = 0.1 * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def load_words() -> str:
    """The host's load averages and cores, for the report."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load unknown"
    cores = os.cpu_count()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1/5/15 min) on {cores} cores"


if __name__ == "__main__":
    serve(LIBRARY, THREADS)
