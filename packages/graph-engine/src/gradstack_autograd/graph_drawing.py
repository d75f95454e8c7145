"""Pictures of backward graphs: :func:`make_dot` (torchviz's call, for gradstack tensors).

``make_dot(y)`` walks ``y.grad_fn`` and its ``next_functions`` and returns a
``graphviz.Digraph``: one box per node with torch's class names (``MulBackward0``,
``AccumulateGrad`` ...), an edge from each node to the node that feeds it gradient-wise
(drawn in the forward direction, inputs above outputs, as torchviz draws it), the leaves
with their shapes and the names given in ``params``, the outputs in green and, on request,
what each node saved for backward.  ``render_dot`` writes it as SVG or PNG with Graphviz's
``dot`` program.

It needs the Python package ``graphviz`` (``pip install "gradstack-graph-engine[graphviz]"``)
to build the picture, and Graphviz's ``dot`` program (Debian: ``apt-get install graphviz``)
to render it; each raises a clear error saying how to install it when it is missing.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_autograd.graph_drawing import make_dot
>>> w = gt.ones(3, requires_grad=True)
>>> x = gt.tensor([1.0, 2.0, 3.0])
>>> loss = (w * x).sin().sum()
>>> dot = make_dot(loss, params={"w": w})
>>> "SinBackward0" in dot.source and "w\\n (3)" in dot.source
True
>>> render_dot(dot, "graph.svg")  # doctest: +SKIP
PosixPath('graph.svg')
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gradstack_tensor as gt

from ._node import AccumulateGrad, Node

__all__ = ["make_dot", "render_dot", "dot_available", "GraphvizMissingError"]

_INSTALL_PY = 'pip install "gradstack-graph-engine[graphviz]"  (or: pip install graphviz)'
_INSTALL_DOT = (
    "apt-get install graphviz  (Debian/Ubuntu; macOS: brew install graphviz; "
    "other systems: https://graphviz.org/download/)"
)

# torchviz's colours, so that the pictures read the same
_OUTPUT_COLOUR = "darkolivegreen1"
_LEAF_COLOUR = "lightblue"
_SAVED_COLOUR = "orange"


class GraphvizMissingError(RuntimeError):
    """Graphviz (the Python package or the ``dot`` program) is not installed."""


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on ``PATH`` (needed by :func:`render_dot`)."""
    return shutil.which("dot") is not None


def _graphviz():
    try:
        import graphviz  # type: ignore[import-untyped]
    except ImportError as exc:
        raise GraphvizMissingError(
            f"drawing a graph needs the Python package `graphviz`: {_INSTALL_PY}"
        ) from exc
    return graphviz


def _shape(t) -> str:
    return "(" + ", ".join(str(int(n)) for n in t.shape) + ")"


def _saved_name(node: Node, index: int) -> str:
    """The name of the ``index``-th saved value: its argument's name in the op's table
    entry (``self``, ``other``, ``dim`` ... and ``result``), as torch's ``_saved_*``."""
    slots = getattr(getattr(node, "entry", None), "slots", None) or {}
    for name, i in slots.items():
        if i == index:
            return name
    return f"saved{index}"


