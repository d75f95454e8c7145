"""Programs people wrote for PyTorch, run unchanged but for their import lines.

Each file of ``programs/`` is a torch program as its authors wrote it (its header names
the repository, path, commit and license).  The test runs it with its import lines changed
to gradstack (run_program.py, Note [Only the import lines change]) in a subprocess, after
the seeds torch's run had, and compares what it prints with what torch 2.13 printed: the
text with its numbers taken out must be the same (library names and object addresses
normalised), and the numbers must agree to the program's tolerance (``# rtol:`` in its
header, 1e-5 by default: float32 sums over thousands of elements add in another order).
The files a header lists (``# data: names.txt``) are copied from ``data/`` into each run's
directory.  A ``# mask: REGEX`` header line replaces what the regex matches, in both
outputs, before the comparison: for a printed word that differs for a reason the header
gives.

torch's output comes from ``oracle/<program>.json``, recorded once per torch version by
``hatch run record-oracle`` (Note [Recorded oracle output] in oracle.py); a stale record
fails and names that command, and a program whose torch output is not deterministic runs
torch beside gradstack every time.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("real_programs_oracle", HERE / "oracle.py")
oracle = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = oracle
_spec.loader.exec_module(oracle)

PROGRAMS = oracle.programs()
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _split(text: str):
    numbers = [float(n) for n in _NUMBER.findall(text)]
    return _NUMBER.sub("#", text), np.array(numbers)


@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_torchs_numbers(program, tmp_path):
    try:
        rec = None if oracle.LIVE else oracle.load(program)
    except oracle.StaleRecord as exc:
        pytest.fail(str(exc))
    runs = {"gradstack": oracle.start("gradstack", program, tmp_path / "gradstack")}
    if rec is None or not rec["deterministic"]:  # Note [Recorded oracle output]
        runs["torch"] = oracle.start("torch", program, tmp_path / "torch")
    out = {lib: oracle.finish(proc, lib) for lib, proc in runs.items()}
    out.setdefault("torch", rec and rec["stdout"])
    out = {lib: oracle.comparable(program, text) for lib, text in out.items()}
    want_text, want = _split(out["torch"])
    got_text, got = _split(out["gradstack"])
    assert got_text == want_text
    assert want.size > 0, "the program printed no numbers"
    rtol = float(oracle.header(program, "rtol", "1e-5"))
    atol = float(oracle.header(program, "atol", "1e-6"))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
