"""Short torch programs that reach the namespaces of issue 35 (``torch.svd`` and the small
names, ``torch.testing``, ``torch.utils.checkpoint``, ``torch.profiler``,
``nn.utils.parametrize``/``parametrizations``, ``torch.distributions``, ``torch.fft``,
bfloat16 autocast, complex tensors, ``torch.func``, ``torch.special``, ``torch.linalg``,
the meta device; ``tests/dropin_programs/README.md`` lists them), run as the real programs are
(``tests/real_programs``: only the import lines change, the same seeds, the same
comparison of the printed text and numbers).  They were written for these tests (their
headers say so), so they are a corpus apart from the programs people wrote; torch's output
is recorded as theirs is (``tests/dropin_programs/oracle/``, ``hatch run record-oracle
dropin_programs``; Note [Recorded oracle output] in ``tests/real_programs/oracle.py``).
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
_spec = importlib.util.spec_from_file_location(
    "dropin_programs_oracle", HERE / "real_programs" / "oracle.py"
)
oracle = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = oracle
_spec.loader.exec_module(oracle)

PROGRAMS = oracle.programs(HERE / "dropin_programs")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _split(text: str):
    return _NUMBER.sub("#", text), np.array([float(n) for n in _NUMBER.findall(text)])


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
    assert want.size > 0
    rtol = float(oracle.header(program, "rtol", "1e-5"))
    atol = float(oracle.header(program, "atol", "1e-6"))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
