"""Run every example (``hatch run examples``): each in its own process, in order; exit 1
if any of them fails.

    python examples/run_all.py              # all of them
    python examples/run_all.py digits       # only those whose name contains "digits"

Outputs (plots) go to ``examples/out/``.  matplotlib draws with its Agg backend, so no
display is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = ["tutorial.py", "tiny_model.py", "digits.py", "breast_cancer.py", "digits_ddp.py"]


def main(argv: list[str]) -> int:
    selected = [e for e in EXAMPLES if not argv or any(a in e for a in argv)]
    if not selected:
        print(f"run_all: no example matches {argv}; examples: {', '.join(EXAMPLES)}")
        return 2
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    failed = []
    for name in selected:
        print(f"\n=== examples/{name} " + "=" * max(0, 60 - len(name)), flush=True)
        start = time.perf_counter()
        code = subprocess.run([sys.executable, str(HERE / name)], env=env, cwd=HERE).returncode
        elapsed = time.perf_counter() - start
        status = "ok" if code == 0 else f"FAILED (exit code {code})"
        print(f"--- examples/{name}: {status} in {elapsed:.1f} s", flush=True)
        if code != 0:
            failed.append(name)
    print(
        f"\n{len(selected) - len(failed)} of {len(selected)} examples passed"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
