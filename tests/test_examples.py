"""The examples' runner reports failures, and the quick example trains as it says.

The full examples run with ``hatch run examples`` (``examples/run_all.py``); here only
what is fast: the runner's exit codes, and TinyModel for 50 steps.
"""

from __future__ import annotations

import importlib.util
import io
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


BAR = """import sys, time
print("start", flush=True)
for i in range(1, 6):
    sys.stdout.write(f"\\rtraining {i * 20}%")
    sys.stdout.flush()
    time.sleep(0.05)
sys.stdout.write("\\n")
print("done", flush=True)
"""


def test_run_all_shows_lines_as_they_come_and_a_bar_as_one_line(tmp_path, monkeypatch, capsys):
    """Note [Output as it comes]: each line after its example's name; a progress bar's
    redraws (carriage returns) are not lines, its last state is."""
    run_all = load("run_all")
    (tmp_path / "bar.py").write_text(BAR)
    (tmp_path / "plain.py").write_text("print('one')\nprint('two')\n")
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    monkeypatch.setattr(run_all, "EXAMPLES", ["bar.py", "plain.py"])
    assert run_all.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    mine = [line for line in lines if line.startswith("[bar] ")]
    assert mine == ["[bar] start", "[bar] training 100%", "[bar] done"], lines
    assert [line for line in lines if line.startswith("[plain] ")] == ["[plain] one", "[plain] two"]
    assert not any("\r" in line for line in lines)
    assert any(line.startswith("run_all: starting examples/bar.py") for line in lines)


def test_run_all_console_redraws_a_bar_in_place_on_a_terminal():
    run_all = load("run_all")

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    out = Terminal()
    console = run_all.Console(out)
    console.bar("digits", "training 10%")
    console.bar("digits", "training 20%")
    console.line("tutorial", "a line")
    console.line("digits", "")  # the bar ended by a newline: its last state stays
    text = out.getvalue()
    assert text.count("\n") == 2  # two lines; the redraws are carriage returns
    # each redraw clears the terminal's last line first; lines scroll above the bar
    assert text.startswith("[digits] training 10%\r\x1b[K[digits] training 20%\r\x1b[K")
    assert "[tutorial] a line\n[digits] training 20%" in text
    assert text.endswith("\r\x1b[K[digits] training 20%\n")


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
