"""gradstack_functional's jacobian and hessian against PyTorch and HIPS autograd.

Two workloads of issue 4, each run by every framework on the same inputs:

- **Hessian**: the full 100 x 100 Hessian of ``f(x) = (x.sin() * x.cos()).sum() +
  (x ** 3).sum()`` in float64 - gradstack's ``hessian`` (default: the gradient with
  ``create_graph`` then ONE batched backward; and forward-over-reverse), torch's
  ``torch.autograd.functional.hessian`` (default: one backward per row; and
  ``vectorize=True``) and ``torch.func.hessian`` (``jacfwd(jacrev(f))`` with vmap).
  Goal: gradstack's default no slower than ``torch.func.hessian``.
- **Jacobian**: the tutorial's ``exp_adder(x, y) = 2 * x.exp() + 3 * y`` on two 3-element
  float32 inputs - gradstack's ``jacobian``, torch's ``torch.autograd.functional.jacobian``
  and ``torch.func.jacrev``, HIPS ``autograd.jacobian`` (one per argument, as it
  differentiates one argnum at a time).  Goal: gradstack no slower than HIPS autograd.

Everything runs on one thread.  Each framework's result is checked against the others'
before timing.  It prints each contender's median time per call and the medians of the
per-round ratios to gradstack's default (Note [Interleaved rounds])::

    python benchmarks/functional_vs_peers.py            # 15 rounds
    python benchmarks/functional_vs_peers.py --repeat 31

And torch.func's workloads of issue 15 (``--only func``), gradstack.func against
torch.func: per-sample gradients of a 784-128-128-10 MLP over a batch of 64
(``vmap(grad(loss), in_dims=(None, 0, 0))``; goal: no slower), ``jacrev``/``jacfwd``
of a 100 -> 100 function and ``hessian`` of a 100 -> 1 one (goal: at most 0.5x
torch.func's time), and ensembling 8 such MLPs with ``stack_module_state`` +
``vmap(functional_call)`` (goal: no slower).

Only public APIs are used.  This is a benchmark, not a test: goals are reported, never
asserted.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (and its BLAS) is imported

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import gradstack_functional as F  # noqa: E402
import gradstack_tensor as gt  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch
    import torch.autograd.functional as TF

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - the peers are optional
    torch = None
try:
    import autograd as hips
    import autograd.numpy as anp
except ImportError:  # pragma: no cover
    hips = None

TARGET_SAMPLE_SECONDS = 0.02


def calibrate(fn):
    """Calls per sample so that one sample takes about TARGET_SAMPLE_SECONDS."""
    fn()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= TARGET_SAMPLE_SECONDS / 4 or number >= 1 << 16:
            return max(1, round(number * TARGET_SAMPLE_SECONDS / max(elapsed, 1e-9)))
        number *= 2


def interleaved(contenders, repeat):
    """Median seconds per call of each contender, and median per-round ratios to the first.

    Note [Interleaved rounds]
    On a shared machine the speed drifts while a benchmark runs.  Timing every contender in
    every round (in rotating order) and taking the median of the per-round ratios cancels
    most of that drift, where separate medians would not.
    """
    names = list(contenders)
    numbers = {name: calibrate(fn) for name, fn in contenders.items()}
    times = {name: [] for name in names}
    for r in range(repeat):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            fn, number = contenders[name], numbers[name]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - start) / number)
    base = names[0]
    ratios = {
        name: statistics.median(t / b for t, b in zip(times[name], times[base])) for name in names
    }
    return {name: statistics.median(times[name]) for name in names}, ratios


def report(title, medians, ratios, goals):
    print(f"\n{title}")
    print(f"  {'contender':46s} {'median':>12s} {'x gradstack':>12s}")
    for name, m in medians.items():
        value = f"{m * 1e3:.2f} ms" if m >= 1e-3 else f"{m * 1e6:.1f} us"
        print(f"  {name:46s} {value:>12s} {ratios[name]:11.2f}x")
    for name, limit in goals.items():
        if name in ratios:
            verdict = "met" if ratios[name] >= limit else "NOT met"
            want = "no slower than" if limit == 1.0 else f"at most {1 / limit:.2g}x the time of"
            print(
                f"  goal: gradstack {want} {name}: {verdict} "
                f"(it is {ratios[name]:.2f}x gradstack's time)"
            )


def agree(name, got, want, rtol):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=rtol):
        raise SystemExit(
            f"{name} disagrees with gradstack (max |diff| "
            f"{np.max(np.abs(got - want)) if got.shape == want.shape else 'shape'})"
        )
    print(f"  {name}: agrees (max |diff| {np.max(np.abs(got - want)):.1e})")


# -------------------------------------------------------------------------------------
# the workloads


def hessian_case(repeat, n=100):
    rng = np.random.default_rng(0)
    xn = rng.uniform(-1.0, 1.0, n)
    x = gt.from_numpy(xn.copy())

    def f(x):
        return (x.sin() * x.cos()).sum() + (x**3).sum()

    contenders = {
        "gradstack hessian (default)": lambda: F.hessian(f, x),
        "gradstack hessian (forward-over-reverse)": lambda: F.hessian(
            f, x, vectorize=True, outer_jacobian_strategy="forward-mode"
        ),
    }
    ours = F.hessian(f, x).numpy()
    print(f"Hessian {n} x {n}, float64")
    agree("analytic diag(-2 sin 2x + 6x)", np.diag(-2 * np.sin(2 * xn) + 6 * xn), ours, 1e-12)
    agree(
        "gradstack forward-over-reverse",
        contenders["gradstack hessian (forward-over-reverse)"]().numpy(),
        ours,
        1e-12,
    )
    goals = {}
    if torch is not None:
        xt = torch.from_numpy(xn.copy())
        func_hessian = torch.func.hessian(f)
        contenders["torch.func.hessian"] = lambda: func_hessian(xt)
        contenders["torch.autograd.functional.hessian"] = lambda: TF.hessian(f, xt)
        contenders["torch.autograd.functional.hessian (vectorize)"] = lambda: TF.hessian(
            f, xt, vectorize=True
        )
        for name in (
            "torch.func.hessian",
            "torch.autograd.functional.hessian",
            "torch.autograd.functional.hessian (vectorize)",
        ):
            agree(name, contenders[name]().numpy(), ours, 1e-12)
        goals["torch.func.hessian"] = 1.0
    report(f"Hessian {n} x {n} (float64)", *interleaved(contenders, repeat), goals)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


def jacobian_case(repeat, n=3):
    rng = np.random.default_rng(1)
    xn, yn = rng.random(n).astype(np.float32), rng.random(n).astype(np.float32)
    x, y = gt.from_numpy(xn.copy()), gt.from_numpy(yn.copy())
    contenders = {"gradstack jacobian": lambda: F.jacobian(exp_adder, (x, y))}
    jx, jy = (j.numpy() for j in F.jacobian(exp_adder, (x, y)))
    print(f"\nJacobian of exp_adder, two {n}-element float32 inputs")
    agree(
        "analytic (diag(2 e^x), 3 I)",
        np.concatenate([np.diag(2 * np.exp(xn)), 3 * np.eye(n)]),
        np.concatenate([jx, jy]),
        1e-6,
    )
    goals = {}
    if hips is not None:

        def hips_exp_adder(x, y):
            return 2 * anp.exp(x) + 3 * y

        jac0, jac1 = hips.jacobian(hips_exp_adder, 0), hips.jacobian(hips_exp_adder, 1)
        contenders["HIPS autograd.jacobian (argnum 0 and 1)"] = lambda: (jac0(xn, yn), jac1(xn, yn))
        hx, hy = contenders["HIPS autograd.jacobian (argnum 0 and 1)"]()
        agree("HIPS autograd", np.concatenate([hx, hy]), np.concatenate([jx, jy]), 1e-6)
        goals["HIPS autograd.jacobian (argnum 0 and 1)"] = 1.0
    if torch is not None:
        xt, yt = torch.from_numpy(xn.copy()), torch.from_numpy(yn.copy())
        jacrev = torch.func.jacrev(exp_adder, argnums=(0, 1))
        contenders["torch.autograd.functional.jacobian"] = lambda: TF.jacobian(exp_adder, (xt, yt))
        contenders["torch.func.jacrev"] = lambda: jacrev(xt, yt)
        for name in ("torch.autograd.functional.jacobian", "torch.func.jacrev"):
            tx, ty = contenders[name]()
            agree(name, np.concatenate([tx.numpy(), ty.numpy()]), np.concatenate([jx, jy]), 1e-6)
    report(
        f"Jacobian of exp_adder ({n}-element inputs, float32)",
        *interleaved(contenders, repeat),
        goals,
    )


def tall_jacobian_case(repeat, n_in=4, n_out=400):
    """Not a goal: where forward mode pays (many more outputs than inputs)."""
    w = gt.from_numpy(np.linspace(-1, 1, n_in * n_out).reshape(n_in, n_out))
    x = gt.from_numpy(np.linspace(0.1, 0.4, n_in))

    def tall(x):
        return (x @ w).tanh()

    rev = F.jacobian(tall, x).numpy()
    print(f"\nJacobian of tanh(x @ W), {n_in} inputs -> {n_out} outputs, float64")
    agree(
        "forward mode",
        F.jacobian(tall, x, vectorize=True, strategy="forward-mode").numpy(),
        rev,
        1e-12,
    )
    contenders = {
        "gradstack jacobian (reverse, default)": lambda: F.jacobian(tall, x),
        "gradstack jacobian (forward-mode)": lambda: F.jacobian(
            tall, x, vectorize=True, strategy="forward-mode"
        ),
    }
    report(f"Tall jacobian ({n_in} -> {n_out}, float64)", *interleaved(contenders, repeat), {})


# -------------------------------------------------------------------------------------
# torch.func's workloads (issue 15): gradstack.func against torch.func, same weights/data


def _mlp(lib, sizes, rng, dtype):
    """``Linear -> ReLU -> ... -> Linear`` of ``lib`` (gradstack or torch) with weights from
    ``rng`` (the same numbers for both libraries when the generators start equal)."""
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = lib.nn.Linear(a, b)
        bound = 1.0 / np.sqrt(a)
        w = rng.uniform(-bound, bound, (b, a)).astype(dtype)
        bias = rng.uniform(-bound, bound, b).astype(dtype)
        lin.load_state_dict({"weight": lib.tensor(w), "bias": lib.tensor(bias)})
        layers.append(lin)
        if i < len(sizes) - 2:
            layers.append(lib.nn.ReLU())
    return lib.nn.Sequential(*layers)


def per_sample_grads_case(repeat, batch=64, sizes=(784, 128, 128, 10)):
    """``vmap(grad(loss), in_dims=(None, 0, 0))`` over a 3-layer MLP (torch's tutorial)."""
    import gradstack

    rng = np.random.default_rng(15)
    xs = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    ys = rng.integers(0, sizes[-1], batch)
    contenders, results = {}, {}
    for name, lib in (("gradstack.func", gradstack), ("torch.func", torch)):
        if lib is None:
            continue
        model = _mlp(lib, sizes, np.random.default_rng(16), np.float32)
        params = {k: v.detach() for k, v in model.named_parameters()}
        fc, F = lib.func.functional_call, lib.nn.functional

        def loss(params, x, y, model=model, fc=fc, F=F):
            return F.cross_entropy(fc(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))

        per_sample = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
        x, y = lib.tensor(xs), lib.tensor(ys)
        contenders[f"{name} vmap(grad(loss))"] = (
            lambda per_sample=per_sample, params=params, x=x, y=y: per_sample(params, x, y)
        )
        results[name] = contenders[f"{name} vmap(grad(loss))"]()
    print(f"\nPer-sample gradients, MLP {'-'.join(map(str, sizes))}, batch {batch}, float32")
    if torch is not None:
        for k in results["torch.func"]:
            agree(
                f"torch.func {k}",
                results["torch.func"][k].numpy(),
                results["gradstack.func"][k].numpy(),
                1e-4,
            )
    goals = {"torch.func vmap(grad(loss))": 1.0} if torch is not None else {}
    report("Per-sample gradients (float32)", *interleaved(contenders, repeat), goals)


def vector_fn(x):
    """R^n -> R^n with a dense Jacobian: tanh(x) * x.sum() + x ** 2."""
    return x.tanh() * x.sum() + x**2


def scalar_fn(x):
    return (x.sin() * x.cos()).sum() + (x**3).sum()


def func_jacobians_case(repeat, n=100):
    """``jacrev``, ``jacfwd`` of a 100 -> 100 function and ``hessian`` of a 100 -> 1 one."""
    import gradstack.func as gf

    xn = np.random.default_rng(17).uniform(-1.0, 1.0, n)
    x = gt.from_numpy(xn.copy())
    xt = torch.from_numpy(xn.copy()) if torch is not None else None
    print(f"\ntorch.func jacobians, {n} inputs, float64")
    # gradstack's autograd.functional (one batched pass, no vmap) beside each transform:
    # whether routing it through vmap could pay (issue 15)
    functional = {
        "jacrev": lambda: F.jacobian(vector_fn, x, vectorize=True),
        "jacfwd": lambda: F.jacobian(vector_fn, x, vectorize=True, strategy="forward-mode"),
        "hessian": lambda: F.hessian(scalar_fn, x, vectorize=True),
    }
    for label, ours, theirs, fn in (
        ("jacrev", gf.jacrev, torch and torch.func.jacrev, vector_fn),
        ("jacfwd", gf.jacfwd, torch and torch.func.jacfwd, vector_fn),
        ("hessian", gf.hessian, torch and torch.func.hessian, scalar_fn),
        ("jacfwd(jacfwd)", lambda f: gf.jacfwd(gf.jacfwd(f)), None, scalar_fn),
    ):
        mine = ours(fn)
        contenders = {f"gradstack.func.{label}": lambda mine=mine: mine(x)}
        if label in functional:
            contenders[f"gradstack autograd.functional ({label})"] = functional[label]
        goals = {}
        if torch is not None:
            if theirs is None:
                other = torch.func.jacfwd(torch.func.jacfwd(fn))
            else:
                other = theirs(fn)
                goals[f"torch.func.{label}"] = 2.0  # goal: at most 0.5x torch.func's time
            contenders[f"torch.func.{label}"] = lambda other=other: other(xt)
            agree(f"torch.func.{label}", other(xt).numpy(), mine(x).numpy(), 1e-10)
        report(
            f"{label} of a {n}-input function (float64)",
            *interleaved(contenders, repeat),
            goals,
        )


def ensembling_case(repeat, num_models=8, batch=64, sizes=(784, 128, 128, 10)):
    """``stack_module_state`` + ``vmap(functional_call)`` over 8 MLPs, one minibatch."""
    import copy

    import gradstack

    xs = np.random.default_rng(18).standard_normal((batch, sizes[0])).astype(np.float32)
    contenders, results = {}, {}
    for name, lib in (("gradstack.func", gradstack), ("torch.func", torch)):
        if lib is None:
            continue
        rng = np.random.default_rng(19)
        models = [_mlp(lib, sizes, rng, np.float32) for _ in range(num_models)]
        params, buffers = lib.func.stack_module_state(models)
        base = copy.deepcopy(models[0])
        fc = lib.func.functional_call

        def fmodel(params, buffers, x, base=base, fc=fc):
            return fc(base, (params, buffers), (x,))

        ensemble = lib.func.vmap(fmodel, in_dims=(0, 0, None))
        x = lib.tensor(xs)
        key = f"{name} vmap(functional_call)"
        contenders[key] = lambda e=ensemble, p=params, b=buffers, x=x: e(p, b, x)
        results[name] = contenders[key]().detach().numpy()
    print(f"\nModel ensembling, {num_models} MLPs {'-'.join(map(str, sizes))}, batch {batch}")
    goals = {}
    if torch is not None:
        agree("torch.func", results["torch.func"], results["gradstack.func"], 1e-5)
        goals["torch.func vmap(functional_call)"] = 1.0
    report("Model ensembling (float32)", *interleaved(contenders, repeat), goals)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds (default 15)")
    parser.add_argument(
        "--only",
        choices=["autograd-functional", "func"],
        help="run only the autograd.functional workloads (issue 4) or torch.func's (issue 15)",
    )
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, numpy {np.__version__}"
        + (f", torch {torch.__version__}" if torch is not None else ", torch: not installed")
        + (
            f", HIPS autograd {importlib.metadata.version('autograd')}"
            if hips is not None
            else ", HIPS autograd: not installed (pip install autograd)"
        )
        + "; one thread"
    )
    if args.only != "func":
        hessian_case(args.repeat)
        jacobian_case(args.repeat)
        tall_jacobian_case(args.repeat)
    if args.only != "autograd-functional":
        per_sample_grads_case(args.repeat)
        func_jacobians_case(args.repeat)
        ensembling_case(args.repeat)


if __name__ == "__main__":
    main()
