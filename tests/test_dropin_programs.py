"""Short torch programs that reach the namespaces of issue 35 (``torch.svd`` and the small
names, ``torch.testing``, ``torch.utils.checkpoint``, ``torch.profiler``,
``nn.utils.parametrize``/``parametrizations``, ``torch.distributions``, ``torch.fft``,
bfloat16 autocast, complex tensors, ``torch.func``, ``torch.special``, ``torch.linalg``,
the meta device; ``tests/dropin_programs/README.md`` lists them), run as the real programs are
(``tests/real_programs``: only the import lines change, the same seeds, the same
comparison of the printed text and numbers), with torch run live beside gradstack: they
were written for these tests (their headers say so), so they are not in the corpus of
programs people wrote, whose torch output is recorded.
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

PROGRAMS = sorted((HERE / "dropin_programs").glob("*.py"))
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _split(text: str):
    return _NUMBER.sub("#", text), np.array([float(n) for n in _NUMBER.findall(text)])


@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_torchs_numbers(program, tmp_path):
    runs = {lib: oracle.start(lib, program, tmp_path / lib) for lib in ("gradstack", "torch")}
    out = {lib: oracle.comparable(program, oracle.finish(p, lib)) for lib, p in runs.items()}
    want_text, want = _split(out["torch"])
    got_text, got = _split(out["gradstack"])
    assert got_text == want_text
    assert want.size > 0
    rtol = float(oracle.header(program, "rtol", "1e-5"))
    atol = float(oracle.header(program, "atol", "1e-6"))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
