"""One training step of two small networks: gradstack vs PyTorch vs numpy written by hand.

- **TinyModel** (the autograd tutorial's): batch 16, Linear(1000, 100) -> ReLU ->
  Linear(100, 10), loss ``(ideal - pred).pow(2).sum()``, backward, SGD step (lr 0.001),
  zero_grad.
- **MLP**: batch 256, 784-512-512-10 with ReLU, ``mse_loss``, backward, SGD step (lr 0.01),
  zero_grad.

Everything runs on one thread (the BLAS, numpy, torch and gradstack's kernels), float32.
For each framework it prints the median time of a whole step and of its parts (forward
with the loss, backward, optimiser step + zero_grad, timed separately over separate runs),
by the wall clock and by the process's CPU time (Note [Two clocks]), then the medians of
the per-round ratios (Note [Interleaved rounds]), against the goals
of issue 6 (TinyModel <= 0.75x PyTorch; MLP <= 0.85x PyTorch and <= 1.1x numpy by hand)::

    python benchmarks/nn_vs_peers.py                 # default: 15 rounds
    python benchmarks/nn_vs_peers.py --repeat 15 --profile   # + cProfile of gradstack's steps
    python benchmarks/nn_vs_peers.py --set-to-none   # both libraries drop gradients

This is a benchmark, not a test: the goals are reported, never asserted.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy (and its BLAS) is imported

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import gradstack  # noqa: E402
import numpy as np  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - torch is the oracle, optional here
    torch = None

TARGET_SAMPLE_SECONDS = 0.03

TINY = {
    "name": "TinyModel",
    "batch": 16,
    "sizes": (1000, 100, 10),
    "loss": "sumsq",
    "lr": 0.001,
    "goals": {"torch": 0.75},
}
MLP = {
    "name": "MLP",
    "batch": 256,
    "sizes": (784, 512, 512, 10),
    "loss": "mse",
    "lr": 0.01,
    "goals": {"torch": 0.85, "numpy": 1.1},
}


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def sampler(part):
    """A function ``sample(number) -> {"wall": s, "cpu": s}`` (seconds per call) for one
    part: a plain callable is timed as a whole; a ``(prepare, timed, cleanup)`` triple
    times only its middle call.

    Note [Two clocks]
    Wall time is what a user waits; the process's CPU time leaves out the time the process
    spent descheduled, which on a busy shared machine is most of the noise.  Everything
    here runs on one thread, so the two agree on an idle machine.
    """
    wall, cpu = time.perf_counter, time.process_time
    if callable(part):

        def sample(number):
            w0, c0 = wall(), cpu()
            for _ in range(number):
                part()
            return {"wall": (wall() - w0) / number, "cpu": (cpu() - c0) / number}

        return sample
    prepare, timed, cleanup = part

    def sample(number):
        tw = tc = 0.0
        for _ in range(number):
            prepare()
            w0, c0 = wall(), cpu()
            timed()
            tw += wall() - w0
            tc += cpu() - c0
            if cleanup:
                cleanup()
        return {"wall": tw / number, "cpu": tc / number}

    return sample


def interleaved(parts: dict, rounds: int) -> dict:
    """Per-round times of each entry of ``parts`` (name -> part), measured in turns:
    ``{name: [{"wall": s, "cpu": s}, ...]}``.

    Note [Interleaved rounds]
    On a shared machine the speed drifts while a benchmark runs.  Timing all contenders in
    every round (in rotating order) and taking the median of the per-round ratios cancels
    most of that drift, where two separate medians would not.
    """
    samplers = {name: sampler(part) for name, part in parts.items()}
    numbers = {}
    for name, sample in samplers.items():
        sample(2)  # warm up
        number = 1
        while sample(number)["wall"] * number < TARGET_SAMPLE_SECONDS / 4 and number < 1 << 16:
            number *= 2
        per_call = sample(number)["wall"]
        numbers[name] = max(1, round(TARGET_SAMPLE_SECONDS / max(per_call, 1e-9)))
    names = list(samplers)
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(samplers[name](numbers[name]))
    return times


# -------------------------------------------------------------------------------------
# the three implementations: each returns {"step": fn, "forward": fn, "backward": fn,
# "update": fn}, where the part functions time one part and run the rest untimed


def data(cfg, seed=0):
    rng = np.random.default_rng(seed)
    sizes = cfg["sizes"]
    x = rng.standard_normal((cfg["batch"], sizes[0]), dtype=np.float32)
    y = rng.standard_normal((cfg["batch"], sizes[-1]), dtype=np.float32)
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights.append(
            (
                rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-bound, bound, fan_out).astype(np.float32),
            )
        )
    return x, y, weights


ZERO_GRAD_KWARGS: dict = {}  # {} = each library's default; --set-to-none sets it for both


def make_stack(lib, cfg):
    """The same code for gradstack and torch: ``lib`` is the ``torch``-shaped module.

    ``zero_grad()`` takes each library's default unless ``--set-to-none``: gradstack zeroes
    the gradients in place (as the tutorial requires), torch 2.x sets them to None.
    """
    x_np, y_np, weights = data(cfg)
    layers = []
    for w, b in weights:
        layer = lib.nn.Linear(w.shape[1], w.shape[0])
        with lib.no_grad():
            layer.weight.copy_(lib.from_numpy(w.copy()))
            layer.bias.copy_(lib.from_numpy(b.copy()))
        layers.append(layer)
    mods = []
    for layer in layers[:-1]:
        mods += [layer, lib.nn.ReLU()]
    model = lib.nn.Sequential(*mods, layers[-1])
    opt = lib.optim.SGD(model.parameters(), lr=cfg["lr"])
    x, y = lib.from_numpy(x_np), lib.from_numpy(y_np)
    mse = lib.nn.functional.mse_loss

    def loss_of():
        pred = model(x)
        return (y - pred).pow(2).sum() if cfg["loss"] == "sumsq" else mse(pred, y)

    def step():
        loss = loss_of()
        loss.backward()
        opt.step()
        opt.zero_grad(**ZERO_GRAD_KWARGS)

    def forward():
        loss_of()

    state = {}

    def prepare_backward():
        state["loss"] = loss_of()

    def backward():
        state["loss"].backward()

    def after_backward():
        opt.zero_grad(**ZERO_GRAD_KWARGS)

    def prepare_update():
        loss_of().backward()

    def update():
        opt.step()
        opt.zero_grad(**ZERO_GRAD_KWARGS)

    return {
        "step": step,
        "forward": forward,
        "backward": (prepare_backward, backward, after_backward),
        "update": (prepare_update, update, None),
        "model": model,
    }


def make_numpy(cfg):
    """Forward, hand-written backward and SGD on numpy arrays (the floor to beat)."""
    x, y, weights = data(cfg)
    params = [(w.copy(), b.copy()) for w, b in weights]
    lr = np.float32(cfg["lr"])
    n_out = y.size
    cache = {}

    def forward_pass():
        acts, pre = [x], []
        h = x
        for i, (w, b) in enumerate(params):
            z = h @ w.T
            z += b
            if i < len(params) - 1:
                pre.append(z)
                h = np.maximum(z, 0)
                acts.append(h)
            else:
                h = z
        diff = h - y
        loss = (diff * diff).sum() if cfg["loss"] == "sumsq" else (diff * diff).mean()
        cache.update(acts=acts, pre=pre, diff=diff)
        return loss

    def backward_pass():
        acts, pre, diff = cache["acts"], cache["pre"], cache["diff"]
        scale = np.float32(2.0) if cfg["loss"] == "sumsq" else np.float32(2.0 / n_out)
        g = diff * scale
        grads = [None] * len(params)
        for i in range(len(params) - 1, -1, -1):
            w, _ = params[i]
            grads[i] = (g.T @ acts[i], g.sum(0))
            if i > 0:
                g = g @ w
                g *= pre[i - 1] > 0
        cache["grads"] = grads

    def update_pass():
        for (w, b), (gw, gb) in zip(params, cache["grads"]):
            w -= lr * gw
            b -= lr * gb

    def step():
        forward_pass()
        backward_pass()
        update_pass()

    return {
        "step": step,
        "forward": forward_pass,
        "backward": (forward_pass, backward_pass, None),
        "update": (lambda: (forward_pass(), backward_pass()), update_pass, None),
    }


def check_same_loss(cfg):
    """gradstack and torch start from the same weights: their first losses agree."""
    if torch is None:
        return
    losses = []
    for lib in (gradstack, torch):
        x_np, y_np, weights = data(cfg)
        impl = make_stack(lib, cfg)
        with lib.no_grad():
            pred = impl["model"](lib.from_numpy(x_np))
            losses.append(float(((lib.from_numpy(y_np) - pred) ** 2).sum()))
    assert abs(losses[0] - losses[1]) <= 1e-4 * abs(losses[1]), losses


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:9.1f} us" if seconds < 1e-2 else f"{seconds * 1e3:9.2f} ms"


def run(cfg, repeat: int) -> dict:
    """``{"times": {clock: {name: {part: median}}}, "ratios": {clock: {peer: median}}}``."""
    check_same_loss(cfg)
    impls = {"gradstack": make_stack(gradstack, cfg), "numpy": make_numpy(cfg)}
    if torch is not None:
        impls["torch"] = make_stack(torch, cfg)
    medians = {clock: {name: {} for name in impls} for clock in CLOCKS}
    ratios = {clock: {} for clock in CLOCKS}
    for part in ("step", "forward", "backward", "update"):
        times = interleaved({name: impl[part] for name, impl in impls.items()}, repeat)
        for clock in CLOCKS:
            for name in impls:
                medians[clock][name][part] = statistics.median(t[clock] for t in times[name])
            if part == "step":
                for peer in impls:
                    if peer != "gradstack":
                        ratios[clock][peer] = statistics.median(
                            g[clock] / p[clock] for g, p in zip(times["gradstack"], times[peer])
                        )
    return {"times": medians, "ratios": ratios}


def report(cfg, results) -> list[str]:
    print(
        f"\n{cfg['name']}: batch {cfg['batch']}, layers {'-'.join(map(str, cfg['sizes']))}, "
        f"loss {cfg['loss']}, float32, 1 thread"
    )
    verdicts = []
    for clock in CLOCKS:
        print(f"  [{clock} clock] {'step':>10s} {'forward':>12s} {'backward':>12s} {'update':>12s}")
        for name, r in results["times"][clock].items():
            print(
                f"  {name:12s} "
                + " ".join(f"{fmt(r[p]):>12s}" for p in ("step", "forward", "backward", "update"))
            )
        ratios = results["ratios"][clock]
        for peer in ("torch", "numpy"):
            if peer not in ratios:
                continue
            goal = cfg["goals"].get(peer)
            text = f"{cfg['name']} [{clock}]: gradstack / {peer} = {ratios[peer]:.3f}x"
            if goal is None:
                text += " (no goal)"
            else:
                text += f" (goal <= {goal}x) {'met' if ratios[peer] <= goal else 'MISSED'}"
            verdicts.append(text)
            print("  " + text)
    return verdicts


def profile_gradstack(cfg, steps=200):
    import cProfile
    import pstats

    impl = make_stack(gradstack, cfg)
    for _ in range(5):
        impl["step"]()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        impl["step"]()
    prof.disable()
    print(f"\ncProfile of {steps} gradstack {cfg['name']} steps (top 25 by total time):")
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15, help="interleaved rounds per median")
    parser.add_argument("--only", choices=["TinyModel", "MLP"], help="run one model")
    parser.add_argument("--profile", action="store_true", help="cProfile gradstack's steps")
    parser.add_argument(
        "--set-to-none",
        action="store_true",
        help="zero_grad(set_to_none=True) in both gradstack and torch",
    )
    args = parser.parse_args(argv)
    if args.set_to_none:
        ZERO_GRAD_KWARGS["set_to_none"] = True
    gradstack.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, gradstack "
        f"{gradstack.__version__}, torch {torch.__version__ if torch else '(not installed)'}; "
        f"zero_grad({'set_to_none=True' if args.set_to_none else 'each default'})"
    )
    verdicts = []
    for cfg in (TINY, MLP):
        if args.only and cfg["name"] != args.only:
            continue
        verdicts += report(cfg, run(cfg, args.repeat))
        if args.profile:
            profile_gradstack(cfg)
    print("\nsummary:")
    for v in verdicts:
        print("  " + v)


if __name__ == "__main__":
    main()
