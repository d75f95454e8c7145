# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The op registry and the dispatch point: every op of the tensor library passes here.

Every op, from ``a * b`` to ``t.sum(1)``, is an :class:`Op` called through
:func:`dispatch`.  With no layer registered, dispatch checks one C integer and runs the
op's kernel.  Upper layers (autograd, the profiler, vmap's batching) subclass
:class:`DispatchLayer` and register themselves with :func:`register_layer`; this module
never imports them.

The built-in ops are declared by the op table, ``_op_table.py``; their kernels are bound
by ``_elementwise.pyx`` (C kernels) and the ``_impl_*.py`` modules (Python kernels).

Examples
--------
>>> import gradstack_tensor as gt
>>> op = gt.get_op("mul")
>>> op(gt.tensor([1., 2.]), 3).tolist()
[3.0, 6.0]
>>> class Count(gt.DispatchLayer):
...     calls = 0
...     def handle(self, op, args, next_index):
...         Count.calls += 1
...         return self.call_next(op, args, next_index)
>>> layer = Count(50)
>>> gt.register_layer(layer)
>>> _ = gt.tensor([1.]) + 1
>>> gt.unregister_layer(layer)
>>> Count.calls
1
"""
cimport cython


cdef extern from *:
    """
    /* Note [Inside a gradstack op]: this thread's depth of kernel calls (one C int per
       thread: the block cache reads it for large allocations only).  initial-exec: an
       offset from the thread pointer, no __tls_get_addr call (4 bytes of the static TLS
       that glibc reserves for libraries loaded later) */
    static __thread int gs_op_depth __attribute__((tls_model("initial-exec"))) = 0;
    """
    int gs_op_depth


KIND_OTHER = K_OTHER
KIND_BINARY = K_BINARY
KIND_BINARY_FLOAT = K_BINARY_FLOAT
KIND_COMPARE = K_COMPARE
KIND_UNARY = K_UNARY
KIND_UNARY_FLOAT = K_UNARY_FLOAT

# every registered op by name
OPS = {}


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
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
    aten : str, optional
        torch's name of the op, when torch has it (``"mul"``; ``"to"`` for ``to_dtype``):
        the profiler calls the op ``aten::<aten>``, else ``gradstack::<name>``.

    Notes
    -----
    Arguments are positional in a fixed order, the op's canonical signature (the Tensor
    methods normalise keyword arguments before dispatching), so that every layer can find
    an argument by position: ``sum(input, dim, keepdim, dtype)``.
    """

    def __init__(self, str name, int kind=K_OTHER, ufunc=None, *, bint inplace=False,
                 bint view=False, str aten=None):
        self.name = name
        self.kind = kind
        self.ufunc = ufunc
        self.inplace = inplace
        self.is_view = view
        self.aten = aten
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
        """Whether a kernel (C or Python) is bound."""
        return self._kernel is not None or self._ckernel != NULL

    def run_kernel(self, *args):
        """Run the kernel directly, below every dispatch layer."""
        return _run_marked(self, args)

    def run_own_kernel(self, *args):
        """Run the kernel itself on ``args``, as they are (no meta or bfloat16 handling:
        what those handlers call, Note [bfloat16 is stored by ml_dtypes and computed in
        float32])."""
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
        close = difflib.get_close_matches(str(name), OPS, n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no op named {name!r} is registered.{hint}") from None


cdef Op new_op(str name, int kind=K_OTHER, object ufunc=None, bint inplace=False,
               bint view=False, object aten=None):
    """Create and register an op; ValueError if the name is taken."""
    cdef Op op = Op(name, kind, ufunc, inplace=inplace, view=view, aten=aten)
    if name in OPS:
        raise ValueError(f"op {name!r} is registered twice")
    OPS[name] = op
    return op


def declare_op(str name, int kind, ufunc, bint inplace, bint view, aten):
    """Declare a built-in op: what the op table (``_op_table.py``) does for each row."""
    return new_op(name, kind, ufunc, inplace, view, aten)


def register_op(str name, kernel=None, *, bint inplace=False, bint view=False,
                str aten=None):
    """Register a new op with a Python kernel (for extensions of the library).

    ``aten`` is torch's name of the op, if torch has it (the profiler's event name).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> op = gt.register_op("double_it", lambda t: t * 2)
    >>> op(gt.tensor([1., 2.])).tolist()
    [2.0, 4.0]
    >>> del gt.OPS["double_it"]  # the registry is process-wide: unregister when done
    """
    cdef Op op = new_op(name, K_OTHER, None, inplace, view, aten)
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
        """Run ``op`` on ``args``: this layer's work around ``call_next``."""
        return call_next(op, args, next_index)

    def call_next(self, Op op, tuple args, Py_ssize_t next_index):
        """Run the rest of the chain (the next layer, or the kernel)."""
        return call_next(op, args, next_index)


cdef Py_ssize_t layer_count() noexcept:
    """How many layers are on the dispatch point (1 when the autograd layer is alone)."""
    return _n_layers


def register_layer(DispatchLayer layer not None):
    """Add ``layer`` to the dispatch point (no-op if already there)."""
    global _layers, _n_layers
    if layer in _layers:
        return
    ordered = sorted(_layers + (layer,), key=lambda x: -(<DispatchLayer>x).priority)
    _layers = tuple(ordered)
    _n_layers = len(_layers)


def unregister_layer(DispatchLayer layer not None):
    """Remove ``layer`` from the dispatch point (no-op if it is not there)."""
    global _layers, _n_layers
    _layers = tuple(x for x in _layers if x is not layer)
    _n_layers = len(_layers)


def registered_layers():
    """The registered layers, outermost first."""
    return _layers


cdef int op_depth() noexcept nogil:
    """How many kernels this thread is running (nested), 0 outside every op.

    Note [Inside a gradstack op]
    The block cache of ``_allocator.pyx`` keeps only the large blocks gradstack allocated,
    never a block of the user's own numpy code (Note [Large blocks are reused, not returned
    to the kernel]).  What tells them apart is where the allocation happens: every op's
    result is made by its kernel, and every kernel runs here (``dispatch``, ``call_next``,
    ``Op.run_kernel``; the helpers that call ``run_kernel`` of ``_dispatch.pxd`` directly do
    so inside another op's kernel).  So the dispatch point counts, per thread, the kernels
    running (a C ``__thread`` int: two instructions around each kernel, where a
    ``threading.local`` or a context variable would cost a dict lookup), and the allocator
    asks for the count only for blocks of at least 1 MiB.  Another thread's count is its
    own: user code running while a kernel released the GIL is not inside an op.
    """
    return gs_op_depth


cdef void enter_op() noexcept nogil:
    """Count this thread into an op (for allocations made outside ``dispatch``, such as the
    gradients the autograd engine makes itself); pair each call with ``exit_op``."""
    global gs_op_depth
    gs_op_depth += 1


cdef void exit_op() noexcept nogil:
    """Count this thread out of the op entered with ``enter_op``."""
    global gs_op_depth
    gs_op_depth -= 1


# Note [Meta tensors carry no data] (meta.py): set when the first meta tensor is made; the
# kernel level then asks ``_meta_in(args)`` (a program that makes no meta tensor pays one
# flag test per op) and runs ``_meta_run(op, args)`` for an op on meta tensors
cdef bint _meta_seen = False
cdef object _meta_in = None
cdef object _meta_run = None


def note_meta_storage(has_meta, run):
    """From now on, run ``run(op, args)`` instead of the kernel when ``has_meta(args)``."""
    global _meta_seen, _meta_in, _meta_run
    _meta_in = has_meta
    _meta_run = run
    _meta_seen = True


# Note [bfloat16 is stored by ml_dtypes and computed in float32] (bfloat16.py): set when the
# first bfloat16 dtype is asked for; the kernel level then asks ``_bf16_in(args)`` and runs
# ``_bf16_run(op, args)`` (the kernel on float32 copies, results rounded to bfloat16)
cdef bint _bf16_seen = False
cdef object _bf16_in = None
cdef object _bf16_run = None


def note_bfloat16_storage(has_bfloat16, run):
    """From now on, run ``run(op, args)`` instead of the kernel when ``has_bfloat16(args)``."""
    global _bf16_seen, _bf16_in, _bf16_run
    _bf16_in = has_bfloat16
    _bf16_run = run
    _bf16_seen = True


cdef inline object _run_marked(Op op, tuple args):
    """``run_kernel`` with this thread counted inside an op (Note [Inside a gradstack op]);
    an op with a meta tensor among its arguments runs its shape function instead (Note
    [Meta tensors carry no data], below every layer, so autograd records it as usual)."""
    global gs_op_depth
    if _meta_seen and _meta_in(args):
        return _meta_run(op, args)
    gs_op_depth += 1
    try:
        if _bf16_seen and _bf16_in(args):
            return _bf16_run(op, args)
        return run_kernel(op, args)
    finally:
        gs_op_depth -= 1


cdef object call_next(Op op, tuple args, Py_ssize_t index):
    if index < _n_layers:
        return (<DispatchLayer>_layers[index]).handle(op, args, index + 1)
    return _run_marked(op, args)


cpdef object dispatch(Op op, tuple args):
    """Call ``op`` on ``args`` through every registered layer, outermost first."""
    if _n_layers == 0:
        return _run_marked(op, args)
    return (<DispatchLayer>_layers[0]).handle(op, args, 1)


cdef object arity_error(Op op, Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi):
    """The TypeError of a kernel called with ``n`` arguments (see ``check_nargs``)."""
    want = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return TypeError(f"{op.name}() takes {want} positional arguments but {n} were given")
