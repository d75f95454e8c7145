"""The interface of graph-engine for the layers built on it (functional API, profiler ...).

``gradstack_autograd``'s public API (``backward``, ``grad``, grad modes ...) is for users;
this module is for the packages of the stack above graph-engine and for tools that watch
or drive the engine.  It is public and versioned with graph-engine: what is here stays,
what is in the private modules of the core (``_node``, ``_layer``, ``_engine`` ...) may
move.

Graph edges
    :func:`edge_of` says where the gradient of a tensor goes (its ``grad_fn`` and output
    number, or its leaf's accumulator).
The engine
    :func:`run_backward` runs a backward pass (what ``backward`` and ``grad`` call);
    :func:`unbatchable_reason` says whether a batched pass (one pass for a batch of
    vectors, Note [Batched backward]) can run.
Observing
    :func:`set_node_observer` and :func:`node_observer`: an object told when each backward
    node runs (the profiler); :func:`current_sequence_nr` and :func:`new_sequence_nr`:
    the creation order of nodes, which links a backward node to its forward op.

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_autograd  # registers the autograd layer
>>> from gradstack_autograd import extension
>>> x = gt.tensor([1., 2.], requires_grad=True)
>>> y = x * 3
>>> node, nr = extension.edge_of(y)[:2]
>>> node.name(), nr
('MulBackward0', 0)
>>> before = extension.current_sequence_nr()
>>> z = y + 1
>>> z.grad_fn._sequence_nr == before + 1
True
"""

from __future__ import annotations

from . import _engine, _layer, _node

__all__ = [
    "current_sequence_nr",
    "edge_of",
    "new_sequence_nr",
    "node_observer",
    "run_backward",
    "set_node_observer",
    "unbatchable_reason",
]


def edge_of(x):
    """The edge of ``x``: ``(node, input_nr, shape, dtype_num)`` where its gradient goes
    (``x.grad_fn``, or the accumulator of a leaf that requires grad), or ``(None, 0, ...)``
    when ``x`` needs no gradient (or is not a tensor)."""
    return _layer.edge_of(x)


def run_backward(
    roots,
    grad_roots,
    keep_graph,
    create_graph,
    inputs=None,
    accumulate=True,
    allow_unused=False,
    batch_size=-1,
):
    """Run a backward pass from ``roots`` (tensors) seeded with ``grad_roots``.

    With ``accumulate`` the leaves' ``.grad`` are updated (only ``inputs``' when given);
    without it, the gradients reaching ``inputs`` are returned, in order.
    ``batch_size >= 0`` runs one pass for a batch: every gradient has a leading dim of that
    size (check :func:`unbatchable_reason` first).  ``keep_graph`` is ``retain_graph``.
    """
    return _engine.run_backward(
        tuple(roots),
        tuple(grad_roots),
        keep_graph,
        create_graph,
        None if inputs is None else tuple(inputs),
        accumulate,
        allow_unused,
        batch_size,
    )


def unbatchable_reason(roots, inputs):
    """Why a batched backward pass from ``roots`` to ``inputs`` cannot run (a str), or
    None when it can."""
    return _engine.unbatchable_reason(tuple(roots), tuple(inputs))


def set_node_observer(observer):
    """Install (or remove, with None) the object told when each backward node runs:
    ``observer.begin(node)`` returns a token, ``observer.end(token)`` follows the node."""
    _engine.set_node_observer(observer)


def node_observer():
    """The installed node observer, or None."""
    return _engine._node_observer


def current_sequence_nr():
    """The sequence number of the newest node (the next node gets one more)."""
    return _node.current_sequence_nr()


def new_sequence_nr():
    """Take a new sequence number (for nodes made outside the autograd layer)."""
    return _node.new_sequence_nr()
