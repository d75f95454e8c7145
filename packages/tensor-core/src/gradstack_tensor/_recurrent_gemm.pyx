# cython: language_level=3
"""The recurrent product of an RNN step: a few rows times a weight that stays the same
for every step, ``a @ b`` with ``b`` packed once (Note [A packed weight for the steps]).

``pack_panels(b)`` lays a float32 ``(K, N)`` matrix out in panels of 16 columns;
``panel_matmul(a, panels, n, bias)`` is then ``a @ b [+ bias]`` for float32 ``a`` of
``(M, K)``.  tensor-core's ``_lstm_layer``/``_gru_layer`` pack ``W_hh^T`` once a layer
(and graph-engine's backward ``W_hh``) and take each step's product from the panels.
Public through ``gradstack_tensor.kernels``.  Arguments are checked (dtype, layout,
shapes) before memory is touched; where the AVX2 copy cannot run (another CPU, another
compiler) ``panel_matmul`` computes with numpy from the panels.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor.kernels import pack_panels, panel_matmul
>>> b = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> panel_matmul(np.ones((1, 2), np.float32), pack_panels(b), 3)
array([[3., 5., 7.]], dtype=float32)
"""

cimport numpy as cnp

from ._kernels cimport _check_input, kernel_avx2

import numpy as np

cnp.import_array()

__all__ = ["PANEL_WIDTH", "pack_panels", "panel_matmul"]


# Note [A packed weight for the steps]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A step of an LSTM layer multiplies the batch's hidden states, (N, H) with N ~ 20, by
# W_hh^T, (H, 4H): 1 MiB of float32 at H = 256, the same matrix for every step.  BLAS
# copies (packs) the big operand into its blocked layout on each call, a pass over the
# whole weight for 20 rows of work: OpenBLAS's sgemm ran (20, 256) @ (256, 1024) at
# ~15 GFLOP/s here, about half of torch's oneDNN (which packs the weight once a layer).
# These kernels pack once a layer: ``pack_panels`` lays b (K, N) out as ceil(N / 16)
# panels of (K, 16), zero-padded, so that a panel's rows are consecutive 64-byte lines;
# ``panel_matmul`` runs, per panel, blocks of 6 rows of ``a`` with 12 AVX2 accumulators
# (6 rows x 16 columns) over k: per k two loads of the panel, six broadcasts of a, twelve
# fmas (then blocks of 4 rows, 8 accumulators, and single rows for the rest; 20 rows are
# 6 + 6 + 4 + 4).  With 4-row blocks only, 8 accumulators were just enough to cover the
# fma latency and any stall showed: the LSTM's (20, 256) @ (256, 1024) ran at ~0.77x
# numpy's time, its backward (20, 1024) @ (1024, 256) ~0.78x, a GRU(., 128) step's
# (32, 128) @ (128, 384) ~0.92x; with 6-row blocks ~0.73x, ~0.76x and ~0.86x (one
# thread, medians of 300, several runs on the loaded 2-core host; torch's own step GEMMs
# are ~0.6-0.7x numpy's).  k runs in blocks of 256 (a panel's block is 16 KiB, in L1
# with the rows of ``a`` it meets); across blocks the accumulators go through ``c``
# and back, stored and loaded exactly, so the sums are those of one pass (measured
# neutral to slightly faster here).  Each output element is one sum over k in order, in
# float32 with fma (no intermediate rounding of the products), then ``+ bias`` rounded
# once: the values of a BLAS sgemm to rounding (whose k-order differs), and the same bits
# as the 4-row kernel before the blocks.
#
# One thread.  The panels split across threads without changing a bit (each is 16
# columns of the result), and that was tried: on this 2-core host at load average ~15,
# the median (20, 256) @ (256, 1024) took 1.8x to 30x longer on 2 threads than on one
# (from 1M to 16M multiply-adds, 2 of 2 runs each; a team waits for its descheduled
# thread).  Batches above PANEL_ROWS (tensor-core's _impl_rnn.py) take BLAS's sgemm and
# its threads.

