"""Lazy conjugate and negative views: torch's conjugate and negative bits over numpy.

Note [The conjugate and negative bits]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch's ``conj()`` of a complex tensor is a view with a conjugate bit: it aliases the
input's memory, ``is_conj()`` is True, kernels conjugate what they read, and a write
through it reaches the input conjugated (``z.conj()[0] = 1 + 1j`` sets ``z[0]`` to
``1 - 1j``).  ``imag`` of such a view is a view with a negative bit (``is_neg()``).
numpy has no array that conjugates or negates on read, and every kernel here reads
``t._data`` directly, so a lazy view is a *mirror*: its ``_data`` holds the transformed
values (what every kernel must read), laid out as the input's memory is (the same byte
offsets and strides over a copy of the span of memory the input covers, so that a view
of the mirror maps to the input's memory by the same offsets), and the two are kept
equal by the writes:

- the mirror shares the input's version counter, which every in-place write bumps;
  the counter's ``lazy_views`` holds the records of the live mirrors of the storage;
- a write into a mirror (or a view of it: views inherit the record) is copied back,
  transformed, into the input's memory, then the other mirrors are refreshed;
- a write into the storage otherwise (the input, another view of it) refreshes every
  mirror from the memory it mirrors.

What is not torch's: a write that bumps no version (through ``numpy()`` of the input,
``.data``, a numpy array the tensor was made from) is not seen by the mirror until the
next write that does; the mirror is not a view for autograd (``_base`` is None: its
``grad_fn`` is ``ConjBackward0``, the op's node), and an in-place write into a storage
with a lazy view while autograd records is refused (graph-engine's Note [No in-place
write through a lazy view under autograd]) instead of rebasing the history as torch's
``CopySlices`` would.  ``numpy()`` and ``view_as_real`` refuse a lazy view, as torch's.
"""

from __future__ import annotations

import weakref

import numpy as np

from ._tensor import _data, _lazy_view_kind, _share_version, _wrap
from ._tensor_base import _set_lazy_sync

__all__ = ["make_lazy", "source_alias"]

_TRANSFORM = {"conj": np.conjugate, "neg": np.negative}


class _Record:
    """One lazy view: its kind, the memory it mirrors (``source``, the input's array) and
    its mirror (``mirror``), and the spans of memory both lie in."""

    __slots__ = ("kind", "base", "source", "mirror", "source_span", "mirror_span", "__weakref__")

    def __init__(self, kind, base, source, mirror, source_span, mirror_span):
        self.kind = kind
        self.base = base  # (what ``_base`` says: the tensor mirrored, or its own base)
        self.source = source
        self.mirror = mirror
        self.source_span = source_span
        self.mirror_span = mirror_span


def _span(x: np.ndarray):
    """A 1-d array of ``x``'s dtype over the memory ``x`` covers, and the element offset
    of ``x``'s first element in it."""
    size = x.itemsize
    if any(s % size for s in x.strides):
        raise NotImplementedError(
            "a lazy conj/neg view of a tensor whose strides are not whole elements"
        )
    if x.size == 0:
        return np.empty(0, x.dtype), 0
    # flip the axes of negative strides: the first element is then the lowest address
    low = x[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in x.strides)]
    n = 1 + sum((d - 1) * abs(s) for d, s in zip(x.shape, x.strides)) // size
    span = np.lib.stride_tricks.as_strided(
        low, shape=(n,), strides=(size,), writeable=x.flags.writeable
    )
    offset = (_address(x) - _address(low)) // size
    return span, offset


def _address(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def _at(span: np.ndarray, offset: int, like: np.ndarray, writeable: bool) -> np.ndarray:
    """The array of ``like``'s shape and strides from element ``offset`` of ``span``."""
    return np.lib.stride_tricks.as_strided(
        span[offset:], shape=like.shape, strides=like.strides, writeable=writeable
    )


def make_lazy(x, kind: str):
    """A lazy ``kind`` ("conj" or "neg") view of the tensor ``x``, whose memory is not a
    lazy view itself: a new tensor holding the transformed values, sharing ``x``'s
    version counter (Note [The conjugate and negative bits])."""
    src = _data(x)
    span, offset = _span(src)
    fn = _TRANSFORM[kind]
    mirror_span = np.ascontiguousarray(fn(span))
    # the tensor's array is read-only where the input's is (an expanded tensor); the
    # record's, through which the mirror is refreshed, is not
    t = _wrap(_at(mirror_span, offset, src, bool(src.flags.writeable)))
    vc = _share_version(t, x)
    base = x._base if x._base is not None else x
    rec = _Record(kind, base, src, _at(mirror_span, offset, src, True), span, mirror_span)
    if vc.lazy_views is None:
        vc.lazy_views = weakref.WeakSet()
    vc.lazy_views.add(rec)
    t._gs_lazy_view = rec
    return t


def source_alias(x) -> np.ndarray:
    """The memory that the lazy view ``x`` (or a view of one) mirrors, as an array of
    ``x``'s shape and strides: what ``x.conj()`` of a conjugate view aliases."""
    rec = x._gs_lazy_view
    m = _data(x)
    if m.dtype != rec.mirror_span.dtype:
        raise NotImplementedError(
            f"a view of another dtype ({m.dtype}) of a lazy {rec.kind} view: resolve it "
            f"first (resolve_{rec.kind}())"
        )
    offset = (_address(m) - _address(rec.mirror_span)) // m.itemsize
    return _at(rec.source_span, offset, m, bool(rec.source.flags.writeable))


def kind_of(x):
    """ "conj", "neg" or None."""
    return _lazy_view_kind(x)


def sync(t, vc) -> None:
    """After a write into ``t``'s storage (Note [The conjugate and negative bits])."""
    recs = vc.lazy_views
    if not recs:
        vc.lazy_views = None
        return
    written = getattr(t, "_gs_lazy_view", None)
    with np.errstate(all="ignore"):
        if written is not None:
            np.copyto(written.source, _TRANSFORM[written.kind](written.mirror))
        for rec in list(recs):
            if rec is not written:
                np.copyto(rec.mirror, _TRANSFORM[rec.kind](rec.source))


_set_lazy_sync(sync)
