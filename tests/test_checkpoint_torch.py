"""``gradstack.utils.checkpoint`` against torch 2.13's ``torch.utils.checkpoint``: the
gradients of a checkpointed block (both implementations) equal the uncheckpointed run's
and torch's, a dropout inside draws the same mask in the recomputation, the caller's
random stream goes on as torch's, gradcheck in float64, ``checkpoint_sequential``, the
warnings and errors, and the memory: the intermediates of the block are not kept.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import gradstack
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _program(L, reentrant, use_checkpoint=True):
    L.manual_seed(0)
    block = L.nn.Sequential(
        L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Dropout(0.3), L.nn.Linear(8, 8), L.nn.GELU()
    )
    head = L.nn.Linear(8, 1)
    x = L.randn(5, 4, requires_grad=True)
    if use_checkpoint:
        h = L.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant)
    else:
        h = block(x)
    loss = head(h).pow(2).mean()
    loss.backward()
    after = L.rand(3)  # the caller's random stream goes on after the recomputation
    return [
        loss.item(),
        x.grad.numpy().copy(),
        block[0].weight.grad.numpy().copy(),
        block[3].bias.grad.numpy().copy(),
        after.numpy().copy(),
    ]


@pytest.mark.parametrize("reentrant", [True, False])
def test_gradients_with_dropout_equal_the_plain_run_and_torch(reentrant):
    ours = _program(gradstack, reentrant)
    plain = _program(gradstack, reentrant, use_checkpoint=False)
    theirs = _program(torch, reentrant)
    for a, b, c in zip(ours, plain, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))  # the same mask, bit for bit
        np.testing.assert_allclose(np.asarray(a), np.asarray(c), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("reentrant", [True, False])
def test_without_preserve_rng_state_the_recomputation_draws_anew(reentrant):
    def run(L):
        L.manual_seed(3)
        x = L.ones(200, requires_grad=True)
        y = L.utils.checkpoint.checkpoint(
            lambda t: L.nn.functional.dropout(t, 0.5),
            x,
            use_reentrant=reentrant,
            preserve_rng_state=False,
        )
        mask = (y != 0).numpy().copy()
        y.sum().backward()
        return mask, (x.grad != 0).numpy().copy()

    for lib in (gradstack, torch):
        mask, used = run(lib)
        assert not np.array_equal(mask, used)  # backward used another draw's mask
    ours, theirs = run(gradstack), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("reentrant", [True, False])
def test_gradcheck_float64(reentrant):
    w = gradstack.tensor(np.linspace(-1, 1, 6).reshape(3, 2), requires_grad=True)

    def f(x, scale):
        return ((x @ w).tanh() * scale).exp(), x.sin()

    x = gradstack.tensor(np.linspace(0.1, 0.9, 12).reshape(4, 3), requires_grad=True)
    assert gradstack.autograd.gradcheck(
        lambda t: gradstack.utils.checkpoint.checkpoint(f, t, 0.5, use_reentrant=reentrant),
        (x,),
    )
    assert gradstack.autograd.gradcheck(
        lambda t, ww: gradstack.utils.checkpoint.checkpoint(
            lambda a, b: (a @ b).sigmoid(), t, ww, use_reentrant=reentrant
        ),
        (x, w),
    )


def test_non_reentrant_with_autograd_grad_keywords_and_retain_graph():
    def run(L):
        x = L.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
        y = L.utils.checkpoint.checkpoint(
            lambda a, *, p: (a.exp() * a).pow(p).sum(), x, use_reentrant=False, p=2
        )
        (g1,) = L.autograd.grad(y, x, retain_graph=True)
        (g2,) = L.autograd.grad(y, x)  # a second backward recomputes again
        return g1.numpy(), g2.numpy()

    ours, theirs = run(gradstack), run(torch)
    np.testing.assert_array_equal(ours[0], ours[1])
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_equals_torch(reentrant, segments):
    def run(L):
        L.manual_seed(1)
        model = L.nn.Sequential(
            L.nn.Linear(3, 6),
            L.nn.ReLU(),
            L.nn.Dropout(0.2),
            L.nn.Linear(6, 6),
            L.nn.Tanh(),
            L.nn.Linear(6, 2),
        )
        x = L.randn(4, 3, requires_grad=True)
        out = L.utils.checkpoint.checkpoint_sequential(model, segments, x, use_reentrant=reentrant)
        out.square().sum().backward()
        return [out.detach().numpy(), x.grad.numpy(), model[0].weight.grad.numpy()]

    for a, b in zip(run(gradstack), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_warnings_and_errors_are_torch_s():
    def messages(L):
        out = []
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2, requires_grad=True))
            L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2), use_reentrant=True)
        out += [str(w.message) for w in seen]
        for call in (
            lambda: L.utils.checkpoint.checkpoint(
                lambda t: t, L.ones(1), use_reentrant=True, foo=1
            ),
            lambda: L.utils.checkpoint.checkpoint(
                lambda t: t, L.ones(1), use_reentrant=True, debug=True
            ),
        ):
            with pytest.raises(ValueError) as info:
                call()
            out.append(str(info.value))
        return out

    assert messages(gradstack) == messages(torch)


@pytest.mark.parametrize("reentrant", [True, False])
def test_the_block_s_intermediates_are_not_kept(reentrant):
    """Memory: after the forward, the tensors made inside the checkpointed block are freed
    (nothing holds them), where the plain run keeps the ones backward reads."""

    def run(use_checkpoint):
        gradstack.manual_seed(0)
        refs = []
        w = gradstack.randn(64, 64, requires_grad=True)

        def block(x):
            for _ in range(6):
                x = (x @ w).tanh()
                refs.append(weakref.ref(x))
            return x

        x = gradstack.randn(32, 64, requires_grad=True)
        if use_checkpoint:
            out = gradstack.utils.checkpoint.checkpoint(block, x, use_reentrant=reentrant)
        else:
            out = block(x)
        gc.collect()
        alive = sum(r() is not None for r in refs[:-1])  # (the last one is the output)
        out.sum().backward()
        return alive, w.grad.numpy().copy()

    kept_plain, g_plain = run(False)
    kept_ckpt, g_ckpt = run(True)
    assert kept_plain == 5 and kept_ckpt == 0
    np.testing.assert_allclose(g_ckpt, g_plain, rtol=1e-5, atol=1e-6)


def test_saved_bytes_fall():
    """The bytes of the tensors that the graph holds after the forward, counted with the
    saved-tensor hooks: the checkpointed block holds none of its intermediates."""

    def saved_bytes(use_checkpoint):
        total = []

        def pack(t):
            total.append(t.numel() * t.element_size())
            return t

        w = gradstack.randn(128, 128, requires_grad=True)
        x = gradstack.randn(64, 128, requires_grad=True)

        def block(t):
            for _ in range(4):
                t = (t @ w).relu()
            return t

        with gradstack.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            if use_checkpoint:
                out = gradstack.utils.checkpoint.checkpoint(block, x, use_reentrant=True)
            else:
                out = block(x)
        out.sum().backward()
        return sum(total)

    plain, ckpt = saved_bytes(False), saved_bytes(True)
    # plain: each matmul saves its input and w, each relu its result; checkpointed
    # (reentrant): only the Function's input
    assert plain >= 8 * 64 * 128 * 4 and ckpt == 64 * 128 * 4
