# cython: language_level=3, boundscheck=False, wraparound=False, auto_pickle=False
"""The profiler's per-event hot path in C: the plain op layer and the engine's node observer.

While a ``profile()`` runs, every op passes through :class:`OpRecorder` and every backward
node through :class:`NodeRecorder`.  Each appends flat tuples to the session's list
(Note [Raw records] in ``_recorder.py``); written in Python, the layer's ``handle`` was a
Python frame plus a bound-method call of ``call_next`` per op, about 0.9 us on the
tutorial's loop.  Here ``handle`` is a C method that calls the rest of the dispatch chain
directly (tensor-core's public ``extension.pxd``), and the clock is read in C.

Note [The profiler's clock is perf_counter_ns]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``record_function`` blocks and memory events are stamped in Python with
``time.perf_counter_ns()``, which on Linux is ``clock_gettime(CLOCK_MONOTONIC)``; the
records of one thread must share one clock to nest, so :func:`now_ns` reads that same
clock on Linux.  On a platform whose ``perf_counter`` is another clock (``_SAME_CLOCK``
false) the C recorders call ``time.perf_counter_ns`` instead: slower, never wrong.
``tests/test_recording.py`` checks that both clocks agree here.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_profiler._recording import OP, END, OpRecorder
>>> records = []
>>> layer = OpRecorder(records, 1000)
>>> gt.register_layer(layer)
>>> _ = gt.ones(2) + 1
>>> gt.unregister_layer(layer)
>>> [r[0] for r in records], records[0][1]
([0, 3], 'add')
"""

import sys
import time

cimport cython

from cpython.pythread cimport PyThread_get_thread_ident
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from gradstack_tensor.extension cimport DispatchLayer, Op, Tensor, call_next

__all__ = [
    "OP", "NODE", "USER", "END", "FREE",
    "OpRecorder", "NodeRecorder", "now_ns", "output_sequence_nr",
]

# The record tags (Note [Raw records]); one definition, read by _recorder and _build.
OP, NODE, USER, END, FREE = 0, 1, 2, 3, 4
cdef enum:
    C_OP = 0
    C_NODE = 1
    C_END = 3

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void *op)

_perf_counter_ns = time.perf_counter_ns
cdef bint _SAME_CLOCK = (
    sys.platform.startswith("linux")
    and time.get_clock_info("perf_counter").implementation == "clock_gettime(CLOCK_MONOTONIC)"
)


cdef inline object _now():
    cdef timespec ts
    if _SAME_CLOCK:
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return <long long>ts.tv_sec * 1000000000 + ts.tv_nsec
    return _perf_counter_ns()


cdef inline void _append(list records, tuple record):
    """Append a record the cyclic GC need not watch.

    Note [Records are untracked at birth]
    A record holds only ints, strings and None, so it can never be part of a cycle; the GC
    would find that out at its next pass and untrack it (what it does with such tuples),
    after traversing it once.  A profile makes records by the hundred thousand, and
    gen-0 passes over them were a tenth of the recording cost: untracking each record
    when it is made (what CPython's own untracking does) saves that work.
    """
    PyObject_GC_UnTrack(<void*>record)
    records.append(record)


def now_ns():
    """The profiler's clock: ``time.perf_counter_ns()``, read in C where they are one clock."""
    return _now()


cdef inline object _sequence_nr_of(object out):
    """The sequence number of the grad_fn of ``out`` (or of its first tensor), else -1."""
    cdef object g
    if type(out) is tuple:
        for o in <tuple>out:
            if isinstance(o, Tensor):
                g = (<Tensor>o)._grad_fn
                return -1 if g is None else g.sequence_nr
        return -1
    if isinstance(out, Tensor):
        g = (<Tensor>out)._grad_fn
        return -1 if g is None else g.sequence_nr
    return -1


def output_sequence_nr(out):
    """The sequence number of the ``grad_fn`` of an op's result ``out`` (or of its first
    tensor), else -1 (Note [Linking backward nodes to forward ops] in ``_recorder.py``)."""
    return _sequence_nr_of(out)


@cython.binding(False)  # Note [Cython methods check self] in tensor-core's _tensor_base.pyx
cdef class OpRecorder(DispatchLayer):
    """A dispatch layer recording each op's start and end into ``records``.

    ``priority`` places it on the dispatch point (the profiler uses 1000, above autograd's
    100, so that an op's time includes recording its backward node, as torch's does).
    """

    cdef list _records
    cdef unsigned long _c_tid       # the thread ident of the last record, and the same
    cdef object _tid                # as a Python int (made once per thread switch)

    def __init__(self, list records not None, int priority):
        self.priority = priority
        self._records = records
        self._c_tid = 0
        self._tid = 0

    cdef inline object _thread(self):
        cdef unsigned long c_tid = PyThread_get_thread_ident()
        if c_tid != self._c_tid:
            self._tid = c_tid
            self._c_tid = c_tid
        return self._tid

    cpdef object handle(self, Op op, tuple args, Py_ssize_t next_index):
        cdef list records = self._records
        cdef object tid = self._thread()
        if op is None or args is None or next_index < 0:  # typed arguments let None in
            raise TypeError(
                "OpRecorder.handle(op, args, next_index) expects an Op, a tuple and an index "
                f">= 0, got {type(op).__name__}, {type(args).__name__}, {next_index}"
            )
        _append(records, (C_OP, op.name, _now(), tid, None, None))
        try:
            out = call_next(op, args, next_index)
        except BaseException:
            _append(records, (C_END, _now(), tid, -1, 0))
            raise
        _append(records, (C_END, _now(), tid, _sequence_nr_of(out), 0))
        return out


@cython.binding(False)
cdef class NodeRecorder:
    """The engine's node observer: ``begin(node)`` and ``end(token)`` records."""

    cdef list _records

    def __init__(self, list records not None):
        self._records = records

    def begin(self, node):
        cdef object tid = PyThread_get_thread_ident()
        _append(self._records, (C_NODE, node.name(), _now(), tid, node.sequence_nr))
        return tid

    def end(self, token):
        if type(token) is not int:
            raise TypeError(f"NodeRecorder.end expects the token begin() returned, got {token!r}")
        _append(self._records, (C_END, _now(), token, -1, 0))
