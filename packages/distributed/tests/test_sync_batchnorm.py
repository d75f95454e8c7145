"""nn-mini's ``SyncBatchNorm`` synchronised by this package on 2 and 3 ranks: each rank's
output slice, input gradient and running statistics equal those of one process's
BatchNorm on the whole batch, and the ranks' weight and bias gradients sum to its
(Note [The statistics of the whole batch]).  The worker is workers/sync_batchnorm.py."""

from __future__ import annotations

import numpy as np
import pytest

CASES = [f"{c}/{m}" for c in ("2d", "4d", "3d") for m in ("0.1", "None")]


@pytest.fixture(scope="module", params=[2, 3], ids=["2ranks", "3ranks"])
def ranks(request, tmp_path_factory, mpi_launch_ok):
    out = tmp_path_factory.mktemp(f"syncbn{request.param}")
    mpi_launch_ok("sync_batchnorm.py", request.param, out)
    return [np.load(out / f"rank{r}.npz") for r in range(request.param)]


@pytest.mark.parametrize("case", CASES)
def test_whole_batch_statistics_and_gradients(ranks, case):
    ref = ranks[0]
    out = np.concatenate([r[f"{case}/out"] for r in ranks])
    grad = np.concatenate([r[f"{case}/grad"] for r in ranks])
    np.testing.assert_allclose(out, ref[f"{case}/ref_out"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, ref[f"{case}/ref_grad"], rtol=1e-10, atol=1e-12)
    for name in ("weight_grad", "bias_grad"):
        total = sum(r[f"{case}/{name}"] for r in ranks)
        np.testing.assert_allclose(total, ref[f"{case}/ref_{name}"], rtol=1e-10, atol=1e-12)
    for r in ranks:
        for name in ("running_mean", "running_var"):
            np.testing.assert_allclose(r[f"{case}/{name}"], ref[f"{case}/ref_{name}"],
                                       rtol=1e-12, atol=1e-14)  # fmt: skip
