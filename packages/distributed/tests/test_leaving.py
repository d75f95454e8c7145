"""A rank that leaves the job ends or errors every other rank, whatever they wait in, with
a message naming it (Note [No rank left waiting] in liveness.py); ranks that leave after
their part of a call break nothing.

The group timeout is the default 30 minutes in every worker, so only the departure can end
the others; each launch has a hard limit (conftest.LAUNCH_TIMEOUT) that turns a hang into a
failure.  The launches of this module run a few at a time (conftest.launch_all).

MPICH's mpiexec (Hydra) kills the remaining ranks within milliseconds when a rank dies by a
signal or os._exit; the liveness hub's own line names the rank then.  With Hydra's
``-disable-auto-cleanup`` (a launcher that does not kill, as srun without
--kill-on-bad-exit) the survivors must raise DistBackendError themselves: os._exit is the
way to test that, since Hydra kills the job on a signal whatever its flags.  The times to
error are measured by benchmarks/distributed_departures.py, not here.
"""

from __future__ import annotations

import re

import pytest
from gradstack_distributed.run import _is_hydra, find_mpiexec

GRACEFUL = {
    "end": "exited (the end of its script, sys.exit(), or an exception it caught) without "
    "calling destroy_process_group()",
    "exit0": None,
    "exit3": None,
    "caught": None,
    "destroy": "called destroy_process_group()",
}
for _way in ("exit0", "exit3", "caught"):
    GRACEFUL[_way] = GRACEFUL["end"]
ABRUPT = ["sigterm", "sigkill", "_exit0", "_exit3"]
WAYS = [*GRACEFUL, "abort", *ABRUPT]
CALLS = ["broadcast", "barrier", "all_gather", "recv", "send", "ddp"]
NO_CLEANUP = ("-disable-auto-cleanup",)
CALL_WORDS = {
    "all_reduce": "all_reduce",
    "broadcast": "broadcast",
    "barrier": "barrier",
    "all_gather": "all_gather",
    "recv": "recv",
    "send": "send",
    "ddp": "DistributedDataParallel: averaging gradients",
}
CLEAN = [("broadcast", 2), ("broadcast", 3), ("reduce", 2), ("reduce", 3), ("p2p", 2),
         ("p2p", 3), ("subgroup", 3)]  # fmt: skip


def _hydra() -> bool:
    try:
        return _is_hydra(find_mpiexec())
    except FileNotFoundError:
        return False


HYDRA = _hydra()  # -disable-auto-cleanup is Hydra's (MPICH's mpiexec) flag


def _jobs() -> dict:
    jobs = {}
    for n in (2, 3):
        for way in WAYS:
            jobs[("way", way, n)] = ("leaving.py", n, (way, "all_reduce"), {})
        for way in ("_exit0", "_exit3"):
            kwargs = {"mpiexec_args": NO_CLEANUP}
            if HYDRA:
                jobs[("no_cleanup", way, n)] = ("leaving.py", n, (way, "all_reduce"), kwargs)
    for i, call in enumerate(CALLS):
        jobs[("call", call, "exit3")] = ("leaving.py", 2 + i % 2, ("exit3", call), {})
        kwargs = {"mpiexec_args": NO_CLEANUP}
        if HYDRA:
            jobs[("call", call, "_exit0")] = ("leaving.py", 3 - i % 2, ("_exit0", call), kwargs)
    for mode, n in CLEAN:
        jobs[("clean", mode, n)] = ("clean_end.py", n, (mode,), {})
    return jobs


@pytest.fixture(scope="module")
def runs(mpi_launch):
    import concurrent.futures

    jobs = _jobs()

    def run(key):
        worker, n, args, kwargs = jobs[key]
        try:
            return mpi_launch(worker, n, *args, **kwargs)
        except AssertionError as exc:  # the hard time limit: report it in that test
            return exc

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = dict(zip(jobs, pool.map(run, jobs)))
    return {key: (jobs[key][1], result) for key, result in results.items()}


def _get(runs, key):
    if key not in runs:
        pytest.skip("needs MPICH's mpiexec (Hydra) for -disable-auto-cleanup")
    n, done = runs[key]
    if isinstance(done, BaseException):
        raise done
    return n, done


def _show(done) -> str:
    return f"\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"


def _assert_survivors_raised(done, n: int, call: str, words: str) -> None:
    for r in range(n):
        if r == 1:
            continue
        pattern = (
            rf"rank {r} raised at [0-9.]+: DistBackendError: {re.escape(CALL_WORDS[call])} "
            rf"on rank {r}( \(ranks with uneven inputs\? see DistributedDataParallel.join\(\)\))?"
            rf": rank 1 \(pid \d+ on \S+\) {words}"
        )
        assert re.search(pattern, done.stdout), f"rank {r} did not raise as expected" + _show(done)
    assert "finished its loop" not in done.stdout, _show(done)
    assert done.returncode != 0, _show(done)  # the survivors' uncaught error ended the job


