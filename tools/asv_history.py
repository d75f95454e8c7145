"""Run asv over the last commits that changed ``packages/`` (``hatch run asv:history``).

The dashboard is only useful with history: this benchmarks the newest ``-n`` commits (12 by
default) that touched the packages, oldest first, on an explicitly named machine, skipping
commits that already have results for it unless ``--rerun`` is given::

    hatch run asv:history                  # the last 12 commits that changed packages/
    hatch run asv:history -n 20 --rerun    # more commits, measuring again
    hatch run asv:history -- --quick       # options it does not know go to `asv run`

While asv runs, the lines of each commit's build are printed as they come (asv itself
shows a build's output only when it fails: Note [asv builds say what they build] in
tools/asv_build.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commits(count: int, path: str, rev: str) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%H", "-n", str(count), rev, "--", path],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return out[::-1]  # oldest first


def follow(path: Path, stop: threading.Event) -> None:
    """Print the lines appended to ``path`` until ``stop`` is set (and then the rest)."""
    offset = 0
    while True:
        done = stop.wait(0.5)
        if path.is_file():
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read()
            cut = data.rfind(b"\n") + 1
            if cut:
                lines = data[:cut].decode("utf-8", errors="replace").splitlines()
                sys.stdout.write("".join(f"  {line}\n" for line in lines))
                sys.stdout.flush()
                offset += cut
        if done:
            return


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True, help="asv machine name (explicit: P14)")
    parser.add_argument("-n", "--count", type=int, default=12)
    parser.add_argument("--path", default="packages/", help="only commits changing this path")
    parser.add_argument("--rev", default="HEAD", help="walk history back from this revision")
    parser.add_argument("--rerun", action="store_true", help="measure commits that have results")
    parser.add_argument("asv_args", nargs=argparse.REMAINDER, help="passed on to `asv run`")
    # hatch drops the `--` of `hatch run asv:history -- --quick`: options this parser does
    # not know go to asv as well
    args, unknown = parser.parse_known_args(argv)

    hashes = commits(args.count, args.path, args.rev)
    if not hashes:
        print(f"asv_history: no commits change {args.path}", file=sys.stderr)
        return 1
    hashfile = ROOT / ".asv" / "history-commits.txt"
    hashfile.parent.mkdir(parents=True, exist_ok=True)
    hashfile.write_text("\n".join(hashes) + "\n")
    print(
        f"asv_history: {len(hashes)} commits changing {args.path} "
        f"({hashes[0][:8]} .. {hashes[-1][:8]}), listed in {hashfile.relative_to(ROOT)}"
    )
    extra = [a for a in [*unknown, *args.asv_args] if a != "--"]
    cmd = ["asv", "run", f"HASHFILE:{hashfile}", "--machine", args.machine, "--show-stderr"]
    if not args.rerun:
        cmd.append("--skip-existing-commits")
    print("asv_history:", " ".join(cmd + extra), flush=True)
    log = ROOT / ".asv" / "build.log"  # Note [asv builds say what they build]
    log.write_text("")
    stop = threading.Event()
    tail = threading.Thread(target=follow, args=(log, stop), daemon=True)
    tail.start()
    try:
        env = dict(os.environ, GRADSTACK_ASV_LOG=str(log))
        return subprocess.run(cmd + extra, cwd=ROOT, env=env).returncode
    finally:
        stop.set()
        tail.join()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
