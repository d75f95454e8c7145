"""Issue 11's probes as tests: backward passes from several threads into one leaf lose no
update (Note [Accumulation into .grad is atomic] in _node.pyx), and a saved tensor that
joins a reference cycle is collected (Note [Saved intermediates are invisible ...])."""

from __future__ import annotations

import threading

import gradstack_autograd  # noqa: F401 - registers the autograd layer
import gradstack_tensor as gt
import numpy as np


def _run_threads(work, n=4):
    threads = [threading.Thread(target=work) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_threads_accumulating_into_one_large_leaf_lose_nothing():
    x = gt.zeros(2**16, requires_grad=True)  # large enough for the GIL-free kernel

    def work():
        for _ in range(100):
            (x * 1.0).sum().backward()

    _run_threads(work)
    g = x.grad.numpy()
    assert g.min() == g.max() == 400.0


def test_threads_running_backward_on_one_retained_graph_lose_nothing():
    x = gt.ones(100_000, dtype=gt.float64, requires_grad=True)
    y = (x * 2.0).sum()

    def work():
        for _ in range(25):
            y.backward(retain_graph=True)

    _run_threads(work)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(100_000, 200.0))


def test_a_saved_tensor_that_joins_a_cycle_is_collected():
    # issue 11: ``t = x * 2; y = t.sin(); t.me = t`` leaked t (untracked while saved) for
    # ever: +907 MB over 300 iterations of 1 MiB tensors
    import gc
    import weakref

    x = gt.zeros(2**10, requires_grad=True)
    for run_backward in (True, False):
        t = x * 2
        y = t.sin()
        t.me = t
        if run_backward:
            y.sum().backward()
        ref = weakref.ref(t)
        del t, y
        gc.collect()
        assert ref() is None, run_backward


def test_node_types_stay_out_of_the_cyclic_gc_across_modules():
    # Note [no_gc is declared in the .pxd]: OpNode, CopySlices and AsStridedBackward0 are
    # compiled in _op_node and _views, their base Node in _node; without no_gc in _node.pxd
    # they became GC types (their instances then carry a GC header until untracked)
    import gc

    from gradstack_autograd import _engine, _node, _op_node, _views

    have_gc = 1 << 14  # Py_TPFLAGS_HAVE_GC
    for cls in (
        _node.Node,
        _node.AccumulateGrad,
        _node.SavedTensor,
        _op_node.OpNode,
        _views.CopySlices,
        _views.AsStridedBackward0,
        _engine._OwnedGrad,
    ):
        assert not cls.__flags__ & have_gc, cls.__name__
    # and the nodes a graph is made of are invisible to the collector
    x = gt.ones(3, requires_grad=True)
    y = x * 2
    z = gt.ones(3, requires_grad=True) * 1
    z[0:2].mul_(y[0:2])  # an in-place op on a view: CopySlices on z, AsStridedBackward0
    for node in (y.grad_fn, y.grad_fn.next_functions[0][0], z.grad_fn):
        assert not gc.is_tracked(node), type(node).__name__
    assert type(z.grad_fn).__name__ == "CopySlices"
