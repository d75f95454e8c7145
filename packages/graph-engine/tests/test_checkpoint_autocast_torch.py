"""Note [The recomputation runs under the forward's autocast] (checkpoint.py): a function
checkpointed inside ``autocast("cpu", dtype=bfloat16)`` is recomputed in backward, outside
the block, in the forward's dtypes: the gradients are those of the same function without
checkpointing, and torch's.  (Before, the recomputation ran without autocast: a bfloat16
activation met a float32 weight and the backward raised or computed in float32.)"""

from __future__ import annotations

import gradstack_autograd  # noqa: F401  (the autograd layer)
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd.checkpoint import checkpoint

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
SHAPES = [(6, 8), (8, 16), (16, 16), (16, 3)]
ARRAYS = [RNG.standard_normal(s).astype(np.float32) for s in SHAPES]


def _block(L):
    def fn(h, w1, w2):  # bfloat16 h, float32 weights: autocast casts at each matmul
        return L.relu(h @ w1) @ w2

    return fn


def _run(L, cp, mode, backward_context):
    x, w0, w1, w2 = (L.tensor(a, requires_grad=True) for a in ARRAYS)
    with L.autocast("cpu", dtype=L.bfloat16):
        h = x @ w0
        if mode is None:
            out = _block(L)(h, w1, w2)
        else:
            out = cp(_block(L), h, w1, w2, use_reentrant=mode == "reentrant")
    loss = out.float().pow(2).sum()
    with backward_context(L):
        loss.backward()
    return out, [t.grad for t in (x, w0, w1, w2)]


CONTEXTS = {
    "plain": lambda L: L.autocast("cpu", enabled=False),
    # autocast on at backward with another dtype: the recomputation uses the forward's
    "float16_autocast": lambda L: L.autocast("cpu", dtype=L.float16),
}


@pytest.mark.parametrize("mode", ["reentrant", "non-reentrant"])
@pytest.mark.parametrize("backward_context", sorted(CONTEXTS))
def test_checkpoint_recomputes_under_the_forwards_autocast(mode, backward_context):
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    ctx = CONTEXTS[backward_context]
    out, grads = _run(gt, checkpoint, mode, ctx)
    _, plain = _run(gt, checkpoint, None, ctx)
    t_out, t_grads = _run(torch, torch_checkpoint, mode, ctx)
    assert out.dtype == gt.bfloat16
    np.testing.assert_array_equal(out.float().detach().numpy(), t_out.float().detach().numpy())
    for g, p, t in zip(grads, plain, t_grads):
        assert g.dtype == gt.float32
        np.testing.assert_array_equal(g.numpy(), p.numpy())  # as without checkpointing
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-2, atol=2e-2)
