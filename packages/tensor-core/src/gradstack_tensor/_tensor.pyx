# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: embedsignature=True, embedsignature.format=clinic
"""The core of gradstack_tensor: the Tensor, the op registry and the dispatch point.

Every op, from ``a * b`` to ``t.sum(1)``, is an :class:`Op` called through
:func:`dispatch`.  With no layer registered, dispatch checks one C integer and runs the
op's kernel.  Upper layers (autograd, the profiler) subclass :class:`DispatchLayer` and
register themselves with :func:`register_layer`; this module never imports them.

Note [Why the Tensor is a cdef class]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For tensors of a few elements the cost of an op is not arithmetic but Python overhead:
allocating the result, looking up attributes, calling the kernel.  Keeping the Tensor's
state in C fields, the dispatch point in C, and the small-array loops in C (numpy's own
per-call overhead is 0.5-1.5 us on this machine) is what lets a small op cost about as
much as the bare numpy call, and lets the autograd layer above read ``requires_grad`` and
``grad_fn`` without a dictionary lookup.

Note [Small float arrays take C loops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Elementwise float32/float64 ops on C-contiguous operands of at most ``SMALL_SIZE``
elements run a plain C loop into an array from ``PyArray_EMPTY``; everything else goes
to numpy's ufuncs, whose SIMD loops win once arrays are large.  Transcendental unary ops
stop earlier (Note [Where the unary C loops stop]).  Both paths compute the same IEEE
operations (the tests compare them).

Note [sigmoid on the numpy path]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Arrays past the C loop compute ``1 / (1 + exp(-x))`` in four in-place ufunc passes over
one buffer (numpy's SIMD exp; as fast as the bare numpy expression, which allocates
four arrays).  Where ``exp(-x)`` overflows the result is exactly 0, and only there: a
C scan for zeros finds those elements (rare) and redoes them as ``exp(x)``, which is
what ``e^x / (1 + e^x)`` rounds to, so that sigmoid(-100.) is 3.78e-44 and not 0 (torch
flushes it to 0).  The earlier fallback, two stable formulas selected with ``where=``
masks, ran numpy's masked inner loops, one call per run of equal signs, and allocated
six temporaries: ~20x slower at 1M float32 elements.
float16 sigmoid computes in float32 and rounds once, as torch does (so do tanh, whose
numpy float16 loop is ~3x slower than float32 and the casts, and rsqrt, which rounded
twice in float16).  numpy's other float16 loops already compute each element in float32
and round once, as fast as casting around the float32 loop, so they stay.

Note [Where the unary C loops stop]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The unary C loops call libm in double, one element at a time.  numpy's float32 exp, log,
sin, cos and tanh are AVX2 loops several times faster per element, and its sqrt
vectorises where the C loop's (errno-checking) sqrt does not, so past some size the
numpy path (its ~1 us per call, ~3 us for sigmoid's four passes) wins: a float32 tanh of
4096 elements took 64 us in the C loop and 12 us in numpy.  ``_unary_limit`` stops each
loop where the two cost the same (medians on one thread, AMD EPYC with AVX2, contiguous
against F-ordered operands of the same size):

    float32   tanh 32, sin/cos 64, exp/log 128, sqrt 256, sigmoid 512
    float64   sqrt 256, tanh 512; exp/log/sin/cos/sigmoid stay within ~5% of numpy
              or beat it up to SMALL_SIZE (sigmoid 24 us vs 30 us at 4096)
    neg, abs and relu beat numpy up to SMALL_SIZE in both dtypes.

Note [Floating-point warnings]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch returns ``inf``/``nan`` silently (``log(0)``); numpy warns.  Entering
``np.errstate`` costs ~1.4 us, so the ufunc path sets numpy's errstate context variable
directly (~0.1 us) and falls back to ``np.errstate`` if a future numpy moves it.
"""
cimport cython
cimport numpy as cnp
from cpython.object cimport PyObject
from libc.math cimport exp, log, sqrt, sin, cos, tanh, fabs

import sys
import os
import numpy as np

from . import dtypes as _dt
from .device import cpu as _cpu, check_device as _check_device

cnp.import_array()

# ----------------------------------------------------------------------------------------
# Constants

KIND_OTHER = 0
KIND_BINARY = 1          # elementwise, torch promotion, result in the promoted dtype
KIND_BINARY_FLOAT = 2    # elementwise, integer results become the default float (true div)
KIND_COMPARE = 3         # elementwise, promoted inputs, bool result
KIND_UNARY = 4           # elementwise, same dtype out
KIND_UNARY_FLOAT = 5     # elementwise, integer inputs become the default float first

cdef enum:
    K_OTHER = 0
    K_BINARY = 1
    K_BINARY_FLOAT = 2
    K_COMPARE = 3
    K_UNARY = 4
    K_UNARY_FLOAT = 5

SMALL_SIZE = 4096
cdef Py_ssize_t _SMALL = 4096

# ----------------------------------------------------------------------------------------
# Floating-point error state (Note [Floating-point warnings])

try:
    from numpy._core import umath as _umath
    _errstate_var = _umath._extobj_contextvar
    _errstate_ignore = _umath._make_extobj(all="ignore")
except (ImportError, AttributeError):  # pragma: no cover - a numpy that moved it
    _errstate_var = None
    _errstate_ignore = None


cdef inline object _quiet_call2(object ufunc, object x, object y):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x, y)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x, y)
    finally:
        _errstate_var.reset(token)


cdef inline object _quiet_call1(object ufunc, object x):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x)
    finally:
        _errstate_var.reset(token)


def quiet(fn, *args, **kwargs):
    """Call ``fn(*args, **kwargs)`` with numpy's floating-point warnings silenced.

    For kernels written in Python (torch returns inf/nan without warning).
    """
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return fn(*args, **kwargs)
    finally:
        _errstate_var.reset(token)


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

    def __repr__(self):
        return f"VersionCounter(value={self.value})"


_PACKAGE_DIRS = None


def _gradstack_source_dirs():
    """Directories of the installed gradstack packages, skipped when locating a caller."""
    global _PACKAGE_DIRS
    if _PACKAGE_DIRS is None:
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        _PACKAGE_DIRS = tuple(
            os.path.join(here, name) + os.sep
            for name in os.listdir(here) if name.startswith("gradstack")
        )
    return _PACKAGE_DIRS


def caller_location():
    """``"file:line"`` of the nearest stack frame outside the gradstack packages."""
    dirs = _gradstack_source_dirs()
    frame = sys._getframe(0)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(dirs):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return "<unknown>"


# ----------------------------------------------------------------------------------------
# Ops and the dispatch point

OPS = {}


@cython.binding(False)
cdef class Op:
    """One operation of the tensor library, called through the dispatch point.

    Parameters
    ----------
    name : str
        torch's name of the op (``"mul"``, ``"add_"``, ``"sum"``).
    kind : int
        One of the ``KIND_*`` constants; elementwise kinds have a generic C kernel.
    ufunc : numpy.ufunc, optional
        The numpy ufunc of an elementwise op.
    inplace : bool
        The op writes into its first argument (and bumps its version).
    view : bool
        The op's output aliases its first argument's storage.

    Notes
    -----
    Arguments are positional in a fixed order, the op's canonical signature (the Tensor
    methods normalise keyword arguments before dispatching), so that every layer can find
    an argument by position: ``sum(input, dim, keepdim, dtype)``.
    """

    def __init__(self, str name, int kind=K_OTHER, ufunc=None, *, bint inplace=False,
                 bint view=False):
        self.name = name
        self.kind = kind
        self.ufunc = ufunc
        self.inplace = inplace
        self.is_view = view
        self._kernel = None
        self._ckernel = NULL
        self.derivative = None

    @property
    def kernel(self):
        """The Python-level kernel, ``kernel(*args) -> result`` (None for C kernels)."""
        return self._kernel

    def set_kernel(self, fn):
        """Bind the op's implementation; returns ``fn`` so it can be used as a decorator."""
        self._kernel = fn
        self._ckernel = NULL
        return fn

    @property
    def has_kernel(self):
        return self._kernel is not None or self._ckernel != NULL

    def run_kernel(self, *args):
        """Run the kernel directly, below every dispatch layer."""
        return run_kernel(self, args)

    def __call__(self, *args):
        return dispatch(self, args)

    def __repr__(self):
        return f"<Op {self.name}>"

    def __reduce__(self):
        return (get_op, (self.name,))


