# cython: language_level=3
"""The reduction of broadcast gradients, ``sum_to_shape``: a gradient summed back to the
shape of an input that was broadcast, with dedicated loops for the common forms (Note [How
sum_to_shape finds a fast path]) that accumulate in float64 and split their work by shape
only (Note [Deterministic parallel reductions]).

Its argument checks and thread settings are ``_kernels.pyx``'s; public as
``gradstack_tensor.kernels``.
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from ._kernels cimport _check_float_array, kernel_parallel_threshold, kernel_threads, real

import operator

import numpy as np

cnp.import_array()

__all__ = ["sum_to_shape"]

cdef enum:
    MAX_DIMS = 64                 # NPY_MAXDIMS in numpy 2
    STACK_COLUMNS = 256           # column sums of at most this many columns use the stack
    COLUMN_BLOCK = 256            # columns per task in the wide column-sum strategy
    WIDE_COLUMNS = 4096           # from this many columns, split column sums by columns
    REDUCTION_CHUNK = 1 << 14     # elements per task in chunked reductions
    MAX_ROW_CHUNKS = 256          # bounds the partial sums of tall column sums

# Note [How sum_to_shape finds a fast path]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The target shape splits grad's axes into kept and summed ones.  Then the plan
#   - drops axes of size 1 (they change no address),
#   - folds summed axes of stride 0 (an expanded view repeats one value n times) into a
#     factor `scale` that multiplies the result,
#   - merges neighbouring axes of the same kind when their strides allow it.
# Most gradients then have one of five forms, each with its own loop: nothing left (one
# element), [kept] (a strided copy), [summed] (one sum), [summed, kept] (column sums: the
# bias case (N, M) -> (M,)) and [kept, summed] (row sums: (N, M) -> (N, 1)).  Any other
# form (e.g. (A, B, C) -> (A, 1, C), or a transposed grad) goes to numpy's sum.
#
# Note [Float64 accumulation in sum_to_shape]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The fast paths accumulate in float64 and round once into the output dtype, so float32
# results are at least as accurate as numpy's (which sums float32 in float32: pairwise
# along a contiguous axis, sequentially across rows).  They therefore differ from numpy's
# float32 result by rounding, not bit for bit.
#
# Note [Deterministic parallel reductions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A reduction split per thread would add its partial sums in an order that depends on the
# thread count, and floating-point addition is not associative.  Here the split depends
# only on the shape: rows or columns are cut into pieces of fixed size (REDUCTION_CHUNK,
# COLUMN_BLOCK), OpenMP hands the pieces to whichever threads there are, each piece writes
# its own slot, and the slots are added in piece order on one thread.  One thread and
# sixteen give the same bits.

cdef struct ReductionPlan:
    int ndim                          # axes left after simplification (Note above)
    Py_ssize_t size[MAX_DIMS]
    Py_ssize_t stride[MAX_DIMS]       # in elements, may be negative or 0 (kept axes)
    bint summed[MAX_DIMS]
    double scale                      # product of the folded stride-0 summed axes


cdef int _parse_shape(object shape, cnp.npy_intp* dims) except -1:
    """Store `shape` (a sequence of non-negative ints, or one int) in `dims`; return its length."""
    cdef Py_ssize_t k, count, size
    if type(shape) is not tuple:
        shape = _shape_as_tuple(shape)
    count = len(shape)
    if count > MAX_DIMS:
        raise ValueError(
            f"sum_to_shape: shape has {count} dimensions, but numpy arrays have at most "
            f"{MAX_DIMS}"
        )
    for k in range(count):
        try:
            size = shape[k]  # any integer type (int, numpy ints, bool); not float
        except TypeError:
            raise TypeError(_shape_type_message(shape)) from None
        except OverflowError:
            raise ValueError(f"sum_to_shape: shape {shape} has a size too large") from None
        if size < 0:
            raise ValueError(f"sum_to_shape: shape {shape} has a negative size")
        dims[k] = size
    return count


def _shape_as_tuple(shape):
    try:
        return (operator.index(shape),)
    except TypeError:
        pass
    try:
        return tuple(shape)
    except TypeError:
        raise TypeError(_shape_type_message(shape)) from None


def _shape_type_message(shape):
    return f"sum_to_shape: shape must be a tuple of ints, got {shape!r}"


cdef tuple _dims_tuple(int ndim, const cnp.npy_intp* dims):
    return tuple([dims[k] for k in range(ndim)])


cdef int _mark_summed_axes(cnp.ndarray grad, int target_ndim, const cnp.npy_intp* target,
                           bint* summed) except -1:
    """Set summed[k] for each axis k of grad that broadcasting `target` to grad expands."""
    cdef int k, ndim = cnp.PyArray_NDIM(grad)
    cdef int lead = ndim - target_ndim
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(grad)
    cdef cnp.npy_intp size
    if lead < 0:
        raise ValueError(
            f"sum_to_shape: shape {_dims_tuple(target_ndim, target)} is not broadcastable "
            f"to grad's shape {(<object>grad).shape}: shape has {target_ndim} dimensions "
            f"and grad only {ndim}"
        )
    for k in range(ndim):
        if k < lead:
            summed[k] = True
            continue
        size = target[k - lead]
        if size == dims[k]:
            summed[k] = False
        elif size == 1:
            summed[k] = True
        else:
            raise ValueError(
                f"sum_to_shape: shape {_dims_tuple(target_ndim, target)} is not broadcastable "
                f"to grad's shape {(<object>grad).shape}: the size of shape ({size}) must be "
                f"1 or match the size of grad ({dims[k]}) at dimension {k}"
            )
    return 0


@cython.cdivision(True)
cdef bint _plan_reduction(cnp.ndarray grad, const bint* summed, ReductionPlan* plan) noexcept:
    """Simplify grad's axes into `plan`; False if a stride is not a whole number of items."""
    cdef int ndim = cnp.PyArray_NDIM(grad)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(grad)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(grad)
    cdef Py_ssize_t itemsize = cnp.PyArray_ITEMSIZE(grad)
    cdef Py_ssize_t size, stride
    cdef int k, last
    plan.ndim = 0
    plan.scale = 1.0
    if not cnp.PyArray_ISALIGNED(grad):
        return False
    for k in range(ndim):
        size = dims[k]
        if size == 1:
            continue
        if strides[k] % itemsize != 0:
            return False
        stride = strides[k] // itemsize
        if summed[k] and stride == 0:
            plan.scale *= size
            continue
        last = plan.ndim - 1
        if last >= 0 and plan.summed[last] == summed[k] and plan.stride[last] == stride * size:
            plan.size[last] *= size
            plan.stride[last] = stride
        else:
            plan.size[plan.ndim] = size
            plan.stride[plan.ndim] = stride
            plan.summed[plan.ndim] = summed[k]
            plan.ndim += 1
    return True


