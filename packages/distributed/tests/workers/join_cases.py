"""The uneven-input training runs that join_train.py (gradstack, MPI) and
join_train_torch.py (torch, gloo) both make, written once over either library.

Each case trains a small float64 model with DDP inside ``ddp.join(...)`` on a different
number of batches per rank, from the same initial weights (numpy's) on the same data
(numpy's), and returns the parameters and buffers every rank holds at the end, and the
error the case raised (``throw_on_early_termination``).
"""

from __future__ import annotations

import numpy as np

FEATURES, OUTPUTS, BATCH = 6, 3, 4

# name: (model, steps of rank r, join keyword arguments, DDP keyword arguments, no_sync)
CASES = {
    "divide_by_initial": ("mlp", lambda r: 3 + 2 * r, {}, {}, False),
    "divide_by_remaining": (
        "mlp",
        lambda r: 3 + 2 * r,
        {"divide_by_initial_world_size": False},
        {},
        False,
    ),
    "rank0_has_nothing": ("mlp", lambda r: 0 if r == 0 else 1 + 2 * r, {}, {}, False),
    "buffers": ("batchnorm", lambda r: 2 + 2 * r, {}, {}, False),
    "unused_parameters": ("branchy", lambda r: 3 + r, {}, {"find_unused_parameters": True}, False),
    "no_sync": ("mlp", lambda r: 4 + 3 * r, {}, {}, True),
    "throw": ("mlp", lambda r: 3 + 2 * r, {"throw_on_early_termination": True}, {}, False),
}


def build(lib, kind: str):
    """The model of ``kind`` in ``lib`` (torch's or gradstack's names), float64."""
    nn = lib.nn
    if kind == "mlp":
        model = nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, OUTPUTS))
    elif kind == "batchnorm":
        model = nn.Sequential(
            nn.Linear(FEATURES, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, OUTPUTS)
        )
    elif kind == "branchy":

        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(FEATURES, 8)
                self.left = nn.Linear(8, OUTPUTS)
                self.right = nn.Linear(8, OUTPUTS)

            def forward(self, x, step):  # the right head only on odd steps
                h = self.body(x).tanh()
                return self.right(h) if step % 2 else self.left(h)

        model = Branchy()
    else:
        raise ValueError(kind)
    model = model.to(lib.float64)
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
    return model


def batches(case: str, rank: int, steps: int):
    rng = np.random.default_rng([list(CASES).index(case), rank])
    return [
        (rng.standard_normal((BATCH, FEATURES)), rng.standard_normal((BATCH, OUTPUTS)))
        for _ in range(steps)
    ]


def run_case(case: str, rank: int, lib):
    """Train one case on this rank; returns ({name: array}, error message or None).

    ``lib`` has ``nn``, ``optim``, ``float64``, ``no_grad``, ``from_numpy`` and ``DDP``
    (DistributedDataParallel) of one library."""
    kind, steps, join_kwargs, ddp_kwargs, no_sync = CASES[case]
    model = build(lib, kind)
    initial = {f"initial/{n}": p.detach().numpy().copy() for n, p in model.named_parameters()}
    ddp = lib.DDP(model, **ddp_kwargs)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    from_numpy = lib.from_numpy
    error = None
    try:
        with ddp.join(**join_kwargs):
            for i, (x, y) in enumerate(batches(case, rank, steps(rank))):
                x, y = from_numpy(x), from_numpy(y)
                out = ddp(x, i) if kind == "branchy" else ddp(x)
                loss = ((out - y) ** 2).mean()
                if no_sync and i % 2 == 0:  # accumulate two batches, then one synced step
                    with ddp.no_sync():
                        loss.backward()
                    continue
                loss.backward()
                opt.step()
                opt.zero_grad()
    except RuntimeError as exc:
        error = str(exc)
    state = {f"param/{n}": p.detach().numpy().copy() for n, p in model.named_parameters()}
    state.update({f"buffer/{n}": b.numpy().copy() for n, b in model.named_buffers()})
    state.update(initial)
    return state, error
