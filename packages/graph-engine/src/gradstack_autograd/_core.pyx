# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The C core of gradstack_autograd: grad modes, nodes, the dispatch layer, the engine.

One extension module built from one include file per concept, so that the hot calls
between them (the layer creating nodes, the engine running them) stay C calls:

- ``_grad_mode.pxi``: thread-local grad and inference modes, anomaly mode;
- ``_node.pxi``: ``Node``, ``AccumulateGrad``, saved tensors, hook handles, ``.grad`` layout;
- ``_layer.pxi``: the derivative-table row type, the autograd dispatch layer, in-place rules;
- ``_native.pxi``: C copies of the hottest first-order formulas (add, sub, mul, div);
- ``_engine.pxi``: the backward engine.
"""
cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from gradstack_tensor.extension cimport (
    DispatchLayer, Op, Tensor, VersionCounter, call_next, data_of, wrap, wrap_view,
)

import heapq
import traceback
import weakref

import numpy as np

try:
    from gradstack_tensor import kernels as _kernels
except ImportError:  # pragma: no cover - a tensor-core build without the fused kernels
    _kernels = None

cnp.import_array()

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX
    void PyObject_GC_UnTrack(void* op)
    void PyObject_GC_Track(void* op)
    int PyObject_GC_IsTracked(object op)
    bint PyObject_IS_GC(object op)


cdef inline void untrack(object o):
    """Hide ``o`` from the cyclic GC (Note [Nodes are invisible to the cyclic GC]).

    Only objects of GC types have the header PyObject_GC_UnTrack writes to.
    """
    if PyObject_IS_GC(o):
        PyObject_GC_UnTrack(<void*>o)


cdef inline void retrack(object o):
    """Show ``o`` to the cyclic GC again (Note [Saved intermediates are invisible ...])."""
    if o is not None and PyObject_IS_GC(o) and not PyObject_GC_IsTracked(o):
        PyObject_GC_Track(<void*>o)

include "_grad_mode.pxi"
include "_node.pxi"
include "_layer.pxi"
include "_native.pxi"
include "_engine.pxi"