@cython.cdivision(True)
cdef double _strided_sum(const real* p, Py_ssize_t n, Py_ssize_t stride) noexcept nogil:
    """Sum n elements p[0], p[stride], ... in float64, with 8 independent accumulators."""
    cdef double acc0 = 0, acc1 = 0, acc2 = 0, acc3 = 0, acc4 = 0, acc5 = 0, acc6 = 0, acc7 = 0
    cdef Py_ssize_t i, tail = n - n % 8
    if stride == 1:
        for i in range(0, tail, 8):
            acc0 += p[i]
            acc1 += p[i + 1]
            acc2 += p[i + 2]
            acc3 += p[i + 3]
            acc4 += p[i + 4]
            acc5 += p[i + 5]
            acc6 += p[i + 6]
            acc7 += p[i + 7]
    else:
        for i in range(0, tail, 8):
            acc0 += p[i * stride]
            acc1 += p[(i + 1) * stride]
            acc2 += p[(i + 2) * stride]
            acc3 += p[(i + 3) * stride]
            acc4 += p[(i + 4) * stride]
            acc5 += p[(i + 5) * stride]
            acc6 += p[(i + 6) * stride]
            acc7 += p[(i + 7) * stride]
    for i in range(tail, n):
        acc0 += p[i * stride]
    return ((acc0 + acc1) + (acc2 + acc3)) + ((acc4 + acc5) + (acc6 + acc7))


