"""Pytrees with ``torch.utils._pytree``'s rules: how the ``func`` transforms see nested inputs.

A pytree is a nest of tuples, lists, dicts (also ``OrderedDict`` and ``defaultdict``),
``deque`` and namedtuples; everything else is a leaf (tensors, numbers, None, strings).
:func:`tree_flatten` gives the leaves in order and a :class:`TreeSpec` that
:func:`tree_unflatten` rebuilds the nest from.  Dicts keep their insertion order (torch
does not sort keys), and two specs are equal only if their types, keys and shapes are.
``vmap``'s ``in_dims``/``out_dims`` are *prefixes* of the arguments' trees: a leaf of the
prefix applies to the whole subtree below it (:func:`broadcast_to_and_flatten`).

The repr of a spec is torch's (``TreeSpec(tuple, None, [*, *])``), since it appears in the
errors the transforms raise.

Examples
--------
>>> leaves, spec = tree_flatten({"a": 1, "b": (2, [3, 4])})
>>> leaves
[1, 2, 3, 4]
>>> tree_unflatten([x * 10 for x in leaves], spec)
{'a': 10, 'b': (20, [30, 40])}
>>> broadcast_to_and_flatten((0, None), tree_flatten((1, {"x": 2, "y": 3}))[1])
[0, None, None]
>>> treespec_pprint(tree_flatten((1, [2, 3]))[1])
'(*, [*, *])'
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable
from typing import Any

__all__ = [
    "TreeSpec",
    "LeafSpec",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "broadcast_to_and_flatten",
    "treespec_pprint",
]


def _is_namedtuple_class(cls: type) -> bool:
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and callable(getattr(cls, "_make", None))
    )


# Note [Node kinds]
# Each kind is (flatten, unflatten): flatten(node) -> (children, context) and
# unflatten(children, context) -> node, as torch's SUPPORTED_NODES.  A namedtuple class is
# recognised by its fields (torch registers each class on first sight; the result is the
# same).  The spec stores the node's *type*; a namedtuple's context is its class, so two
# namedtuple classes with the same fields are different structures, as in torch.
_NODES: dict[type, tuple[Callable, Callable]] = {
    tuple: (lambda t: (list(t), None), lambda c, _: tuple(c)),
    list: (lambda t: (list(t), None), lambda c, _: list(c)),
    dict: (lambda t: (list(t.values()), list(t.keys())), lambda c, k: dict(zip(k, c))),
    OrderedDict: (
        lambda t: (list(t.values()), list(t.keys())),
        lambda c, k: OrderedDict(zip(k, c)),
    ),
    defaultdict: (
        lambda t: (list(t.values()), [t.default_factory, list(t.keys())]),
        lambda c, k: defaultdict(k[0], zip(k[1], c)),
    ),
    deque: (lambda t: (list(t), t.maxlen), lambda c, m: deque(c, maxlen=m)),
}
_NAMEDTUPLE = (lambda t: (list(t), type(t)), lambda c, cls: cls(*c))


def _node_kind(tree: Any):
    """``(node_type, (flatten, unflatten))`` of a pytree node, or None for a leaf."""
    cls = type(tree)
    kind = _NODES.get(cls)
    if kind is not None:
        return cls, kind
    if _is_namedtuple_class(cls):
        return "namedtuple", _NAMEDTUPLE
    return None


class TreeSpec:
    """The structure of a pytree: a node's type, its context (keys, a namedtuple's class)
    and one spec per child.  Equal specs describe the same structure."""

    __slots__ = ("type", "context", "children", "num_leaves")

    def __init__(self, type_, context, children):
        self.type = type_
        self.context = context
        self.children = list(children)
        self.num_leaves = sum(c.num_leaves for c in self.children)

    @property
    def num_children(self) -> int:
        return len(self.children)

    def is_leaf(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec) or other.is_leaf() != self.is_leaf():
            return False
        return (
            self.type == other.type
            and self.context == other.context
            and self.children == other.children
        )

    def __hash__(self):
        raise TypeError("TreeSpec is not hashable")

    def _type_name(self) -> str:
        if self.type == "namedtuple":
            return self.context.__name__
        return self.type.__name__

    def __repr__(self, indent: int = 0) -> str:
        # torch's layout: the first child after "[", the others on new lines
        name = "namedtuple" if self.type == "namedtuple" else self.type.__name__
        text = f"TreeSpec({name}, {self.context}, ["
        if self.children:
            indent += 2
            text += self.children[0].__repr__(indent)
            if len(self.children) > 1:
                text += ","
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return text + "])"


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    __slots__ = ()

    def __init__(self):
        self.type = None
        self.context = None
        self.children = []
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __eq__(self, other) -> bool:
        return isinstance(other, LeafSpec)

    __hash__ = TreeSpec.__hash__

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF = LeafSpec()


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """The leaves of ``tree`` (depth first, left to right) and its :class:`TreeSpec`.

    Examples
    --------
    >>> tree_flatten([1, (2, 3)])
    ([1, 2, 3], TreeSpec(list, None, [*,
      TreeSpec(tuple, None, [*,
        *])]))
    """
    if is_leaf is None and _node_kind(tree) is None:
        return [tree], _LEAF  # a single leaf (a tensor): the transforms' common case
    leaves: list = []

    def walk(node):
        if is_leaf is not None and is_leaf(node):
            leaves.append(node)
            return _LEAF
        kind = _node_kind(node)
        if kind is None:
            leaves.append(node)
            return _LEAF
        node_type, (flatten, _) = kind
        children, context = flatten(node)
        return TreeSpec(node_type, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, spec: TreeSpec):
    """Rebuild the pytree of structure ``spec`` from ``leaves``.

    Raises
    ------
    ValueError
        When the number of leaves is not the spec's.
    """
    leaves = list(leaves)
    if spec.is_leaf() and len(leaves) == 1:
        return leaves[0]
    if len(leaves) != spec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
            f"refers to a pytree that holds {spec.num_leaves} items ({spec})."
        )
    it = iter(leaves)

    def build(s: TreeSpec):
        if s.is_leaf():
            return next(it)
        children = [build(c) for c in s.children]
        if s.type == "namedtuple":
            return _NAMEDTUPLE[1](children, s.context)
        return _NODES[s.type][1](children, s.context)

    return build(spec)


def tree_leaves(tree: Any, is_leaf=None) -> list:
    """The leaves of ``tree``."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf=None) -> TreeSpec:
    """The :class:`TreeSpec` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def _flatten_up_to(spec: TreeSpec, tree: Any) -> list:
    """The subtrees of ``tree`` at the leaves of ``spec`` (ValueError if ``tree`` does not
    have ``spec``'s structure down to them)."""
    out: list = []

    def walk(s: TreeSpec, node):
        if s.is_leaf():
            out.append(node)
            return
        kind = _node_kind(node)
        if kind is None:
            raise ValueError(f"expected a {s._type_name()} node, got a leaf {type(node).__name__}")
        node_type, (flatten, _) = kind
        children, context = flatten(node)
        if node_type != s.type or len(children) != len(s.children):
            raise ValueError(f"node type mismatch: {s._type_name()} vs {type(node).__name__}")
        if node_type in (dict, OrderedDict) and context != s.context:
            if set(context) != set(s.context):
                raise ValueError("dict keys differ")
            # torch matches dict children by key
            by_key = dict(zip(context, children))
            children = [by_key[k] for k in s.context]
        elif context != s.context and node_type not in (dict, OrderedDict):
            raise ValueError("node context mismatch")
        for cs, child in zip(s.children, children):
            walk(cs, child)

    walk(spec, tree)
    return out


def tree_map(fn: Callable, tree: Any, *rests: Any, is_leaf=None) -> Any:
    """Apply ``fn`` to every leaf of ``tree`` (and the matching subtrees of ``rests``)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([fn(x, *xs) for x, *xs in zip(leaves, *others)], spec)


def broadcast_to_and_flatten(tree: Any, spec: TreeSpec) -> list | None:
    """Flatten the prefix tree ``tree`` to ``spec``'s leaves: each leaf of ``tree``
    repeated over the leaves of the subtree of ``spec`` below it; None when ``tree`` is not
    a prefix of ``spec``'s structure (torch's ``_broadcast_to_and_flatten``)."""
    full = tree_unflatten([0] * spec.num_leaves, spec)
    prefix_leaves, prefix_spec = tree_flatten(tree)
    try:
        subtrees = _flatten_up_to(prefix_spec, full)
    except ValueError:
        return None
    out: list = []
    for value, sub in zip(prefix_leaves, subtrees):
        out.extend([value] * tree_structure(sub).num_leaves)
    return out


class _Asterisk(str):
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


def treespec_pprint(spec: TreeSpec) -> str:
    """The structure as a nest with ``*`` for leaves (``(*, [*, *])``), as torch prints it."""
    return repr(tree_unflatten([_Asterisk("*")] * spec.num_leaves, spec))