cdef enum:
    PANEL = 16

PANEL_WIDTH = PANEL

cdef extern from *:
    """
    #include <string.h>
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #  define GS_PANEL_AVX2 1
    #  include <immintrin.h>
    #else
    #  define GS_PANEL_AVX2 0
    #endif

    #if GS_PANEL_AVX2
    /* c[m, n0:n0+w] = acc (+ bias), w <= 16 */
    __attribute__((target("avx2,fma")))
    static inline void gs_panel_store(float* c, __m256 lo, __m256 hi, const float* bias,
                                      Py_ssize_t n0, Py_ssize_t w) {
        float tmp[16];
        Py_ssize_t j;
        if (w == 16) {
            if (bias) {
                lo = _mm256_add_ps(lo, _mm256_loadu_ps(bias + n0));
                hi = _mm256_add_ps(hi, _mm256_loadu_ps(bias + n0 + 8));
            }
            _mm256_storeu_ps(c + n0, lo);
            _mm256_storeu_ps(c + n0 + 8, hi);
            return;
        }
        _mm256_storeu_ps(tmp, lo);
        _mm256_storeu_ps(tmp + 8, hi);
        for (j = 0; j < w; j++)
            c[n0 + j] = bias ? tmp[j] + bias[n0 + j] : tmp[j];
    }

    /* (lo, hi) = c[m, n0:n0+w], zeros past w: a partial sum stored by gs_panel_store */
    __attribute__((target("avx2,fma")))
    static inline void gs_panel_load(const float* c, __m256* lo, __m256* hi,
                                     Py_ssize_t n0, Py_ssize_t w) {
        float tmp[16] = {0};
        Py_ssize_t j;
        if (w == 16) {
            *lo = _mm256_loadu_ps(c + n0);
            *hi = _mm256_loadu_ps(c + n0 + 8);
            return;
        }
        for (j = 0; j < w; j++)
            tmp[j] = c[n0 + j];
        *lo = _mm256_loadu_ps(tmp);
        *hi = _mm256_loadu_ps(tmp + 8);
    }

    /* rows m .. m+5 of c[:, n0:n0+w], k in [k0, k1): 12 accumulators, the most that
       AVX2's 16 registers hold beside the panel's two and a broadcast */
    __attribute__((target("avx2,fma")))
    static inline void gs_panel_rows6(const float* a, const float* panel, const float* bias,
                                      float* c, Py_ssize_t m, Py_ssize_t K, Py_ssize_t N,
                                      Py_ssize_t n0, Py_ssize_t w, Py_ssize_t k0,
                                      Py_ssize_t k1) {
        const float* a0 = a + m * K;
        const float* a1 = a0 + K;
        const float* a2 = a1 + K;
        const float* a3 = a2 + K;
        const float* a4 = a3 + K;
        const float* a5 = a4 + K;
        Py_ssize_t k;
        __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
        __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
        __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
        __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
        __m256 c40 = _mm256_setzero_ps(), c41 = _mm256_setzero_ps();
        __m256 c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
        if (k0) {
            gs_panel_load(c + m * N, &c00, &c01, n0, w);
            gs_panel_load(c + (m + 1) * N, &c10, &c11, n0, w);
            gs_panel_load(c + (m + 2) * N, &c20, &c21, n0, w);
            gs_panel_load(c + (m + 3) * N, &c30, &c31, n0, w);
            gs_panel_load(c + (m + 4) * N, &c40, &c41, n0, w);
            gs_panel_load(c + (m + 5) * N, &c50, &c51, n0, w);
        }
        for (k = k0; k < k1; k++) {
            __m256 b0 = _mm256_loadu_ps(panel + k * 16);
            __m256 b1 = _mm256_loadu_ps(panel + k * 16 + 8);
            __m256 x = _mm256_broadcast_ss(a0 + k);
            c00 = _mm256_fmadd_ps(x, b0, c00);
            c01 = _mm256_fmadd_ps(x, b1, c01);
            x = _mm256_broadcast_ss(a1 + k);
            c10 = _mm256_fmadd_ps(x, b0, c10);
            c11 = _mm256_fmadd_ps(x, b1, c11);
            x = _mm256_broadcast_ss(a2 + k);
            c20 = _mm256_fmadd_ps(x, b0, c20);
            c21 = _mm256_fmadd_ps(x, b1, c21);
            x = _mm256_broadcast_ss(a3 + k);
            c30 = _mm256_fmadd_ps(x, b0, c30);
            c31 = _mm256_fmadd_ps(x, b1, c31);
            x = _mm256_broadcast_ss(a4 + k);
            c40 = _mm256_fmadd_ps(x, b0, c40);
            c41 = _mm256_fmadd_ps(x, b1, c41);
            x = _mm256_broadcast_ss(a5 + k);
            c50 = _mm256_fmadd_ps(x, b0, c50);
            c51 = _mm256_fmadd_ps(x, b1, c51);
        }
        gs_panel_store(c + m * N, c00, c01, bias, n0, w);
        gs_panel_store(c + (m + 1) * N, c10, c11, bias, n0, w);
        gs_panel_store(c + (m + 2) * N, c20, c21, bias, n0, w);
        gs_panel_store(c + (m + 3) * N, c30, c31, bias, n0, w);
        gs_panel_store(c + (m + 4) * N, c40, c41, bias, n0, w);
        gs_panel_store(c + (m + 5) * N, c50, c51, bias, n0, w);
    }

    /* c (M, N) = a (M, K) @ panels [+ bias]; panels (ceil(N/16), K, 16).  k in blocks
       of GS_PANEL_KC (Note [A packed weight for the steps]): the partial sums go through
       c, exactly (float32 accumulators stored and loaded), the bias after the last. */
    #define GS_PANEL_KC 256
    __attribute__((target("avx2,fma")))
    static void gs_panel_matmul_avx2(const float* a, const float* panels,
                                     const float* bias, float* c, Py_ssize_t M,
                                     Py_ssize_t K, Py_ssize_t N) {
        Py_ssize_t p, m, k, k0, k1, nb = (N + 15) / 16;
        for (p = 0; p < nb; p++) {
            Py_ssize_t n0 = p * 16, w = N - n0 < 16 ? N - n0 : 16;
            for (k0 = 0; k0 < K || k0 == 0; k0 += GS_PANEL_KC) {
                const float* panel = panels + p * K * 16;
                const float* last_bias;
                int first = k0 == 0;
                k1 = K - k0 < GS_PANEL_KC ? K : k0 + GS_PANEL_KC;
                last_bias = k1 == K ? bias : NULL;
                /* blocks of 6 rows while the rest is not 4 or 8, then of 4 */
                for (m = 0; M - m >= 6 && M - m != 8; m += 6)
                    gs_panel_rows6(a, panel, last_bias, c, m, K, N, n0, w, k0, k1);
                for (; m + 4 <= M; m += 4) {
                    const float* a0 = a + m * K;
                    const float* a1 = a0 + K;
                    const float* a2 = a1 + K;
                    const float* a3 = a2 + K;
                    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
                    __m256 c10 = _mm256_setzero_ps(), c11 = _mm256_setzero_ps();
                    __m256 c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
                    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps();
                    if (!first) {
                        gs_panel_load(c + m * N, &c00, &c01, n0, w);
                        gs_panel_load(c + (m + 1) * N, &c10, &c11, n0, w);
                        gs_panel_load(c + (m + 2) * N, &c20, &c21, n0, w);
                        gs_panel_load(c + (m + 3) * N, &c30, &c31, n0, w);
                    }
                    for (k = k0; k < k1; k++) {
                        __m256 b0 = _mm256_loadu_ps(panel + k * 16);
                        __m256 b1 = _mm256_loadu_ps(panel + k * 16 + 8);
                        __m256 x = _mm256_broadcast_ss(a0 + k);
                        c00 = _mm256_fmadd_ps(x, b0, c00);
                        c01 = _mm256_fmadd_ps(x, b1, c01);
                        x = _mm256_broadcast_ss(a1 + k);
                        c10 = _mm256_fmadd_ps(x, b0, c10);
                        c11 = _mm256_fmadd_ps(x, b1, c11);
                        x = _mm256_broadcast_ss(a2 + k);
                        c20 = _mm256_fmadd_ps(x, b0, c20);
                        c21 = _mm256_fmadd_ps(x, b1, c21);
                        x = _mm256_broadcast_ss(a3 + k);
                        c30 = _mm256_fmadd_ps(x, b0, c30);
                        c31 = _mm256_fmadd_ps(x, b1, c31);
                    }
                    gs_panel_store(c + m * N, c00, c01, last_bias, n0, w);
                    gs_panel_store(c + (m + 1) * N, c10, c11, last_bias, n0, w);
                    gs_panel_store(c + (m + 2) * N, c20, c21, last_bias, n0, w);
                    gs_panel_store(c + (m + 3) * N, c30, c31, last_bias, n0, w);
                }
                for (; m < M; m++) {
                    const float* a0 = a + m * K;
                    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps();
                    if (!first)
                        gs_panel_load(c + m * N, &c00, &c01, n0, w);
                    for (k = k0; k < k1; k++) {
                        __m256 x = _mm256_broadcast_ss(a0 + k);
                        c00 = _mm256_fmadd_ps(x, _mm256_loadu_ps(panel + k * 16), c00);
                        c01 = _mm256_fmadd_ps(x, _mm256_loadu_ps(panel + k * 16 + 8), c01);
                    }
                    gs_panel_store(c + m * N, c00, c01, last_bias, n0, w);
                }
            }
        }
    }
    #else
    static void gs_panel_matmul_avx2(const float* a, const float* panels,
                                     const float* bias, float* c, Py_ssize_t M,
                                     Py_ssize_t K, Py_ssize_t N) {}
    #endif
    """
    int GS_PANEL_AVX2
    void gs_panel_matmul_avx2(const float* a, const float* panels, const float* bias,
                              float* c, Py_ssize_t M, Py_ssize_t K,
                              Py_ssize_t N) noexcept nogil


