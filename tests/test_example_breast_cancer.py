"""examples/breast_cancer.py: the torch-style program (utils.data, AdamW, a scheduler)
reaches the accuracy it states, with and without DataLoader worker processes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load():
    path = EXAMPLES / "breast_cancer.py"
    spec = importlib.util.spec_from_file_location("example_breast_cancer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _accuracies(out: str) -> list[float]:
    return [float(v) for v in re.findall(r"test (\d\.\d+)", out)]


def test_reaches_the_stated_accuracy(capsys):
    example = load()
    assert example.main(["--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "Linear(in_features=30, out_features=16, bias=True)" in out  # LazyLinear inferred
    final = float(out.split("final test accuracy ")[1].split()[0])
    assert final >= example.TARGET_ACCURACY
    assert _accuracies(out)[-1] == final


def test_worker_processes_give_the_same_training(capsys):
    example = load()
    example.main(["--no-plot", "--epochs", "3"])
    serial = capsys.readouterr().out
    example.main(["--no-plot", "--epochs", "3", "--workers", "2"])
    parallel = capsys.readouterr().out
    assert _accuracies(serial) == _accuracies(parallel) and len(_accuracies(serial)) == 2
    assert re.findall(r"loss (\d\.\d+)", serial) == re.findall(r"loss (\d\.\d+)", parallel)
