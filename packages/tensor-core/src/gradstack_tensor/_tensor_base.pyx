# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's state: the C fields every tensor has, and the functions that make tensors.

:class:`TensorBase` holds a tensor's state in C fields (its numpy storage, the version
counter shared with its views, the fields the autograd layer reads and writes).
``gradstack_tensor.Tensor`` derives from it through the method groups, each in its own
module, and adds no field::

    TensorBase           _tensor_base.pyx         state, versions, requires_grad rules
    ElementwiseMethods   _tensor_elementwise.pyx  operators, elementwise and in-place ops
    ReductionMethods     _tensor_reductions.pyx   reductions, linear algebra
    ShapeMethods         _tensor_shape.pyx        views, reshaping, indexing
    SearchMethods        _tensor_search.pyx       searching, arrangements, contractions
    CompositeMethods     _tensor_composites.pyx   composites, aliases, in-place forms
    Tensor               _tensor.pyx              attributes, conversions, autograd methods

C code reads the fields through this module's ``.pxd`` (tensor-core's kernels) or through
``gradstack_tensor/extension.pxd`` (the layers above).  :func:`make_tensor` makes a tensor of
the class ``_tensor.pyx`` registers here at import (``Tensor``), for the method groups,
which are compiled before that class exists.

Note [Why the Tensor is a cdef class]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For tensors of a few elements the cost of an op is not arithmetic but Python overhead:
allocating the result, looking up attributes, calling the kernel.  Keeping the Tensor's
state in C fields, the dispatch point in C, and the small-array loops in C (numpy's own
per-call overhead is 0.5-1.5 us on this machine) is what lets a small op cost about as
much as the bare numpy call, and lets the autograd layer above read ``requires_grad`` and
``grad_fn`` without a dictionary lookup.