cdef int panel_kernel_available() noexcept nogil:
    """Whether :func:`panel_matmul_into` can run (the AVX2 copy, on a CPU that has it)."""
    return GS_PANEL_AVX2 and kernel_avx2()


cdef void panel_matmul_into(const float* a, const float* panels, const float* bias,
                            float* c, Py_ssize_t M, Py_ssize_t K,
                            Py_ssize_t N) noexcept nogil:
    """``c = a @ b [+ bias]`` from b's panels, as :func:`panel_matmul` computes it, into
    ``c`` (M, N); only where :func:`panel_kernel_available`, on checked arrays."""
    if M and N:
        gs_panel_matmul_avx2(a, panels, bias, c, M, K, N)


cdef int _check_f32(str func, str name, object a, int ndim) except -1:
    if _check_input(func, name, a) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: {name} must be float32, got {a.dtype}")
    if a.ndim != ndim:
        raise ValueError(f"{func}: {name} must be {ndim}-D, got shape {tuple(a.shape)}")
    return 0


def pack_panels(b, transposed=False):
    """``b`` (float32, ``(K, N)``, C-contiguous) laid out for :func:`panel_matmul`: an
    array ``(ceil(N / 16), K, 16)`` whose panel ``p`` holds columns ``16 p ...`` of ``b``,
    zeros past ``N``.  With ``transposed``, ``b`` is given as its transpose ``(N, K)``
    (a layer's ``W_hh``, packed for ``h @ W_hh^T``): each panel is then a transposed
    block of 16 rows, ten times faster than transposing the whole matrix first.

    Raises
    ------
    TypeError, ValueError
        ``b`` not a float32 2-D C-contiguous array.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import pack_panels
    >>> pack_panels(np.ones((2, 3), np.float32)).shape
    (1, 2, 16)
    >>> w = np.arange(6, dtype=np.float32).reshape(3, 2)
    >>> bool((pack_panels(w, transposed=True) == pack_panels(np.ascontiguousarray(w.T))).all())
    True
    """
    _check_f32("pack_panels", "b", b, 2)
    if transposed:
        N, K = b.shape[0], b.shape[1]
    else:
        K, N = b.shape[0], b.shape[1]
    cdef Py_ssize_t nb = (N + PANEL - 1) // PANEL
    if transposed:
        padded = b
        if nb * PANEL != N:
            padded = np.zeros((nb * PANEL, K), np.float32)
            padded[:N] = b
        return np.ascontiguousarray(padded.reshape(nb, PANEL, K).transpose(0, 2, 1))
    padded = b
    if nb * PANEL != N:
        padded = np.zeros((K, nb * PANEL), np.float32)
        padded[:, :N] = b
    return np.ascontiguousarray(padded.reshape(K, nb, PANEL).transpose(1, 0, 2))


