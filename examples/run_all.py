"""Run every example (``hatch run examples:all``): each in its own process, as many at once
as there are CPUs, its output shown as it comes; exit 1 if any of them fails.

    python examples/run_all.py              # all of them
    python examples/run_all.py digits       # only those whose name contains "digits"
    python examples/run_all.py --jobs 1     # one after another

Outputs (plots, graph pictures) go to ``examples/out/``.  matplotlib draws with its Agg
backend, so no display is needed.

Note [Examples side by side]
Each example runs on one core (numpy's BLAS is pinned to one thread), so on a 2-core
machine two at a time take about half as long.  Examples that start processes of their own
(``digits_ddp.py``: two MPI ranks) run afterwards, alone.

Note [Output as it comes]
Each line an example prints is shown at once, after its name (``[digits] ...``), so that
two examples side by side stay readable.  A progress bar (tqdm redraws its line after a
carriage return) is not a line: on a terminal, the newest bar is drawn on the last line
and redrawn in place, and the lines of the examples scroll above it; in a log (not a
terminal) a bar is shown when it ends, and in the heartbeat.  The heartbeat: when nothing
was printed for ``QUIET`` seconds, a line says which examples are still running, for how
long, and where their bars are, so that the run is never silent for long.
"""

from __future__ import annotations

import codecs
import os
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = ["tutorial.py", "tiny_model.py", "digits.py", "breast_cancer.py", "digits_ddp.py"]
# examples that start several processes of their own (MPI ranks): they run last, alone
ALONE = {"digits_ddp.py"}
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
QUIET = 8.0  # seconds without output before the heartbeat (Note [Output as it comes])


class Console:
    """Lines of several programs, and their progress bars (Note [Output as it comes])."""

    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.bars: dict[str, str] = {}  # example -> its newest progress bar
        self.shown = ""  # the bar drawn on the terminal's last line
        self.last = time.monotonic()

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
        self.last = time.monotonic()

    def _clear(self) -> str:
        if self.shown:
            self.shown = ""
            return "\r\x1b[K"
        return ""

    def _bar_line(self) -> str:
        if not self.tty or not self.bars:
            return ""
        name, bar = next(reversed(self.bars.items()))
        width = shutil.get_terminal_size().columns - 1
        self.shown = f"[{name}] {bar}"[:width]
        return self.shown

    def say(self, text: str) -> None:
        """A line of run_all's own."""
        self._write(self._clear() + text + "\n" + self._bar_line())

    def line(self, name: str, text: str) -> None:
        """A line an example printed."""
        if not text and name in self.bars:
            text = self.bars[name]  # a bar's last state, ended by a newline
        self.bars.pop(name, None)
        self.say(f"[{name}] {text}")

    def bar(self, name: str, text: str) -> None:
        """A progress bar an example redrew (text after a carriage return)."""
        if not text.strip():
            return
        self.bars.pop(name, None)
        self.bars[name] = text  # the newest last
        if self.tty:
            self._write(self._clear() + self._bar_line())

    def quiet_for(self) -> float:
        return time.monotonic() - self.last


class Example:
    """One running example, its output read as it comes."""

    def __init__(self, name: str, env: dict, console: Console) -> None:
        self.name, self.console = name, console
        self.label = name.removesuffix(".py")
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / name)],
            env=env,
            cwd=HERE,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.pending = ""

    def feed(self, data: bytes) -> None:
        self.pending += self.decoder.decode(data, final=not data)
        while True:
            cut = min(
                (i for i in (self.pending.find("\n"), self.pending.find("\r")) if i >= 0),
                default=-1,
            )
            if cut < 0:
                break
            text, end = self.pending[:cut], self.pending[cut]
            if end == "\r" and self.pending[cut + 1 : cut + 2] == "\n":
                end, cut = "\n", cut + 1
            elif end == "\r" and cut + 1 == len(self.pending) and data:
                break  # a "\r\n" may be split across reads: wait for the next byte
            self.pending = self.pending[cut + 1 :]
            if end == "\n":
                self.console.line(self.label, text)
            else:
                self.console.bar(self.label, text)
        if not data and self.pending:
            self.console.line(self.label, self.pending)
            self.pending = ""

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _parse(argv: list[str]) -> tuple[list[str], int]:
    jobs, names, args = _cpus(), [], iter(argv)
    for arg in args:
        if arg == "--jobs":
            jobs = max(1, int(next(args, "1")))
        elif arg.startswith("--jobs="):
            jobs = max(1, int(arg.split("=", 1)[1]))
        else:
            names.append(arg)
    return names, jobs


def main(argv: list[str]) -> int:
    names, jobs = _parse(argv)
    selected = [e for e in EXAMPLES if not names or any(a in e for a in names)]
    if not selected:
        print(f"run_all: no example matches {names}; examples: {', '.join(EXAMPLES)}")
        return 2
    jobs = min(jobs, len(selected))
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    if jobs > 1:  # Note [Examples side by side]
        env.update(dict.fromkeys(ONE_THREAD, "1"))
    console = Console()
    shared = [name for name in selected if name not in ALONE]
    alone = [name for name in selected if name in ALONE]
    console.say(
        f"run_all: {len(selected)} examples, {jobs} at a time"
        + (f"; then {', '.join(alone)} alone (it starts processes of its own)" if alone else "")
        + "; each line is prefixed with the example's name"
    )
    sel = selectors.DefaultSelector()
    running: list[Example] = []
    failed: list[str] = []
    t0 = time.monotonic()

    def launch(name: str) -> None:
        console.say(f"run_all: starting examples/{name}")
        example = Example(name, env, console)
        os.set_blocking(example.proc.stdout.fileno(), False)
        sel.register(example.proc.stdout, selectors.EVENT_READ, example)
        running.append(example)

    while shared or alone or running:
        while shared and len(running) < jobs:
            launch(shared.pop(0))
        if alone and not running and not shared:
            launch(alone.pop(0))
        for key, _ in sel.select(timeout=1.0):
            example = key.data
            try:
                data = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            example.feed(data)
            if data:
                continue
            sel.unregister(key.fileobj)
            key.fileobj.close()
            code = example.proc.wait()
            running.remove(example)
            status = "ok" if code == 0 else f"FAILED (exit code {code})"
            console.say(f"run_all: examples/{example.name}: {status} in {example.elapsed():.1f} s")
            if code != 0:
                failed.append(example.name)
        if running and console.quiet_for() >= QUIET:
            busy = ", ".join(
                f"{e.name} ({e.elapsed():.0f} s"
                + (f"; {console.bars[e.label].strip()}" if e.label in console.bars else "")
                + ")"
                for e in running
            )
            console.say(f"run_all: still running {busy}")
    sel.close()
    console.say(
        f"\n{len(selected) - len(failed)} of {len(selected)} examples passed"
        + f" in {time.monotonic() - t0:.0f} s"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