@cython.cdivision(True)
cdef void _copy_scaled(const real* g, Py_ssize_t n, Py_ssize_t stride, double scale,
                       real* out, int nthreads) noexcept nogil:
    """out[i] = g[i * stride] * scale: a kept axis with nothing to sum."""
    cdef Py_ssize_t i
    if nthreads <= 1:
        for i in range(n):
            out[i] = <real>(g[i * stride] * scale)
    else:
        for i in prange(n, schedule="static", num_threads=nthreads):
            out[i] = <real>(g[i * stride] * scale)


@cython.cdivision(True)
cdef int _row_sums(const real* g, Py_ssize_t nrows, Py_ssize_t row_stride,
                   Py_ssize_t ncols, Py_ssize_t col_stride, double scale, real* out,
                   bint parallel, int nthreads) noexcept nogil:
    """out[i] = scale * sum_j g[i, j].  Return -1 when out of memory."""
    cdef Py_ssize_t i, task, piece, start, pieces_per_row, ntasks
    cdef double* partial
    cdef double total
    if not parallel:
        for i in range(nrows):
            out[i] = <real>(_strided_sum(g + i * row_stride, ncols, col_stride) * scale)
        return 0
    if ncols <= REDUCTION_CHUNK:
        for i in prange(nrows, schedule="static", num_threads=nthreads):
            out[i] = <real>(_strided_sum(g + i * row_stride, ncols, col_stride) * scale)
        return 0
    # Long rows: cut each into pieces of REDUCTION_CHUNK elements, sum the pieces in
    # parallel, then add them up row by row (Note [Deterministic parallel reductions]).
    pieces_per_row = (ncols + REDUCTION_CHUNK - 1) // REDUCTION_CHUNK
    ntasks = nrows * pieces_per_row
    partial = <double*>malloc(ntasks * sizeof(double))
    if partial == NULL:
        return -1
    for task in prange(ntasks, schedule="static", num_threads=nthreads):
        i = task // pieces_per_row
        start = (task % pieces_per_row) * REDUCTION_CHUNK
        partial[task] = _strided_sum(g + i * row_stride + start * col_stride,
                                     min(REDUCTION_CHUNK, ncols - start), col_stride)
    for i in range(nrows):
        total = 0
        for piece in range(pieces_per_row):
            total = total + partial[i * pieces_per_row + piece]
        out[i] = <real>(total * scale)
    free(partial)
    return 0


@cython.cdivision(True)
cdef void _add_rows_into(const real* g, Py_ssize_t row_start, Py_ssize_t row_stop,
                         Py_ssize_t row_stride, Py_ssize_t ncols, Py_ssize_t col_stride,
                         double* acc) noexcept nogil:
    """acc[j] += g[i, j] for rows i in [row_start, row_stop) and j < ncols."""
    cdef Py_ssize_t i, j
    cdef const real* row
    for i in range(row_start, row_stop):
        row = g + i * row_stride
        if col_stride == 1:
            for j in range(ncols):
                acc[j] += row[j]
        else:
            for j in range(ncols):
                acc[j] += row[j * col_stride]


@cython.cdivision(True)
cdef void _column_block_sums(const real* g, Py_ssize_t nrows, Py_ssize_t row_stride,
                             Py_ssize_t col_start, Py_ssize_t col_stop, Py_ssize_t col_stride,
                             double scale, real* out) noexcept nogil:
    """out[j] = scale * sum_i g[i, j] for j in [col_start, col_stop), at most COLUMN_BLOCK."""
    cdef double acc[COLUMN_BLOCK]
    cdef Py_ssize_t j, ncols = col_stop - col_start
    memset(acc, 0, ncols * sizeof(double))
    _add_rows_into(g + col_start * col_stride, 0, nrows, row_stride, ncols, col_stride, acc)
    for j in range(ncols):
        out[col_start + j] = <real>(acc[j] * scale)


