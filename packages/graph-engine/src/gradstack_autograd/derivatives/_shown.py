"""How torch shows a node's saved values that are not tensors (``grad_fn._saved_<name>``).

Note [Saved values as torch shows them]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An entry saves the arguments its formula reads, as the op received them (Note [Saved
values by name] in ``_op_node.pyx``).  torch's nodes store some of them in another form,
and show that form: a dim is an ``int64_t`` read back as ``uint64`` (``-1`` shows as
18446744073709551615), a reduction's dims are an ``IntArrayRef`` (``sum(x, 1)`` shows
``(1,)``), a loss's reduction is its enum (``'mean'`` is 1), ``ignore_index`` is a
``uint64`` too, ``norm``'s default order ``'fro'`` is the vector norm's ``2``, ``narrow``
is a slice (``start``, ``end``, ``step``, the start wrapped), and the overload that
reduces over everything (``SumBackward0``, ``MeanBackward0``) saves no dim or keepdim.
A ``Shown`` rewrites the dict of saved values into torch's: the formula keeps reading the
values as saved, only what users read changes.  ``names`` lists the names it may add, so
that the node class gets their properties.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import gradstack_tensor as gt

__all__ = [
    "Shown",
    "uint_dims",
    "dim_list",
    "whole_or_dim_list",
    "loss_enums",
    "nll_enums",
    "TotalWeight",
    "vector_norm",
    "narrow_as_slice",
    "split_sizes",
    "squeeze_dims",
    "whole_or_dim",
    "selection",
    "compose",
]

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


@dataclass(frozen=True)
class Shown:
    """``fn(values) -> values`` (``values``: saved name -> value, tensors as a marker)
    and the names ``fn`` may add."""

    fn: Callable[[dict], dict]
    names: tuple[str, ...] = ()


def _uint(d):
    """An int dim as torch shows it (int64 through uint64)."""
    if isinstance(d, int) and not isinstance(d, bool) and d < 0:
        return d + 2**64
    return d


def uint_dims(*names: str) -> Shown:
    """Int dims ``names`` shown as torch's uint64 (``softmax(x, -1)``'s ``_saved_dim``).

    >>> uint_dims("dim").fn({"dim": -1})
    {'dim': 18446744073709551615}
    """

    def fn(values):
        for n in names:
            if n in values:
                values[n] = _uint(values[n])
        return values

    return Shown(fn)


def _dim_list(values):
    d = values.get("dim")
    if d is not None:
        values["dim"] = tuple(_uint(x) for x in (d if isinstance(d, (tuple, list)) else (d,)))
    return values


dim_list = Shown(_dim_list)
"""A reduction's ``dim`` as torch's tuple (None, all dims, stays None).

>>> dim_list.fn({"dim": 1, "keepdim": False})
{'dim': (1,), 'keepdim': False}
"""


def whole_or_dim_list(numel: bool = False) -> Shown:
    """sum/mean: over everything (no dim) torch's ``...Backward0`` saves neither dim nor
    keepdim; with dims (``()`` included: ``SumBackward1``), a tuple.  ``numel``: mean's
    ``self_sym_numel`` too.

    >>> whole_or_dim_list().fn({"dim": None, "keepdim": False, "self_sym_sizes": (2,)})
    {'self_sym_sizes': (2,)}
    """

    def fn(values):
        _dim_list(_whole_or_dim(values))
        if numel and "self_sym_sizes" in values:
            values["self_sym_numel"] = math.prod(values["self_sym_sizes"])
        return values

    return Shown(fn, ("self_sym_numel",) if numel else ())


def _loss_enums(values):
    if values.get("reduction") in _REDUCTION:
        values["reduction"] = _REDUCTION[values["reduction"]]
    if "ignore_index" in values:
        values["ignore_index"] = _uint(values["ignore_index"])
    return values


loss_enums = Shown(_loss_enums)
"""A loss's ``reduction`` as torch's enum, its ``ignore_index`` as uint64.

