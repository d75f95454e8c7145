"""Two probes the random programs cannot make, run side by side in gradstack and PyTorch.

    hatch run python tests/fuzz/probe_threads_memory.py [--runs 5]

threads: 4 threads each run 200 ``(x * 1.0).sum().backward()`` into one leaf ``x`` of 2**16
float32 elements; every entry of ``x.grad`` must end at 800.  A run is wrong when any entry
is not 800 (a lost update of the ``.grad`` accumulation).

memory: 300 iterations of ``t = x * 2; y = t.sin(); t.me = t; y.sum().backward()`` with a
leaf ``x`` of 2**18 float32 elements (1 MiB): ``t`` is saved by ``y``'s node and then joins
a reference cycle through its own ``__dict__``.  Once the cyclic collector has run, the
memory still held must not grow with the iterations.

Each measurement runs in a fresh child process; the figures are printed, not asserted (this
is a probe for the findings file, not a test).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import threading


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def threads(lib) -> dict:
    x = lib.zeros(2**16, requires_grad=True)

    def work():
        for _ in range(200):
            (x * 1.0).sum().backward()

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    g = x.grad.detach().numpy()
    return {"wrong_entries": int((g != 800).sum()), "min": float(g.min()), "max": float(g.max())}


def memory(lib) -> dict:
    gc.collect()
    start = _rss_mb()
    marks = []
    for i in range(300):
        x = lib.ones(2**18, requires_grad=True)
        t = x * 2
        y = t.sin()
        t.me = t
        y.sum().backward()
        del x, t, y
        if i % 100 == 99:
            gc.collect()
            marks.append(round(_rss_mb() - start, 1))
    gc.collect()
    return {"rss_growth_mb_after_100_200_300": marks}


def _child(libname: str, probe: str) -> None:
    if libname == "torch":
        import torch as lib

        lib.set_num_threads(1)
    else:
        import gradstack as lib
    print(json.dumps({"threads": threads, "memory": memory}[probe](lib)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", nargs=2, metavar=("LIB", "PROBE"))
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    for probe, runs in (("threads", args.runs), ("memory", 1)):
        for libname in ("gradstack", "torch"):
            results = []
            for _ in range(runs):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", libname, probe],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                results.append(json.loads(out.stdout) if out.returncode == 0 else out.stderr[-300:])
            if probe == "threads":
                wrong = sum(1 for r in results if isinstance(r, str) or r["wrong_entries"])
                print(f"threads  {libname:<9} wrong runs {wrong} of {runs}: {results}")
            else:
                print(f"memory   {libname:<9} {results[0]}")


if __name__ == "__main__":
    main()
