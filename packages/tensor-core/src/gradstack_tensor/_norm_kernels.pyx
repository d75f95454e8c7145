# cython: language_level=3, cdivision=True
"""The row-wise kernels of normalisation: softmax and log_softmax along one dim, layer
norm, each with its backward, fused into one or two passes over each row.

Each kernel replaces a chain of numpy calls (max, subtract, exp, sum, divide: five passes
and four temporaries for a softmax).  The arrays are checked, and the threads set, by
``_kernels.pyx``'s shared code; public as ``gradstack_tensor.kernels``.  The ops'
kernels (``_impl_reduce.py``'s softmax and log_softmax, ``_impl_nn.py``'s layer_norm)
and graph-engine's backward formulas call them on C-contiguous float32/float64 arrays,
and keep their numpy path for everything else.

Rows
----
A softmax runs along one ``dim`` of a C-contiguous array, seen as ``(outer, n, inner)``:
``inner == 1`` (the last dim) reads each row in place; another dim reduces ``n`` rows of
``inner`` elements at once, with no transposed copy.  Layer norm normalises the last
``normalized`` elements of each row (``x.size // normalized`` rows).  Sums accumulate in
double for both dtypes and are rounded once; the results differ from torch's float32
kernels by at most a few ulps (torch sums in float32, in vector lanes).
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport sqrt
from libc.math cimport log as c_log
from libc.stdlib cimport free, malloc

import numpy as np

from ._kernels cimport (
    _as_float, _check_input, _check_same, kernel_avx2, kernel_block_size,
    kernel_threads, real,
)

cnp.import_array()

__all__ = ["layer_norm", "layer_norm_backward", "softmax", "softmax_backward"]


# Note [The softmax kernels take numpy's exp]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# numpy's exp is a SIMD loop (AVX-512 where the CPU has it: ~0.5 ns per float32 element
# on the 2-core EPYC), while an exp in this module, compiled for baseline x86-64, is
# scalar: a branch-free float32 exp computed in double (within 1 ulp) measured ~6 ns per
# element, libm's expf ~3-4 ns, and a softmax spending that per element lost to numpy's
# five passes from 1e4 elements.  So a softmax here is three passes instead of five,
# with no temporaries beyond the result: (1) each slice's maximum, and x - max written
# into the result; (2) numpy's exp of the result, in place; (3) each slice's sum (in
# double) and the normalisation, out * (1 / sum), or for log_softmax (x - max) -
# log(sum).  The backward of log_softmax takes exp(output) from numpy the same way.
# Same exp as the numpy path, so the same values to the last ulp or two.


# Note [Threads for the row kernels]
# A pass of these kernels costs ~1 ns per element; the split is by whole outer blocks, so
# a slice's sums never depend on the number of threads.  The kernels use threads only at
# or above ROW_THRESHOLD elements (and get_num_threads() > 1), the threshold of the cheap
# element-wise kernels divided by four for the two or three passes each one makes
# (Note [Choosing PARALLEL_THRESHOLD] in _kernels.pyx).
cdef Py_ssize_t _row_threshold = 1 << 14
ROW_THRESHOLD = _row_threshold


# ---------------------------------------------------------------------------------------
# softmax and log_softmax: slices of n elements, `inner` apart, in outer blocks of n * inner

cdef enum:
    PASS_MAX = 0         # mx = max over the slice; y = x - mx
    PASS_SOFTMAX = 1     # y = y / sum(y)
    PASS_LOG = 2         # y = (x - mx) - log(sum(y))
    PASS_GRAD = 3        # y = out * (g - sum(g * out))   (softmax's backward; x is out)
    PASS_LOG_GRAD = 4    # y = g - y * sum(g)             (log_softmax's; y holds exp(out))


cdef void _slice_pass(int kind, const real* x, const real* g, real* y, real* mx,
                      double* acc, Py_ssize_t n, Py_ssize_t inner) noexcept nogil:
    """One pass over the `inner` slices of one outer block (acc: `inner` doubles); the
    inner loops run along memory, one loop per kind so that each vectorises."""
    cdef Py_ssize_t i, j
    cdef real v, m
    cdef const real* xr
    cdef const real* gr
    cdef real* yr
    if kind == PASS_MAX:
        for i in range(inner):
            mx[i] = x[i]
        for j in range(1, n):
            xr = x + j * inner
            for i in range(inner):
                v = xr[i]
                m = mx[i]
                mx[i] = v if v > m else m   # (Note [Four accumulators]: NaN rows)
        for j in range(n):
            xr = x + j * inner
            yr = y + j * inner
            for i in range(inner):
                yr[i] = xr[i] - mx[i]
        return
    for i in range(inner):
        acc[i] = 0
    for j in range(n):
        xr = x + j * inner
        gr = g + j * inner if g != NULL else NULL
        yr = y + j * inner
        if kind == PASS_GRAD:
            for i in range(inner):
                acc[i] += gr[i] * xr[i]
        elif kind == PASS_LOG_GRAD:
            for i in range(inner):
                acc[i] += gr[i]
        else:
            for i in range(inner):
                acc[i] += yr[i]
    if kind == PASS_SOFTMAX:
        for i in range(inner):
            acc[i] = 1.0 / acc[i]
    elif kind == PASS_LOG:
        for i in range(inner):
            acc[i] = c_log(acc[i])
    for j in range(n):
        xr = x + j * inner
        gr = g + j * inner if g != NULL else NULL
        yr = y + j * inner
        if kind == PASS_SOFTMAX:
            for i in range(inner):
                yr[i] = <real>(yr[i] * acc[i])
        elif kind == PASS_LOG:
            for i in range(inner):
                yr[i] = (xr[i] - mx[i]) - <real>acc[i]
        elif kind == PASS_GRAD:
            for i in range(inner):
                yr[i] = xr[i] * (gr[i] - <real>acc[i])
        else:
            for i in range(inner):
                yr[i] = gr[i] - yr[i] * <real>acc[i]


# Note [Four accumulators]
# A row's maximum or sum taken in one chain waits for each step (~3-4 cycles for maxss or
# a double add: ~70% of a softmax's time was that chain); four chains, combined at the
# end, let the steps overlap.  The order of the additions depends only on n, never on
# threads.  A NaN in a row makes its exp NaN and so the whole row NaN, whatever the
# maximum made of it; +inf makes inf - inf, and a row of -inf -inf - -inf: NaN too, as
# torch.

cdef inline real _row_max(const real* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j, end = n - n % 4
    cdef real m0 = x[0], m1 = x[0], m2 = x[0], m3 = x[0], v
    for j in range(0, end, 4):
        v = x[j]
        m0 = v if v > m0 else m0
        v = x[j + 1]
        m1 = v if v > m1 else m1
        v = x[j + 2]
        m2 = v if v > m2 else m2
        v = x[j + 3]
        m3 = v if v > m3 else m3
    for j in range(end, n):
        v = x[j]
        m0 = v if v > m0 else m0
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    return m2 if m2 > m0 else m0


cdef inline double _row_dot(const real* a, const real* b, Py_ssize_t n) noexcept nogil:
    """sum(a * b) (b NULL: sum(a)), in double, in four chains."""
    cdef Py_ssize_t j, end = n - n % 4
    cdef double s0 = 0, s1 = 0, s2 = 0, s3 = 0
    if b == NULL:
        for j in range(0, end, 4):
            s0 += a[j]
            s1 += a[j + 1]
            s2 += a[j + 2]
            s3 += a[j + 3]
        for j in range(end, n):
            s0 += a[j]
    else:
        for j in range(0, end, 4):
            s0 += a[j] * b[j]
            s1 += a[j + 1] * b[j + 1]
            s2 += a[j + 2] * b[j + 2]
            s3 += a[j + 3] * b[j + 3]
        for j in range(end, n):
            s0 += a[j] * b[j]
    return (s0 + s1) + (s2 + s3)


cdef void _row_pass(int kind, const real* x, const real* g, real* y, real* mx,
                    Py_ssize_t n) noexcept nogil:
    """_slice_pass for inner == 1 (the last dim): one contiguous row."""
    cdef Py_ssize_t j
    cdef real m
    cdef double s
    cdef real sr
    if kind == PASS_MAX:
        m = _row_max(x, n)
        mx[0] = m
        for j in range(n):
            y[j] = x[j] - m
        return
    if kind == PASS_GRAD:
        sr = <real>_row_dot(g, x, n)
        for j in range(n):
            y[j] = x[j] * (g[j] - sr)
    elif kind == PASS_LOG_GRAD:
        sr = <real>_row_dot(g, NULL, n)
        for j in range(n):
            y[j] = g[j] - y[j] * sr
    else:
        s = _row_dot(y, NULL, n)
        if kind == PASS_SOFTMAX:
            s = 1.0 / s
            for j in range(n):
                y[j] = <real>(y[j] * s)
        else:
            sr = <real>c_log(s)
            m = mx[0]
            for j in range(n):
                y[j] = (x[j] - m) - sr


cdef int _pass_blocks(int kind, const real* x, const real* g, real* y, real* mx,
                      Py_ssize_t start, Py_ssize_t stop, Py_ssize_t n,
                      Py_ssize_t inner) noexcept nogil:
    """The pass over outer blocks [start, stop); -1 if scratch memory is missing."""
    cdef Py_ssize_t b, off, size = n * inner
    cdef double* acc = NULL
    if inner != 1:
        acc = <double*>malloc(inner * sizeof(double))
        if acc == NULL:
            return -1
    for b in range(start, stop):
        off = b * size
        if inner == 1:
            _row_pass(kind, x + off, g + off if g != NULL else NULL, y + off, mx + b, n)
        else:
            _slice_pass(kind, x + off, g + off if g != NULL else NULL, y + off,
                        mx + b * inner, acc, n, inner)
    free(acc)
    return 0


cdef int _run_pass(int kind, const real* x, const real* g, real* y, real* mx,
                   Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
                   int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    cdef int failed = 0
    if nthreads <= 1 or outer < 2:
        return _pass_blocks(kind, x, g, y, mx, 0, outer, n, inner)
    step = kernel_block_size(outer, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < outer:
            if _pass_blocks(kind, x, g, y, mx, start, min(start + step, outer), n,
                            inner) != 0:
                failed = 1
    return -failed


cdef int _pass(int kind, int typenum, cnp.ndarray x, object g, cnp.ndarray y,
               cnp.ndarray mx, Py_ssize_t outer, Py_ssize_t n, Py_ssize_t inner,
               int nthreads) except -1:
    cdef void* xp = cnp.PyArray_DATA(x)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>g) if g is not None else NULL
    cdef void* yp = cnp.PyArray_DATA(y)
    cdef void* mp = cnp.PyArray_DATA(mx) if mx is not None else NULL
    cdef int status
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            status = _run_pass(kind, <const float*>xp, <const float*>gp, <float*>yp,
                               <float*>mp, outer, n, inner, nthreads)
        else:
            status = _run_pass(kind, <const double*>xp, <const double*>gp, <double*>yp,
                               <double*>mp, outer, n, inner, nthreads)
    if status != 0:
        raise MemoryError(f"softmax: could not allocate {inner} doubles of scratch memory")
    return 0


cdef tuple _dim_split(cnp.ndarray x, object dim, str func):
    """(outer, n, inner) of C-contiguous `x` around `dim` (checked: an int in range)."""
    cdef int nd = cnp.PyArray_NDIM(x)
    if type(dim) is not int:
        raise TypeError(f"{func}: dim must be an int, got {type(dim).__name__}")
    if nd == 0 or not -nd <= dim < nd:
        raise ValueError(
            f"{func}: dim {dim} is out of range for an array with {nd} dimension(s); "
            f"0-d arrays are not supported (use the numpy expression)"
        )
    cdef int d = dim % nd
    cdef Py_ssize_t outer = 1, inner = 1, k
    for k in range(d):
        outer *= x.shape[k]
    for k in range(d + 1, nd):
        inner *= x.shape[k]
    return outer, x.shape[d], inner


# Note [float32 log_softmax rows with an exp of their own]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# log_softmax along the last dim of a float32 array needs each row's sum of exp(x - max),
# never the exps themselves: numpy's exp (Note [The softmax kernels take numpy's exp]) was
# ~0.45 ms of the 1.16 ms forward at (1000, 1000), for storing values only summed.  Here
# a row is two passes in C: its maximum (eight chains), then the sum of exp(v), v = x -
# max, by a vector exp in eight float lanes (Cephes' expf: v clamped to >= -87, k =
# round(v / ln 2) read from the bits of v / ln 2 + 1.5 * 2**23, r = v - k ln 2 in two
# parts, a degree-6 polynomial on |r| <= 0.35, times 2**k built in the exponent bits:
# ~1 ulp, as torch's Sleef expf), each exp added in double, the lanes in a fixed order;
# then y = (x - max) - log(sum) as before.  The sum's relative error stays ~1e-7, so y's
# absolute one too: the same as the numpy path's and torch's (measured against float64:
# 7.9e-8 vs torch's 8.7e-8 at (1000, 1000)).  (An exp in four double lanes by a Taylor
# series to r**10 was no faster than numpy's passes: AVX2 has four doubles a vector.)
# (1000, 1000), one thread, CPU time: 1.16 ms -> 0.81 ms, torch 0.76-0.80 ms.  NaN in a
# row makes its sum NaN, +inf makes inf - inf, a row of -inf -inf - -inf: NaN rows as
# before; a -inf among finite values adds exp(-87) ~ 1.6e-38 to the sum, nothing.
# softmax rows take the same two passes, storing the exps in the second (those of v < -87,
# subnormal or zero, computed in double: the clamp would store exp(-87)), then scale them
# by 1 / sum (torch's _vec_softmax_lastdim): three passes instead of numpy's exp between
# two of this module's.  Compiled twice (Note [AVX2 clones]); other dims and float64 keep
# the passes above.

cdef extern from *:
    """
    #include <string.h>
    #include <math.h>
    typedef double gs_sm_v4d __attribute__((vector_size(32)));
    typedef long long gs_sm_v4l __attribute__((vector_size(32)));
    typedef float gs_sm_v4f __attribute__((vector_size(16)));

    typedef float gs_sm_v8f __attribute__((vector_size(32)));
    typedef int gs_sm_v8i __attribute__((vector_size(32)));

    /* acc0, acc1 (four doubles each) += exp(v) for eight v = x - m, x at p, in float
       (Note [float32 log_softmax rows with an exp of their own]) */
    #define GS_SM_EXP_ADD(acc0, acc1, p, mv, st) do {                                   \\
        gs_sm_v8f v_, t_, k_, r_, e_;                                                   \\
        gs_sm_v8i lo_mask_;                                                             \\
        gs_sm_v4f h0_, h1_;                                                             \\
        memcpy(&v_, (p), sizeof v_);                                                    \\
        v_ = v_ - (mv);                                                                 \\
        lo_mask_ = v_ < lo_;                                                            \\
        v_ = (gs_sm_v8f)(((gs_sm_v8i)v_ & ~lo_mask_) | ((gs_sm_v8i)lo_ & lo_mask_));    \\
        t_ = v_ * 1.44269504088896341f + mg_;                                           \\
        k_ = t_ - mg_;                                                                  \\
        r_ = (v_ - k_ * 0.693359375f) - k_ * -2.12194440e-4f;                           \\
        e_ = ((((((1.9875691500e-4f * r_ + 1.3981999507e-3f) * r_ + 8.3334519073e-3f)   \\
               * r_ + 4.1665795894e-2f) * r_ + 1.6666665459e-1f) * r_ + 5.0000001201e-1f) \\
              * (r_ * r_) + r_) + 1.0f;                                                 \\
        e_ = e_ * (gs_sm_v8f)((((gs_sm_v8i)t_ - (gs_sm_v8i)mg_) + 127) << 23);          \\
        if (st) {            /* below -87 (subnormal or 0): the exp in double */          \\
            memcpy((st), &e_, sizeof e_);                                               \\
            for (int l_ = 0; l_ < 8; l_++)                                              \\
                if (lo_mask_[l_])                                                       \\
                    (st)[l_] = (float)exp((double)((p)[l_] - (mv)[l_]));                \\
        }                                                                               \\
        memcpy(&h0_, &e_, sizeof h0_);                                                  \\
        memcpy(&h1_, (const char*)&e_ + sizeof h0_, sizeof h1_);                        \\
        (acc0) += __builtin_convertvector(h0_, gs_sm_v4d);                              \\
        (acc1) += __builtin_convertvector(h1_, gs_sm_v4d);                              \\
    } while (0)

    /* log_softmax rows, or softmax rows (`soft`: the exps stored, then scaled by
       1 / sum as torch's _vec_softmax_lastdim) */
    GS_BODY void gs_lsm_rows_body(const float* x, float* y, Py_ssize_t start,
                                  Py_ssize_t stop, Py_ssize_t n, int soft) {
        Py_ssize_t r, j, end = n - n % 8;
        for (r = start; r < stop; r++) {
            const float* xr = x + r * n;
            float* yr = y + r * n;
            float m0 = xr[0], m1 = xr[0], m2 = xr[0], m3 = xr[0];
            float m4 = xr[0], m5 = xr[0], m6 = xr[0], m7 = xr[0], m, v, sr;
            double md, s;
            const gs_sm_v4d z = {0, 0, 0, 0};
            const gs_sm_v8f zf = {0, 0, 0, 0, 0, 0, 0, 0};
            const gs_sm_v8f lo_ = zf - 87.0f, mg_ = zf + 12582912.0f;
            gs_sm_v4d a0 = z, a1 = z;
            gs_sm_v8f mv;
            for (j = 0; j < end; j += 8) {
                v = xr[j]; m0 = v > m0 ? v : m0;
                v = xr[j + 1]; m1 = v > m1 ? v : m1;
                v = xr[j + 2]; m2 = v > m2 ? v : m2;
                v = xr[j + 3]; m3 = v > m3 ? v : m3;
                v = xr[j + 4]; m4 = v > m4 ? v : m4;
                v = xr[j + 5]; m5 = v > m5 ? v : m5;
                v = xr[j + 6]; m6 = v > m6 ? v : m6;
                v = xr[j + 7]; m7 = v > m7 ? v : m7;
            }
            for (j = end; j < n; j++) {
                v = xr[j]; m0 = v > m0 ? v : m0;
            }
            m0 = m1 > m0 ? m1 : m0; m2 = m3 > m2 ? m3 : m2;
            m4 = m5 > m4 ? m5 : m4; m6 = m7 > m6 ? m7 : m6;
            m0 = m2 > m0 ? m2 : m0; m4 = m6 > m4 ? m6 : m4;
            m = m4 > m0 ? m4 : m0;
            md = m;
            mv = zf + m;
            for (j = 0; j < end; j += 8) {
                GS_SM_EXP_ADD(a0, a1, xr + j, mv, soft ? yr + j : NULL);
            }
            s = ((a0[0] + a1[0]) + (a0[1] + a1[1])) + ((a0[2] + a1[2]) + (a0[3] + a1[3]));
            for (j = end; j < n; j++) {
                double e = exp((double)xr[j] - md);
                s += e;
                if (soft)
                    yr[j] = (float)e;
            }
            if (soft) {
                sr = (float)(1.0 / s);
                for (j = 0; j < n; j++)
                    yr[j] = yr[j] * sr;
                continue;
            }
            sr = (float)log(s);
            for (j = 0; j < n; j++) {
                yr[j] = (xr[j] - m) - sr;
            }
        }
    }

    #define GS_LSM_CLONES(suffix, attr)                                                   \\
        attr static void gs_lsm_rows_##suffix(const float* x, float* y, Py_ssize_t start, \\
                                              Py_ssize_t stop, Py_ssize_t n, int soft) { \\
            if (soft) /* (two inlined copies: no test of `soft` in the log loop) */      \\
                gs_lsm_rows_body(x, y, start, stop, n, 1);                               \\
            else                                                                         \\
                gs_lsm_rows_body(x, y, start, stop, n, 0);                               \\
        }

    GS_LSM_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_LSM_CLONES(avx2, __attribute__((target("avx2,fma"))))
    #endif

    static void gs_lsm_rows(int gs_avx2, const float* x, float* y, Py_ssize_t start,
                            Py_ssize_t stop, Py_ssize_t n, int soft) {
        GS_DISPATCH(gs_lsm_rows, (x, y, start, stop, n, soft));
    }
    """
    void gs_lsm_rows(int gs_avx2, const float* x, float* y, Py_ssize_t start,
                     Py_ssize_t stop, Py_ssize_t n, int soft) noexcept nogil


cdef void _log_softmax_f32_rows(const float* x, float* y, Py_ssize_t rows, Py_ssize_t n,
                                int nthreads, int soft) noexcept nogil:
    """log_softmax (softmax if `soft`) of float32 rows (Note [float32 log_softmax rows
    with an exp of their own]), split by whole rows across threads."""
    cdef Py_ssize_t block, start, step
    cdef int avx2 = kernel_avx2()
    if nthreads <= 1 or rows < 2:
        gs_lsm_rows(avx2, x, y, 0, rows, n, soft)
        return
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            gs_lsm_rows(avx2, x, y, start, min(start + step, rows), n, soft)


cdef object _softmax_call(str func, object x, object g, object dim, bint take_log):
    """The forward (g None) or the backward (x is the forward's output) in passes (Note
    [The softmax kernels take numpy's exp])."""
    cdef int typenum = _check_input(func, "output" if g is not None else "x", x)
    if g is not None:
        _check_input(func, "grad", g)
        _check_same(func, "grad", g, "output", x)
    cdef Py_ssize_t outer, n, inner
    outer, n, inner = _dim_split(<cnp.ndarray>x, dim, func)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(
        cnp.PyArray_NDIM(<cnp.ndarray>x), cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(out)
    if size == 0:
        return out
    cdef int nthreads = kernel_threads(size, _row_threshold)
    cdef cnp.ndarray mx = None
    cdef cnp.npy_intp dims[1]
    if g is None and inner == 1 and typenum == cnp.NPY_FLOAT:
        with nogil:
            _log_softmax_f32_rows(<const float*>cnp.PyArray_DATA(<cnp.ndarray>x),
                                  <float*>cnp.PyArray_DATA(out), outer, n, nthreads,
                                  not take_log)
        return out
    if g is None:
        dims[0] = outer * inner
        mx = cnp.PyArray_EMPTY(1, dims, typenum, 0)
        _pass(PASS_MAX, typenum, x, None, out, mx, outer, n, inner, nthreads)
        np.exp(out, out=out)
        _pass(PASS_LOG if take_log else PASS_SOFTMAX, typenum, x, None, out, mx, outer, n,
              inner, nthreads)
    elif take_log:
        np.exp(x, out=out)
        _pass(PASS_LOG_GRAD, typenum, x, g, out, None, outer, n, inner, nthreads)
    else:
        _pass(PASS_GRAD, typenum, x, g, out, None, outer, n, inner, nthreads)
    return out


def softmax(x, dim, log=False):
    """``softmax`` (or ``log_softmax`` if `log`) of `x` along `dim`, as a new array.

    ``exp(x - max) / sum(exp(x - max))``; ``log_softmax`` is ``(x - max) - log(sum(exp(x
    - max)))``.  The maximum and the sum are taken per slice along `dim` (sums in
    double); a slice holding NaN, or +inf, gives NaN, and one of -inf only gives NaN,
    as torch's.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous, at least 1-d (may be empty).
    dim : int
        The dim to normalise along (negative counts from the end).
    log : bool, optional
        Return ``log_softmax`` instead.

    Returns
    -------
    ndarray
        A new C-contiguous array of `x`'s shape and dtype.

    Raises
    ------
    TypeError
        If `x` is not a float32/float64 ndarray or `dim` not an int.
    ValueError
        If `x` is not C-contiguous, is 0-d, or `dim` is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softmax
    >>> softmax(np.array([[0.0, np.log(3.0)]]), 1)
    array([[0.25, 0.75]])
    >>> softmax(np.array([[0.0], [np.log(3.0)]]), 0, log=True).round(4)
    array([[-1.3863],
           [-0.2877]])
    """
    return _softmax_call("softmax", x, None, dim, bool(log))


def softmax_backward(grad, output, dim, log=False):
    """The gradient of ``softmax`` (``log_softmax`` if `log`) along `dim`, from its output.

    softmax: ``output * (grad - sum(grad * output))``; log_softmax: ``grad -
    exp(output) * sum(grad)``, the sums along `dim` (in double).

    Parameters
    ----------
    grad, output : ndarray
        The incoming gradient and the forward's result: one shape, one dtype (float32 or
        float64), C-contiguous.
    dim : int
        The forward's dim.
    log : bool, optional
        The forward was ``log_softmax``.

    Returns
    -------
    ndarray
        The gradient of the forward's input, a new C-contiguous array.

    Raises
    ------
    TypeError, ValueError
        As :func:`softmax`; also if `grad` and `output` differ in shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import softmax_backward
    >>> softmax_backward(np.array([1.0, 0.0]), np.array([0.25, 0.75]), 0)
    array([ 0.1875, -0.1875])
    """
    return _softmax_call("softmax_backward", output, grad, dim, bool(log))


# ---------------------------------------------------------------------------------------
# layer norm

# Note [Layer norm's moments]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU layer norm takes each row's mean and variance in one pass (Welford, in
# float for float32 inputs) and normalises as ((x - mean) * rstd) * weight + bias.
# Here float32 rows take one pass too, in double, with the sums shifted by the row's
# first element (sum(d) and sum(d * d), d = x - x[0]): the shift keeps E[d^2] - E[d]^2
# from cancelling for rows far from 0, and double holds 29 more bits than the float32
# result needs.  float64 rows take two passes (mean, then the centred squares), as the
# numpy path, so that float64 results keep their last bits (gradcheck).  Then, as torch:
# rstd = 1 / sqrt(var + eps), y = ((x - mean) * rstd) * weight + bias with mean and rstd
# rounded to the dtype (not x * rstd - mean * rstd, which cancels: a row of one element
# must give exactly 0, or bias).

# Note [float32 layer norm rows in vectors of doubles]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A float32 row's sums (sum(d), sum(d * d) with d = x - x[0], and for the backward sum(gy)
# and sum(gy * d), gy = g * w) are one pass in C over GCC vectors of four doubles, two
# vectors a sum (eight chains, added up in a fixed order: the same bits whatever the
# machine's clone, up to FMA contraction in the AVX2 one); then c = sum(gy * (x - mean))
# = sum(gy * d) - (mean - x[0]) sum(gy), which cancels no more than double's 29 spare bits
# can hold for float32 data.  The backward's last pass (gx, and gw, gb accumulated in
# double) is the same C loop as before, compiled twice (Note [AVX2 clones] in
# _kernels.pyx).  The Cython loops took three passes of scalar doubles.  At (1000, 1000),
# one thread, CPU time: forward 720 -> 321 us, backward 2,380 -> 882 us (torch's kernels
# 279 / 469 us); the same bits as before but for the order of the row sums.

cdef extern from *:
    """
    #include <string.h>
    typedef float gs_ln_v4f __attribute__((vector_size(16)));
    typedef double gs_ln_v4d __attribute__((vector_size(32)));

    /* the sum of two vectors' lanes, in a fixed order */
    #define GS_LN_HSUM(a, b) \\
        (((a)[0] + (b)[0]) + ((a)[1] + (b)[1])) + (((a)[2] + (b)[2]) + ((a)[3] + (b)[3]))
    /* four floats from p, as doubles (macros: no vector crosses a function call) */
    #define GS_LN_LOAD(dst, p) \\
        do { gs_ln_v4f f_; memcpy(&f_, (p), sizeof f_); \\
             (dst) = __builtin_convertvector(f_, gs_ln_v4d); } while (0)

    /* out: sum(d), sum(d * d), and with g: sum(gy), sum(gy * d); d = x - x[0], gy = g * w
       in float (w NULL: g) (Note [float32 layer norm rows in vectors of doubles]) */
    GS_BODY void gs_ln_sums_body(const float* x, const float* g, const float* w,
                                 Py_ssize_t n, double* out) {
        const double k = x[0];
        const gs_ln_v4d kv = {k, k, k, k};
        const gs_ln_v4d z = {0, 0, 0, 0};
        gs_ln_v4d a0 = z, a1 = z, b0 = z, b1 = z, c0 = z, c1 = z, e0 = z, e1 = z;
        Py_ssize_t j, end = n - n % 8;
        double d, gy, sa, sb, sc = 0, se = 0;
        if (g == NULL) {
            for (j = 0; j < end; j += 8) {
                gs_ln_v4d d0, d1;
                GS_LN_LOAD(d0, x + j);
                GS_LN_LOAD(d1, x + j + 4);
                d0 -= kv;
                d1 -= kv;
                a0 += d0; a1 += d1; b0 += d0 * d0; b1 += d1 * d1;
            }
        } else {
            for (j = 0; j < end; j += 8) {
                gs_ln_v4d d0, d1, y0, y1;
                gs_ln_v4f g0, g1, w0, w1;
                GS_LN_LOAD(d0, x + j);
                GS_LN_LOAD(d1, x + j + 4);
                d0 -= kv;
                d1 -= kv;
                memcpy(&g0, g + j, sizeof g0);
                memcpy(&g1, g + j + 4, sizeof g1);
                if (w != NULL) {
                    memcpy(&w0, w + j, sizeof w0);
                    memcpy(&w1, w + j + 4, sizeof w1);
                    g0 = g0 * w0;
                    g1 = g1 * w1;
                }
                y0 = __builtin_convertvector(g0, gs_ln_v4d);
                y1 = __builtin_convertvector(g1, gs_ln_v4d);
                a0 += d0; a1 += d1; b0 += d0 * d0; b1 += d1 * d1;
                c0 += y0; c1 += y1; e0 += y0 * d0; e1 += y1 * d1;
            }
            sc = GS_LN_HSUM(c0, c1);
            se = GS_LN_HSUM(e0, e1);
        }
        sa = GS_LN_HSUM(a0, a1);
        sb = GS_LN_HSUM(b0, b1);
        for (j = end; j < n; j++) {
            d = (double)x[j] - k;
            sa += d;
            sb += d * d;
            if (g != NULL) {
                gy = w != NULL ? (double)(g[j] * w[j]) : (double)g[j];
                sc += gy;
                se += gy * d;
            }
        }
        out[0] = sa; out[1] = sb; out[2] = sc; out[3] = se;
    }

    /* gx = rstd (gy - a - xhat c), gw += g xhat, gb += g (gx, gw, gb may be NULL) */
    GS_BODY void gs_ln_bwd_body(const float* g, const float* x, const float* w, float* gx,
                                double* gw, double* gb, Py_ssize_t n, double mean,
                                double rstd, double a, double c) {
        Py_ssize_t j;
        double gy, xhat;
        if (gx != NULL && gw != NULL && gb != NULL) {
            for (j = 0; j < n; j++) {
                gy = w != NULL ? (double)(g[j] * w[j]) : (double)g[j];
                xhat = ((double)x[j] - mean) * rstd;
                gx[j] = (float)(rstd * (gy - a - xhat * c));
                gw[j] += (double)g[j] * xhat;
                gb[j] += (double)g[j];
            }
            return;
        }
        if (gx != NULL) {
            for (j = 0; j < n; j++) {
                gy = w != NULL ? (double)(g[j] * w[j]) : (double)g[j];
                xhat = ((double)x[j] - mean) * rstd;
                gx[j] = (float)(rstd * (gy - a - xhat * c));
            }
        }
        if (gw != NULL) {
            for (j = 0; j < n; j++) {
                gw[j] += (double)g[j] * (((double)x[j] - mean) * rstd);
            }
        }
        if (gb != NULL) {
            for (j = 0; j < n; j++) {
                gb[j] += (double)g[j];
            }
        }
    }

    #define GS_LN_CLONES(suffix, attr)                                                    \
        attr static void gs_ln_sums_##suffix(const float* x, const float* g,              \
                const float* w, Py_ssize_t n, double* out) {                              \
            gs_ln_sums_body(x, g, w, n, out);                                             \
        }                                                                                 \
        attr static void gs_ln_bwd_##suffix(const float* g, const float* x,               \
                const float* w, float* gx, double* gw, double* gb, Py_ssize_t n,          \
                double mean, double rstd, double a, double c) {                           \
            gs_ln_bwd_body(g, x, w, gx, gw, gb, n, mean, rstd, a, c);                     \
        }

    GS_LN_CLONES(default, )
    #if GS_AVX2_CLONES
    GS_LN_CLONES(avx2, __attribute__((target("avx2,fma"))))
    #endif

    static void gs_ln_sums(int gs_avx2, const float* x, const float* g, const float* w,
                           Py_ssize_t n, double* out) {
        GS_DISPATCH(gs_ln_sums, (x, g, w, n, out));
    }

    static void gs_ln_bwd(int gs_avx2, const float* g, const float* x, const float* w,
                          float* gx, double* gw, double* gb, Py_ssize_t n, double mean,
                          double rstd, double a, double c) {
        GS_DISPATCH(gs_ln_bwd, (g, x, w, gx, gw, gb, n, mean, rstd, a, c));
    }
    """
    void gs_ln_sums(int gs_avx2, const float* x, const float* g, const float* w,
                    Py_ssize_t n, double* out) noexcept nogil
    void gs_ln_bwd(int gs_avx2, const float* g, const float* x, const float* w, float* gx,
                   double* gw, double* gb, Py_ssize_t n, double mean, double rstd, double a,
                   double c) noexcept nogil


cdef inline void _f32_row(const float* x, const float* g, const float* w, Py_ssize_t n,
                          double eps, double* mean, double* rstd, double* a,
                          double* c) noexcept nogil:
    """A float32 row's mean and rstd, and with `g` the backward's a = mean(gy) and c =
    sum(gy * (x - mean)) * rstd / n (Note [float32 layer norm rows in vectors of
    doubles])."""
    cdef double sums[4]
    cdef double d, var, m
    gs_ln_sums(kernel_avx2(), x, g, w, n, sums)
    d = sums[0] / n
    var = sums[1] / n - d * d
    var = var if var > 0 else 0
    m = x[0] + d
    mean[0] = m
    rstd[0] = 1.0 / sqrt(var + eps)
    if g != NULL:
        a[0] = sums[2] / n
        c[0] = (sums[3] - d * sums[2]) * rstd[0] / n


cdef inline void _moments(const real* x, Py_ssize_t n, double eps, double* mean,
                          double* rstd) noexcept nogil:
    """mean and 1 / sqrt(var + eps) of one row (sums in four chains: Note [Four
    accumulators])."""
    cdef Py_ssize_t j, end = n - n % 4
    cdef double s1 = 0, s2 = 0, d, m, var
    cdef double k = x[0]
    cdef double a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0
    cdef double d0, d1, d2, d3
    if real is float:
        for j in range(0, end, 4):
            d0 = x[j] - k
            d1 = x[j + 1] - k
            d2 = x[j + 2] - k
            d3 = x[j + 3] - k
            a0 += d0
            a1 += d1
            a2 += d2
            a3 += d3
            b0 += d0 * d0
            b1 += d1 * d1
            b2 += d2 * d2
            b3 += d3 * d3
        for j in range(end, n):
            d = x[j] - k
            a0 += d
            b0 += d * d
        s1 = (a0 + a1) + (a2 + a3)
        s2 = (b0 + b1) + (b2 + b3)
        d = s1 / n
        var = s2 / n - d * d
        m = k + d
    else:
        m = _row_dot(x, NULL, n) / n
        for j in range(0, end, 4):
            d0 = x[j] - m
            d1 = x[j + 1] - m
            d2 = x[j + 2] - m
            d3 = x[j + 3] - m
            b0 += d0 * d0
            b1 += d1 * d1
            b2 += d2 * d2
            b3 += d3 * d3
        for j in range(end, n):
            d = x[j] - m
            b0 += d * d
        var = ((b0 + b1) + (b2 + b3)) / n
    var = var if var > 0 else 0
    mean[0] = m
    rstd[0] = 1.0 / sqrt(var + eps)


cdef void _ln_rows(const real* x, const real* w, const real* b, real* y, Py_ssize_t start,
                   Py_ssize_t stop, Py_ssize_t n, double eps) noexcept nogil:
    cdef Py_ssize_t r, j
    cdef double mean = 0, rstd = 0
    cdef real m, s
    cdef const real* xr
    cdef real* yr
    cdef double unused = 0
    for r in range(start, stop):
        xr = x + r * n
        yr = y + r * n
        if real is float:
            _f32_row(xr, NULL, NULL, n, eps, &mean, &rstd, &unused, &unused)
        else:
            _moments(xr, n, eps, &mean, &rstd)
        m = <real>mean
        s = <real>rstd
        if w != NULL and b != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) * w[j] + b[j]
        elif w != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) * w[j]
        elif b != NULL:
            for j in range(n):
                yr[j] = ((xr[j] - m) * s) + b[j]
        else:
            for j in range(n):
                yr[j] = (xr[j] - m) * s


cdef void _ln_forward(const real* x, const real* w, const real* b, real* y, Py_ssize_t rows,
                      Py_ssize_t n, double eps, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1 or rows < 2:
        _ln_rows(x, w, b, y, 0, rows, n, eps)
        return
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            _ln_rows(x, w, b, y, start, min(start + step, rows), n, eps)


cdef inline void _ln_sums(const real* g, const real* x, const real* w, double mean,
                          Py_ssize_t n, double* a, double* c) noexcept nogil:
    """a = sum(gy), c = sum(gy * (x - mean)) with gy = g * w (w NULL: g), in four chains."""
    cdef Py_ssize_t j, q, end = n - n % 4
    cdef double gy
    cdef double sa[4]
    cdef double sc[4]
    for q in range(4):
        sa[q] = 0
        sc[q] = 0
    for j in range(0, end, 4):
        for q in range(4):
            gy = g[j + q] * w[j + q] if w != NULL else g[j + q]
            sa[q] += gy
            sc[q] += gy * (x[j + q] - mean)
    for j in range(end, n):
        gy = g[j] * w[j] if w != NULL else g[j]
        sa[0] += gy
        sc[0] += gy * (x[j] - mean)
    a[0] = (sa[0] + sa[1]) + (sa[2] + sa[3])
    c[0] = (sc[0] + sc[1]) + (sc[2] + sc[3])


cdef void _ln_backward_rows(const real* g, const real* x, const real* w, real* gx,
                            double* gw, double* gb, Py_ssize_t start, Py_ssize_t stop,
                            Py_ssize_t n, double eps) noexcept nogil:
    """gx for rows [start, stop) (if gx), and gw, gb accumulated over them (if not NULL)."""
    if real is float:
        _ln_backward_rows_f32(g, x, w, gx, gw, gb, start, stop, n, eps)
    else:
        _ln_backward_rows_any(g, x, w, gx, gw, gb, start, stop, n, eps)


cdef void _ln_backward_rows_f32(const float* g, const float* x, const float* w, float* gx,
                                double* gw, double* gb, Py_ssize_t start, Py_ssize_t stop,
                                Py_ssize_t n, double eps) noexcept nogil:
    """_ln_backward_rows of float32 rows (Note [float32 layer norm rows in vectors of
    doubles])."""
    cdef Py_ssize_t r
    cdef double mean = 0, rstd = 0, a = 0, c = 0
    for r in range(start, stop):
        if gx != NULL:
            _f32_row(x + r * n, g + r * n, w, n, eps, &mean, &rstd, &a, &c)
        else:
            _f32_row(x + r * n, NULL, NULL, n, eps, &mean, &rstd, &a, &c)
        gs_ln_bwd(kernel_avx2(), g + r * n, x + r * n, w, gx + r * n if gx != NULL else NULL,
                  gw, gb, n, mean, rstd, a, c)


cdef void _ln_backward_rows_any(const real* g, const real* x, const real* w, real* gx,
                                double* gw, double* gb, Py_ssize_t start, Py_ssize_t stop,
                                Py_ssize_t n, double eps) noexcept nogil:
    """gx for rows [start, stop) (if gx), and gw, gb accumulated over them (if not NULL).

    gx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)), gy = g * w, xhat = (x - mean) *
    rstd; gw += g * xhat, gb += g, in double."""
    cdef Py_ssize_t r, j
    cdef double mean = 0, rstd = 0, a = 0, c = 0, xhat, gy
    cdef const real* xr
    cdef const real* gr
    cdef real* gxr
    for r in range(start, stop):
        xr = x + r * n
        gr = g + r * n
        _moments(xr, n, eps, &mean, &rstd)
        if gx != NULL:
            _ln_sums(gr, xr, w, mean, n, &a, &c)
            a = a / n
            c = c * rstd / n
            gxr = gx + r * n
            if gw != NULL and gb != NULL:   # the common case in one pass
                for j in range(n):
                    gy = gr[j] * w[j] if w != NULL else gr[j]
                    xhat = (xr[j] - mean) * rstd
                    gxr[j] = <real>(rstd * (gy - a - xhat * c))
                    gw[j] += gr[j] * xhat
                    gb[j] += gr[j]
                continue
            for j in range(n):
                gy = gr[j] * w[j] if w != NULL else gr[j]
                xhat = (xr[j] - mean) * rstd
                gxr[j] = <real>(rstd * (gy - a - xhat * c))
        if gw != NULL:
            for j in range(n):
                gw[j] += gr[j] * ((xr[j] - mean) * rstd)
        if gb != NULL:
            for j in range(n):
                gb[j] += gr[j]


cdef void _ln_backward(const real* g, const real* x, const real* w, real* gx, double* gw,
                       double* gb, Py_ssize_t rows, Py_ssize_t n, double eps,
                       int nthreads) noexcept nogil:
    """Threads split gx by rows; gw and gb then take one pass of their own over the rows in
    order, so that their sums do not depend on the number of threads."""
    cdef Py_ssize_t block, start, step
    if nthreads <= 1 or rows < 2 or gx == NULL:
        _ln_backward_rows(g, x, w, gx, gw, gb, 0, rows, n, eps)
        return
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            _ln_backward_rows(g, x, w, gx, NULL, NULL, start, min(start + step, rows), n,
                              eps)
    if gw != NULL or gb != NULL:
        _ln_backward_rows(g, x, w, NULL, gw, gb, 0, rows, n, eps)


cdef Py_ssize_t _ln_check(str func, object x, Py_ssize_t normalized, object weight,
                          object bias) except -1:
    """Check the arrays of a layer norm; return the number of rows."""
    _check_input(func, "x", x)
    cdef Py_ssize_t size = cnp.PyArray_SIZE(<cnp.ndarray>x)
    if normalized < 1 or (size and size % normalized):
        raise ValueError(
            f"{func}: normalized must be a positive divisor of x.size ({size}), got "
            f"{normalized}; pass the product of the normalised trailing dims"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        _check_input(func, name, p)
        if cnp.PyArray_TYPE(<cnp.ndarray>p) != cnp.PyArray_TYPE(<cnp.ndarray>x):
            raise TypeError(
                f"{func}: {name} must have x's dtype ({x.dtype}), got {p.dtype}; cast it "
                f"with {name}.astype(x.dtype)"
            )
        if cnp.PyArray_SIZE(<cnp.ndarray>p) != normalized:
            raise ValueError(
                f"{func}: {name} must have `normalized` ({normalized}) elements, got shape "
                f"{p.shape}"
            )
    return size // normalized if normalized else 0


cdef inline void* _data_or_null(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a) if a is not None else NULL


def layer_norm(x, normalized, weight=None, bias=None, eps=1e-5):
    """Layer norm of each row of `normalized` trailing elements of `x`, as a new array.

    ``(x - mean) / sqrt(var + eps) * weight + bias`` with each row's mean and biased
    variance (Note [Layer norm's moments]), as torch's ``native_layer_norm``.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous; its size a multiple of `normalized` (may be 0).
    normalized : int
        The number of elements per row: the product of the normalised trailing dims.
    weight, bias : ndarray or None, optional
        C-contiguous arrays of `normalized` elements in `x`'s dtype (any shape).
    eps : float, optional
        Added to the variance.

    Returns
    -------
    ndarray
        A new C-contiguous array of `x`'s shape and dtype.

    Raises
    ------
    TypeError
        If an array is not a float32/float64 ndarray, or the dtypes differ.
    ValueError
        If an array is not C-contiguous, or the sizes do not fit `normalized`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import layer_norm
    >>> layer_norm(np.array([[1.0, 3.0], [2.0, 6.0]]), 2, eps=0.0)
    array([[-1.,  1.],
           [-1.,  1.]])
    """
    cdef str func = "layer_norm"
    cdef double e = _as_float(func, "eps", eps)
    cdef Py_ssize_t n = normalized
    cdef Py_ssize_t rows = _ln_check(func, x, n, weight, bias)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(
        cnp.PyArray_NDIM(<cnp.ndarray>x), cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    if rows == 0:
        return out
    cdef int nthreads = kernel_threads(rows * n, _row_threshold)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* wp = _data_or_null(weight)
    cdef void* bp = _data_or_null(bias)
    cdef void* yp = cnp.PyArray_DATA(out)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _ln_forward(<const float*>xp, <const float*>wp, <const float*>bp, <float*>yp,
                        rows, n, e, nthreads)
        else:
            _ln_forward(<const double*>xp, <const double*>wp, <const double*>bp,
                        <double*>yp, rows, n, e, nthreads)
    return out


def layer_norm_backward(grad, x, normalized, weight=None, eps=1e-5, *, input_grad=True,
                        weight_grad=True, bias_grad=True):
    """The gradients of :func:`layer_norm` for `x`, its weight and its bias, in one call.

    Each row's mean and rstd are recomputed as the forward's; then ``gx = rstd * (gy -
    mean(gy) - xhat * mean(gy * xhat))`` with ``gy = grad * weight`` and ``xhat = (x -
    mean) * rstd``, ``gweight = sum(grad * xhat)`` and ``gbias = sum(grad)`` over the rows
    (in double, rounded once).

    Parameters
    ----------
    grad, x : ndarray
        The incoming gradient and the forward's input: one shape and dtype (float32 or
        float64), C-contiguous.
    normalized : int
        The forward's number of elements per row.
    weight : ndarray or None, optional
        The forward's weight (`normalized` elements, `x`'s dtype, C-contiguous).
    eps : float, optional
        The forward's eps.
    input_grad, weight_grad, bias_grad : bool, optional
        Which gradients to compute (the others are None).

    Returns
    -------
    tuple
        ``(gx, gweight, gbias)``: gx of `x`'s shape, the others 1-d of `normalized`
        elements, each a new array in `x`'s dtype, or None when not asked for.

    Raises
    ------
    TypeError, ValueError
        As :func:`layer_norm`; also if `grad` and `x` differ in shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import layer_norm_backward
    >>> gx, gw, gb = layer_norm_backward(np.array([[1.0, 0.0]]), np.array([[1.0, 3.0]]), 2,
    ...                                  eps=0.0)
    >>> gx, gw, gb
    (array([[0., 0.]]), array([-1.,  0.]), array([1., 0.]))
    """
    cdef str func = "layer_norm_backward"
    cdef double e = _as_float(func, "eps", eps)
    cdef Py_ssize_t n = normalized
    cdef Py_ssize_t rows = _ln_check(func, x, n, weight, None)
    _check_input(func, "grad", grad)
    _check_same(func, "grad", grad, "x", x)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>x)
    cdef cnp.ndarray gx = None
    cdef cnp.ndarray gw = None
    cdef cnp.ndarray gb = None
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    if input_grad:
        gx = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(<cnp.ndarray>x),
                               cnp.PyArray_DIMS(<cnp.ndarray>x), typenum, 0)
    if weight_grad:
        gw = cnp.PyArray_ZEROS(1, dims, cnp.NPY_DOUBLE, 0)
    if bias_grad:
        gb = cnp.PyArray_ZEROS(1, dims, cnp.NPY_DOUBLE, 0)
    cdef int nthreads = kernel_threads(rows * n, _row_threshold)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* wp = _data_or_null(weight)
    cdef void* gxp = _data_or_null(gx)
    cdef double* gwp = <double*>_data_or_null(gw)
    cdef double* gbp = <double*>_data_or_null(gb)
    if rows and (gx is not None or gw is not None or gb is not None):
        with nogil:
            if typenum == cnp.NPY_FLOAT:
                _ln_backward(<const float*>gp, <const float*>xp, <const float*>wp,
                             <float*>gxp, gwp, gbp, rows, n, e, nthreads)
            else:
                _ln_backward(<const double*>gp, <const double*>xp, <const double*>wp,
                             <double*>gxp, gwp, gbp, rows, n, e, nthreads)
    if typenum == cnp.NPY_FLOAT:
        gw = gw.astype(np.float32) if gw is not None else None
        gb = gb.astype(np.float32) if gb is not None else None
    return gx, gw, gb