>>> loss_enums.fn({"reduction": "sum"})
{'reduction': 2}
"""


def _nll_enums(values):
    _loss_enums(values)
    total = values.get("__extra__")  # (the entry's extra: a TotalWeight)
    if total is not None:
        values["total_weight"] = total.tensor()
    return values


nll_enums = Shown(_nll_enums, ("total_weight",))
"""nll_loss: :data:`loss_enums`, and torch's ``total_weight`` (the weight of the targets
that count, a 0-d tensor; 0 for ``'none'``)."""


class TotalWeight:
    """torch's ``total_weight`` of an ``nll_loss`` call, computed when read: the summed
    weight (or count) of the targets that are not ``ignore_index``, 0 for ``'none'``."""

    __slots__ = ("target", "weight", "reduction", "ignore_index", "dtype")

    def __init__(self, args):
        self.target, self.weight = args[1], args[2] if len(args) > 2 else None
        self.reduction = args[3] if len(args) > 3 else "mean"
        self.ignore_index = args[4] if len(args) > 4 else -100
        self.dtype = args[0].dtype

    def tensor(self):
        if self.reduction == "none":
            return gt.zeros((), dtype=self.dtype)
        t = self.target.detach().numpy()
        keep = t != self.ignore_index
        if self.weight is None:
            total = float(keep.sum())
        else:
            w = self.weight.detach().numpy()
            total = float(w[t[keep]].sum())
        return gt.tensor(total, dtype=self.dtype)


def _vector_norm(values):
    if values.get("ord") == "fro":
        values["ord"] = 2
    return _dim_list(values)


vector_norm = Shown(_vector_norm)
"""``norm``: torch's ``linalg_vector_norm`` has order 2 for ``'fro'``, dims as a tuple."""


def _narrow_as_slice(values):
    length = values.pop("length")
    start = values["start"]
    sizes = values.get("self_sym_sizes")
    if start < 0 and sizes:
        start += sizes[values["dim"] % len(sizes)]
    values["start"], values["end"], values["step"] = start, start + length, 1
    values["dim"] = _uint(values["dim"])
    return values


narrow_as_slice = Shown(_narrow_as_slice, ("end", "step"))
"""``narrow(dim, start, length)`` as torch's ``SliceBackward0``: start (wrapped), end, step.

>>> narrow_as_slice.fn({"dim": 0, "start": -2, "length": 1, "self_sym_sizes": (5,)})
{'dim': 0, 'start': 3, 'self_sym_sizes': (5,), 'end': 4, 'step': 1}
"""


def _split_sizes(values):
    size = values.pop("split_size")
    if isinstance(size, (tuple, list)):
        values["split_sizes"] = tuple(size)
    else:
        values["split_size"] = size
    values["dim"] = _uint(values["dim"])
    return values


split_sizes = Shown(_split_sizes, ("split_sizes",))
"""``split``: ``split_size`` (SplitBackward0) or ``split_sizes`` (SplitWithSizesBackward0)."""


def compose(*shown: Shown) -> Shown:
    """The ``Shown`` applying each in turn."""

    def fn(values):
        for s in shown:
            values = s.fn(values)
        return values

    return Shown(fn, tuple(n for s in shown for n in s.names))


def _squeeze_dims(values):
    d = values.get("dim")
    if d is None:
        values.pop("dim", None)  # SqueezeBackward0 saves no dim
    elif isinstance(d, (tuple, list)):
        values["dim"] = tuple(_uint(x) for x in d)
    else:
        values["dim"] = _uint(d)
    return values


squeeze_dims = Shown(_squeeze_dims)
"""``squeeze``: no dim (SqueezeBackward0), one (SqueezeBackward1) or a tuple (...2)."""


def _whole_or_dim(values):
    if values.get("dim") is None:  # the overload over everything saves no dim
        values.pop("dim", None)
        values.pop("keepdim", None)
    return values


def whole_or_dim() -> Shown:
    """prod: ``ProdBackward0`` (no dim) saves neither dim nor keepdim."""
    return Shown(_whole_or_dim)


def _selection(values):
    if values.get("dim") is None:  # MaxBackward1: self and its result
        _whole_or_dim(values)
        values.pop("self_sym_sizes", None)
    else:  # MaxBackward0: the dim, keepdim, the input's sizes and the indices it chose
        values.pop("self", None)
        values.pop("result", None)
        values["dim"] = _uint(values["dim"])
        indices = values.get("__extra__")  # (the entry's extra: the indices, an array)
        if indices is not None:
            values["indices"] = gt.tensor(indices)
    return values


selection = Shown(_selection, ("indices",))
"""max/min: over everything (``...Backward1``) or along a dim (``...Backward0``, which
shows the indices it chose as torch's ``_saved_indices``)."""
