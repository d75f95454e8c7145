"""torch's side of the real programs, recorded once per torch version (``oracle/*.json``).

Note [Recorded oracle output]
torch is the oracle, and the same torch version prints the same text for the same program
after the same seeds, so running it on every test run repeats work whose answer is known.
``hatch run record-oracle`` runs each program of ``programs/`` under torch twice (two
processes, the same command line and environment as the test) and writes what it printed
to ``oracle/<program>.json``, beside:

- ``fingerprint``: a SHA-256 of everything that decides torch's output besides torch
  itself: the program's text, ``run_program.py`` (the seeds, the notebook runner) and the
  data files its header names;
- the versions of torch, numpy and Python it was recorded with (numpy: the harness seeds
  its global generator, and some programs print numpy values).

The test compares gradstack's output with the record instead of running torch.  A record
whose fingerprint or versions differ from the checkout's and the environment's is *stale*:
the test fails and names the command that records it again; nothing falls back silently.
When the two recording runs differ, torch's output is not deterministic for that program,
and its record says so (``"deterministic": false``, no text): the test then runs torch
beside gradstack each time, as before.  ``GRADSTACK_ORACLE=live`` makes every test run
torch live (to check the records, or while editing a program), and ``hatch run
record-oracle --check`` runs torch again and reports every record it would change.

The CPU torch ran on is noted (``cpu_capability``): torch's vector kernels differ in the
last bits between AVX2 and AVX-512, far inside the programs' tolerances.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"
RECORDS = HERE / "oracle"
RUNNER = HERE / "run_program.py"
FORMAT = 1
LIVE = os.environ.get("GRADSTACK_ORACLE") == "live"


class StaleRecord(Exception):
    """The record is missing or was made from another program, harness or torch."""


def programs(folder: Path = PROGRAMS_DIR) -> list[Path]:
    """The programs of a corpus: ``programs/`` (people's), or ``tests/dropin_programs``."""
    return sorted(folder.glob("*.py"))


def corpus_of(program: Path) -> str:
    """``real_programs`` or ``dropin_programs``: the corpus name ``record-oracle`` takes."""
    return "real_programs" if program.parent == PROGRAMS_DIR else program.parent.name


def header(program: Path, key: str, default: str) -> str:
    m = re.search(rf"^# {key}: (.*)$", program.read_text(), re.M)
    return m.group(1).strip() if m else default


def data_files(program: Path) -> list[str]:
    return header(program, "data", "").split()


def fingerprint(program: Path) -> str:
    """What decides torch's output besides torch: the program, the harness, its data."""
    digest = hashlib.sha256()
    for path in [program, RUNNER, *(HERE / "data" / d for d in data_files(program))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def environment() -> dict:
    """The versions a record depends on (read from metadata: torch is not imported)."""
    return {
        "torch": importlib.metadata.version("torch"),
        "numpy": importlib.metadata.version("numpy"),
        "python": platform.python_version_tuple()[0] + "." + platform.python_version_tuple()[1],
    }


def record_path(program: Path) -> Path:
    """``oracle/<program>.json`` beside the corpus' programs (``programs/``'s: here)."""
    folder = RECORDS if program.parent == PROGRAMS_DIR else program.parent / "oracle"
    return folder / f"{program.stem}.json"


def record_command(program: Path) -> str:
    return f"hatch run record-oracle {corpus_of(program)}"


def start(library: str, program: Path, workdir: Path) -> subprocess.Popen:
    """Run ``program`` under ``library`` in ``workdir`` (its data files copied there)."""
    workdir.mkdir(parents=True, exist_ok=True)
    for data in data_files(program):
        shutil.copy(HERE / "data" / data, workdir / data)
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
    return subprocess.Popen(
        [sys.executable, str(RUNNER), library, str(program)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, library: str) -> str:
    """The run's output; AssertionError with its stderr when it failed."""
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"{library} failed:\n{stderr[-3000:]}"
    return stdout


def normalise(text: str) -> str:
    """Object addresses hidden, library names made equal."""
    text = re.sub(r"0x[0-9a-f]+", "0x?", text)
    return text.replace("gradstack", "torch")


def comparable(program: Path, text: str) -> str:
    """``text`` as the test compares it: normalised, and what the program's ``# mask:``
    header lines match replaced."""
    text = normalise(text)
    for pattern in re.findall(r"^# mask: (.*)$", program.read_text(), re.M):
        text = re.sub(pattern, "<masked>", text)
    return text


def load(program: Path) -> dict:
    """The record of ``program``; StaleRecord (saying how to fix it) when it cannot be used."""
    path = record_path(program)
    rel = path.relative_to(HERE.parent.parent)
    if not path.is_file():
        raise StaleRecord(
            f"no recorded torch output for {program.name} ({rel}): run `{record_command(program)}`"
        )
    rec = json.loads(path.read_text(encoding="utf-8"))
    why = []
    if rec.get("format") != FORMAT:
        why.append(f"record format {rec.get('format')}, this harness reads {FORMAT}")
    if rec.get("fingerprint") != fingerprint(program):
        why.append("the program, run_program.py or its data changed since it was recorded")
    env = environment()
    for name, version in env.items():
        if rec.get(name) != version:
            why.append(f"recorded with {name} {rec.get(name)}, this environment has {version}")
    if why:
        raise StaleRecord(
            f"the recorded torch output {rel} is stale ({'; '.join(why)}): run "
            f"`{record_command(program)}`"
        )
    return rec


def _torch_outputs(program: Path, runs: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="gradstack-oracle-") as tmp:
        procs = [start("torch", program, Path(tmp) / str(k)) for k in range(runs)]
        return [finish(p, "torch") for p in procs]


def cpu_capability() -> str:
    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def record(program: Path, runs: int = 2, capability: str | None = None) -> dict:
    """Run ``program`` under torch ``runs`` times; the record (not yet written)."""
    outputs = _torch_outputs(program, runs)
    deterministic = len({comparable(program, o) for o in outputs}) == 1
    return {
        "format": FORMAT,
        "program": program.name,
        "fingerprint": fingerprint(program),
        **environment(),
        "cpu_capability": capability or cpu_capability(),
        "deterministic": deterministic,
        "stdout": outputs[0] if deterministic else None,
    }


def write(rec: dict, program: Path) -> Path:
    path = record_path(program)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def differs(program: Path, old: dict | None, new: dict) -> str | None:
    """Why ``new`` would replace ``old`` (None: the same record)."""
    if old is None:
        return "no record yet"
    for key in ("format", "fingerprint", "torch", "numpy", "python", "deterministic"):
        if old.get(key) != new.get(key):
            return f"{key}: {old.get(key)} -> {new.get(key)}"
    if old.get("stdout") is not None and new.get("stdout") is not None:
        if comparable(program, old["stdout"]) != comparable(program, new["stdout"]):
            return "torch printed something else"
    return None