def panel_matmul(a, panels, Py_ssize_t n, bias=None):
    """``a @ b [+ bias]`` from ``panels = pack_panels(b)`` (Note [A packed weight for the
    steps]): ``a`` float32 ``(M, K)`` C-contiguous, ``n`` the columns of ``b``, ``bias``
    float32 ``(n,)`` or None; returns a new ``(M, n)`` float32 array.

    Raises
    ------
    TypeError, ValueError
        Arrays that are not float32 and C-contiguous, or shapes that do not fit
        (``panels`` must be ``(ceil(n / 16), K, 16)``).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import pack_panels, panel_matmul
    >>> b = np.eye(3, dtype=np.float32)
    >>> panel_matmul(np.ones((1, 3), np.float32), pack_panels(b), 3, np.ones(3, np.float32))
    array([[2., 2., 2.]], dtype=float32)
    """
    cdef str func = "panel_matmul"
    _check_f32(func, "a", a, 2)
    _check_f32(func, "panels", panels, 3)
    cdef Py_ssize_t M = a.shape[0], K = a.shape[1]
    if n < 0 or panels.shape[0] != (n + PANEL - 1) // PANEL or panels.shape[1] != K \
            or panels.shape[2] != PANEL:
        raise ValueError(
            f"{func}: panels must have shape ({(max(n, 0) + PANEL - 1) // PANEL}, {K}, "
            f"{PANEL}) for a of shape {tuple(a.shape)} and n={n}, got {tuple(panels.shape)}; "
            "make them with pack_panels(b)"
        )
    if bias is not None:
        _check_f32(func, "bias", bias, 1)
        if bias.shape[0] != n:
            raise ValueError(f"{func}: bias must have shape ({n},), got {tuple(bias.shape)}")
    cdef cnp.ndarray out = np.empty((M, n), np.float32)
    if not (GS_PANEL_AVX2 and kernel_avx2()):
        # a product per panel (the panels are not a strided view of b: no copy of them)
        product = np.matmul(a, panels)  # (panels, M, 16)
        out[...] = product.transpose(1, 0, 2).reshape(M, panels.shape[0] * PANEL)[:, :n]
        if bias is not None:
            out += bias
        return out
    cdef const float* pa = <const float*>cnp.PyArray_DATA(<cnp.ndarray>a)
    cdef const float* pp = <const float*>cnp.PyArray_DATA(<cnp.ndarray>panels)
    cdef const float* pb = NULL
    if bias is not None:
        pb = <const float*>cnp.PyArray_DATA(<cnp.ndarray>bias)
    cdef float* pc = <float*>cnp.PyArray_DATA(out)
    if M and n:
        with nogil:
            gs_panel_matmul_avx2(pa, pp, pb, pc, M, K, n)
    return out
