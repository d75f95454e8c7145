# The op registry and the dispatch point, for the modules that cimport them (the kernels,
# the Tensor's method groups, and, through gradstack_tensor.extension, the layers above).

cdef enum:
    # Op.kind: how the generic elementwise kernels treat an op (KIND_* in Python)
    K_OTHER = 0
    K_BINARY = 1            # elementwise, torch promotion, result in the promoted dtype
    K_BINARY_FLOAT = 2      # elementwise, integer results become the default float
    K_COMPARE = 3           # elementwise, promoted inputs, bool result
    K_UNARY = 4             # elementwise, same dtype out
    K_UNARY_FLOAT = 5       # elementwise, integer inputs become the default float first


ctypedef object (*ckernel_t)(Op op, tuple args)


cdef class Op:
    cdef readonly str name
    cdef readonly int kind              # one of the K_* constants above
    cdef readonly bint inplace          # mutates its first argument
    cdef readonly bint is_view          # its output shares storage with its first argument
    cdef readonly object ufunc          # the numpy ufunc behind an elementwise op, else None
    cdef readonly object aten           # torch's name of the op (aten::<aten>), or None
    cdef object _kernel                 # Python-level kernel: kernel(*args) -> result
    cdef ckernel_t _ckernel             # C-level kernel, preferred when set
    cdef public object derivative       # the op's derivative-table entry, set by the autograd layer


cdef class DispatchLayer:
    cdef readonly int priority
    cpdef object handle(self, Op op, tuple args, Py_ssize_t next_index)


cdef Op new_op(str name, int kind=*, object ufunc=*, bint inplace=*, bint view=*, object aten=*)
cdef Py_ssize_t layer_count() noexcept
cdef object call_next(Op op, tuple args, Py_ssize_t index)
cpdef object dispatch(Op op, tuple args)
cdef object arity_error(Op op, Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi)

# Note [Inside a gradstack op] (_dispatch.pyx): this thread's count of running kernels, read
# by the block cache; enter_op/exit_op mark gradstack's allocations made outside a kernel.
cdef int op_depth() noexcept nogil
cdef void enter_op() noexcept nogil
cdef void exit_op() noexcept nogil


# The two helpers every op runs are inline here, so that the kernel modules, which are
# compiled separately, call them without a call through a function pointer.

cdef inline object run_kernel(Op op, tuple args):
    """Run ``op``'s kernel on ``args``, below every layer (the C kernel when it has one)."""
    if op is None or args is None:      # typed arguments let None through: never deref it
        raise TypeError("dispatch expects an Op and a tuple of arguments, got None")
    if op._ckernel != NULL:
        return op._ckernel(op, args)
    if op._kernel is None:
        raise NotImplementedError(f"op {op.name!r} has no kernel registered")
    return op._kernel(*args)


cdef inline int check_nargs(Op op, tuple args, Py_ssize_t lo, Py_ssize_t hi) except -1:
    """Note [C kernels check their arity]
    The kernel modules are compiled with ``boundscheck=False``: ``args[1]`` of a 1-tuple
    reads past its end.  The C kernels are reachable with any arguments
    (``OPS["add"](x)``), so each checks the count first; it is one C comparison.
    """
    cdef Py_ssize_t n = len(args)
    if n < lo or n > hi:
        raise arity_error(op, n, lo, hi)
    return 0