def get_op(str name):
    """The registered :class:`Op` called ``name``; KeyError names the close matches."""
    try:
        return OPS[name]
    except KeyError:
        import difflib
        close = difflib.get_close_matches(name, OPS, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no op named {name!r} is registered.{hint}") from None


cdef Op _new_op(str name, int kind=K_OTHER, ufunc=None, bint inplace=False, bint view=False):
    cdef Op op = Op(name, kind, ufunc, inplace=inplace, view=view)
    if name in OPS:
        raise ValueError(f"op {name!r} is registered twice")
    OPS[name] = op
    return op


def register_op(str name, kernel=None, *, bint inplace=False, bint view=False):
    """Register a new op with a Python kernel (for extensions of the library)."""
    cdef Op op = _new_op(name, K_OTHER, None, inplace, view)
    if kernel is not None:
        op.set_kernel(kernel)
    return op


cdef tuple _layers = ()
cdef Py_ssize_t _n_layers = 0


@cython.binding(False)
cdef class DispatchLayer:
    """A layer on the dispatch point (autograd, profiler ...).

    Subclasses override :meth:`handle`, do their work around
    ``self.call_next(op, args, next_index)`` and return the op's result.  Layers run in
    order of decreasing ``priority``: the highest priority is the outermost.
    """

    def __init__(self, int priority=0):
        self.priority = priority

    cpdef object handle(self, Op op, tuple args, Py_ssize_t next_index):
        return call_next(op, args, next_index)

    def call_next(self, Op op, tuple args, Py_ssize_t next_index):
        """Run the rest of the chain (the next layer, or the kernel)."""
        return call_next(op, args, next_index)


def register_layer(DispatchLayer layer not None):
    """Add ``layer`` to the dispatch point (no-op if already there)."""
    global _layers, _n_layers
    if layer in _layers:
        return
    ordered = sorted(_layers + (layer,), key=lambda l: -(<DispatchLayer>l).priority)
    _layers = tuple(ordered)
    _n_layers = len(_layers)


def unregister_layer(DispatchLayer layer not None):
    """Remove ``layer`` from the dispatch point (no-op if it is not there)."""
    global _layers, _n_layers
    _layers = tuple(l for l in _layers if l is not layer)
    _n_layers = len(_layers)


def registered_layers():
    """The registered layers, outermost first."""
    return _layers


cdef object run_kernel(Op op, tuple args):
    if op is None or args is None:      # typed arguments let None through: never deref it
        raise TypeError("dispatch expects an Op and a tuple of arguments, got None")
    if op._ckernel != NULL:
        return op._ckernel(op, args)
    if op._kernel is None:
        raise NotImplementedError(f"op {op.name!r} has no kernel registered")
    return op._kernel(*args)


cdef object call_next(Op op, tuple args, Py_ssize_t index):
    if index < _n_layers:
        return (<DispatchLayer>_layers[index]).handle(op, args, index + 1)
    return run_kernel(op, args)


cpdef object dispatch(Op op, tuple args):
    """Call ``op`` on ``args`` through every registered layer, outermost first."""
    if _n_layers == 0:
        return run_kernel(op, args)
    return (<DispatchLayer>_layers[0]).handle(op, args, 1)


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


cdef object _need_autograd(str what):
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
        _DTYPE_BY_NUM[d.numpy.num] = d


_fill_dtype_table()


cdef inline object _dtype_of_array(cnp.ndarray a):
    cdef int num = cnp.PyArray_TYPE(a)
    cdef object d = None
    if 0 <= num < 32:
        d = _DTYPE_BY_NUM[num]
    if d is None:
        return _dt.from_numpy_dtype(a.dtype)
    return d


cdef inline tuple _shape(cnp.ndarray a):
    return (<object>a).shape


cdef inline bint _is_float_num(int num):
    return num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE or num == cnp.NPY_FLOAT16


# ----------------------------------------------------------------------------------------
# Tensor construction helpers


cdef Tensor wrap(cnp.ndarray data):
    """A new leaf tensor over ``data`` (no copy)."""
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = data
    return t


cdef Tensor wrap_view(cnp.ndarray data, Tensor base):
    """A new tensor over ``data``, a view of ``base``'s storage: shares its version counter."""
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = data
    t._vc = base.version_counter()
    t._view_base = base._view_base if base._view_base is not None else base
    t._is_inference = base._is_inference
    return t


cdef cnp.ndarray data_of(Tensor t):
    return t._data


cdef inline cnp.ndarray _as_ndarray(object r):
    if cnp.PyArray_Check(r):
        return <cnp.ndarray>r
    return np.asarray(r)


def _wrap(data):
    """Python-level :func:`wrap` for kernels written in Python (``data`` must be an ndarray)."""
    return wrap(_as_ndarray(data))


def _wrap_view(data, Tensor base not None):
    """Python-level :func:`wrap_view`: ``data`` must alias ``base``'s storage."""
    return wrap_view(_as_ndarray(data), base)


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


def _wrap_detached(Tensor src not None):
    """A tensor over ``src``'s storage, sharing its version counter but not a view of it."""
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = src._data
    t._vc = src.version_counter()
    t._is_inference = src._is_inference
    return t


def _data(Tensor t not None):
    """The numpy storage of ``t`` (for kernels written in Python)."""
    return t._data


# ----------------------------------------------------------------------------------------
# Shapes


class Size(tuple):
    """A tensor's shape: a tuple of ints, printed as torch prints ``torch.Size``.

    >>> Size((2, 3))
    gradstack.Size([2, 3])
    >>> Size((2, 3)).numel()
    6
    """

    __slots__ = ()

    def __repr__(self):
        return f"gradstack.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        return Size(tuple(self) + tuple(other))


def _normalize_dim(Py_ssize_t dim, Py_ssize_t ndim, str what="dim"):
    """Wrap a negative dim; IndexError in torch's words when out of range."""
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def broadcast_error(shape_a, shape_b):
    """The RuntimeError torch raises for shapes that do not broadcast."""
    a, b = tuple(shape_a), tuple(shape_b)
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + a
    pb = (1,) * (n - len(b)) + b
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                f"at non-singleton dimension {i - n + len(a) if len(a) >= len(b) else i}. "
                f"Shapes: a {list(a)}, b {list(b)}; see numpy broadcasting rules "
                "(trailing dimensions must be equal or 1)."
            )
    return None


# ----------------------------------------------------------------------------------------
# Operand preparation and type promotion (Note [Torch's promotion, not numpy's] in dtypes)


cdef inline bint _is_number(object x):
    return type(x) is float or type(x) is int or type(x) is bool or isinstance(x, (int, float, np.generic))


cdef object _operand_dtype_info(object x):
    if isinstance(x, Tensor):
        return (_dtype_of_array((<Tensor>x)._data), (<Tensor>x)._data.ndim)
    if _is_number(x):
        if isinstance(x, np.generic):
            return float(x) if isinstance(x, np.floating) else (bool(x) if isinstance(x, np.bool_) else int(x))
        return x
    raise TypeError(
        f"unsupported operand type {type(x).__name__!r}: expected a Tensor or a Python number "
        "(wrap arrays and lists with gradstack.tensor(...))"
    )


cdef tuple _promote_binary(object a, object b, int kind):
    """Return ``(x, y, out_dtype)``: numpy operands already cast to torch's result dtype.

    ``out_dtype`` is the numpy dtype of the result (bool for comparisons).
    """
    cdef Tensor ta, tb
    cdef int na, nb
    cdef object x, y, res
    if isinstance(a, Tensor):
        ta = <Tensor>a
        if isinstance(b, Tensor):
            tb = <Tensor>b
            na = cnp.PyArray_TYPE(ta._data)
            nb = cnp.PyArray_TYPE(tb._data)
            if na == nb and (kind != K_BINARY_FLOAT or _is_float_num(na)):
                return (ta._data, tb._data, None)
        elif (type(b) is float or type(b) is int) and _is_float_num(cnp.PyArray_TYPE(ta._data)):
            return (ta._data, b, None)
    elif isinstance(b, Tensor) and (type(a) is float or type(a) is int) \
            and _is_float_num(cnp.PyArray_TYPE((<Tensor>b)._data)):
        return (a, (<Tensor>b)._data, None)
    # the general case: torch's result type
    res = _dt.result_type([_operand_dtype_info(a), _operand_dtype_info(b)])
    if kind == K_BINARY_FLOAT and not res.is_floating_point:
        res = _dt.get_default_dtype()
    x = _cast_operand(a, res)
    y = _cast_operand(b, res)
    return (x, y, None)


cdef object _cast_operand(object v, object res):
    cdef cnp.ndarray arr
    if isinstance(v, Tensor):
        arr = (<Tensor>v)._data
        if arr.dtype != res.numpy:
            return arr.astype(res.numpy)
        return arr
    if isinstance(v, np.generic):
        v = v.item()
    if res is _dt.bool_:
        return bool(v)
    if res.is_floating_point:
        try:
            return float(v)
        except OverflowError:
            raise RuntimeError(
                f"value cannot be converted to type {res.name} without overflow ({v})"
            ) from None
    if isinstance(v, float):
        return v
    return _wrap_int(int(v), res)


cdef dict _INT_RANGE = {}


cdef object _wrap_int(object v, object res):
    """A Python int as the integer dtype ``res`` holds it.

    Note [Python ints wrap like torch's]
    torch casts a Python int to the result dtype of the op, wrapping around
    (``uint8_tensor + 300`` adds 44); numpy 2 raises OverflowError instead.  An int that
    does not fit 64 bits raises RuntimeError, as torch's "Overflow when unpacking long".
    """
    bounds = _INT_RANGE.get(res)
    if bounds is None:
        info = np.iinfo(res.numpy)
        bounds = _INT_RANGE[res] = (int(info.min), int(info.max))
    lo, hi = bounds
    if lo <= v <= hi:
        return v
    if not -2**63 <= v < 2**63:
        raise RuntimeError(f"Overflow when unpacking long: {v} does not fit in 64 bits")
    return (v - lo) % (hi - lo + 1) + lo


# ----------------------------------------------------------------------------------------
# Small-array C loops (Note [Small float arrays take C loops])

ctypedef fused real:
    float
    double

cdef enum BinCode:
    B_ADD = 1
    B_SUB = 2
    B_MUL = 3
    B_DIV = 4

cdef enum UnCode:
    U_NEG = 1
    U_EXP = 2
    U_LOG = 3
    U_SQRT = 4
    U_SIN = 5
    U_COS = 6
    U_TANH = 7
    U_SIGMOID = 8
    U_RELU = 9
    U_ABS = 10


cdef inline void _bin_loop(real* out, real* x, real* y, Py_ssize_t n, int code) noexcept nogil:
    cdef Py_ssize_t i
    if code == B_ADD:
        for i in range(n):
            out[i] = x[i] + y[i]
    elif code == B_SUB:
        for i in range(n):
            out[i] = x[i] - y[i]
    elif code == B_MUL:
        for i in range(n):
            out[i] = x[i] * y[i]
    else:
        for i in range(n):
            out[i] = x[i] / y[i]


cdef inline void _bin_scalar_loop(real* out, real* x, real s, Py_ssize_t n, int code,
                                  bint scalar_first) noexcept nogil:
    cdef Py_ssize_t i
    if code == B_ADD:
        for i in range(n):
            out[i] = x[i] + s
    elif code == B_MUL:
        for i in range(n):
            out[i] = x[i] * s
    elif code == B_SUB:
        if scalar_first:
            for i in range(n):
                out[i] = s - x[i]
        else:
            for i in range(n):
                out[i] = x[i] - s
    else:
        if scalar_first:
            for i in range(n):
                out[i] = s / x[i]
        else:
            for i in range(n):
                out[i] = x[i] / s


cdef inline void _un_loop(real* out, real* x, Py_ssize_t n, int code) noexcept nogil:
    cdef Py_ssize_t i
    cdef real v
    cdef double d, e
    if code == U_NEG:
        for i in range(n):
            out[i] = -x[i]
    elif code == U_EXP:
        for i in range(n):
            out[i] = <real>exp(x[i])
    elif code == U_LOG:
        for i in range(n):
            out[i] = <real>log(x[i])
    elif code == U_SQRT:
        for i in range(n):
            out[i] = <real>sqrt(x[i])
    elif code == U_SIN:
        for i in range(n):
            out[i] = <real>sin(x[i])
    elif code == U_COS:
        for i in range(n):
            out[i] = <real>cos(x[i])
    elif code == U_TANH:
        for i in range(n):
            out[i] = <real>tanh(x[i])
    elif code == U_SIGMOID:
        # 1 / (1 + e^-v) for v >= 0, e^v / (1 + e^v) below, with e = exp(-|v|) <= 1: one
        # exp and no branch (the sign of random data defeats prediction), never overflows
        for i in range(n):
            d = x[i]
            e = exp(-fabs(d))
            out[i] = <real>((1.0 if d >= 0 else e) / (1.0 + e))
    elif code == U_RELU:
        for i in range(n):
            v = x[i]
            # relu(nan) is nan, as in torch
            out[i] = v if (v > 0 or v != v) else <real>0
    elif code == U_ABS:
        for i in range(n):
            out[i] = <real>fabs(x[i])


cdef inline bint _small_float(cnp.ndarray a):
    return (cnp.PyArray_SIZE(a) <= _SMALL and cnp.PyArray_ISCARRAY_RO(a)
            and (cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT or cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE))