Note [A tensor always has storage]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``Tensor.__new__(Tensor)`` runs no ``__init__``; the methods read ``_data`` in C, so a
NULL or None array would crash them.  ``__cinit__`` sets a shared empty float32 array
(read-only: nothing is ever written into it), so such a tensor is torch's ``tensor([])``.
"""
cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject, PyTypeObject

import os
import sys

import numpy as np

from . import dtypes as _dt
from ._loops cimport is_float_num

cnp.import_array()


# ----------------------------------------------------------------------------------------
# Version counters


@cython.no_gc
@cython.binding(False)
cdef class VersionCounter:
    """The in-place version of a storage, shared by a tensor and all of its views.

    Every in-place op increments ``value``; the autograd layer records it when it saves a
    tensor for backward and compares it when the tensor is used.  ``track_writes`` asks
    in-place ops to also record where they were called from (``last_writer``), which
    only saved tensors need, so that plain in-place ops do not pay for a stack walk.
    """

    def __cinit__(self):
        self.value = 0
        self.last_writer = None
        self.track_writes = False
        self.views_base = None
        self.lazy_views = None

    def __repr__(self):
        return f"VersionCounter(value={self.value})"


# lazy_views.sync(tensor, counter), installed by lazy_views.py at import
cdef object _lazy_sync = None


def _set_lazy_sync(fn):
    global _lazy_sync
    _lazy_sync = fn


_LIBRARY_DIRS = ()
_LIBRARY_DIRS_KEY = -1


def library_dirs():
    """Source directories of the loaded gradstack packages, whose frames are not the user's.

    Note [Which frames are the user's]
    The in-place error names the line that wrote a saved tensor, and the profiler the
    user's stack: both skip every frame inside a gradstack package (``gradstack``,
    ``gradstack_tensor``, ``gradstack_nn`` ...), found from the loaded modules rather than
    from this file's neighbours (in a development install each package has its own source
    folder).  Recomputed when the number of loaded modules changes.
    """
    global _LIBRARY_DIRS, _LIBRARY_DIRS_KEY
    if len(sys.modules) != _LIBRARY_DIRS_KEY:
        dirs = set()
        for name, mod in list(sys.modules.items()):
            # packages only: a test suite's helper module may be named gradstack_...
            if name.startswith("gradstack") and "." not in name:
                for path in getattr(mod, "__path__", None) or ():
                    dirs.add(os.path.abspath(path) + os.sep)
        _LIBRARY_DIRS = tuple(sorted(dirs))
        _LIBRARY_DIRS_KEY = len(sys.modules)
    return _LIBRARY_DIRS


def caller_location():
    """``"file:line"`` of the nearest stack frame outside the gradstack packages
    (Note [Which frames are the user's])."""
    dirs = library_dirs()
    frame = sys._getframe(0)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(dirs):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


# ----------------------------------------------------------------------------------------
# The autograd extension point: Tensor methods whose meaning belongs to the layer above.

_autograd = None


def set_autograd_extension(ext):
    """Install the object that implements ``backward``, ``register_hook`` ...

    graph-engine calls this at import; the Tensor methods below delegate to it and say
    what to install when it is missing.
    """
    global _autograd
    _autograd = ext


cdef object autograd_extension():
    """The installed autograd extension, or None."""
    return _autograd


cdef object need_autograd(str what):
    if _autograd is None:
        raise RuntimeError(
            f"Tensor.{what} needs the autograd layer: install gradstack-graph-engine "
            "and `import gradstack_autograd` (or use the full stack: `import gradstack`)."
        )
    return _autograd


# ----------------------------------------------------------------------------------------
# dtype lookup

cdef list _DTYPE_BY_NUM = [None] * 32


cdef void _fill_dtype_table():
    for d in _dt.ALL:
        if d.numpy.num < 32:    # a numpy user type (ml_dtypes' bfloat16) is looked up by dtype
            _DTYPE_BY_NUM[d.numpy.num] = d


_fill_dtype_table()


cdef object dtype_of_array(cnp.ndarray a):
    cdef int num = cnp.PyArray_TYPE(a)
    cdef object d = None
    if 0 <= num < 32:
        d = _DTYPE_BY_NUM[num]
    if d is None:
        return _dt.from_numpy_dtype(a.dtype)
    return d


# ----------------------------------------------------------------------------------------
# The state

# Note [Cython methods check self]
# A cdef class's methods compiled as cyfunctions (Cython's default, binding=True) accept
# any object as ``self`` when called unbound: ``Tensor.dim(None)`` read a C field of None
# and crashed the interpreter.  With binding=False they are method descriptors, which
# check ``self`` as CPython's own types do and raise torch's TypeError ("descriptor 'dim'
# for '...Tensor' objects doesn't apply to a 'NoneType' object").  Every cdef class of
# the stack is compiled so; tests/test_crash_fuzz.py calls every method unbound.

# the storage of a tensor made by Tensor.__new__ alone (Note [A tensor always has storage])
cdef cnp.ndarray _NO_DATA = np.empty((0,), dtype=np.float32)
_NO_DATA.flags.writeable = False


@cython.binding(False)
cdef class TensorBase:
    """The C state of a tensor; ``gradstack_tensor.Tensor`` is the class to use.

    Holds the numpy storage, the version counter shared with views, and the fields of
    the autograd layer (``requires_grad``, ``grad``, ``grad_fn`` ...).  The methods are
    in the subclasses (see the module's docstring).
    """

    def __cinit__(self, *args, **kwargs):
        self._data = _NO_DATA
        self._requires_grad = False
        self._output_nr = 0
        self._is_inference = False

    # -- state ------------------------------------------------------------------------

    cdef VersionCounter version_counter(self):
        if self._vc is None:
            self._vc = VersionCounter.__new__(VersionCounter)
        return self._vc

    cdef void bump_version(self, str op_name):
        cdef VersionCounter vc = self.version_counter()
        vc.value += 1
        if vc.track_writes:
            vc.last_writer = (op_name, caller_location())
        else:
            vc.last_writer = (op_name, None)
        if vc.lazy_views is not None and _lazy_sync is not None:
            # the lazy views of this storage see the write, or the storage sees a write
            # into one of them (Note [The conjugate and negative bits])
            try:
                _lazy_sync(self, vc)
            except Exception:   # (a void method cannot raise: numpy's copies do not)
                pass

    cdef _set_requires_grad(self, bint value):
        if self._grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach()."
            )
        if value and not (is_float_num(cnp.PyArray_TYPE(self._data))
                          or cnp.PyArray_ISCOMPLEX(self._data)
                          or dtype_of_array(self._data).is_floating_point):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor is {dtype_of_array(self._data)}); cast it with .float() first"
            )
        if value and self._is_inference and _autograd is not None \
                and not _autograd.is_inference_mode_enabled():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed. Make a normal tensor with .clone() first."
            )
        self._requires_grad = value
        if (self._autograd_meta is not None or self._view_base is not None) \
                and _autograd is not None:
            # a base's views follow its flag, and a view notes its own, as torch's (the
            # autograd layer's business)
            _autograd.on_requires_grad_set(self)


