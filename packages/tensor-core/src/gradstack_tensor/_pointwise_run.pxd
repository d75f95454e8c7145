# The entry of the element-wise kernels of one input and an optional gradient
# (_erfc_kernels, _log_sigmoid_kernels): their checks, the output's allocation and the
# split into blocks of 64 elements across threads, inline in each module, which passes
# its C loop over [start, stop) as a function of a PointwiseCall.
cimport numpy as cnp
from cython.parallel cimport prange

from gradstack_tensor._dispatch cimport enter_op, exit_op
from gradstack_tensor._kernels cimport (
    _check_input, _check_same, kernel_avx2, kernel_avx512, kernel_block_size, kernel_threads,
)


# the arguments of one kernel call: the CPU switches, the dtype, the module's own
# parameters (kind, beta, threshold), the arrays (g is NULL without a gradient)
ctypedef struct PointwiseCall:
    int avx2
    int avx512
    int single
    int kind
    double beta
    double threshold
    const void* g
    const void* x
    void* out

ctypedef void (*pointwise_range_t)(const PointwiseCall* call, Py_ssize_t start,
                                   Py_ssize_t stop) noexcept nogil


cdef inline object run_pointwise(str func, pointwise_range_t loop, PointwiseCall* call,
                                 object grad, object x, int typenum, Py_ssize_t threshold):
    """``loop`` over a new array of x's shape and dtype `typenum` (x checked by
    ``_check_input`` already; `grad`, when not None, checked here against it), on
    ``kernel_threads(n, threshold)`` threads in blocks of a multiple of 64 elements, so
    that the vector loop and its scalar remainder split the array alike on any number of
    threads (the same bits)."""
    if grad is not None:
        _check_input(func, "grad", grad)
        _check_same(func, "grad", grad, "x", x)
        call.g = cnp.PyArray_DATA(<cnp.ndarray>grad)
    else:
        call.g = NULL
    cdef cnp.ndarray xa = <cnp.ndarray>x
    enter_op()
    try:
        out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(xa), cnp.PyArray_DIMS(xa), typenum, 0)
    finally:
        exit_op()
    cdef Py_ssize_t n = cnp.PyArray_SIZE(xa), block, start, step
    cdef int nthreads = kernel_threads(n, threshold)
    call.avx2 = kernel_avx2()
    call.avx512 = kernel_avx512()
    call.single = typenum == cnp.NPY_FLOAT
    call.x = cnp.PyArray_DATA(xa)
    call.out = cnp.PyArray_DATA(<cnp.ndarray>out)
    if nthreads <= 1:
        with nogil:
            loop(call, 0, n)
        return out
    step = (kernel_block_size(n, nthreads) + 63) // 64 * 64
    with nogil:
        for block in prange(nthreads, schedule="static", num_threads=nthreads):
            start = block * step
            loop(call, min(start, n), min(start + step, n))
    return out
