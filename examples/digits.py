"""Classify scikit-learn's handwritten digits with an MLP trained by gradstack.

The data set is the 8x8 digits bundled with scikit-learn (1797 images, loaded offline);
80% train, 20% test.  The model is Linear(64, 128) -> ReLU -> Linear(128, 64) -> ReLU ->
Linear(64, 10), trained with cross entropy and SGD with Nesterov momentum, mini-batches of
32, a tqdm progress bar per epoch; the loss and accuracy curves are saved to
``examples/out/digits.png`` and the trained weights to ``examples/out/digits.gsz``
(gradstack's safe format), which are then loaded back and checked.

    python examples/digits.py [--epochs 30] [--lr 0.05]

It exits with status 1 if the test accuracy is below 95%.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import gradstack as torch  # noqa: E402
import gradstack.nn.functional as F  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
TARGET_ACCURACY = 0.95


def make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(64, 128),
        torch.nn.ReLU(),
        torch.nn.Linear(128, 64),
        torch.nn.ReLU(),
        torch.nn.Linear(64, 10),
    )


def accuracy(model, x, y) -> float:
    model.eval()
    with torch.no_grad():
        predicted = model(x).argmax(dim=1)
    model.train()
    return (predicted == y).float().mean().item()


def plot(history: dict, epochs: int, path: Path) -> None:
    """Loss (left) and accuracies (right) per epoch; the accuracy axis starts below the
    lowest value, so that epoch 1 is on the plot."""
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    x = range(1, epochs + 1)
    ax_loss.plot(x, history["loss"], color="tab:red", marker=".", label="training loss")
    ax_loss.set(
        title="training loss per epoch",
        xlabel="epoch",
        ylabel="cross entropy, mean per image (log scale)",
        yscale="log",
    )
    ax_loss.legend(loc="upper right")
    ax_acc.plot(x, history["train"], color="tab:blue", marker=".", label="training split")
    ax_acc.plot(x, history["test"], color="tab:green", marker=".", label="test split")
    ax_acc.axhline(TARGET_ACCURACY, color="gray", linestyle=":", label="95% (the target)")
    low = min([*history["train"], *history["test"], TARGET_ACCURACY])
    ax_acc.set(
        title="accuracy per epoch",
        xlabel="epoch",
        ylabel="fraction of images classified right",
        ylim=(max(0.0, low - 0.02), 1.005),
    )
    ax_acc.legend(loc="lower right")
    fig.suptitle("MLP 64-128-64-10 on scikit-learn's digits, trained with gradstack")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    digits = load_digits()
    x_np = (digits.data / 16.0).astype(np.float32)  # pixels 0..16 -> 0..1
    x_train, x_test, y_train, y_test = train_test_split(
        x_np, digits.target, test_size=0.2, random_state=args.seed, stratify=digits.target
    )
    x_train, x_test = torch.from_numpy(x_train), torch.from_numpy(x_test)
    y_train, y_test = (
        torch.from_numpy(y_train.astype(np.int64)),
        torch.from_numpy(y_test.astype(np.int64)),
    )
    print(f"digits: {len(x_train)} training and {len(x_test)} test images of 8x8 pixels")

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    history = {"loss": [], "train": [], "test": []}
    n = len(x_train)
    bar = tqdm(range(1, args.epochs + 1), desc="training", unit="epoch", file=sys.stdout)
    for _epoch in bar:
        order = torch.randperm(n)
        total = 0.0
        for start in range(0, n, args.batch_size):
            idx = order[start : start + args.batch_size]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        history["loss"].append(total / n)
        history["train"].append(accuracy(model, x_train, y_train))
        history["test"].append(accuracy(model, x_test, y_test))
        bar.set_postfix(loss=f"{history['loss'][-1]:.4f}", test_acc=f"{history['test'][-1]:.3f}")
    bar.close()

    OUT.mkdir(exist_ok=True)
    plot(history, args.epochs, OUT / "digits.png")

    # save the weights in the safe format, load them into a fresh model, check it
    torch.save(model.state_dict(), OUT / "digits.gsz")
    restored = make_model()
    restored.load_state_dict(torch.load(OUT / "digits.gsz"))
    test_acc = accuracy(restored, x_test, y_test)
    assert test_acc == history["test"][-1], "the restored model should predict the same"

    print(
        f"final training loss {history['loss'][-1]:.4f}, train accuracy "
        f"{history['train'][-1]:.4f}, test accuracy {test_acc:.4f}"
    )
    print(f"plot: {OUT / 'digits.png'}; weights: {OUT / 'digits.gsz'}")
    if test_acc < TARGET_ACCURACY:
        print(f"test accuracy {test_acc:.4f} is below {TARGET_ACCURACY}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