cdef object _small_binary(int code, object x, object y):
    """The C loop for ``x (op) y`` when it applies, else None."""
    cdef cnp.ndarray ax, ay, out
    cdef int num
    cdef Py_ssize_t n
    cdef double s
    if cnp.PyArray_Check(x):
        ax = <cnp.ndarray>x
        if not _small_float(ax):
            return None
        num = cnp.PyArray_TYPE(ax)
        n = cnp.PyArray_SIZE(ax)
        if cnp.PyArray_Check(y):
            ay = <cnp.ndarray>y
            if cnp.PyArray_TYPE(ay) != num or not cnp.PyArray_ISCARRAY_RO(ay) \
                    or not cnp.PyArray_SAMESHAPE(ax, ay):
                return None
            out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
            if num == cnp.NPY_FLOAT:
                _bin_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                          <float*>cnp.PyArray_DATA(ay), n, code)
            else:
                _bin_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                          <double*>cnp.PyArray_DATA(ay), n, code)
            return out
        if type(y) is float or type(y) is int:
            s = y
            if num == cnp.NPY_FLOAT and s == s and fabs(s) > 3.4028234663852886e38:
                return None  # overflows float32: let numpy decide
            out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                                 <float>s, n, code, False)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                                 s, n, code, False)
            return out
        return None
    if cnp.PyArray_Check(y) and (type(x) is float or type(x) is int):
        ay = <cnp.ndarray>y
        if not _small_float(ay):
            return None
        s = x
        num = cnp.PyArray_TYPE(ay)
        if num == cnp.NPY_FLOAT and s == s and fabs(s) > 3.4028234663852886e38:
            return None
        n = cnp.PyArray_SIZE(ay)
        out = cnp.PyArray_EMPTY(ay.ndim, cnp.PyArray_DIMS(ay), num, 0)
        if code == B_ADD or code == B_MUL:
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ay),
                                 <float>s, n, code, False)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ay),
                                 s, n, code, False)
        else:
            if num == cnp.NPY_FLOAT:
                _bin_scalar_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ay),
                                 <float>s, n, code, True)
            else:
                _bin_scalar_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ay),
                                 s, n, code, True)
        return out
    return None


cdef inline Py_ssize_t _unary_limit(int code, int num) noexcept:
    """The largest contiguous array a unary op's C loop takes (Note [Where the unary C
    loops stop]); larger ones go to numpy."""
    if code == U_NEG or code == U_ABS or code == U_RELU:
        return _SMALL
    if num == cnp.NPY_FLOAT:
        if code == U_SIGMOID:
            return 512
        if code == U_SQRT:
            return 256
        if code == U_EXP or code == U_LOG:
            return 128
        if code == U_TANH:
            return 32
        return 64                   # sin, cos
    if code == U_SQRT:
        return 256
    if code == U_TANH:
        return 512
    return _SMALL                   # exp, log, sin, cos, sigmoid


def _unary_c_limit(str name, dtype):
    """The largest C-contiguous array of numpy ``dtype`` whose ``name`` op takes the C loop
    (0 when the op has none); for tests."""
    cdef int code = _UN_CODES.get(name, 0)
    cdef int num = np.dtype(dtype).num
    if not code or (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE):
        return 0
    return _unary_limit(code, num)


cdef object _small_unary(int code, cnp.ndarray ax):
    cdef cnp.ndarray out
    cdef int num
    if not _small_float(ax):
        return None
    num = cnp.PyArray_TYPE(ax)
    if cnp.PyArray_SIZE(ax) > _unary_limit(code, num):
        return None
    out = cnp.PyArray_EMPTY(ax.ndim, cnp.PyArray_DIMS(ax), num, 0)
    if num == cnp.NPY_FLOAT:
        _un_loop(<float*>cnp.PyArray_DATA(out), <float*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), code)
    else:
        _un_loop(<double*>cnp.PyArray_DATA(out), <double*>cnp.PyArray_DATA(ax),
                 cnp.PyArray_SIZE(ax), code)
    return out


# ----------------------------------------------------------------------------------------
# Generic elementwise kernels

cdef dict _BIN_CODES = {}
cdef dict _UN_CODES = {}


cdef int _check_nargs(Op op, tuple args, Py_ssize_t lo, Py_ssize_t hi) except -1:
    """Note [C kernels check their arity]
    The module is compiled with ``boundscheck=False``: ``args[1]`` of a 1-tuple reads past
    its end.  The C kernels are reachable with any arguments (``OPS["add"](x)``), so each
    checks the count first; it is one C comparison.
    """
    cdef Py_ssize_t n = len(args)
    if n < lo or n > hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise TypeError(f"{op.name}() takes {want} positional arguments but {n} were given")
    return 0


cdef object _binary_kernel(Op op, tuple args):
    _check_nargs(op, args, 2, 3)
    cdef object a = args[0], b = args[1], x, y, r
    cdef tuple prep
    cdef int code = _BIN_CODES.get(op.name, 0)
    if code == B_SUB and (_is_bool_operand(a) or _is_bool_operand(b)):
        raise _bool_sub_error()
    if len(args) > 2 and args[2] is not None and (args[2] != 1 or type(args[2]) is bool):
        # add/sub alpha (True == 1, but a bool alpha has its own rule)
        b = _scaled(a, b, args[2])
    prep = _promote_binary(a, b, op.kind)
    x = prep[0]
    y = prep[1]
    try:
        if code:
            r = _small_binary(code, x, y)
            if r is not None:
                return wrap(<cnp.ndarray>r)
        r = _quiet_call2(op.ufunc, x, y)
    except ValueError as e:
        raise _shape_error_from(a, b, e) from None
    except TypeError as e:
        raise _dtype_error(op.name, a, b, e) from None
    except OverflowError as e:      # a Python number too large for the tensor's dtype
        raise RuntimeError(f"{op.name}: value cannot be converted without overflow ({e})") from None
    return wrap(_as_ndarray(r))


cdef object _scaled(object a, object b, object alpha):
    """``alpha * b`` for ``add``/``sub``, computed in the dtype of ``a (op) b``, as torch."""
    res = _dt.result_type([_operand_dtype_info(a), _operand_dtype_info(b)])
    if isinstance(alpha, bool):
        if res is not _dt.bool_:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, float) and not res.is_floating_point:
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    alpha = _cast_operand(alpha, res)
    if isinstance(b, Tensor):
        return wrap(_as_ndarray(np.multiply(_cast_operand(b, res), alpha)))
    return _cast_operand(b, res) * alpha


cdef inline bint _is_bool_operand(object x):
    if type(x) is bool:
        return True
    return isinstance(x, Tensor) and cnp.PyArray_TYPE((<Tensor>x)._data) == cnp.NPY_BOOL


cdef object _bool_sub_error():
    return RuntimeError(
        "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
        "trying to invert a mask, use the `~` or `logical_not()` operator instead."
    )


cdef object _shape_error_from(object a, object b, object err):
    sa = _shape((<Tensor>a)._data) if isinstance(a, Tensor) else ()
    sb = _shape((<Tensor>b)._data) if isinstance(b, Tensor) else ()
    e = broadcast_error(sa, sb)
    return e if e is not None else RuntimeError(str(err))


cdef object _dtype_error(str name, object a, object b, object err):
    da = (<Tensor>a).dtype if isinstance(a, Tensor) else type(a).__name__
    db = (<Tensor>b).dtype if isinstance(b, Tensor) else type(b).__name__
    return TypeError(f"{name}: not supported for operands of type {da} and {db} ({err})")


cdef object _compare_kernel(Op op, tuple args):
    _check_nargs(op, args, 2, 2)
    cdef tuple prep = _promote_binary(args[0], args[1], K_BINARY)
    try:
        r = op.ufunc(prep[0], prep[1])
    except ValueError as e:
        raise _shape_error_from(args[0], args[1], e) from None
    return wrap(_as_ndarray(r))


cdef object _unary_kernel(Op op, tuple args):
    _check_nargs(op, args, 1, 1)
    cdef Tensor t = _expect_tensor(args[0], op.name)
    cdef cnp.ndarray x = t._data
    cdef int code
    if op.kind == K_UNARY_FLOAT and not _is_float_num(cnp.PyArray_TYPE(x)):
        x = x.astype(_dt.get_default_dtype().numpy)
    code = _UN_CODES.get(op.name, 0)
    if code:
        r = _small_unary(code, x)
        if r is not None:
            return wrap(<cnp.ndarray>r)
    try:
        return wrap(_as_ndarray(_quiet_call1(op.ufunc, x)))
    except TypeError as e:      # numpy has no loop for this dtype (bitwise_not of a float)
        raise TypeError(
            f"{op.name}: not supported for tensors of type {_dtype_of_array(x)} ({e})"
        ) from None


