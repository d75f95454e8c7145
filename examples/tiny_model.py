"""Train the tutorial's TinyModel for a few hundred SGD steps and watch the loss fall.

The model, data and loss are the autograd tutorial's (batch 16, Linear(1000, 100) ->
ReLU -> Linear(100, 10), loss ``(ideal_output - prediction).pow(2).sum()``); the loop is
the usual one: forward, loss, backward, ``optimizer.step()``, ``optimizer.zero_grad()``.

    python examples/tiny_model.py [--steps 300] [--lr 0.001]
"""

from __future__ import annotations

import argparse
import sys
import time

import gradstack as torch

BATCH_SIZE, DIM_IN, HIDDEN_SIZE, DIM_OUT = 16, 1000, 100, 10


class TinyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        return self.layer2(self.relu(self.layer1(x)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    some_input = torch.randn(BATCH_SIZE, DIM_IN)
    ideal_output = torch.randn(BATCH_SIZE, DIM_OUT)
    model = TinyModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    print(model)

    losses = []
    start = time.perf_counter()
    for step in range(1, args.steps + 1):
        prediction = model(some_input)
        loss = (ideal_output - prediction).pow(2).sum()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        if step == 1 or step % 25 == 0:
            print(f"step {step:4d}  loss {losses[-1]:.4e}")
    elapsed = time.perf_counter() - start

    print(
        f"\n{args.steps} steps in {elapsed:.2f} s ({elapsed / args.steps * 1e6:.0f} us/step); "
        f"loss {losses[0]:.4e} -> {losses[-1]:.4e}"
    )
    if not losses[-1] < losses[0] / 100:
        print("the loss did not fall by 100x: something is wrong", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
