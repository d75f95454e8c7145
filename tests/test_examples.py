"""The examples' runner reports failures, and the quick example trains as it says.

The full examples run with ``hatch run examples`` (``examples/run_all.py``); here only
what is fast: the runner's exit codes, and TinyModel for 50 steps.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_run_all_exit_codes(tmp_path, monkeypatch, capsys):
    run_all = load("run_all")
    (tmp_path / "good.py").write_text("print('fine')\n")
    (tmp_path / "bad.py").write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    monkeypatch.setattr(run_all, "EXAMPLES", ["good.py", "bad.py"])
    assert run_all.main([]) == 1
    assert run_all.main(["good"]) == 0
    assert run_all.main(["nothing-matches"]) == 2
    out = capsys.readouterr().out
    assert "failed: bad.py" in out and "1 of 1 examples passed" in out


def test_run_all_lists_every_example():
    run_all = load("run_all")
    scripts = {p.name for p in EXAMPLES.glob("*.py")} - {"run_all.py"}
    assert set(run_all.EXAMPLES) == scripts


def test_tiny_model_loss_falls(capsys):
    tiny = load("tiny_model")
    assert tiny.main(["--steps", "50"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step")]
    losses = [float(line.split()[-1]) for line in lines]
    assert losses == sorted(losses, reverse=True) and losses[-1] < losses[0] / 1e4


def test_examples_write_into_examples_out():
    for name in ("tutorial", "digits"):
        assert 'Path(__file__).resolve().parent / "out"' in (EXAMPLES / f"{name}.py").read_text()
