"""``nn.SyncBatchNorm`` in one process against torch 2.13 (where both are the batch norm):
repr, state dict, outputs, gradients and running statistics in training and evaluation,
any number of dims, ``convert_sync_batchnorm`` (which modules, shared parameters and
buffers, the training flag), and the errors.  The synchronisation across ranks is tested
in packages/distributed/tests/test_sync_batchnorm.py."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("kw", [{}, {"momentum": None}, {"affine": False},
                                {"track_running_stats": False}, {"bias": False}])  # fmt: skip
def test_training_and_eval_as_torch(shape, kw):
    x = RNG.standard_normal(shape) * 2 + 1
    w = RNG.standard_normal(shape)
    results = []
    for L in (gs, torch):
        L.manual_seed(0)
        bn = L.nn.SyncBatchNorm(shape[1], **kw).double()
        xs = L.tensor(x, requires_grad=True)
        for _ in range(2):
            out = bn(xs)
        (out * L.tensor(w)).sum().backward()
        bn.eval()
        evaluated = bn(L.tensor(x)).detach().numpy()
        state = {k: v.numpy() for k, v in bn.state_dict().items()}
        grads = [p.grad.numpy() for p in bn.parameters()]
        results.append((repr(bn), out.detach().numpy(), xs.grad.numpy(), grads, evaluated,
                        state))  # fmt: skip
    (r0, o0, g0, p0, e0, s0), (r1, o1, g1, p1, e1, s1) = results
    assert r0 == r1
    np.testing.assert_allclose(o0, o1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g0, g1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(e0, e1, rtol=1e-12, atol=1e-12)
    for a, b in zip(p0, p1):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert sorted(s0) == sorted(s1)
    for k in s0:
        np.testing.assert_allclose(s0[k], s1[k], rtol=1e-12)


def _model(L):
    nn = L.nn
    return nn.Sequential(
        nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3, momentum=0.3),
        nn.Sequential(nn.Flatten(), nn.BatchNorm1d(3 * 4, affine=False)),
        nn.Identity(),
    )  # fmt: skip


def test_convert_sync_batchnorm_as_torch():
    summaries = []
    for L in (gs, torch):
        model = _model(L)
        model[2].eval()
        bn = model[1]
        converted = L.nn.SyncBatchNorm.convert_sync_batchnorm(model, process_group=None)
        assert converted is model
        new = converted[1]
        assert isinstance(new, L.nn.SyncBatchNorm) and new is not bn
        assert new.weight is bn.weight and new.running_mean is bn.running_mean
        assert new.num_batches_tracked is bn.num_batches_tracked
        summaries.append([(type(m).__name__, m.training, repr(m)) for m in converted.modules()])
    assert summaries[0] == summaries[1]


def test_convert_a_batch_norm_itself_as_torch():
    for L in (gs, torch):
        bn = L.nn.BatchNorm3d(4, eps=1e-3, bias=False)
        sync = L.nn.SyncBatchNorm.convert_sync_batchnorm(bn)
        assert type(sync) is L.nn.SyncBatchNorm and sync.bias is None
        assert repr(sync) == repr(L.nn.SyncBatchNorm(4, eps=1e-3, bias=False))
        assert L.nn.SyncBatchNorm.convert_sync_batchnorm(L.nn.Linear(2, 2)).__class__ is L.nn.Linear


@pytest.mark.parametrize("shape", [(3,), (2, 0, 3), (1, 3)])
def test_errors_as_torch(shape):
    errors = []
    for L in (gs, torch):
        with pytest.raises(ValueError) as info:
            L.nn.SyncBatchNorm(3)(L.zeros(*shape))
        errors.append(str(info.value).replace("gradstack", "torch"))
    assert errors[0] == errors[1]


def test_with_distributed_imported_but_not_initialised():
    import gradstack.distributed as dist

    assert not dist.is_initialized()
    bn = gs.nn.SyncBatchNorm(2)
    out = bn(gs.tensor([[1.0, 10.0], [3.0, 30.0]]))
    assert out.grad_fn.name() == "NativeBatchNormBackward0"
