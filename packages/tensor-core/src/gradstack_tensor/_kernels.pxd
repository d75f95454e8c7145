# The C-level interface of the kernels' shared part (threads, argument checks, the AVX
# switches) for tensor-core's other kernel modules (_float32_transcendentals, _sgd_update,
# _sum_to_shape) and, through gradstack_tensor.extension, for the layers above (Note
# [Kernels of the layers above] in _kernels.pyx).
cimport cython
cimport numpy as cnp

cdef extern from *:
    """
    /* Note [AVX2 clones] in _kernels.pyx: the loops compiled twice, in every kernel module
       that cimports this file.  GS_BODY marks a loop's body, always inlined into its
       copies; GS_DISPATCH(name, args) calls name_avx2 or name_default by gs_avx2, the
       module's switch (or a parameter of that name). */
    #ifndef GS_KERNEL_MACROS
    #define GS_KERNEL_MACROS
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #  define GS_AVX2_CLONES 1
    #  define GS_BODY static inline __attribute__((always_inline))
    #  define GS_DISPATCH(name, args) (gs_avx2 ? name##_avx2 args : name##_default args)
    #else
    #  define GS_AVX2_CLONES 0
    #  define GS_BODY static CYTHON_INLINE
    #  define GS_DISPATCH(name, args) (name##_default args)
    #endif
    #endif
    """


# the element types of the kernels' loops
ctypedef fused real:
    float
    double


@cython.cdivision(True)
cdef inline Py_ssize_t kernel_block_size(Py_ssize_t n, int nblocks) noexcept nogil:
    """Elements per block when `n` elements are split into `nblocks` contiguous blocks."""
    return (n + nblocks - 1) // nblocks


cdef int kernel_threads(Py_ssize_t n, Py_ssize_t threshold) noexcept nogil
cdef Py_ssize_t kernel_parallel_threshold() noexcept nogil
cdef int kernel_avx2() noexcept nogil
cdef int kernel_avx512() noexcept nogil
cdef int _check_float_array(str func, str name, object obj) except -1
cdef int _check_input(str func, str name, object obj) except -1
cdef int _check_output(str func, str name, object obj) except -1
cdef int _check_same(str func, str name_a, object a, str name_b, object b) except -1
cdef int _check_disjoint(str func, str name_a, object a, str name_b, object b) except -1
cdef int _check_not_shifted(str func, str name_w, object written, str name_r,
                            object read) except -1
cdef double _as_float(str func, str name, object value) except? -1
