"""``DistributedDataParallel.join()`` and ``Join``/``Joinable``/``JoinHook`` with uneven
inputs, against torch's DDP on gloo (the same runs, workers/join_cases.py).

Each case trains a float64 model on 2 and on 3 ranks, rank r holding a different number
of batches: divide_by_initial_world_size True and False, a rank with no batch at all,
BatchNorm's buffers (synced from the last rank still training), unused parameters, no_sync
accumulation, and throw_on_early_termination (torch's messages on every rank).  Every
rank's parameters and buffers after the ``with`` block must equal torch's (float64, within
1e-12; the differences measured are below 5e-16).
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gradstack_distributed.algorithms import Join, Joinable, JoinHook

WORKERS = Path(__file__).resolve().parent / "workers"
LAUNCH_TIMEOUT = 120  # seconds, as conftest's launches

CASES = [
    "divide_by_initial", "divide_by_remaining", "rank0_has_nothing", "buffers",
    "unused_parameters", "no_sync", "throw",
]  # fmt: skip
TOLERANCE = 1e-12


def _torch_run(out, n: int):
    """torch's runs (forked ranks on gloo); None when torch is not installed."""
    if importlib.util.find_spec("torch") is None:
        return None
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.setdefault("OMP_NUM_THREADS", "1")
    proc = subprocess.Popen(
        [sys.executable, str(WORKERS / "join_train_torch.py"), str(out), str(n)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = proc.communicate(timeout=LAUNCH_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(
            f"torch's run did not end within {LAUNCH_TIMEOUT} s\n{stderr}"
        ) from None
    assert proc.returncode == 0, f"torch's run failed\n{stdout[-3000:]}\n{stderr[-3000:]}"
    return True


class Results:
    def __init__(self, out, n, have_torch):
        self.n = n
        self.have_torch = have_torch
        self.ours = [np.load(out / f"gradstack_rank{r}.npz") for r in range(n)]
        self.our_errors = [
            json.loads((out / f"gradstack_rank{r}.json").read_text()) for r in range(n)
        ]
        if have_torch:
            self.torch = [np.load(out / f"torch_rank{r}.npz") for r in range(n)]
            self.torch_errors = [
                json.loads((out / f"torch_rank{r}.json").read_text()) for r in range(n)
            ]

    def keys(self, case):
        return sorted(k for k in self.ours[0].files if k.startswith(f"{case}/"))


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def results(request, tmp_path_factory, mpi_launch_ok):
    n = request.param
    out = tmp_path_factory.mktemp(f"join{n}")
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        ours = pool.submit(mpi_launch_ok, "join_train.py", n, out)
        theirs = pool.submit(_torch_run, out, n)
        ours.result()
        have_torch = theirs.result()
    return Results(out, n, have_torch)


@pytest.mark.parametrize("case", CASES)
def test_parameters_after_join_equal_torchs(results, case):
    pytest.importorskip("torch")  # the oracle (conftest.py: its absence fails unless meant)
    keys = results.keys(case)
    assert keys and set(keys) == {k for k in results.torch[0].files if k.startswith(f"{case}/")}
    for r in range(results.n):
        for k in keys:
            ours, theirs = results.ours[r][k], results.torch[r][k]
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, k
            np.testing.assert_allclose(
                ours, theirs, rtol=0, atol=TOLERANCE, err_msg=f"rank {r} {k}"
            )
        assert results.our_errors[r][case] == results.torch_errors[r][case]


@pytest.mark.parametrize("case", CASES)
def test_every_rank_ends_with_the_same_model_and_it_trained(results, case):
    if case == "throw":  # the ranks stop where they are (no final sync), as in torch
        return
    for k in results.keys(case):
        for r in range(1, results.n):
            np.testing.assert_array_equal(results.ours[r][k], results.ours[0][k], err_msg=k)
    # it trained: the parameters moved away from their initial values (numpy's draw); all
    # but a bias that BatchNorm follows, whose gradient is zero
    final = results.ours[0]
    moved = {
        k: np.abs(final[k] - final[k.replace("/param/", "/initial/")]).max() > 1e-3
        for k in results.keys(f"{case}/param")
    }
    assert all(v for k, v in moved.items() if k != "buffers/param/0.bias"), moved


def test_throw_on_early_termination_raises_torchs_errors(results):
    errors = [results.our_errors[r]["throw"] for r in range(results.n)]
    assert errors[0] == "Rank 0 exhausted all inputs."  # rank 0 has the fewest batches
    for r in range(1, results.n):
        assert errors[r] == (
            "Detected at least one rank that exhausted inputs. Throwing across all ranks."
        )
    for r in range(results.n):
        for case in CASES[:-1]:
            assert results.our_errors[r][case] is None


def test_a_custom_joinable_counts_every_input(results):
    # torch's tutorial Counter: rank r has 5 + r inputs; in each of its iterations it adds
    # the number of ranks still counting; the post-hook gives every rank the last joiner's
    n = results.n
    own = [
        float(sum(sum(1 for q in range(n) if 5 + q > i) for i in range(5 + r))) for r in range(n)
    ]
    assert [results.our_errors[r]["counter"] for r in range(n)] == own
    total = float(sum(5 + r for r in range(n)))
    assert own[-1] == total
    assert [results.our_errors[r]["counter_synced"] for r in range(n)] == [total] * n


def test_join_needs_a_joinable_and_one_process_group():
    with pytest.raises(ValueError, match="The join context manager requires at least one joinable"):
        Join([])

    class Fake(Joinable):
        def __init__(self, group):
            super().__init__()
            self.group = group

        def join_hook(self, **kwargs):
            return JoinHook()

        @property
        def join_device(self):
            return None

        @property
        def join_process_group(self):
            return self.group

    with pytest.raises(ValueError, match="Using join context manager with multiple process groups"):
        Join([Fake("a"), Fake("b")])
    with pytest.raises(TypeError, match="abstract"):
        Joinable()  # type: ignore[abstract]
    with pytest.raises(AssertionError, match="constructor calls the ``Joinable`` constructor"):
        Join.notify_join_context(object())  # type: ignore[arg-type]