@cython.cdivision(True)
cdef int _column_sums(const real* g, Py_ssize_t nrows, Py_ssize_t row_stride,
                      Py_ssize_t ncols, Py_ssize_t col_stride, double scale, real* out,
                      bint parallel, int nthreads) noexcept nogil:
    """out[j] = scale * sum_i g[i, j] (the bias case).  Return -1 when out of memory."""
    cdef double stack_acc[STACK_COLUMNS]
    cdef double* acc
    cdef Py_ssize_t j, block, nblocks, chunk, nchunks, rows_per_chunk, first
    if not parallel:
        if ncols <= STACK_COLUMNS:
            acc = &stack_acc[0]
        else:
            acc = <double*>malloc(ncols * sizeof(double))
        if acc == NULL:
            return -1
        memset(acc, 0, ncols * sizeof(double))
        _add_rows_into(g, 0, nrows, row_stride, ncols, col_stride, acc)
        for j in range(ncols):
            out[j] = <real>(acc[j] * scale)
        if acc != &stack_acc[0]:
            free(acc)
        return 0
    if ncols >= WIDE_COLUMNS:
        # Wide: every task sums all rows of COLUMN_BLOCK columns, in row order.
        nblocks = (ncols + COLUMN_BLOCK - 1) // COLUMN_BLOCK
        for block in prange(nblocks, schedule="static", num_threads=nthreads):
            _column_block_sums(g, nrows, row_stride, block * COLUMN_BLOCK,
                               min((block + 1) * COLUMN_BLOCK, ncols), col_stride, scale, out)
        return 0
    # Tall: every task sums a chunk of rows into its own row of `acc`; the chunks' rows are
    # then added in chunk order (Note [Deterministic parallel reductions]).  At most
    # MAX_ROW_CHUNKS chunks, so `acc` stays below 8 MB.
    rows_per_chunk = max(max(1, REDUCTION_CHUNK // ncols),
                         (nrows + MAX_ROW_CHUNKS - 1) // MAX_ROW_CHUNKS)
    nchunks = (nrows + rows_per_chunk - 1) // rows_per_chunk
    acc = <double*>malloc(nchunks * ncols * sizeof(double))
    if acc == NULL:
        return -1
    for chunk in prange(nchunks, schedule="static", num_threads=nthreads):
        first = chunk * rows_per_chunk
        memset(acc + chunk * ncols, 0, ncols * sizeof(double))
        _add_rows_into(g, first, min(first + rows_per_chunk, nrows), row_stride, ncols,
                       col_stride, acc + chunk * ncols)
    for chunk in range(1, nchunks):
        for j in range(ncols):
            acc[j] += acc[chunk * ncols + j]
    for j in range(ncols):
        out[j] = <real>(acc[j] * scale)
    free(acc)
    return 0


cdef int _reduce(const ReductionPlan* plan, const real* g, real* out, bint parallel,
                 int nthreads) noexcept nogil:
    """Run the loop for plan's form; 1 if the form has none, -1 when out of memory."""
    cdef Py_ssize_t size[2]
    cdef Py_ssize_t stride[2]
    size[0], size[1] = plan.size[0], plan.size[1]
    stride[0], stride[1] = plan.stride[0], plan.stride[1]
    if plan.ndim == 0:
        out[0] = <real>(g[0] * plan.scale)
        return 0
    if plan.ndim == 1 and not plan.summed[0]:
        _copy_scaled(g, size[0], stride[0], plan.scale, out, nthreads if parallel else 1)
        return 0
    if plan.ndim == 1:
        return _row_sums(g, 1, 0, size[0], stride[0], plan.scale, out, parallel, nthreads)
    if plan.ndim == 2 and plan.summed[0] and not plan.summed[1]:
        return _column_sums(g, size[0], stride[0], size[1], stride[1], plan.scale, out,
                            parallel, nthreads)
    if plan.ndim == 2 and not plan.summed[0] and plan.summed[1]:
        return _row_sums(g, size[0], stride[0], size[1], stride[1], plan.scale, out,
                         parallel, nthreads)
    return 1


cdef int _reduce_typed(const ReductionPlan* plan, int typenum, const void* g, void* out,
                       bint parallel, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        return _reduce(plan, <const float*>g, <float*>out, parallel, nthreads)
    return _reduce(plan, <const double*>g, <double*>out, parallel, nthreads)


def sum_to_shape(grad, shape):
    """Sum a broadcast gradient back to `shape`: the reverse of numpy broadcasting.

    Sums `grad` over its leading axes beyond ``len(shape)`` and over every axis where
    `shape` has 1 and `grad` does not, the way an autodiff engine reduces a gradient to
    the shape of an input that was broadcast.  Equivalent to
    ``grad.sum(axis=axes, keepdims=True).reshape(shape)``, but the common forms (the bias
    case ``(N, M) -> (M,)`` or ``(1, M)``, row sums, full sums, expanded views) run in
    dedicated loops that accumulate in float64 (Note [How sum_to_shape finds a fast path]);
    other forms use numpy's sum.

    Parameters
    ----------
    grad : ndarray
        float32 or float64, any strides (expanded views with stride 0 included).
    shape : tuple of int
        The target shape; it must broadcast to ``grad.shape``.  An int n means ``(n,)``.

    Returns
    -------
    ndarray
        A new C-contiguous array of exactly `shape`, with `grad`'s dtype (always a new
        array, also when nothing is summed: callers may skip the call when
        ``grad.shape == shape`` and they do not need a copy).

    Raises
    ------
    TypeError
        If `grad` is not a float32/float64 ndarray or `shape` is not a sequence of ints.
    ValueError
        If `shape` has a negative size or does not broadcast to ``grad.shape``.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sum_to_shape
    >>> grad = np.arange(6.0).reshape(2, 3)
    >>> sum_to_shape(grad, (3,))
    array([3., 5., 7.])
    >>> sum_to_shape(grad, (2, 1))
    array([[ 3.],
           [12.]])
    >>> sum_to_shape(np.broadcast_to(np.float64(2.0), (4, 5)), ())
    array(40.)
    """
    cdef int typenum = _check_float_array("sum_to_shape", "grad", grad)
    cdef cnp.ndarray g = <cnp.ndarray>grad
    cdef cnp.npy_intp out_dims[MAX_DIMS]
    cdef int out_ndim = _parse_shape(shape, out_dims)
    cdef bint summed[MAX_DIMS]
    _mark_summed_axes(g, out_ndim, out_dims, summed)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(out_ndim, out_dims, typenum, 0)
    if cnp.PyArray_SIZE(g) == 0:  # summing nothing gives zeros
        memset(cnp.PyArray_DATA(out), 0, cnp.PyArray_NBYTES(out))
        return out

    cdef ReductionPlan plan
    cdef int status = 1
    cdef Py_ssize_t n = cnp.PyArray_SIZE(g)
    cdef Py_ssize_t threshold = kernel_parallel_threshold()
    cdef bint parallel = n >= threshold
    cdef int nthreads = kernel_threads(n, threshold)   # (the set count when parallel)
    cdef void* gp = cnp.PyArray_DATA(g)
    cdef void* op_ = cnp.PyArray_DATA(out)
    if _plan_reduction(g, summed, &plan):
        if parallel:
            with nogil:
                status = _reduce_typed(&plan, typenum, gp, op_, parallel, nthreads)
        else:
            status = _reduce_typed(&plan, typenum, gp, op_, parallel, nthreads)
    if status < 0:
        raise MemoryError("sum_to_shape: out of memory for partial sums")
    if status > 0:
        _numpy_sum_into(g, summed, out)
    return out


cdef _numpy_sum_into(cnp.ndarray grad, const bint* summed, cnp.ndarray out):
    """The general case: numpy sums into `out` (viewed with the kept axes' shape)."""
    cdef int k
    axes = tuple([k for k in range(cnp.PyArray_NDIM(grad)) if summed[k]])
    grad_shape = (<object>grad).shape
    kept_shape = tuple([grad_shape[k] for k in range(cnp.PyArray_NDIM(grad)) if not summed[k]])
    np.sum(grad, axis=axes, out=out.reshape(kept_shape))
