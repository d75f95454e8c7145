# cython: language_level=3
"""``masked_fill_block``: ``where(mask, value, x)`` for a mask that is one block repeated
over ``x``'s leading dims (Note [A mask repeated over the leading dims]), the causal mask
of attention (``(1, 1, T, T)`` over ``(B, heads, T, T)``) and a mask of ``x``'s shape.

Its float argument is checked, and its threads set, by ``_kernels.pyx``'s shared code;
public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._dispatch cimport enter_op, exit_op
from ._kernels cimport (
    _check_input, kernel_avx2, kernel_parallel_threshold, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = ["masked_fill_block"]

# Note [A mask repeated over the leading dims]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# masked_fill broadcasts its mask against the tensor; numpy's where(mask, value, x) walks
# the broadcast mask with zero strides through its generic iterator, ~2 ns an element.
# When the mask's dims, right-aligned to x's, are 1 before a suffix equal to x's trailing
# dims, the broadcast mask is that suffix's block repeated, so one loop over the blocks
# and one branch-free select per element (the compiler turns it into blends) does it: out
# = mask[j] ? value : x[o * block + j].  The value is rounded to x's dtype first, as
# torch's fill.  Blocks are split across threads from kernel_parallel_threshold()
# elements (a memory-bound pass, _kernels.pyx's threshold); every element is computed
# alike, so the split never changes the result.


cdef extern from *:
    """
    /* Note [A mask repeated over the leading dims]; GS_BODY, GS_DISPATCH: _kernels.pxd */
    #define GS_MF_BODY(name, T)                                                      \
    GS_BODY void name(T* restrict out, const T* restrict x,                          \
                      const unsigned char* restrict mask, T value,                   \
                      Py_ssize_t first, Py_ssize_t last, Py_ssize_t block) {         \
        Py_ssize_t o, j;                                                             \
        for (o = first; o < last; o++) {                                             \
            T* restrict dst = out + o * block;                                       \
            const T* restrict src = x + o * block;                                   \
            for (j = 0; j < block; j++)                                              \
                dst[j] = mask[j] ? value : src[j];                                   \
        }                                                                            \
    }
    GS_MF_BODY(gs_mf_body_f32, float)
    GS_MF_BODY(gs_mf_body_f64, double)
    #define GS_MF_COPIES(T, SUF)                                                     \
    static void gs_mf_##SUF##_default(T* out, const T* x, const unsigned char* m,    \
                                      T v, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n) \
    { gs_mf_body_##SUF(out, x, m, v, a, b, n); }
    GS_MF_COPIES(float, f32)
    GS_MF_COPIES(double, f64)
    #if GS_AVX2_CLONES
    __attribute__((target("avx2")))
    static void gs_mf_f32_avx2(float* out, const float* x, const unsigned char* m,
                               float v, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n)
    { gs_mf_body_f32(out, x, m, v, a, b, n); }
    __attribute__((target("avx2")))
    static void gs_mf_f64_avx2(double* out, const double* x, const unsigned char* m,
                               double v, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n)
    { gs_mf_body_f64(out, x, m, v, a, b, n); }
    #endif
    static void gs_mf_f32(int gs_avx2, float* out, const float* x, const unsigned char* m,
                          float v, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n)
    { GS_DISPATCH(gs_mf_f32, (out, x, m, v, a, b, n)); }
    static void gs_mf_f64(int gs_avx2, double* out, const double* x, const unsigned char* m,
                          double v, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n)
    { GS_DISPATCH(gs_mf_f64, (out, x, m, v, a, b, n)); }
    """
    void gs_mf_f32(int avx2, float* out, const float* x, const cnp.npy_bool* mask, float v,
                   Py_ssize_t first, Py_ssize_t last, Py_ssize_t block) noexcept nogil
    void gs_mf_f64(int avx2, double* out, const double* x, const cnp.npy_bool* mask,
                   double v, Py_ssize_t first, Py_ssize_t last, Py_ssize_t block) noexcept nogil


cdef inline void _fill_blocks(real* out, const real* x, const cnp.npy_bool* mask, real value,
                              Py_ssize_t first, Py_ssize_t last,
                              Py_ssize_t block) noexcept nogil:
    if real is float:
        gs_mf_f32(kernel_avx2(), out, x, mask, value, first, last, block)
    else:
        gs_mf_f64(kernel_avx2(), out, x, mask, value, first, last, block)


cdef void _fill(real* out, const real* x, const cnp.npy_bool* mask, real value,
                Py_ssize_t blocks, Py_ssize_t block, int nthreads) noexcept nogil:
    cdef Py_ssize_t o
    if nthreads <= 1 or blocks < 2:
        _fill_blocks(out, x, mask, value, 0, blocks, block)
        return
    for o in prange(blocks, schedule="static", num_threads=nthreads):
        _fill_blocks(out, x, mask, value, o, o + 1, block)


def masked_fill_block(x, mask, value):
    """``x`` with ``value`` where ``mask`` (repeated over ``x``'s leading elements) is
    True: ``out.flat[i] = value if mask.flat[i % mask.size] else x.flat[i]`` (Note [A mask
    repeated over the leading dims]).

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous.
    mask : ndarray
        bool, C-contiguous, its size dividing ``x.size`` (any shape: it is read flat).
    value : float
        The fill, rounded to ``x``'s dtype.

    Returns
    -------
    ndarray
        A new C-contiguous array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` is not float32/float64 or ``mask`` not a bool array.
    ValueError
        If an array is not C-contiguous, or ``mask``'s size does not divide ``x``'s.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import masked_fill_block
    >>> masked_fill_block(np.zeros((2, 3)), np.array([True, False, True]), 5.0)
    array([[5., 0., 5.],
           [5., 0., 5.]])
    """
    cdef str func = "masked_fill_block"
    cdef int typenum = _check_input(func, "x", x)
    if not cnp.PyArray_Check(mask) or mask.dtype != np.bool_:
        raise TypeError(
            f"{func}: mask must be a bool ndarray, got "
            f"{getattr(mask, 'dtype', type(mask).__name__)}; compare it first, for example "
            "mask != 0"
        )
    if not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>mask):
        raise ValueError(f"{func}: mask must be C-contiguous; pass np.ascontiguousarray(mask)")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>x)
    cdef Py_ssize_t block = cnp.PyArray_SIZE(<cnp.ndarray>mask)
    if (block == 0 and n != 0) or (block != 0 and n % block != 0):
        raise ValueError(
            f"{func}: the mask's {block} elements must divide x's {n} (a block repeated "
            "over x's leading dims)"
        )
    enter_op()
    try:
        out = np.empty_like(x, order="C")
    finally:
        exit_op()
    if n == 0:
        return out
    cdef Py_ssize_t blocks = n // block
    cdef double v = value
    cdef int nthreads = kernel_threads(n, kernel_parallel_threshold())
    cdef void* op = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef const void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef const cnp.npy_bool* mp = <const cnp.npy_bool*>cnp.PyArray_DATA(<cnp.ndarray>mask)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _fill(<float*>op, <const float*>xp, mp, <float>v, blocks, block, nthreads)
        else:
            _fill(<double*>op, <const double*>xp, mp, v, blocks, block, nthreads)
    return out