def _assert_hub_named_the_rank(done, n: int) -> None:
    assert re.search(
        rf"\[gradstack.distributed\] rank 1 of {n} \(pid \d+ on \S+\) ended without a "
        r"leaving notice: it was killed by a signal",
        done.stderr,
    ), _show(done)
    assert "finished its loop" not in done.stdout, _show(done)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("way", list(GRACEFUL))
def test_a_rank_that_leaves_on_its_own_makes_the_others_raise(runs, way, n):
    n, done = _get(runs, ("way", way, n))
    assert "rank 1 leaving at" in done.stdout, _show(done)
    _assert_survivors_raised(done, n, "all_reduce", re.escape(f"left the job: it {GRACEFUL[way]}"))
    assert "before it joined this call" in done.stdout
    if way in ("exit0", "exit3", "end", "caught", "destroy"):
        # the leaving rank said nothing itself; the survivors' reports name it
        assert "rank 1 of" not in done.stderr, _show(done)


@pytest.mark.parametrize("n", [2, 3])
def test_an_uncaught_exception_ends_the_job_with_its_traceback(runs, n):
    n, done = _get(runs, ("way", "abort", n))
    assert f"[gradstack.distributed] rank 1 of {n} failed with an uncaught exception" in (
        done.stderr
    ), _show(done)
    assert "[rank 1] ValueError: uncaught on purpose" in done.stderr
    assert done.returncode != 0 and "finished its loop" not in done.stdout
    # a survivor that heard of it before the abort ended it says who left, and how
    for line in done.stdout.splitlines():
        if " raised at " in line:
            assert "rank 1 (pid" in line and "failed with an uncaught ValueError" in line


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("way", ABRUPT)
def test_a_rank_that_dies_is_named_and_the_job_ends(runs, way, n):
    n, done = _get(runs, ("way", way, n))
    assert "rank 1 leaving at" in done.stdout, _show(done)
    _assert_hub_named_the_rank(done, n)
    if way in ("sigterm", "sigkill", "_exit3"):
        assert done.returncode != 0, _show(done)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("way", ["_exit0", "_exit3"])
def test_without_the_launchers_cleanup_the_survivors_raise(runs, way, n):
    n, done = _get(runs, ("no_cleanup", way, n))
    _assert_hub_named_the_rank(done, n)
    words = r"ended without a leaving notice \(connection closed by peer\)"
    _assert_survivors_raised(done, n, "all_reduce", words)


@pytest.mark.parametrize("call", CALLS)
def test_every_kind_of_call_hears_of_a_rank_that_left(runs, call):
    n, done = _get(runs, ("call", call, "exit3"))
    words = re.escape(f"left the job: it {GRACEFUL['exit3']}")
    _assert_survivors_raised(done, n, call, words)
    if not HYDRA:
        return
    n, done = _get(runs, ("call", call, "_exit0"))
    _assert_hub_named_the_rank(done, n)
    words = r"ended without a leaving notice \(connection closed by peer\)"
    _assert_survivors_raised(done, n, call, words)


@pytest.mark.parametrize(("mode", "n"), CLEAN, ids=[f"{m}-{n}ranks" for m, n in CLEAN])
def test_ranks_that_leave_after_their_part_break_nothing(runs, mode, n):
    n, done = _get(runs, ("clean", mode, n))
    assert done.returncode == 0, _show(done)
    assert done.stderr == "", _show(done)  # a well-formed end says nothing
    out = done.stdout
    survivors = [r for r in range(n) if not (mode == "broadcast" and r == 0)]
    if mode in ("reduce", "p2p", "subgroup"):
        survivors.remove(1)
    for r in survivors:
        assert f"rank {r} ok done" in out, _show(done)
    if mode == "broadcast":
        for r in range(1, n):
            assert f"rank {r} ok got [7.0, 7.0, 7.0, 7.0]" in out
    elif mode == "reduce":
        assert f"rank 0 ok got {[float(n * (n + 1) // 2)] * 3}" in out
    elif mode == "p2p":
        assert "rank 0 ok got [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]" in out
        assert re.search(
            r"rank 0 ok fourth recv raised after [0-9.]+ s: recv on rank 0: rank 1 \(pid \d+ on "
            r"\S+\) left the job: it exited .* and nothing it sent to this rank is still on its "
            r"way",
            out,
        ), _show(done)
        # a receive from any rank fails only once every other rank has left; it names them all
        assert "rank 0 ok any-source recv raised: recv on rank 0: rank 1 (pid" in out
        if n == 3:
            assert re.search(r"any-source recv raised: .*; rank 2 \(pid \d+ on \S+\) left", out)
        assert "rank 0 ok irecv: success False, DistBackendError" in out
    else:
        for r in (0, 2):
            assert f"rank {r} ok subgroup [2.0, 2.0]" in out
            assert re.search(
                rf"rank {r} ok world raised: all_reduce on rank {r}: rank 1 \(pid \d+ on \S+\) "
                r"left the job: it called destroy_process_group\(\), before it joined this call",
                out,
            ), _show(done)