def _saved_values(node: Node) -> list[tuple[str, Any]]:
    saved = getattr(node, "saved", None) or ()
    values = []
    for i in range(len(saved)):
        try:
            value = node.saved_value(i)
        except RuntimeError:  # freed by a backward without retain_graph
            value = "<freed>"
        values.append((_saved_name(node, i), value))
    return values


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def make_dot(
    var,
    params: Mapping[str, Any] | None = None,
    show_attrs: bool = False,
    show_saved: bool = False,
    max_attr_chars: int = 50,
):
    """A ``graphviz.Digraph`` of the backward graph that produced ``var``.

    Parameters
    ----------
    var : Tensor or sequence of Tensors
        The output(s) whose ``grad_fn`` graph to draw (drawn in green).
    params : mapping of str to Tensor, optional
        Names for leaf tensors, e.g. ``dict(model.named_parameters())``; leaves not named
        here are drawn with their shape only.
    show_attrs : bool
        Add each node's saved non-tensor values (``alpha`` ...) to its box.
    show_saved : bool
        Draw the tensors each node saved for backward (orange), linked to the node.
    max_attr_chars : int
        Longer attribute texts are cut to this many characters.

    Returns
    -------
    graphviz.Digraph
        ``.source`` is the DOT text; :func:`render_dot` (or the Digraph's own ``render``)
        turns it into SVG or PNG.

    Raises
    ------
    GraphvizMissingError
        When the Python package ``graphviz`` is not installed.
    TypeError
        When ``var`` is not a tensor (or a sequence of tensors), or ``params`` holds a
        value that is not a tensor.
    """
    graphviz = _graphviz()
    outputs = tuple(var) if isinstance(var, list | tuple) else (var,)
    for out in outputs:
        if not isinstance(out, gt.Tensor):
            raise TypeError(
                f"make_dot: expected a Tensor (or a sequence of them), got {type(out).__name__}"
            )
    params = dict(params or {})
    for name, p in params.items():
        if not isinstance(p, gt.Tensor):
            raise TypeError(f"make_dot: params[{name!r}] is a {type(p).__name__}, not a Tensor")
    names = {id(p): name for name, p in params.items()}

    dot = graphviz.Digraph(
        node_attr={
            "style": "filled",
            "shape": "box",
            "align": "left",
            "fontsize": "10",
            "ranksep": "0.1",
            "height": "0.2",
            "fontname": "monospace",
        },
        graph_attr={"size": "12,12"},
    )

    def leaf_label(t, name: str | None = None) -> str:
        name = names.get(id(t), "") if name is None else name
        return f"{name}\n {_shape(t)}" if name else _shape(t)

    def node_label(node: Node) -> str:
        label = node.name()
        if not show_attrs:
            return label
        attrs = [
            f"{name}: {_truncate(str(value), max_attr_chars)}"
            for name, value in _saved_values(node)
            if not isinstance(value, gt.Tensor)
        ]
        return label + ("\n" + "\n".join(attrs) if attrs else "")

    seen: set[int] = set()
    stack: list[Node] = []
    for out in outputs:
        dot.node(str(id(out)), leaf_label(out, names.get(id(out), "")), fillcolor=_OUTPUT_COLOUR)
        if out.grad_fn is not None:
            dot.edge(str(id(out.grad_fn)), str(id(out)))
            stack.append(out.grad_fn)

    # an explicit stack, not recursion: graphs of 100,000 nodes are legal
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaf = node.variable
            dot.node(str(id(leaf)), leaf_label(leaf), fillcolor=_LEAF_COLOUR)
            dot.node(str(id(node)), node_label(node))
            dot.edge(str(id(leaf)), str(id(node)))
        else:
            dot.node(str(id(node)), node_label(node))
        if show_saved:
            for name, value in _saved_values(node):
                if isinstance(value, gt.Tensor):
                    key = f"{id(node)}-saved-{name}"
                    dot.node(key, f"{name}\n {_shape(value)}", fillcolor=_SAVED_COLOUR)
                    dot.edge(key, str(id(node)), dir="none")
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            dot.edge(str(id(nxt)), str(id(node)))
            stack.append(nxt)
    return dot


def render_dot(dot, path: str | Path, format: str | None = None) -> Path:
    """Render ``dot`` (from :func:`make_dot`) to ``path`` with Graphviz's ``dot`` program.

    ``format`` defaults to the file's suffix (``"svg"``, ``"png"``, ``"pdf"`` ...).  Returns
    the written path.  Raises :class:`GraphvizMissingError` saying how to install Graphviz
    when ``dot`` is not on ``PATH``.
    """
    path = Path(path)
    fmt = format or path.suffix.lstrip(".") or "svg"
    if not dot_available():
        raise GraphvizMissingError(
            f"rendering a graph picture needs Graphviz's `dot` program, which is not on PATH: "
            f"{_INSTALL_DOT}.  The DOT text is in `.source` meanwhile."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dot.pipe(format=fmt))
    return path