# ----------------------------------------------------------------------------------------
# Making tensors

cdef tuple _NO_ARGS = ()

# the class of the tensors make_tensor() makes: gradstack_tensor.Tensor once _tensor.pyx is imported
cdef type _tensor_class = TensorBase


def _register_tensor_class(type cls not None):
    """Called once by ``_tensor.pyx``: :func:`make_tensor` makes instances of ``cls``."""
    global _tensor_class
    if not issubclass(cls, TensorBase):
        raise TypeError(f"{cls.__name__} is not a subclass of TensorBase")
    _tensor_class = cls


cdef TensorBase new_empty_tensor(type cls):
    """A ``cls`` instance (a TensorBase subclass) with empty storage: tp_new only, no
    ``__init__`` (nor a Python subclass's ``__new__``)."""
    if cls is None or not issubclass(cls, TensorBase):
        raise TypeError(f"expected a subclass of Tensor, got {cls!r}")
    return <TensorBase>(<PyTypeObject*>TensorBase).tp_new(cls, <PyObject*>_NO_ARGS, NULL)


cdef TensorBase make_tensor(cnp.ndarray data):
    """A new leaf tensor over ``data`` (no copy), of the registered class.

    For the method groups, which are compiled before ``Tensor`` exists; the kernels and
    the layers above use ``_tensor.wrap``, a direct call of the same constructor.
    """
    cdef TensorBase t = <TensorBase>_tensor_class.__new__(_tensor_class)
    t._data = data
    return t


cdef TensorBase make_view(cnp.ndarray data, TensorBase base):
    """A new tensor over ``data``, a view of ``base``'s storage that shares its version
    counter: ``_tensor.wrap_view`` for the method groups (see :func:`make_tensor`)."""
    cdef TensorBase t = make_tensor(data)
    t._vc = base.version_counter()
    t._view_base = base._view_base if base._view_base is not None else base
    t._is_inference = base._is_inference
    return t


cdef TensorBase expect_other(object x, str name):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{name}(): argument 'other' must be a Tensor, not {type(x).__name__}")
    return <TensorBase>x


cdef int _data_kind(object x, int depth):
    """See _python_data_kind; an empty list is -1 (its dtype is the general path's call)."""
    cdef type tp = type(x)
    cdef int kind = -1, k
    if tp is float:
        return 2
    if tp is int:
        return 1
    if tp is bool:
        return 0
    if (tp is list or tp is tuple) and depth < 32:
        for item in <object>x:
            k = _data_kind(item, depth + 1)
            if k < 0:
                return -1
            if k > kind:
                kind = k
    return kind


def _python_data_kind(data):
    """Note [tensor() from Python numbers]
    The kind of ``tensor()`` data made only of Python numbers, in (nested) lists or
    tuples: 2 when a ``float`` is among them, else 1 for an ``int``, else 0 (all
    ``bool``); -1 for anything else (numpy scalars, tensors, strings, subclasses such
    as ``np.float64``, empty lists, nesting deeper than 32).  ``tensor()`` then knows
    torch's dtype (default float, int64, bool) before numpy sees the data, and builds
    the array in one ``np.array(data, dtype=...)``; -1 sends it to the general path.
    One C pass: the two generator scans of the general path cost ~5 us for 6 numbers.
    """
    return _data_kind(data, 0)
