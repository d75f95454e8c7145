"""Pictures of backward graphs (gradstack_autograd.graph_drawing): what ``make_dot`` draws is
the graph ``grad_fn.next_functions`` describes, and Graphviz renders it.

The rendering tests need the Python package ``graphviz`` and Graphviz's ``dot`` program:
the test environment installs both (``hatch run test`` runs tools/system_deps.py, which
apt-gets Debian's graphviz as root).  Without them they fail, saying how to install them.
"""

from __future__ import annotations

import json
import shutil

import gradstack_autograd as ag
import gradstack_tensor as gt
import graphviz  # noqa: F401 - the `graphviz` extra of this package: a test dependency
import numpy as np
import pytest
from gradstack_autograd.graph_drawing import (
    GraphvizMissingError,
    dot_available,
    make_dot,
    render_dot,
)


def walk(roots):
    """Every node reachable from ``roots`` and every edge (input node -> node), by
    ``next_functions``: the truth the picture is checked against."""
    nodes, edges, stack = {}, set(), list(roots)
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            continue
        nodes[id(node)] = node
        for nxt, _ in node.next_functions:
            if nxt is not None:
                edges.add((id(nxt), id(node)))
                stack.append(nxt)
    return nodes, edges


def rendered(dot):
    """Nodes (id -> label) and edges (tail id, head id) of the picture Graphviz laid out."""
    layout = json.loads(dot.pipe(format="json"))
    objects = layout.get("objects", [])
    by_gvid = {o["_gvid"]: o["name"] for o in objects}
    labels = {o["name"]: o.get("label", "") for o in objects}
    edges = {(by_gvid[e["tail"]], by_gvid[e["head"]]) for e in layout.get("edges", [])}
    return labels, edges


def small_graph():
    gt.manual_seed(0)
    w = gt.randn(3, 4, requires_grad=True)
    b = gt.randn(4, requires_grad=True)
    x = gt.randn(2, 3)
    y = (x.matmul(w) + b).sin() * 2.0
    loss = y.sum()
    return loss, {"weight": w, "bias": b}


def needs_dot():
    if not dot_available():
        pytest.fail(
            "Graphviz's `dot` is not installed: `python tools/system_deps.py` (as root) or "
            "`apt-get install graphviz`"
        )


def test_nodes_and_edges_match_next_functions():
    needs_dot()
    loss, params = small_graph()
    dot = make_dot(loss, params=params)
    labels, edges = rendered(dot)
    nodes, graph_edges = walk([loss.grad_fn])

    # every node of the graph is drawn with torch's class name
    for key, node in nodes.items():
        assert labels[str(key)] == node.name()
    assert {"SumBackward0", "MulBackward0", "SinBackward0", "AddBackward0"} <= {
        n.name() for n in nodes.values()
    }
    # every edge of next_functions is drawn, in the forward direction (input -> user)
    assert {(str(a), str(b)) for a, b in graph_edges} <= edges
    # the leaves: named, with their shapes, each feeding its AccumulateGrad node
    leaf_edges = edges - {(str(a), str(b)) for a, b in graph_edges}
    for name, t in params.items():
        label = labels[str(id(t))]
        assert label.split("\n")[0] == name
        assert label.split("\n")[1].strip() == "(" + ", ".join(map(str, t.shape)) + ")"
        acc = [n for n in nodes.values() if isinstance(n, ag.AccumulateGrad) and n.variable is t]
        assert len(acc) == 1 and (str(id(t)), str(id(acc[0]))) in leaf_edges
    # the output, with an edge from its grad_fn
    assert (str(id(loss.grad_fn)), str(id(loss))) in leaf_edges
    # and nothing else: one node per graph node, leaf and output
    assert len(labels) == len(nodes) + len(params) + 1


def test_counts_on_a_chain():
    needs_dot()
    a = gt.ones(5, requires_grad=True)
    z = a
    for _ in range(10):
        z = z * 1.5 + 1.0
    labels, edges = rendered(make_dot(z))
    names = sorted(labels.values())
    assert names.count("MulBackward0") == 10 and names.count("AddBackward0") == 10
    assert names.count("AccumulateGrad") == 1
    # 20 ops in a chain + the accumulator: 20 edges between nodes, leaf -> acc, op -> output
    assert len(edges) == 22


def test_saved_tensors_and_attrs():
    a = gt.tensor([1.0, 2.0], requires_grad=True)
    b = gt.tensor([3.0, 4.0], requires_grad=True)
    c = a * b
    dot = make_dot(c, params={"a": a, "b": b}, show_saved=True)
    # MulBackward0 saved both operands: drawn as `self` and `other` with their shapes
    assert 'label="self\n (2)"' in dot.source and 'label="other\n (2)"' in dot.source
    plain = make_dot(c, params={"a": a, "b": b})
    assert "self\n" not in plain.source

    d = gt.add(a, b, alpha=2.5)
    with_attrs = make_dot(d, show_attrs=True).source
    assert "AddBackward0" in with_attrs and "2.5" in with_attrs


def test_several_outputs_share_nodes():
    x = gt.ones(2, requires_grad=True)
    h = x.exp()
    u, v = h.sin(), h.cos()
    dot = make_dot((u, v), params={"x": x})
    assert dot.source.count("ExpBackward0") == 1
    assert dot.source.count("darkolivegreen1") == 2


def test_render_svg_and_png(tmp_path):
    needs_dot()
    loss, params = small_graph()
    dot = make_dot(loss, params=params, show_saved=True)
    svg = render_dot(dot, tmp_path / "graph.svg")
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "SinBackward0" in text
    png = render_dot(dot, tmp_path / "graph.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_clear_error_without_dot(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    assert not dot_available()
    loss, _ = small_graph()
    with pytest.raises(GraphvizMissingError, match="apt-get install graphviz"):
        render_dot(make_dot(loss), tmp_path / "graph.svg")


def test_bad_arguments():
    with pytest.raises(TypeError, match="expected a Tensor"):
        make_dot(np.ones(3))
    x = gt.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match=r"params\['w'\] is a list"):
        make_dot(x * 2, params={"w": [1, 2]})


def test_graph_after_backward_says_freed():
    a = gt.ones(3, requires_grad=True)
    y = (a * a).sum()
    y.backward()
    dot = make_dot(y, show_attrs=True, show_saved=True)
    # drawing a used graph still works; its saved tensors are gone and the picture says so
    assert "MulBackward0" in dot.source and "self: <freed>" in dot.source
    assert "orange" not in dot.source
