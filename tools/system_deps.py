"""Make sure the system programs the tests and examples use are installed (``hatch run
test``, ``test-quick`` and ``examples:all`` run this first).

Today that is Graphviz's ``dot``, which renders the pictures of backward graphs
(``gradstack.autograd.graph.make_dot``; the Python package ``graphviz`` only writes the DOT
text).  When ``dot`` is missing and this runs as root on Debian (CI, these machines), it is
installed with ``apt-get``, quietly, saying so first; otherwise this says which command
installs it, and the tests that render a picture fail with the same advice (the tutorial
example prints it and draws no picture).

    python tools/system_deps.py            # install what is missing (as root), else advise
    python tools/system_deps.py --check    # only report; exit 1 when something is missing
    python tools/system_deps.py chromium   # the programs named (the docs site's browser test)

Programs installed only when named: ``chromium`` (Debian's Chromium, which the docs site's
browser test drives through Playwright: ``hatch run docs:site-test``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

# program -> (Debian package, the install advice for everyone else)
PROGRAMS = {
    "dot": ("graphviz", "apt-get install graphviz  (macOS: brew install graphviz)"),
}
# program -> (Debian package, advice), installed when named on the command line
ON_REQUEST = {
    "chromium": ("chromium", "apt-get install chromium"),
}


def missing(programs: dict[str, tuple[str, str]] | None = None) -> dict[str, tuple[str, str]]:
    programs = PROGRAMS if programs is None else programs
    return {prog: pkg for prog, pkg in programs.items() if shutil.which(prog) is None}


def apt_install(packages: list[str]) -> bool:
    """apt-get install, quietly: a one-line summary, the full log only on failure."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print(f"system_deps: installing {' '.join(packages)} with apt-get ...", flush=True)
    for cmd in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
    ):
        result = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"system_deps: `{' '.join(cmd)}` failed:", file=sys.stderr)
            print((result.stdout + result.stderr)[-3000:], file=sys.stderr)
            return False
    return True


def main(argv: list[str]) -> int:
    named = [a for a in argv if not a.startswith("-")]
    unknown = [a for a in named if a not in ON_REQUEST and a not in PROGRAMS]
    if unknown:
        print(
            f"system_deps: unknown program(s) {unknown}; known: "
            f"{sorted(PROGRAMS) + sorted(ON_REQUEST)}",
            file=sys.stderr,
        )
        return 2
    wanted = {p: (PROGRAMS | ON_REQUEST)[p] for p in named} if named else PROGRAMS
    need = missing(wanted)
    if not need:
        return 0
    can_install = (
        "--check" not in argv
        and shutil.which("apt-get") is not None
        and hasattr(os, "geteuid")
        and os.geteuid() == 0
    )
    if can_install and apt_install(sorted({pkg for pkg, _ in need.values()})):
        installed = sorted(need)
        need = missing(wanted)
        if not need:
            print(f"system_deps: installed {', '.join(installed)}")
            return 0
    for prog, (_, advice) in need.items():
        print(f"system_deps: `{prog}` is missing; install it: {advice}", file=sys.stderr)
    # the tests that need it fail and say why; a program asked for by name must be there
    return 1 if "--check" in argv or named else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