cdef Tensor _expect_other(object x, str name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'other' must be a Tensor, not {type(x).__name__}")
    return <Tensor>x


cdef Tensor _expect_tensor(object x, str name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    return <Tensor>x


cdef bint _has_zero(cnp.ndarray a):
    """Whether a float32/float64 array holds a zero (a C scan when it is one dense block)."""
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    cdef bint found = False
    cdef float* f
    cdef double* d
    if not (cnp.PyArray_ISCARRAY_RO(a) or cnp.PyArray_ISFARRAY_RO(a)):
        return not np.all(a)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        f = <float*>cnp.PyArray_DATA(a)
        for i in range(n):
            found |= f[i] == 0
    else:
        d = <double*>cnp.PyArray_DATA(a)
        for i in range(n):
            found |= d[i] == 0
    return found


cdef bint _sigmoid_tail_c(cnp.ndarray x, cnp.ndarray out):
    """Redo ``out[i] = exp(x[i])`` where ``out[i]`` is 0 (exp(-x) overflowed: x < -88.7 in
    float32, -709.8 in float64, where sigmoid(x) = e^x / (1 + e^x) rounds to e^x, a
    subnormal or 0), in C when ``x`` and ``out`` share a dense layout; else False."""
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(out)
    cdef float* fx
    cdef float* fo
    cdef double* dx
    cdef double* do
    if cnp.PyArray_TYPE(x) != cnp.PyArray_TYPE(out) or not (
            (cnp.PyArray_ISCARRAY_RO(x) and cnp.PyArray_ISCARRAY_RO(out))
            or (cnp.PyArray_ISFARRAY_RO(x) and cnp.PyArray_ISFARRAY_RO(out))):
        return False
    if cnp.PyArray_TYPE(out) == cnp.NPY_FLOAT:
        fx = <float*>cnp.PyArray_DATA(x)
        fo = <float*>cnp.PyArray_DATA(out)
        for i in range(n):
            if fo[i] == 0:
                fo[i] = <float>exp(fx[i])
    else:
        dx = <double*>cnp.PyArray_DATA(x)
        do = <double*>cnp.PyArray_DATA(out)
        for i in range(n):
            if do[i] == 0:
                do[i] = exp(dx[i])
    return True


def _sigmoid_ufunc(x):
    """numpy path of sigmoid (Note [sigmoid on the numpy path]); ``x`` is a float array."""
    if not cnp.PyArray_Check(x):
        raise TypeError(f"sigmoid: expected a numpy array, got {type(x).__name__}")
    cdef cnp.ndarray a = x, out
    cdef int num = cnp.PyArray_TYPE(a)
    if num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE:
        # float16 computes in float32 and rounds once, as torch does
        return _sigmoid_ufunc(a.astype(np.float32)).astype(a.dtype)
    r = np.negative(a)
    out = r if cnp.PyArray_Check(r) else np.asarray(r)     # 0-d: numpy returns a scalar
    np.exp(out, out)                # out positionally: no keyword parsing
    np.add(out, 1, out)
    np.divide(1, out, out)
    if _has_zero(out) and not _sigmoid_tail_c(a, out):
        m = out == 0
        out[m] = np.exp(a[m])
    return out


def _tanh_ufunc(x):
    if x.dtype == np.float16:
        # numpy's float16 tanh is a scalar loop, ~3x slower than its float32 SIMD loop and
        # the two casts; both round the float32 value once (the same bits)
        return np.tanh(x.astype(np.float32)).astype(np.float16)
    return np.tanh(x)


def _relu_ufunc(x):
    if x.dtype == np.bool_:
        raise RuntimeError("relu is not implemented for bool tensors; cast with .float() first")
    # np.maximum propagates NaN (as torch's relu does) and maps -0.0 to +0.0, like the
    # np.where(isnan(x) | (x > 0), x, 0) it replaces, in one pass instead of four.
    return np.maximum(x, np.zeros((), x.dtype))


def _sign_ufunc(x):
    # numpy has no sign loop for bool; torch's sign of a bool tensor is the tensor itself.
    # torch computes (0 < x) - (x < 0): sign(nan) is 0 (numpy: nan) and sign(-0.0) is +0.0
    if x.dtype == np.bool_:
        return x.copy()
    r = np.sign(x)
    if x.dtype.kind == "f":
        r = np.where(r == r, r, r.dtype.type(0))
        r += 0      # -0.0 + 0 is +0.0
    return r


def _not_for_bool(str name, ufunc):
    """``ufunc`` refusing bool tensors as torch does (numpy would compute in float16)."""
    def checked(x):
        if x.dtype == np.bool_:
            raise RuntimeError(f'"{name}" is not implemented for bool tensors; cast with '
                               ".int() or .float() first")
        return ufunc(x)
    checked.__name__ = name
    return checked


def _integer_identity(ufunc):
    """A rounding ufunc that returns integer tensors unchanged, keeping their dtype."""
    def rounding(x):
        if x.dtype.kind in "iu":
            return x.copy()
        return ufunc(x)
    rounding.__name__ = ufunc.__name__
    return rounding


cdef str _operand_kind(object x, object y):
    """numpy kind ('b', 'i', 'u', 'f') of promoted operands, one of which is an array."""
    if cnp.PyArray_Check(x):
        return (<cnp.ndarray>x).dtype.kind
    if cnp.PyArray_Check(y):
        return (<cnp.ndarray>y).dtype.kind
    return "b" if type(x) is bool else ("f" if type(x) is float else "i")


def _no_bool_result(str name, ufunc):
    """``ufunc(x, y)`` refusing bool operands as torch does (numpy would compute int8)."""
    def checked(x, y, **kwargs):
        if _operand_kind(x, y) == "b":
            raise RuntimeError(
                f'"{name}" is not implemented for bool tensors; cast with .int() first'
            )
        return ufunc(x, y, **kwargs)
    checked.__name__ = name
    return checked


def _integer_division(str name, ufunc):
    """floor_divide/remainder: also, integer division by zero raises as torch does.

    numpy returns 0 (with a warning that the quiet path silences), a wrong number.
    """
    def checked(x, y, **kwargs):
        kind = _operand_kind(x, y)
        if kind == "b":
            raise RuntimeError(
                f'"{name}" is not implemented for bool tensors; cast with .int() first'
            )
        if kind in "iu" and not np.all(y):
            raise RuntimeError(
                f"ZeroDivisionError: integer {name} by zero (cast to float for inf/nan results)"
            )
        return ufunc(x, y, **kwargs)
    checked.__name__ = name
    return checked


def _rsqrt_ufunc(x):
    if x.dtype == np.float16:
        # in float32, rounded once, as torch: 1 / sqrt(x) in float16 rounds twice, and
        # 8402 of the 65536 float16 values came out an ulp off
        return (1.0 / np.sqrt(x.astype(np.float32))).astype(np.float16)
    return 1.0 / np.sqrt(x)


def _neg_ufunc(x):
    if x.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(x)


# ---- in-place elementwise


cdef object _check_inplace_target(Tensor t, str name):
    if not t._data.flags.writeable:
        raise RuntimeError(
            f"{name}: unsupported operation: more than one element of the written-to tensor "
            "refers to a single memory location (an expanded or broadcast view). Please "
            "clone() the tensor before performing the operation."
        )


cdef object _inplace_binary_kernel(Op op, tuple args):
    _check_nargs(op, args, 2, 3)
    cdef Tensor t = _expect_tensor(args[0], op.name)
    cdef object b = args[1], y
    cdef object res
    _check_inplace_target(t, op.name)
    if op.name == "sub_" and (_is_bool_operand(t) or _is_bool_operand(b)):
        raise _bool_sub_error()
    if len(args) > 2 and args[2] is not None and (args[2] != 1 or type(args[2]) is bool):
        b = _scaled(t, b, args[2])
    res = _dt.result_type([_operand_dtype_info(t), _operand_dtype_info(b)])
    if op.kind == K_BINARY_FLOAT and not res.is_floating_point:
        res = _dt.get_default_dtype()
    own = _dtype_of_array(t._data)
    if not can_cast_inplace(res, own):
        raise RuntimeError(
            f"{op.name}: result type {res.name} can't be cast to the desired output type "
            f"{own.name} (the tensor written in place). Use the out-of-place op, or cast first."
        )
    y = (<Tensor>b)._data if isinstance(b, Tensor) else _cast_operand(b, res)
    try:
        _quiet_inplace2(op.ufunc, t._data, y)
    except ValueError as e:
        raise RuntimeError(
            f"{op.name}: output with shape {list(_shape(t._data))} doesn't match the broadcast "
            f"shape of the operands ({e}); an in-place op cannot change the tensor's shape."
        ) from None
    t.bump_version(op.name)
    return t


def can_cast_inplace(res, own):
    """Whether an op whose result dtype is ``res`` may write into a tensor of ``own``.

    torch's ``canCast``: never from floating to integral, nor from non-bool to bool;
    within a category the result is cast (``int32_tensor += int64_tensor`` is fine).
    """
    return res is own or res._category <= own._category


cdef object _quiet_inplace2(object ufunc, cnp.ndarray x, object y):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return ufunc(x, y, out=x, casting="unsafe")
    token = _errstate_var.set(_errstate_ignore)
    try:
        return ufunc(x, y, out=x, casting="unsafe")
    finally:
        _errstate_var.reset(token)


cdef object _inplace_unary_kernel(Op op, tuple args):
    _check_nargs(op, args, 1, 1)
    cdef Tensor t = _expect_tensor(args[0], op.name)
    _check_inplace_target(t, op.name)
    if op.kind == K_UNARY_FLOAT and not _is_float_num(cnp.PyArray_TYPE(t._data)):
        raise RuntimeError(
            f"{op.name}: result type Float can't be cast to the desired output type "
            f"{_dtype_of_array(t._data).name}; use the out-of-place op {op.name.rstrip('_')}()"
        )
    # the path of the out-of-place op, so that t.op_() and t.op() give the same bits
    code = _UN_CODES.get(op.name, 0)
    r = _small_unary(code, t._data) if code else None
    if r is None:
        r = _quiet_call1(op.ufunc, t._data)
    np.copyto(t._data, r, casting="unsafe")
    t.bump_version(op.name)
    return t


# ----------------------------------------------------------------------------------------
# Sum: the hottest reduction gets a small-array loop


cdef object _sum_kernel(Op op, tuple args):
    _check_nargs(op, args, 1, 4)
    cdef Tensor t = _expect_tensor(args[0], "sum")
    cdef object dim = args[1] if len(args) > 1 else None
    cdef bint keepdim = args[2] if len(args) > 2 else False
    cdef object dtype = args[3] if len(args) > 3 else None
    cdef cnp.ndarray x = t._data, out
    cdef Py_ssize_t i, n
    cdef double acc
    if dtype is not None:
        x = x.astype(_dt.as_dtype(dtype).numpy)
    elif not _is_float_num(cnp.PyArray_TYPE(x)):
        x = x.astype(np.int64)       # torch sums bool and integers as int64
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        if not keepdim and _small_float(x):
            n = cnp.PyArray_SIZE(x)
            acc = 0.0
            if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT:
                for i in range(n):
                    acc += (<float*>cnp.PyArray_DATA(x))[i]
            else:
                for i in range(n):
                    acc += (<double*>cnp.PyArray_DATA(x))[i]
            out = cnp.PyArray_EMPTY(0, NULL, cnp.PyArray_TYPE(x), 0)
            if cnp.PyArray_TYPE(x) == cnp.NPY_FLOAT:
                (<float*>cnp.PyArray_DATA(out))[0] = <float>acc
            else:
                (<double*>cnp.PyArray_DATA(out))[0] = acc
            return wrap(out)
        axis = None
    else:
        axis = normalize_dims(dim, x.ndim)
    return wrap(_as_ndarray(_quiet_sum(x, axis, keepdim)))


cdef object _quiet_sum(cnp.ndarray x, object axis, bint keepdim):
    if _errstate_var is None:
        with np.errstate(all="ignore"):
            return np.add.reduce(x, axis=axis, keepdims=keepdim)
    token = _errstate_var.set(_errstate_ignore)
    try:
        return np.add.reduce(x, axis=axis, keepdims=keepdim)
    finally:
        _errstate_var.reset(token)


def normalize_dims(dim, Py_ssize_t ndim):
    """A dim or a sequence of dims as a tuple of non-negative axes (for numpy).

    Note [Dims of a 0-d tensor]
    torch lets a 0-d tensor be reduced over dim 0 or -1 (``tensor(2.).sum(0)``), as if it
    had one dimension of size 1; numpy has no axis to name.  The dims are checked, then
    mapped to the empty tuple of axes, over which numpy reduces nothing.
    """
    if isinstance(dim, (tuple, list)):
        axes = tuple(_normalize_dim(d, ndim) for d in dim)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {tuple(dim)} appears multiple times in the list of dims")
    else:
        axes = (_normalize_dim(dim, ndim),)
    return axes if ndim else ()


# ----------------------------------------------------------------------------------------
# The op table: elementwise ops with C kernels

cdef Op _elementwise(str name, int kind, ufunc, int code=0):
    cdef Op op = _new_op(name, kind, ufunc)
    if kind == K_COMPARE:
        op._ckernel = _compare_kernel
    elif kind == K_BINARY or kind == K_BINARY_FLOAT:
        op._ckernel = _binary_kernel
        if code:
            _BIN_CODES[name] = code
    else:
        op._ckernel = _unary_kernel
        if code:
            _UN_CODES[name] = code
    return op


cdef Op _inplace_of(Op base):
    cdef Op op = _new_op(base.name + "_", base.kind, base.ufunc, True, False)
    if base.kind == K_BINARY or base.kind == K_BINARY_FLOAT:
        op._ckernel = _inplace_binary_kernel
    else:
        op._ckernel = _inplace_unary_kernel
        if base.name in _UN_CODES:
            _UN_CODES[op.name] = _UN_CODES[base.name]
    return op


def _bool_aware(bool_ufunc, other_ufunc):
    def ufunc(x, y):
        if x.dtype == np.bool_ if hasattr(x, "dtype") else isinstance(x, bool):
            return bool_ufunc(x, y)
        return other_ufunc(x, y)
    return ufunc


cdef Op OP_ADD = _elementwise("add", K_BINARY, np.add, B_ADD)
cdef Op OP_SUB = _elementwise("sub", K_BINARY, np.subtract, B_SUB)
cdef Op OP_MUL = _elementwise("mul", K_BINARY, np.multiply, B_MUL)
cdef Op OP_DIV = _elementwise("div", K_BINARY_FLOAT, np.true_divide, B_DIV)
cdef Op OP_POW = _elementwise("pow", K_BINARY, _no_bool_result("pow", np.power))
cdef Op OP_MAXIMUM = _elementwise("maximum", K_BINARY, np.maximum)
cdef Op OP_MINIMUM = _elementwise("minimum", K_BINARY, np.minimum)
cdef Op OP_REMAINDER = _elementwise("remainder", K_BINARY,
                                    _integer_division("remainder", np.remainder))
cdef Op OP_FLOOR_DIVIDE = _elementwise("floor_divide", K_BINARY,
                                       _integer_division("floor_divide", np.floor_divide))
cdef Op OP_ATAN2 = _elementwise("atan2", K_BINARY_FLOAT, np.arctan2)
cdef Op OP_BITWISE_AND = _elementwise("bitwise_and", K_BINARY, np.bitwise_and)
cdef Op OP_BITWISE_OR = _elementwise("bitwise_or", K_BINARY, np.bitwise_or)
cdef Op OP_BITWISE_XOR = _elementwise("bitwise_xor", K_BINARY, np.bitwise_xor)
cdef Op OP_LOGICAL_AND = _elementwise("logical_and", K_COMPARE, np.logical_and)
cdef Op OP_LOGICAL_OR = _elementwise("logical_or", K_COMPARE, np.logical_or)
cdef Op OP_LOGICAL_XOR = _elementwise("logical_xor", K_COMPARE, np.logical_xor)

cdef Op OP_EQ = _elementwise("eq", K_COMPARE, np.equal)
cdef Op OP_NE = _elementwise("ne", K_COMPARE, np.not_equal)
cdef Op OP_LT = _elementwise("lt", K_COMPARE, np.less)
cdef Op OP_LE = _elementwise("le", K_COMPARE, np.less_equal)
cdef Op OP_GT = _elementwise("gt", K_COMPARE, np.greater)
cdef Op OP_GE = _elementwise("ge", K_COMPARE, np.greater_equal)

cdef Op OP_NEG = _elementwise("neg", K_UNARY, _neg_ufunc, U_NEG)
cdef Op OP_ABS = _elementwise("abs", K_UNARY, _not_for_bool("abs", np.absolute), U_ABS)
cdef Op OP_SIGN = _elementwise("sign", K_UNARY, _sign_ufunc)
cdef Op OP_RELU = _elementwise("relu", K_UNARY, _relu_ufunc, U_RELU)
cdef Op OP_FLOOR = _elementwise("floor", K_UNARY,
                                _not_for_bool("floor", _integer_identity(np.floor)))
cdef Op OP_CEIL = _elementwise("ceil", K_UNARY, _not_for_bool("ceil", _integer_identity(np.ceil)))
cdef Op OP_ROUND = _elementwise("round", K_UNARY,
                                _not_for_bool("round", _integer_identity(np.round)))
cdef Op OP_TRUNC = _elementwise("trunc", K_UNARY,
                                _not_for_bool("trunc", _integer_identity(np.trunc)))
cdef Op OP_LOGICAL_NOT = _elementwise("logical_not", K_UNARY, np.logical_not)
cdef Op OP_BITWISE_NOT = _elementwise("bitwise_not", K_UNARY, np.invert)
cdef Op OP_EXP = _elementwise("exp", K_UNARY_FLOAT, np.exp, U_EXP)
cdef Op OP_EXP2 = _elementwise("exp2", K_UNARY_FLOAT, np.exp2)
cdef Op OP_EXPM1 = _elementwise("expm1", K_UNARY_FLOAT, np.expm1)
cdef Op OP_LOG = _elementwise("log", K_UNARY_FLOAT, np.log, U_LOG)
cdef Op OP_LOG2 = _elementwise("log2", K_UNARY_FLOAT, np.log2)
cdef Op OP_LOG10 = _elementwise("log10", K_UNARY_FLOAT, np.log10)
cdef Op OP_LOG1P = _elementwise("log1p", K_UNARY_FLOAT, np.log1p)
cdef Op OP_SQRT = _elementwise("sqrt", K_UNARY_FLOAT, np.sqrt, U_SQRT)
cdef Op OP_RSQRT = _elementwise("rsqrt", K_UNARY_FLOAT, _rsqrt_ufunc)
cdef Op OP_RECIPROCAL = _elementwise("reciprocal", K_UNARY_FLOAT, np.reciprocal)
cdef Op OP_SIN = _elementwise("sin", K_UNARY_FLOAT, np.sin, U_SIN)
cdef Op OP_COS = _elementwise("cos", K_UNARY_FLOAT, np.cos, U_COS)
cdef Op OP_TAN = _elementwise("tan", K_UNARY_FLOAT, np.tan)
cdef Op OP_ASIN = _elementwise("asin", K_UNARY_FLOAT, np.arcsin)
cdef Op OP_ACOS = _elementwise("acos", K_UNARY_FLOAT, np.arccos)
cdef Op OP_ATAN = _elementwise("atan", K_UNARY_FLOAT, np.arctan)
cdef Op OP_SINH = _elementwise("sinh", K_UNARY_FLOAT, np.sinh)
cdef Op OP_COSH = _elementwise("cosh", K_UNARY_FLOAT, np.cosh)
cdef Op OP_TANH = _elementwise("tanh", K_UNARY_FLOAT, _tanh_ufunc, U_TANH)
cdef Op OP_SIGMOID = _elementwise("sigmoid", K_UNARY_FLOAT, _sigmoid_ufunc, U_SIGMOID)

for _name in ("add", "sub", "mul", "div", "pow", "remainder", "floor_divide", "atan2",
              "neg", "abs", "sign", "relu", "floor", "ceil", "round", "trunc",
              "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
              "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
              "tanh", "sigmoid", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
              "logical_not"):
    _inplace_of(OPS[_name])

cdef Op OP_ADD_ = OPS["add_"]
cdef Op OP_SUB_ = OPS["sub_"]
cdef Op OP_MUL_ = OPS["mul_"]
cdef Op OP_DIV_ = OPS["div_"]
cdef Op OP_POW_ = OPS["pow_"]

cdef Op OP_SUM = _new_op("sum")
OP_SUM._ckernel = _sum_kernel

# ops whose kernels are written in Python (_impl_*.py bind them at import)
_PYTHON_OPS = (
    # (name, inplace, view)
    ("rsub", False, False), ("where", False, False), ("clamp", False, False),
    ("clamp_", True, False), ("zero_", True, False), ("fill_", True, False),
    ("copy_", True, False), ("setitem_", True, False), ("masked_fill", False, False),
    ("masked_fill_", True, False), ("uniform_", True, False), ("normal_", True, False),
    ("mean", False, False), ("prod", False, False), ("max", False, False),
    ("min", False, False), ("amax", False, False), ("amin", False, False),
    ("argmax", False, False), ("argmin", False, False), ("var", False, False),
    ("std", False, False), ("norm", False, False), ("logsumexp", False, False),
    ("softmax", False, False), ("log_softmax", False, False), ("cumsum", False, False),
    ("matmul", False, False), ("mm", False, False), ("bmm", False, False),
    ("dot", False, False), ("outer", False, False), ("addmm", False, False),
    ("mv", False, False),
    ("view", False, True), ("reshape", False, False), ("transpose", False, True),
    ("permute", False, True), ("t", False, True), ("squeeze", False, True),
    ("unsqueeze", False, True), ("expand", False, True), ("flatten", False, False),
    ("narrow", False, True), ("select", False, True), ("getitem", False, False),
    ("split", False, True), ("chunk", False, True), ("unbind", False, True),
    ("alias", False, True), ("detach", False, True),
    ("cat", False, False), ("stack", False, False), ("clone", False, False),
    ("contiguous", False, False), ("to_dtype", False, False), ("expand_as", False, True),
    ("repeat", False, False), ("flip", False, False), ("tril", False, False),
    ("triu", False, False), ("index_select", False, False), ("gather", False, False),
    ("diag", False, False), ("trace", False, False), ("sort", False, False),
    ("topk", False, False),
)
for _name, _inplace, _view in _PYTHON_OPS:
    _new_op(_name, K_OTHER, None, _inplace, _view)

cdef Op OP_RSUB = OPS["rsub"]
cdef Op OP_WHERE = OPS["where"]
cdef Op OP_CLAMP = OPS["clamp"]
cdef Op OP_CLAMP_ = OPS["clamp_"]
cdef Op OP_ZERO_ = OPS["zero_"]
cdef Op OP_FILL_ = OPS["fill_"]
cdef Op OP_COPY_ = OPS["copy_"]
cdef Op OP_SETITEM_ = OPS["setitem_"]
cdef Op OP_MASKED_FILL = OPS["masked_fill"]
cdef Op OP_MASKED_FILL_ = OPS["masked_fill_"]
cdef Op OP_UNIFORM_ = OPS["uniform_"]
cdef Op OP_NORMAL_ = OPS["normal_"]
cdef Op OP_MEAN = OPS["mean"]
cdef Op OP_PROD = OPS["prod"]
cdef Op OP_MAX = OPS["max"]
cdef Op OP_MIN = OPS["min"]
cdef Op OP_AMAX = OPS["amax"]
cdef Op OP_AMIN = OPS["amin"]
cdef Op OP_ARGMAX = OPS["argmax"]
cdef Op OP_ARGMIN = OPS["argmin"]
cdef Op OP_VAR = OPS["var"]
cdef Op OP_STD = OPS["std"]
cdef Op OP_NORM = OPS["norm"]
cdef Op OP_LOGSUMEXP = OPS["logsumexp"]
cdef Op OP_SOFTMAX = OPS["softmax"]
cdef Op OP_LOG_SOFTMAX = OPS["log_softmax"]
cdef Op OP_CUMSUM = OPS["cumsum"]
cdef Op OP_MATMUL = OPS["matmul"]
cdef Op OP_MM = OPS["mm"]
cdef Op OP_BMM = OPS["bmm"]
cdef Op OP_DOT = OPS["dot"]
cdef Op OP_OUTER = OPS["outer"]
cdef Op OP_ADDMM = OPS["addmm"]
cdef Op OP_MV = OPS["mv"]
cdef Op OP_VIEW = OPS["view"]
cdef Op OP_RESHAPE = OPS["reshape"]
cdef Op OP_TRANSPOSE = OPS["transpose"]
cdef Op OP_PERMUTE = OPS["permute"]
cdef Op OP_T = OPS["t"]
cdef Op OP_SQUEEZE = OPS["squeeze"]
cdef Op OP_UNSQUEEZE = OPS["unsqueeze"]
cdef Op OP_EXPAND = OPS["expand"]
cdef Op OP_EXPAND_AS = OPS["expand_as"]
cdef Op OP_FLATTEN = OPS["flatten"]
cdef Op OP_NARROW = OPS["narrow"]
cdef Op OP_SELECT = OPS["select"]
cdef Op OP_GETITEM = OPS["getitem"]
cdef Op OP_SPLIT = OPS["split"]
cdef Op OP_CHUNK = OPS["chunk"]
cdef Op OP_UNBIND = OPS["unbind"]
cdef Op OP_ALIAS = OPS["alias"]
cdef Op OP_DETACH = OPS["detach"]
cdef Op OP_CLONE = OPS["clone"]
cdef Op OP_CONTIGUOUS = OPS["contiguous"]
cdef Op OP_TO_DTYPE = OPS["to_dtype"]
cdef Op OP_REPEAT = OPS["repeat"]
cdef Op OP_FLIP = OPS["flip"]
cdef Op OP_TRIL = OPS["tril"]
cdef Op OP_TRIU = OPS["triu"]
cdef Op OP_INDEX_SELECT = OPS["index_select"]
cdef Op OP_GATHER = OPS["gather"]
cdef Op OP_DIAG = OPS["diag"]
cdef Op OP_TRACE = OPS["trace"]
cdef Op OP_SORT = OPS["sort"]
cdef Op OP_TOPK = OPS["topk"]


# ----------------------------------------------------------------------------------------
# Argument normalisation for methods


cdef tuple _shape_from_args(tuple args, str name):
    """``view(2, 3)``, ``view((2, 3))`` and ``view(Size)`` all give ``(2, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' must be a tuple of ints, but found element of "
                f"type {type(s).__name__}"
            )
    return tuple(int(s) for s in args)


cdef object _dim_arg(object dim):
    if dim is None or isinstance(dim, (int, np.integer)):
        return dim
    if isinstance(dim, (tuple, list)):
        return tuple(dim)
    raise TypeError(f"dim must be an int, a tuple of ints or None, got {type(dim).__name__}")


# ----------------------------------------------------------------------------------------
# The Tensor


# Note [Cython methods check self]
# A cdef class's methods compiled as cyfunctions (Cython's default, binding=True) accept
# any object as ``self`` when called unbound: ``Tensor.dim(None)`` read a C field of None
# and crashed the interpreter.  With binding=False they are method descriptors, which
# check ``self`` as CPython's own types do and raise torch's TypeError ("descriptor 'dim'
# for '...Tensor' objects doesn't apply to a 'NoneType' object").  Every cdef class of
# the stack is compiled so; tests/test_crash_fuzz.py calls every method unbound.

# the storage of a tensor made by Tensor.__new__ alone: empty and read-only, so that
# nothing is ever written into this shared array
cdef cnp.ndarray _NO_DATA = np.empty((0,), dtype=np.float32)
_NO_DATA.flags.writeable = False


@cython.binding(False)
cdef class Tensor:
    """A multi-dimensional array of one dtype, stored as a numpy array.

    Create tensors with :func:`gradstack_tensor.tensor`, :func:`zeros`, :func:`randn` ...;
    ``Tensor(data)`` is torch's legacy constructor (a float32 copy of ``data``) and
    ``Tensor(2, 3)`` an uninitialised float32 tensor of that size.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> t = gt.tensor([[1., 2.], [3., 4.]])
    >>> t.shape
    gradstack.Size([2, 2])
    >>> (t * 2).sum().item()
    20.0
    >>> t.t().is_contiguous()
    False
    """

    __array_priority__ = 1000   # ndarray (op) Tensor defers to the Tensor's reflected op

    def __cinit__(self, *args, **kwargs):
        # Note [A tensor always has storage]: Tensor.__new__(Tensor), which runs no
        # __init__, gives an empty float32 tensor (as torch's), never a NULL array
        self._data = _NO_DATA
        self._requires_grad = False
        self._output_nr = 0
        self._is_inference = False

    def __init__(self, *args, **kwargs):
        cdef cnp.ndarray data
        if kwargs:
            raise TypeError(f"Tensor() takes no keyword arguments, got {sorted(kwargs)}")
        if len(args) == 0:
            data = np.empty((0,), dtype=np.float32)
        elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            src = args[0]
            if isinstance(src, Tensor):
                data = (<Tensor>src)._data.astype(np.float32)
            else:
                data = np.array(src, dtype=np.float32)
        else:
            data = np.empty(_shape_from_args(args, "Tensor"), dtype=np.float32)
        self._data = data

    @staticmethod
    def _make_subclass(cls, Tensor data not None, bint require_grad=False):
        """A ``cls`` instance sharing ``data``'s storage and version counter (for Parameter)."""
        cdef Tensor t = Tensor.__new__(cls)   # tp_new of Tensor: not a subclass's __new__
        t._data = data._data
        t._vc = data.version_counter()
        t._view_base = data._view_base
        if require_grad:
            t.requires_grad_(True)
        return t

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

    def _bump_version(self, str op_name="an in-place op"):
        """Record an in-place write (for kernels written in Python)."""
        self.bump_version(op_name)

    @property
    def _version(self):
        """How many in-place writes this tensor's storage has seen (shared with views)."""
        return self._vc.value if self._vc is not None else 0

    @property
    def _version_counter(self):
        return self.version_counter()

    @property
    def _base(self):
        """The tensor whose storage this view aliases, or None if it is not a view."""
        return self._view_base

    def _is_view(self):
        return self._view_base is not None

    @property
    def shape(self):
        """The size of each dimension, a :class:`Size`."""
        return Size(_shape(self._data))

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return Size(_shape(self._data))
        return _shape(self._data)[_normalize_dim(dim, self._data.ndim)] if self._data.ndim \
            else _size_of_scalar_dim(dim)

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        """The number of dimensions."""
        return self._data.ndim

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        """The number of elements."""
        return cnp.PyArray_SIZE(self._data)

    def nelement(self):
        return cnp.PyArray_SIZE(self._data)

    @property
    def dtype(self):
        """The element type (``gradstack_tensor.float32`` ...)."""
        return _dtype_of_array(self._data)

    @property
    def device(self):
        """Always the CPU."""
        return _cpu

    @property
    def is_cuda(self):
        return False

    @property
    def layout(self):
        return "strided"

    def element_size(self):
        return self._data.itemsize

    def stride(self, dim=None):
        """Strides in elements (torch's convention; numpy counts bytes)."""
        cdef Py_ssize_t item = self._data.itemsize
        strides = tuple(s // item for s in (<object>self._data).strides)
        if dim is None:
            return strides
        return strides[_normalize_dim(dim, self._data.ndim)]

    def storage_offset(self):
        """Offset in elements of the first element from the start of the base's storage."""
        if self._view_base is None:
            return 0
        base = self._view_base._data
        return (self._data.__array_interface__["data"][0]
                - base.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        """Whether the elements are laid out in row-major order without gaps."""
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        return _is_float_num(cnp.PyArray_TYPE(self._data))

    def is_complex(self):
        return False

    @property
    def is_leaf(self):
        """True for tensors that were not produced by a recorded op (``grad_fn is None``)."""
        return self._grad_fn is None

    @property
    def requires_grad(self):
        """Whether autograd records ops on this tensor."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._set_requires_grad(bool(value))

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return ``self``."""
        self._set_requires_grad(bool(requires_grad))
        return self

    cdef _set_requires_grad(self, bint value):
        if self._grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach()."
            )
        if value and not _is_float_num(cnp.PyArray_TYPE(self._data)):
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor is {_dtype_of_array(self._data)}); cast it with .float() first"
            )
        if value and self._is_inference and _autograd is not None \
                and not _autograd.is_inference_mode_enabled():
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed. Make a normal tensor with .clone() first."
            )
        self._requires_grad = value

    @property
    def grad_fn(self):
        """The node that produced this tensor, or None for leaves."""
        return self._grad_fn

    @property
    def grad(self):
        """The accumulated gradient (a Tensor) or None."""
        if self._grad is None and self._grad_fn is not None and _autograd is not None:
            _autograd.on_nonleaf_grad_access(self)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if _shape((<Tensor>value)._data) != _shape(self._data):
                raise RuntimeError(
                    f"assigned grad has data of a different size: grad shape "
                    f"{list(_shape((<Tensor>value)._data))} vs tensor shape {list(_shape(self._data))}"
                )
            if (<Tensor>value)._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: grad is "
                    f"{(<Tensor>value).dtype} but the tensor is {self.dtype}"
                )
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def data(self):
        """A tensor sharing this one's storage, outside autograd (``requires_grad=False``).

        In-place changes through ``.data`` are not seen by autograd's version checks.
        """
        cdef Tensor t = Tensor.__new__(Tensor)
        t._data = self._data
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._data = (<Tensor>value)._data

    def is_inference(self):
        """Whether this tensor was created in inference mode."""
        return self._is_inference

    # -- autograd methods (implemented by the layer above) ----------------------------

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. graph leaves (see gradstack_autograd)."""
        return _need_autograd("backward()").backward(
            self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None``, called with this tensor's gradient."""
        return _need_autograd("register_hook()").register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)``, called after a leaf's ``.grad`` was accumulated."""
        return _need_autograd("register_post_accumulate_grad_hook()") \
            .register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor during backward."""
        return _need_autograd("retain_grad()").retain_grad(self)

    @property
    def retains_grad(self):
        """True if this non-leaf tensor keeps its ``.grad`` (see :meth:`retain_grad`)."""
        if _autograd is None:
            return False
        return _autograd.retains_grad(self)

    def detach(self):
        """A new tensor sharing storage (and version counter), outside the graph."""
        return dispatch(OP_DETACH, (self,))

    def detach_(self):
        """Detach this tensor from the graph in place: it becomes a leaf."""
        if _autograd is not None:
            return _autograd.detach_(self)
        self._grad_fn = None
        self._requires_grad = False
        return self

    # -- conversion ---------------------------------------------------------------------

    def numpy(self, *, force=False):
        """The numpy array behind this tensor (shares memory)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        if copy:
            return self._data.copy()
        return self._data

    def item(self):
        """The single value of a one-element tensor as a Python number."""
        if cnp.PyArray_SIZE(self._data) != 1:
            raise RuntimeError(
                f"a Tensor with {cnp.PyArray_SIZE(self._data)} elements cannot be converted "
                "to Scalar; item() needs exactly one element (index it or reduce it first)"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists, or a number for a 0-d tensor."""
        return self._data.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or cnp.PyArray_SIZE(self._data) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if cnp.PyArray_SIZE(self._data) != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous "
                f"(this one has {cnp.PyArray_SIZE(self._data)}); use .any() or .all()"
            )
        return bool(self._data.reshape(()).item())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return _shape(self._data)[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(_shape(self._data)[0]))

    def __hash__(self):
        return id(self)

    def __copy__(self):
        """``copy.copy``: a tensor sharing this one's storage, as torch's (matplotlib copies
        the tensors it plots this way)."""
        cdef Tensor t = Tensor.__new__(type(self))
        t._data = self._data
        t._vc = self.version_counter()
        t._view_base = self._view_base
        t._requires_grad = self._requires_grad
        vars(t).update(vars(self))
        return t

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: an independent leaf with copied values, ``requires_grad`` and
        ``.grad`` (graph leaves only, as in torch)."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol; deep-copy x.detach() instead")
        if id(self) in memo:
            return memo[id(self)]
        import copy
        cdef Tensor t = Tensor.__new__(type(self))
        memo[id(self)] = t
        t._data = self._data.copy(order="K")
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = copy.deepcopy(self._grad, memo)
        vars(t).update(copy.deepcopy(vars(self), memo))
        return t

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "gradstack tensors are not pickled (pickle can execute code when loaded); use "
            "gradstack.save / gradstack.load, or .numpy() for the values."
        )

    def __repr__(self):
        from ._format import format_tensor
        suffixes = []
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self._grad_fn).__name__}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        d = _dtype_of_array(self._data)
        default = d is _dt.get_default_dtype() or d is _dt.int64 or d is _dt.bool_
        return format_tensor(self._data, dtype_name=repr(d), is_default_dtype=default,
                             suffixes=suffixes)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    # -- arithmetic operators -------------------------------------------------------------

    def __add__(self, other):
        return dispatch(OP_ADD, (self, other, 1))

    def __radd__(self, other):
        return dispatch(OP_ADD, (self, other, 1))

    def __iadd__(self, other):
        return dispatch(OP_ADD_, (self, other, 1))

    def __sub__(self, other):
        return dispatch(OP_SUB, (self, other, 1))

    def __rsub__(self, other):
        return dispatch(OP_RSUB, (self, other, 1))

    def __isub__(self, other):
        return dispatch(OP_SUB_, (self, other, 1))

    def __mul__(self, other):
        return dispatch(OP_MUL, (self, other))

    def __rmul__(self, other):
        return dispatch(OP_MUL, (self, other))

    def __imul__(self, other):
        return dispatch(OP_MUL_, (self, other))

    def __truediv__(self, other):
        return dispatch(OP_DIV, (self, other))

    def __rtruediv__(self, other):
        return dispatch(OP_DIV, (other, self))

    def __itruediv__(self, other):
        return dispatch(OP_DIV_, (self, other))

    def __floordiv__(self, other):
        return dispatch(OP_FLOOR_DIVIDE, (self, other))

    def __rfloordiv__(self, other):
        return dispatch(OP_FLOOR_DIVIDE, (other, self))

    def __mod__(self, other):
        return dispatch(OP_REMAINDER, (self, other))

    def __rmod__(self, other):
        return dispatch(OP_REMAINDER, (other, self))

    def __pow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return dispatch(OP_POW, (self, other))

    def __rpow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return dispatch(OP_POW, (other, self))

    def __ipow__(self, other):
        return dispatch(OP_POW_, (self, other))

    def __matmul__(self, other):
        return dispatch(OP_MATMUL, (self, other))

    def __rmatmul__(self, other):
        return dispatch(OP_MATMUL, (other, self))

    def __neg__(self):
        return dispatch(OP_NEG, (self,))

    def __pos__(self):
        return self

    def __abs__(self):
        return dispatch(OP_ABS, (self,))

    def __invert__(self):
        if self._data.dtype == np.bool_:
            return dispatch(OP_LOGICAL_NOT, (self,))
        return dispatch(OP_BITWISE_NOT, (self,))

    def __and__(self, other):
        return dispatch(OP_BITWISE_AND, (self, other))

    def __rand__(self, other):
        return dispatch(OP_BITWISE_AND, (self, other))

    def __or__(self, other):
        return dispatch(OP_BITWISE_OR, (self, other))

    def __ror__(self, other):
        return dispatch(OP_BITWISE_OR, (self, other))

    def __xor__(self, other):
        return dispatch(OP_BITWISE_XOR, (self, other))

    def __rxor__(self, other):
        return dispatch(OP_BITWISE_XOR, (self, other))

    def __eq__(self, other):
        return dispatch(OP_EQ, (self, other))

    def __ne__(self, other):
        return dispatch(OP_NE, (self, other))

    def __lt__(self, other):
        return dispatch(OP_LT, (self, other))

    def __le__(self, other):
        return dispatch(OP_LE, (self, other))

    def __gt__(self, other):
        return dispatch(OP_GT, (self, other))

    def __ge__(self, other):
        return dispatch(OP_GE, (self, other))

    # -- elementwise methods -------------------------------------------------------------

    def add(self, other, *, alpha=1):
        return dispatch(OP_ADD, (self, other, alpha))

    def add_(self, other, *, alpha=1):
        return dispatch(OP_ADD_, (self, other, alpha))

    def sub(self, other, *, alpha=1):
        return dispatch(OP_SUB, (self, other, alpha))

    def sub_(self, other, *, alpha=1):
        return dispatch(OP_SUB_, (self, other, alpha))

    subtract = sub

    def mul(self, other):
        return dispatch(OP_MUL, (self, other))

    def mul_(self, other):
        return dispatch(OP_MUL_, (self, other))

    multiply = mul

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return dispatch(OP_DIV, (self, other))
        return _rounded_div(self, other, rounding_mode)

    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            raise NotImplementedError("div_ with a rounding_mode; use div(..., rounding_mode=)")
        return dispatch(OP_DIV_, (self, other))

    divide = div
    true_divide = div

    def pow(self, exponent):
        return dispatch(OP_POW, (self, exponent))

    def pow_(self, exponent):
        return dispatch(OP_POW_, (self, exponent))

    def maximum(self, other):
        return dispatch(OP_MAXIMUM, (self, other))

    def minimum(self, other):
        return dispatch(OP_MINIMUM, (self, other))

    def remainder(self, other):
        return dispatch(OP_REMAINDER, (self, other))

    def floor_divide(self, other):
        return dispatch(OP_FLOOR_DIVIDE, (self, other))

    def atan2(self, other):
        return dispatch(OP_ATAN2, (self, other))

    def eq(self, other):
        return dispatch(OP_EQ, (self, other))

    def ne(self, other):
        return dispatch(OP_NE, (self, other))

    def lt(self, other):
        return dispatch(OP_LT, (self, other))

    def le(self, other):
        return dispatch(OP_LE, (self, other))

    def gt(self, other):
        return dispatch(OP_GT, (self, other))

    def ge(self, other):
        return dispatch(OP_GE, (self, other))

    def logical_and(self, other):
        return dispatch(OP_LOGICAL_AND, (self, other))

    def logical_or(self, other):
        return dispatch(OP_LOGICAL_OR, (self, other))

    def logical_xor(self, other):
        return dispatch(OP_LOGICAL_XOR, (self, other))

    def logical_not(self):
        return dispatch(OP_LOGICAL_NOT, (self,))

    def bitwise_and(self, other):
        return dispatch(OP_BITWISE_AND, (self, other))

    def bitwise_or(self, other):
        return dispatch(OP_BITWISE_OR, (self, other))

    def bitwise_xor(self, other):
        return dispatch(OP_BITWISE_XOR, (self, other))

    def bitwise_not(self):
        return dispatch(OP_BITWISE_NOT, (self,))

    def neg(self):
        return dispatch(OP_NEG, (self,))

    negative = neg

    def abs(self):
        return dispatch(OP_ABS, (self,))

    absolute = abs

    def sign(self):
        return dispatch(OP_SIGN, (self,))

    def relu(self):
        return dispatch(OP_RELU, (self,))

    def floor(self):
        return dispatch(OP_FLOOR, (self,))

    def ceil(self):
        return dispatch(OP_CEIL, (self,))

    def round(self):
        return dispatch(OP_ROUND, (self,))

    def trunc(self):
        return dispatch(OP_TRUNC, (self,))

    def exp(self):
        return dispatch(OP_EXP, (self,))

    def exp2(self):
        return dispatch(OP_EXP2, (self,))

    def expm1(self):
        return dispatch(OP_EXPM1, (self,))

    def log(self):
        return dispatch(OP_LOG, (self,))

    def log2(self):
        return dispatch(OP_LOG2, (self,))

    def log10(self):
        return dispatch(OP_LOG10, (self,))

    def log1p(self):
        return dispatch(OP_LOG1P, (self,))

    def sqrt(self):
        return dispatch(OP_SQRT, (self,))

    def rsqrt(self):
        return dispatch(OP_RSQRT, (self,))

    def reciprocal(self):
        return dispatch(OP_RECIPROCAL, (self,))

    def sin(self):
        return dispatch(OP_SIN, (self,))

    def cos(self):
        return dispatch(OP_COS, (self,))

    def tan(self):
        return dispatch(OP_TAN, (self,))

    def asin(self):
        return dispatch(OP_ASIN, (self,))

    def acos(self):
        return dispatch(OP_ACOS, (self,))

    def atan(self):
        return dispatch(OP_ATAN, (self,))

    def sinh(self):
        return dispatch(OP_SINH, (self,))

    def cosh(self):
        return dispatch(OP_COSH, (self,))

    def tanh(self):
        return dispatch(OP_TANH, (self,))

    def sigmoid(self):
        return dispatch(OP_SIGMOID, (self,))

    def square(self):
        return dispatch(OP_POW, (self, 2))

    def clamp(self, min=None, max=None):
        return dispatch(OP_CLAMP, (self, min, max))

    clip = clamp

    def clamp_(self, min=None, max=None):
        return dispatch(OP_CLAMP_, (self, min, max))

    clip_ = clamp_

    def clamp_min(self, min):
        return dispatch(OP_CLAMP, (self, min, None))

    def clamp_max(self, max):
        return dispatch(OP_CLAMP, (self, None, max))

    def where(self, condition, other):
        return dispatch(OP_WHERE, (condition, self, other))

    def masked_fill(self, mask, value):
        return dispatch(OP_MASKED_FILL, (self, mask, value))

    def masked_fill_(self, mask, value):
        return dispatch(OP_MASKED_FILL_, (self, mask, value))

    # in-place unary ops, one line each
    def neg_(self): return dispatch(OPS["neg_"], (self,))
    def abs_(self): return dispatch(OPS["abs_"], (self,))
    def sign_(self): return dispatch(OPS["sign_"], (self,))
    def relu_(self): return dispatch(OPS["relu_"], (self,))
    def floor_(self): return dispatch(OPS["floor_"], (self,))
    def ceil_(self): return dispatch(OPS["ceil_"], (self,))
    def round_(self): return dispatch(OPS["round_"], (self,))
    def trunc_(self): return dispatch(OPS["trunc_"], (self,))
    def exp_(self): return dispatch(OPS["exp_"], (self,))
    def expm1_(self): return dispatch(OPS["expm1_"], (self,))
    def log_(self): return dispatch(OPS["log_"], (self,))
    def log1p_(self): return dispatch(OPS["log1p_"], (self,))
    def sqrt_(self): return dispatch(OPS["sqrt_"], (self,))
    def rsqrt_(self): return dispatch(OPS["rsqrt_"], (self,))
    def reciprocal_(self): return dispatch(OPS["reciprocal_"], (self,))
    def sin_(self): return dispatch(OPS["sin_"], (self,))
    def cos_(self): return dispatch(OPS["cos_"], (self,))
    def tan_(self): return dispatch(OPS["tan_"], (self,))
    def tanh_(self): return dispatch(OPS["tanh_"], (self,))
    def sigmoid_(self): return dispatch(OPS["sigmoid_"], (self,))
    def remainder_(self, other): return dispatch(OPS["remainder_"], (self, other))
    def floor_divide_(self, other): return dispatch(OPS["floor_divide_"], (self, other))
    def asin_(self): return dispatch(OPS["asin_"], (self,))
    def acos_(self): return dispatch(OPS["acos_"], (self,))
    def atan_(self): return dispatch(OPS["atan_"], (self,))
    def sinh_(self): return dispatch(OPS["sinh_"], (self,))
    def cosh_(self): return dispatch(OPS["cosh_"], (self,))
    def exp2_(self): return dispatch(OPS["exp2_"], (self,))
    def log2_(self): return dispatch(OPS["log2_"], (self,))
    def log10_(self): return dispatch(OPS["log10_"], (self,))
    def logical_not_(self): return dispatch(OPS["logical_not_"], (self,))
    def bitwise_not_(self): return dispatch(OPS["bitwise_not_"], (self,))
    def atan2_(self, other): return dispatch(OPS["atan2_"], (self, other))
    def bitwise_and_(self, other): return dispatch(OPS["bitwise_and_"], (self, other))
    def bitwise_or_(self, other): return dispatch(OPS["bitwise_or_"], (self, other))
    def bitwise_xor_(self, other): return dispatch(OPS["bitwise_xor_"], (self, other))

    def zero_(self):
        """Fill with zeros in place."""
        return dispatch(OP_ZERO_, (self,))

    def fill_(self, value):
        """Fill with ``value`` in place."""
        return dispatch(OP_FILL_, (self, value))

    def copy_(self, src, non_blocking=False):
        """Copy ``src`` (broadcast to this shape) into this tensor in place."""
        return dispatch(OP_COPY_, (self, src))

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return dispatch(OP_UNIFORM_, (self, a, b, generator))

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        return dispatch(OP_NORMAL_, (self, mean, std, generator))

    # -- reductions -----------------------------------------------------------------------

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        return dispatch(OP_SUM, (self, _dim_arg(dim), keepdim, dtype))

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        return dispatch(OP_MEAN, (self, _dim_arg(dim), keepdim, dtype))

    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return dispatch(OP_PROD, (self, dim, keepdim, dtype))

    def max(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return dispatch(OP_MAXIMUM, (self, dim))
        return dispatch(OP_MAX, (self, dim, keepdim))

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return dispatch(OP_MINIMUM, (self, dim))
        return dispatch(OP_MIN, (self, dim, keepdim))

    def amax(self, dim=(), keepdim=False):
        return dispatch(OP_AMAX, (self, _dim_arg(dim), keepdim))

    def amin(self, dim=(), keepdim=False):
        return dispatch(OP_AMIN, (self, _dim_arg(dim), keepdim))

    def argmax(self, dim=None, keepdim=False):
        return dispatch(OP_ARGMAX, (self, dim, keepdim))

    def argmin(self, dim=None, keepdim=False):
        return dispatch(OP_ARGMIN, (self, dim, keepdim))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return dispatch(OP_VAR, (self, _dim_arg(dim), _correction(unbiased, correction), keepdim))

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return dispatch(OP_STD, (self, _dim_arg(dim), _correction(unbiased, correction), keepdim))

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        return dispatch(OP_NORM, (self, p, _dim_arg(dim), keepdim))

    def logsumexp(self, dim, keepdim=False):
        return dispatch(OP_LOGSUMEXP, (self, _dim_arg(dim), keepdim))

    def softmax(self, dim, dtype=None):
        return dispatch(OP_SOFTMAX, (self, dim, dtype))

    def log_softmax(self, dim, dtype=None):
        return dispatch(OP_LOG_SOFTMAX, (self, dim, dtype))

    def cumsum(self, dim, *, dtype=None):
        return dispatch(OP_CUMSUM, (self, dim, dtype))

    def all(self, dim=None, keepdim=False):
        r = self._data.all() if dim is None else self._data.all(axis=_normalize_dim(dim, self._data.ndim), keepdims=keepdim)
        return wrap(_as_ndarray(r))

    def any(self, dim=None, keepdim=False):
        r = self._data.any() if dim is None else self._data.any(axis=_normalize_dim(dim, self._data.ndim), keepdims=keepdim)
        return wrap(_as_ndarray(r))

    def count_nonzero(self, dim=None):
        return wrap(_as_ndarray(np.count_nonzero(self._data, axis=dim)).astype(np.int64))

    # -- linear algebra -------------------------------------------------------------------

    def matmul(self, other):
        return dispatch(OP_MATMUL, (self, other))

    def mm(self, mat2):
        return dispatch(OP_MM, (self, mat2))

    def bmm(self, mat2):
        return dispatch(OP_BMM, (self, mat2))

    def dot(self, other):
        return dispatch(OP_DOT, (self, other))

    def outer(self, vec2):
        return dispatch(OP_OUTER, (self, vec2))

    ger = outer

    def mv(self, vec):
        return dispatch(OP_MV, (self, vec))

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return dispatch(OP_ADDMM, (self, mat1, mat2, beta, alpha))

    # -- views and shape ------------------------------------------------------------------

    def view(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
            return dispatch(OP_TO_DTYPE, (self, _dt.as_dtype(shape[0]), False))  # view(dtype)
        return dispatch(OP_VIEW, (self, _shape_from_args(shape, "view")))

    def view_as(self, other):
        return dispatch(OP_VIEW, (self, _shape(_expect_other(other, "view_as")._data)))

    def reshape(self, *shape):
        return dispatch(OP_RESHAPE, (self, _shape_from_args(shape, "reshape")))

    def reshape_as(self, other):
        return dispatch(OP_RESHAPE, (self, _shape(_expect_other(other, "reshape_as")._data)))

    def transpose(self, dim0, dim1):
        return dispatch(OP_TRANSPOSE, (self, dim0, dim1))

    swapaxes = transpose

    def permute(self, *dims):
        return dispatch(OP_PERMUTE, (self, _shape_from_args(dims, "permute")))

    def t(self):
        return dispatch(OP_T, (self,))

    @property
    def T(self):
        if self._data.ndim <= 2:
            return dispatch(OP_T, (self,))
        return dispatch(OP_PERMUTE, (self, tuple(range(self._data.ndim - 1, -1, -1))))

    @property
    def mT(self):
        return dispatch(OP_TRANSPOSE, (self, -2, -1))

    def squeeze(self, dim=None):
        return dispatch(OP_SQUEEZE, (self, _dim_arg(dim)))

    def unsqueeze(self, dim):
        return dispatch(OP_UNSQUEEZE, (self, dim))

    def expand(self, *sizes):
        return dispatch(OP_EXPAND, (self, _shape_from_args(sizes, "expand")))

    def expand_as(self, other):
        return dispatch(OP_EXPAND, (self, _shape(_expect_other(other, "expand_as")._data)))

    def flatten(self, start_dim=0, end_dim=-1):
        return dispatch(OP_FLATTEN, (self, start_dim, end_dim))

    def ravel(self):
        return dispatch(OP_RESHAPE, (self, (-1,)))

    def narrow(self, dim, start, length):
        return dispatch(OP_NARROW, (self, dim, start, length))

    def select(self, dim, index):
        return dispatch(OP_SELECT, (self, dim, index))

    def split(self, split_size, dim=0):
        return dispatch(OP_SPLIT, (self, split_size, dim))

    def chunk(self, chunks, dim=0):
        return dispatch(OP_CHUNK, (self, chunks, dim))

    def unbind(self, dim=0):
        return dispatch(OP_UNBIND, (self, dim))

    def contiguous(self, memory_format=None):
        if self._data.flags.c_contiguous:
            return self
        return dispatch(OP_CONTIGUOUS, (self,))

    def clone(self, *, memory_format=None):
        return dispatch(OP_CLONE, (self,))

    def repeat(self, *sizes):
        return dispatch(OP_REPEAT, (self, _shape_from_args(sizes, "repeat")))

    def flip(self, *dims):
        return dispatch(OP_FLIP, (self, _shape_from_args(dims, "flip")))

    def tril(self, diagonal=0):
        return dispatch(OP_TRIL, (self, diagonal))

    def triu(self, diagonal=0):
        return dispatch(OP_TRIU, (self, diagonal))

    def index_select(self, dim, index):
        return dispatch(OP_INDEX_SELECT, (self, dim, index))

    def gather(self, dim, index):
        return dispatch(OP_GATHER, (self, dim, index))

    def diag(self, diagonal=0):
        return dispatch(OP_DIAG, (self, diagonal))

    def trace(self):
        return dispatch(OP_TRACE, (self,))

    def sort(self, dim=-1, descending=False):
        return dispatch(OP_SORT, (self, dim, descending))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return dispatch(OP_TOPK, (self, k, dim, largest, sorted))

    def __getitem__(self, index):
        return dispatch(OP_GETITEM, (self, index))

    def __setitem__(self, index, value):
        dispatch(OP_SETITEM_, (self, index, value))

    def __contains__(self, element):
        if isinstance(element, Tensor):
            element = (<Tensor>element)._data
        return bool((self._data == element).any())

    # -- dtype conversion -----------------------------------------------------------------

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``: a converted copy,
        or ``self`` when nothing changes (``copy=True`` forces a copy)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, _dt.dtype) or (isinstance(a, type) and a in (float, int, bool)):
                dtype = a
            else:
                device = a
        _check_device(device)
        if dtype is None:
            return dispatch(OP_CLONE, (self,)) if copy else self
        return _convert(self, _dt.as_dtype(dtype), bool(copy))

    def type(self, dtype=None):
        if dtype is None:
            return f"gradstack.{_TYPE_NAMES[self.dtype.name]}"
        return self.to(dtype)

    def type_as(self, other):
        return self.to(_expect_other(other, "type_as").dtype)

    def float(self):
        return _convert(self, _dt.float32, False)

    def double(self):
        return _convert(self, _dt.float64, False)

    def half(self):
        return _convert(self, _dt.float16, False)

    def long(self):
        return _convert(self, _dt.int64, False)

    def int(self):
        return _convert(self, _dt.int32, False)

    def bool(self):
        return _convert(self, _dt.bool_, False)

    def cpu(self):
        return self

    def cuda(self, device=None, non_blocking=False):
        _check_device("cuda")

    # -- new tensors like this one ----------------------------------------------------------

    def new_tensor(self, data, dtype=None, requires_grad=False):
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad=False):
        from .creation import zeros
        return zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False):
        from .creation import ones
        return ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False):
        from .creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, requires_grad=False):
        from .creation import empty
        return empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _size_of_scalar_dim(dim):
    _normalize_dim(dim, 0)
    raise IndexError("dimension specified as 0 but tensor has no dimensions")


cdef object _convert(Tensor t, object dtype, bint copy):
    """``t`` itself when it already has ``dtype`` (as torch's ``to``), else a converted copy."""
    if not copy and _dtype_of_array(t._data) is dtype:
        return t
    return dispatch(OP_TO_DTYPE, (t, dtype, copy))


cdef object _correction(object unbiased, object correction):
    if correction is not None:
        if unbiased is not None:
            raise TypeError("var/std: pass either unbiased or correction, not both")
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


def _rounded_div(a, b, mode):
    if mode == "trunc":
        return dispatch(OP_TRUNC, (dispatch(OP_DIV, (a, b)),))
    if mode == "floor":
        return dispatch(OP_FLOOR_DIVIDE, (a, b))
    raise ValueError(
        f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {mode!r}"
    )
