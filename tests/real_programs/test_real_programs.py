"""Programs people wrote for PyTorch, run unchanged but for their import lines.

Each file of ``programs/`` is a torch program as its authors wrote it (its header names
the repository, path, commit and license).  The test runs it twice in subprocesses, under
torch 2.13 and with its import lines changed to gradstack (run_program.py, Note [Only the
import lines change]), after the same seeds, and compares what they print: the text with
its numbers taken out must be the same (library names and object addresses normalised),
and the numbers must agree to the program's tolerance (``# rtol:`` in its header, 1e-5 by
default: float32 sums over thousands of elements add in another order).  The files a
header lists (``# data: names.txt``) are copied from ``data/`` into each run's directory.
A ``# mask: REGEX`` header line replaces what the regex matches, in both outputs, before
the comparison: for a printed word that differs for a reason the header gives.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted((HERE / "programs").glob("*.py"))
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _run(library: str, program: Path, tmp: Path):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    return subprocess.Popen(
        [sys.executable, str(HERE / "run_program.py"), library, str(program)],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _normalise(text: str) -> str:
    text = re.sub(r"0x[0-9a-f]+", "0x?", text)
    return text.replace("gradstack", "torch")


def _split(text: str):
    numbers = [float(n) for n in _NUMBER.findall(text)]
    return _NUMBER.sub("#", text), np.array(numbers)


def _header(program: Path, key: str, default: str) -> str:
    m = re.search(rf"^# {key}: (.*)$", program.read_text(), re.M)
    return m.group(1).strip() if m else default


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_torchs_numbers(program, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "gradstack").mkdir()
    for data in _header(program, "data", "").split():
        for lib in ("torch", "gradstack"):
            shutil.copy(HERE / "data" / data, tmp_path / lib / data)
    runs = {lib: _run(lib, program, tmp_path / lib) for lib in ("torch", "gradstack")}
    out = {}
    for lib, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{lib} failed:\n{stderr[-3000:]}"
        out[lib] = _normalise(stdout)
    for pattern in re.findall(r"^# mask: (.*)$", program.read_text(), re.M):
        out = {lib: re.sub(pattern, "<masked>", text) for lib, text in out.items()}
    want_text, want = _split(out["torch"])
    got_text, got = _split(out["gradstack"])
    assert got_text == want_text
    assert want.size > 0, "the program printed no numbers"
    rtol = float(_header(program, "rtol", "1e-5"))
    atol = float(_header(program, "atol", "1e-6"))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
