# cython: language_level=3
"""The tile transforms of Winograd's F(2x2, 3x3) convolution (Lavin and Gray, 2015), for a
3x3, stride-1 convolution: a 2x2 block of outputs from a 4x4 tile of the input with 16
multiplications per (input channel, output channel) instead of 36, the multiplications
being 16 matrix products (one per position of the 4x4 transformed tile) that numpy's
BLAS runs (``_conv_arrays.py`` drives them, Note [Winograd's F(2x2, 3x3) convolution]).

The four transforms, each one pass in C over its input, in the tile layout ``(16, C, T)``
(``T = N * th * tw`` tiles, the tile ``t = (n * th + ty) * tw + tx``; each of the 16
positions a ``(C, T)`` matrix, the operand of a product):

- ``winograd_input_tiles``: ``B^T d B`` of the input's overlapping 4x4 tiles (stride 2,
  zero outside the input), the forward's and the weight gradient's input operand;
- ``winograd_output_tiles``: ``A^T m A`` of the products, the 2x2 outputs of each tile
  (those outside the output cropped), the forward's result;
- ``winograd_grad_tiles``: ``A g A^T`` of the output gradient's 2x2 blocks (zero outside),
  the backward's operand (Note [The backward is the forward transposed]);
- ``winograd_input_grad``: ``B z B^T`` of each tile added into the input gradient where the
  tiles overlap (the transpose of ``winograd_input_tiles``).

Every kernel takes C-contiguous float32/float64 arrays of one dtype, checks shapes and
layouts before touching memory (ValueError/TypeError saying what was wrong) and writes a
new array, or ``out``; the planes are split across threads above the parallel threshold.
Public as ``gradstack_tensor.kernels``.

Note [The backward is the forward transposed]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
One output tile is ``y = A^T [U ⊙ (B^T d B)] A`` summed over the input channels, with
``U = G w G^T``: linear in ``d`` and in ``w``.  With ``g`` the output gradient's 2x2 block
and ``Q = A g A^T``, the gradients are the same expression read backwards:
``dd = B [U ⊙ Q] B^T`` (summed over the output channels; the tiles overlap, so their
``dd`` add up) and ``dU = Q ⊙ (B^T d B)`` (summed over the tiles), ``dw = G^T dU G``.  So
the backward needs one transform of the gradient (``Q``), the forward's input transform
and two products per position: ``Z = U^T Q`` and ``dU = Q V^T``.  Being the exact
transpose, the gradients are those of the function the forward computes, to rounding.

Note [Why F(2x2, 3x3) and not F(4x4, 3x3)]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
F(4x4, 3x3) needs 36 products per 16 outputs (4x fewer multiplications than the direct
9 per output, against 2.25x) but its transforms hold 4, 5 and 1/24: in float32 at the
benchmark ResNet's shapes (standard normal input, weights of variance 1 / (9 C)) its
largest error against a float64 convolution was 3.2e-6 to 6.3e-6 of the output's largest
value, 8-20x torch's float32 convolution's (3.0e-7 to 3.9e-7).  F(2x2, 3x3)'s transforms
hold only 0, +-1 and 1/2: its error was 2.3e-7 to 3.0e-7, below im2col's (4.8e-7 to
6.8e-7) and torch's.  So only F(2x2, 3x3).

Examples
--------
>>> import numpy as np
>>> winograd_input_tiles(np.ones((2, 3, 5, 5)), (1, 1), 3, 3).shape
(16, 3, 18)
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

from ._kernels cimport (
    _check_input, kernel_avx2, kernel_parallel_threshold, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = [
    "winograd_input_tiles",
    "winograd_output_tiles",
    "winograd_grad_tiles",
    "winograd_input_grad",
    "winograd_filter_tiles",
    "winograd_filter_grad",
]


cdef struct Tiles:
    Py_ssize_t n, c        # batch, channels (of the plane-side array)
    Py_ssize_t h, w        # the plane's size
    Py_ssize_t th, tw      # tiles down and across
    Py_ssize_t ph, pw      # the input's zero padding (input-side kernels)


cdef int _int(str func, str name, object v) except -1:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{func}: {name} must be an int, got {v!r}")
    return 0


cdef int _plane_layout(str func, str name, object a, Tiles* t) except -1:
    _check_input(func, name, a)
    if (<cnp.ndarray>a).ndim != 4:
        raise ValueError(f"{func}: {name} must be (N, C, H, W), got shape {a.shape}")
    t.n, t.c, t.h, t.w = a.shape
    return 0


cdef int _tile_counts(str func, object th, object tw, Tiles* t) except -1:
    _int(func, "th", th)
    _int(func, "tw", tw)
    if th < 0 or tw < 0:
        raise ValueError(f"{func}: th and tw must be non-negative, got {th} and {tw}")
    t.th, t.tw = th, tw
    return 0


cdef int _padding(str func, object padding, Tiles* t) except -1:
    try:
        ph, pw = padding
    except (TypeError, ValueError):
        raise TypeError(f"{func}: padding must be a pair of ints, got {padding!r}") from None
    _int(func, "padding", ph)
    _int(func, "padding", pw)
    if ph < 0 or pw < 0:
        raise ValueError(f"{func}: padding must be non-negative, got {padding!r}")
    t.ph, t.pw = ph, pw
    return 0


cdef cnp.ndarray _tile_input(str func, str name, object a, Py_ssize_t c, Py_ssize_t tiles,
                             object dtype):
    _check_input(func, name, a)
    if a.dtype != dtype or a.shape != (16, c, tiles):
        raise ValueError(
            f"{func}: {name} must be a {np.dtype(dtype)} array of shape {(16, c, tiles)} "
            f"(16 positions, channels, tiles), got {a.dtype} {a.shape}"
        )
    return <cnp.ndarray>a


cdef cnp.ndarray _result(str func, object out, tuple shape, object dtype, tuple inputs):
    if out is None:
        return np.empty(shape, dtype=dtype)
    _check_input(func, "out", out)
    if out.dtype != dtype or out.shape != shape:
        raise ValueError(
            f"{func}: out must be a {np.dtype(dtype)} array of shape {shape}, got "
            f"{out.dtype} {out.shape}"
        )
    if not out.flags.writeable:
        raise ValueError(f"{func}: out is read-only; pass a writable array")
    for a in inputs:
        if np.shares_memory(out, a):
            raise ValueError(f"{func}: out overlaps an input; pass a separate array")
    return <cnp.ndarray>out


# Note [Winograd's transforms split planes across threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A (sample, channel) plane's tiles stay on one thread (the input gradient's overlapping
# tiles add into their own plane only, so no two threads write one element), and every
# plane is computed alike whatever the thread count.  The transforms are memory-bound
# passes: they take _kernels.pyx's threshold for those (kernel_parallel_threshold(),
# counted in transformed numbers); it was not measured apart for these kernels.  The
# convolution's driver (_conv_winograd.py) calls them with max_threads=1, a chunk of the
# batch at a time between BLAS products, as _conv_arrays.py calls im2col: with the
# planes on two threads, libgomp's and OpenBLAS's thread pools took turns holding the two
# cores (Note [Threads are opt-in] in _kernels.pyx), and the ResNet's four 3x3
# convolutions took 0.45-2.2 s at GRADSTACK_NUM_THREADS=2 against 27-41 ms at one thread.

cdef int _threads(Py_ssize_t elements, Py_ssize_t planes) noexcept nogil:
    # Note [Winograd's transforms split planes across threads]
    cdef int n = kernel_threads(elements, kernel_parallel_threshold())
    return <int>min(<Py_ssize_t>n, planes) if planes > 0 else 1


cdef int _capped(str func, object max_threads, int nthreads) except -1:
    """``nthreads`` capped at a caller's ``max_threads`` (a positive int, or None)."""
    if max_threads is None:
        return nthreads
    if isinstance(max_threads, bool) or not isinstance(max_threads, (int, np.integer)) \
            or max_threads < 1:
        raise ValueError(f"{func}: max_threads must be a positive int or None, got "
                         f"{max_threads!r}")
    return <int>min(nthreads, max_threads)


# Note [AVX2 copies of Winograd's row loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The loops along a row of tiles (Note [Winograd's transforms run along rows of tiles])
# are compiled twice, the baseline (SSE2) copy and an AVX2 one, and every call takes the
# copy of ``_kernels.pyx``'s switch (Note [AVX2 clones]): the transforms are additions
# and subtractions only, so both copies give the same bits.

cdef extern from *:
    """
    /* GS_BODY, GS_DISPATCH, GS_AVX2_CLONES: _kernels.pxd */
    #define GS_WI_BODY(name, T)                                                       \
    GS_BODY void name(const T* restrict pp, const T* restrict tl, T* restrict r,      \
                      T* restrict v, Py_ssize_t th, Py_ssize_t tw, Py_ssize_t stride) \
    {                                                                                 \
        Py_ssize_t j, k, R, hp = 2 * th + 2, n = hp * tw, m = th * tw;                \
        if (th <= 0 || tw <= 0)                                                       \
            return;                                                                   \
        T* restrict r0 = r;                                                           \
        T* restrict r1 = r0 + n;                                                      \
        T* restrict r2 = r1 + n;                                                      \
        T* restrict r3 = r2 + n;                                                      \
        for (k = 0; k < n; k++) {          /* rows: d B, all rows in one loop */      \
            T a0 = pp[2 * k], a1 = pp[2 * k + 1];                                     \
            T a2 = pp[2 * k + 2], a3 = pp[2 * k + 3];                                 \
            r0[k] = a0 - a2;                                                          \
            r1[k] = a1 + a2;                                                          \
            r2[k] = a2 - a1;                                                          \
            r3[k] = a1 - a3;                                                          \
        }                                                                             \
        for (R = 0; R < hp; R++) {         /* each row's last tile: its tail */       \
            T a0, a1, a2, a3;                                                         \
            k = R * tw + tw - 1;                                                      \
            a0 = pp[2 * k]; a1 = pp[2 * k + 1];                                       \
            a2 = tl[2 * R]; a3 = tl[2 * R + 1];                                       \
            r0[k] = a0 - a2;                                                          \
            r1[k] = a1 + a2;                                                          \
            r2[k] = a2 - a1;                                                          \
            r3[k] = a1 - a3;                                                          \
        }                                                                             \
        for (j = 0; j < 4; j++) {          /* columns: B^T (d B), even rows E first,  \
                                              odd rows O after them */                \
            const T* restrict e = r + j * n;                                          \
            const T* restrict o = e + (th + 1) * tw;                                  \
            T* restrict o0 = v + j * stride;                                          \
            T* restrict o1 = o0 + 4 * stride;                                         \
            T* restrict o2 = o1 + 4 * stride;                                         \
            T* restrict o3 = o2 + 4 * stride;                                         \
            for (k = 0; k < m; k++) {                                                 \
                T d0 = e[k], d1 = o[k], d2 = e[k + tw], d3 = o[k + tw];               \
                o0[k] = d0 - d2;                                                      \
                o1[k] = d1 + d2;                                                      \
                o2[k] = d2 - d1;                                                      \
                o3[k] = d1 - d3;                                                      \
            }                                                                         \
        }                                                                             \
    }
    #define GS_WO_BODY(name, T)                                                       \
    GS_BODY void name(const T* restrict m, T* restrict s, T* restrict y,              \
                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,       \
                      Py_ssize_t stride) {                                            \
        Py_ssize_t j, k, x, a, ty, yy, t0, nb, B, n;                                  \
        T* restrict r;                                                                \
        if (th <= 0 || tw <= 0)                                                       \
            return;                                                                   \
        B = GS_W_ROWS(th, tw);                                                        \
        n = B * tw;                                                                   \
        r = s + 8 * n;                     /* a row's blocks past the plane */        \
        for (t0 = 0; t0 < th; t0 += B) {                                              \
            nb = th - t0 < B ? th - t0 : B;                                           \
            for (j = 0; j < 4; j++) {      /* columns: A^T m, the band at once */     \
                const T* restrict m0 = m + j * stride + t0 * tw;                      \
                const T* restrict m1 = m0 + 4 * stride;                               \
                const T* restrict m2 = m1 + 4 * stride;                               \
                const T* restrict m3 = m2 + 4 * stride;                               \
                T* restrict s0 = s + j * n;                                           \
                T* restrict s1 = s0 + 4 * n;                                          \
                for (k = 0; k < nb * tw; k++) {                                       \
                    s0[k] = m0[k] + m1[k] + m2[k];                                    \
                    s1[k] = m1[k] - m2[k] - m3[k];                                    \
                }                                                                     \
            }                                                                         \
            for (ty = 0; ty < nb; ty++) {  /* rows: (A^T m) A, a row of tiles */      \
                for (a = 0; a < 2; a++) {                                             \
                    const T* restrict s0 = s + 4 * a * n + ty * tw;                   \
                    const T* restrict s1 = s0 + n;                                    \
                    const T* restrict s2 = s1 + n;                                    \
                    const T* restrict s3 = s2 + n;                                    \
                    T* restrict d;                                                    \
                    yy = 2 * (t0 + ty) + a;                                           \
                    if (yy >= h)                                                      \
                        break;                                                        \
                    d = w == 2 * tw ? y + yy * w : r;                                 \
                    for (x = 0; x < tw; x++) {                                        \
                        d[2 * x] = s0[x] + s1[x] + s2[x];                             \
                        d[2 * x + 1] = s1[x] - s2[x] - s3[x];                         \
                    }                                                                 \
                    if (d == r)                                                       \
                        for (x = 0; x < w; x++)                                       \
                            y[yy * w + x] = r[x];                                     \
                }                                                                     \
            }                                                                         \
        }                                                                             \
    }
    /* Note [Winograd's input transform in two flat passes]: the plane a band of
       GS_W_BAND tiles (whole rows of tiles) at a time, so that the scratch stays in L1 */
    #define GS_W_BAND 256
    #define GS_W_ROWS(th, tw) ((tw) >= GS_W_BAND ? 1                                   \
                               : ((th) < GS_W_BAND / (tw) ? (th) : GS_W_BAND / (tw)))
    #define GS_WG_BODY(name, T)                                                       \
    GS_BODY void name(const T* restrict g, T* restrict r, T* restrict q,              \
                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t stride) {              \
        Py_ssize_t i, x, ty, t0, nb, wq = 2 * tw, B, n;                               \
        if (th <= 0 || tw <= 0)                                                       \
            return;                                                                   \
        B = GS_W_ROWS(th, tw);                                                        \
        n = B * wq;                                                                   \
        for (t0 = 0; t0 < th; t0 += B) {                                              \
            nb = th - t0 < B ? th - t0 : B;                                           \
            for (ty = 0; ty < nb; ty++) {  /* columns: A g, a row of blocks */        \
                const T* restrict g0 = g + 2 * (t0 + ty) * wq;                        \
                const T* restrict g1 = g0 + wq;                                       \
                T* restrict s0 = r + ty * wq;                                         \
                T* restrict s1 = s0 + n;                                              \
                T* restrict s2 = s1 + n;                                              \
                T* restrict s3 = s2 + n;                                              \
                for (x = 0; x < wq; x++) {                                            \
                    s0[x] = g0[x];                                                    \
                    s1[x] = g0[x] + g1[x];                                            \
                    s2[x] = g0[x] - g1[x];                                            \
                    s3[x] = -g1[x];                                                   \
                }                                                                     \
            }                                                                         \
            for (i = 0; i < 4; i++) {      /* rows: (A g) A^T, the band at once */    \
                const T* restrict ri = r + i * n;                                     \
                T* restrict o0 = q + 4 * i * stride + t0 * tw;                        \
                T* restrict o1 = o0 + stride;                                         \
                T* restrict o2 = o1 + stride;                                         \
                T* restrict o3 = o2 + stride;                                         \
                for (x = 0; x < nb * tw; x++) {                                       \
                    T a0 = ri[2 * x], a1 = ri[2 * x + 1];                             \
                    o0[x] = a0;                                                       \
                    o1[x] = a0 + a1;                                                  \
                    o2[x] = a0 - a1;                                                  \
                    o3[x] = -a1;                                                      \
                }                                                                     \
            }                                                                         \
        }                                                                             \
    }
    #define GS_WIG_BODY(name, T)                                                      \
    GS_BODY void name(const T* restrict z, T* restrict e, T* restrict dx,             \
                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,       \
                      Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t stride)                \
    {                                                                                 \
        Py_ssize_t i, j, k, y, xx, R, hp = 2 * th + 2, wq = 2 * tw;                   \
        Py_ssize_t n = hp * tw, m = th * tw, b1, b2, b3;                              \
        T* restrict P = e + 4 * n;         /* columns 0 .. 2 tw - 1 of a row */       \
        T* restrict S = P + 2 * n;         /* columns 2 .. 2 tw + 1 */                \
        if (th <= 0 || tw <= 0) {                                                     \
            for (k = 0; k < h * w; k++)                                               \
                dx[k] = 0;                                                            \
            return;                                                                   \
        }                                                                             \
        for (k = 0; k < 4 * n; k++)                                                   \
            e[k] = 0;                                                                 \
        for (j = 0; j < 4; j++) {      /* columns: B z, added into the padded rows,   \
                                          even rows E first, odd rows O after them;   \
                                          B's rows (1,0,0,0) (0,1,-1,1) (-1,1,1,0)    \
                                          (0,0,0,-1) */                               \
            const T* restrict q0 = z + j * stride;                                    \
            const T* restrict q1 = q0 + 4 * stride;                                   \
            const T* restrict q2 = q1 + 4 * stride;                                   \
            const T* restrict q3 = q2 + 4 * stride;                                   \
            T* restrict E = e + j * n;                                                \
            T* restrict O = E + (th + 1) * tw;                                        \
            for (k = 0; k < m; k++) {      /* rows 2 ty, 2 ty + 1 */                  \
                E[k] += q0[k];                                                        \
                O[k] += q1[k] - q2[k] + q3[k];                                        \
            }                                                                         \
            for (k = 0; k < m; k++) {      /* rows 2 ty + 2, 2 ty + 3 */              \
                E[k + tw] += q1[k] + q2[k] - q0[k];                                   \
                O[k + tw] -= q3[k];                                                   \
            }                                                                         \
        }                                                                             \
        for (k = 0; k < n; k++) {      /* rows: (B z) B^T, every row at once */       \
            const T e0 = e[k], e1 = e[n + k], e2 = e[2 * n + k], e3 = e[3 * n + k];    \
            P[2 * k] = (T)0 + e0;                                                     \
            P[2 * k + 1] = (T)0 + (e1 - e2 + e3);                                     \
            S[2 * k] = (T)0 + (e1 + e2 - e0);                                         \
            S[2 * k + 1] = (T)0 - e3;                                                 \
        }                                                                             \
        b1 = 2 - pw < 0 ? 0 : (2 - pw > w ? w : 2 - pw);                              \
        b2 = wq - pw < 0 ? 0 : (wq - pw > w ? w : wq - pw);                           \
        b3 = wq + 2 - pw < 0 ? 0 : (wq + 2 - pw > w ? w : wq + 2 - pw);               \
        for (y = 0; y < h; y++) {      /* the overlaps added, copied out */           \
            T* restrict d = dx + y * w;                                               \
            const T* restrict pr;                                                     \
            const T* restrict sr;                                                     \
            i = y + ph;                                                               \
            if (i >= hp) {                                                            \
                for (xx = 0; xx < w; xx++)                                            \
                    d[xx] = 0;                                                        \
                continue;                                                             \
            }                                                                         \
            R = i % 2 == 0 ? i / 2 : th + 1 + i / 2;                                  \
            pr = P + R * wq + pw;                                                     \
            sr = S + R * wq + pw - 2;                                                 \
            for (xx = 0; xx < b1; xx++)                                               \
                d[xx] = pr[xx];                                                       \
            for (xx = b1; xx < b2; xx++)                                              \
                d[xx] = pr[xx] + sr[xx];                                              \
            for (xx = b2; xx < b3; xx++)                                              \
                d[xx] = sr[xx];                                                       \
            for (xx = b3; xx < w; xx++)                                               \
                d[xx] = 0;                                                            \
        }                                                                             \
    }
    #define GS_W_COPIES(SUF, T)                                                       \
    GS_WI_BODY(gs_wi_body_##SUF, T)                                                   \
    GS_WO_BODY(gs_wo_body_##SUF, T)                                                   \
    GS_WG_BODY(gs_wg_body_##SUF, T)                                                   \
    GS_WIG_BODY(gs_wig_body_##SUF, T)                                                 \
    static void gs_wi_##SUF##_default(const T* pp, const T* tl, T* r, T* v,           \
                                      Py_ssize_t th, Py_ssize_t tw, Py_ssize_t s)     \
    { gs_wi_body_##SUF(pp, tl, r, v, th, tw, s); }                                        \
    static void gs_wo_##SUF##_default(const T* m, T* sc, T* y, Py_ssize_t th,          \
                                      Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,      \
                                      Py_ssize_t s)                                   \
    { gs_wo_body_##SUF(m, sc, y, th, tw, h, w, s); }                                       \
    static void gs_wg_##SUF##_default(const T* g, T* r, T* q, Py_ssize_t th,          \
                                      Py_ssize_t tw, Py_ssize_t s)                    \
    { gs_wg_body_##SUF(g, r, q, th, tw, s); }                                        \
    static void gs_wig_##SUF##_default(const T* z, T* e, T* dx, Py_ssize_t th,        \
                                       Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,     \
                                       Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t s)    \
    { gs_wig_body_##SUF(z, e, dx, th, tw, h, w, ph, pw, s); }
    #if GS_AVX2_CLONES
    #define GS_W_AVX2(SUF, T)                                                         \
    __attribute__((target("avx2")))                                                   \
    static void gs_wi_##SUF##_avx2(const T* pp, const T* tl, T* r, T* v,              \
                                   Py_ssize_t th, Py_ssize_t tw, Py_ssize_t s)        \
    { gs_wi_body_##SUF(pp, tl, r, v, th, tw, s); }                                        \
    __attribute__((target("avx2")))                                                   \
    static void gs_wo_##SUF##_avx2(const T* m, T* sc, T* y, Py_ssize_t th,             \
                                   Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,         \
                                   Py_ssize_t s)                                      \
    { gs_wo_body_##SUF(m, sc, y, th, tw, h, w, s); }                                       \
    __attribute__((target("avx2")))                                                   \
    static void gs_wg_##SUF##_avx2(const T* g, T* r, T* q, Py_ssize_t th,             \
                                   Py_ssize_t tw, Py_ssize_t s)                       \
    { gs_wg_body_##SUF(g, r, q, th, tw, s); }                                        \
    __attribute__((target("avx2")))                                                   \
    static void gs_wig_##SUF##_avx2(const T* z, T* e, T* dx, Py_ssize_t th,           \
                                    Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,        \
                                    Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t s)       \
    { gs_wig_body_##SUF(z, e, dx, th, tw, h, w, ph, pw, s); }
    #else
    #define GS_W_AVX2(SUF, T)
    #endif
    #define GS_W_DISPATCH(SUF, T)                                                     \
    static void gs_wi_##SUF(int gs_avx2, const T* pp, const T* tl, T* r, T* v,        \
                            Py_ssize_t th, Py_ssize_t tw, Py_ssize_t s)               \
    { GS_DISPATCH(gs_wi_##SUF, (pp, tl, r, v, th, tw, s)); }                              \
    static void gs_wo_##SUF(int gs_avx2, const T* m, T* sc, T* y, Py_ssize_t th,       \
                            Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w, Py_ssize_t s)  \
    { GS_DISPATCH(gs_wo_##SUF, (m, sc, y, th, tw, h, w, s)); }                             \
    static void gs_wg_##SUF(int gs_avx2, const T* g, T* r, T* q, Py_ssize_t th,       \
                            Py_ssize_t tw, Py_ssize_t s)                              \
    { GS_DISPATCH(gs_wg_##SUF, (g, r, q, th, tw, s)); }                              \
    static void gs_wig_##SUF(int gs_avx2, const T* z, T* e, T* dx, Py_ssize_t th,     \
                             Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w,               \
                             Py_ssize_t ph, Py_ssize_t pw, Py_ssize_t s)              \
    { GS_DISPATCH(gs_wig_##SUF, (z, e, dx, th, tw, h, w, ph, pw, s)); }
    GS_W_COPIES(f32, float)
    GS_W_COPIES(f64, double)
    GS_W_AVX2(f32, float)
    GS_W_AVX2(f64, double)
    GS_W_DISPATCH(f32, float)
    GS_W_DISPATCH(f64, double)
    """
    void gs_wi_f32(int avx2, const float* pp, const float* tl, float* r, float* v,
                   Py_ssize_t th, Py_ssize_t tw, Py_ssize_t s) noexcept nogil
    void gs_wi_f64(int avx2, const double* pp, const double* tl, double* r, double* v,
                   Py_ssize_t th, Py_ssize_t tw, Py_ssize_t s) noexcept nogil
    void gs_wo_f32(int avx2, const float* m, float* sc, float* y, Py_ssize_t th,
                   Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w, Py_ssize_t s) noexcept nogil
    void gs_wo_f64(int avx2, const double* m, double* sc, double* y, Py_ssize_t th,
                   Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w, Py_ssize_t s) noexcept nogil
    void gs_wg_f32(int avx2, const float* g, float* r, float* q, Py_ssize_t th,
                   Py_ssize_t tw, Py_ssize_t s) noexcept nogil
    void gs_wg_f64(int avx2, const double* g, double* r, double* q, Py_ssize_t th,
                   Py_ssize_t tw, Py_ssize_t s) noexcept nogil
    void gs_wig_f32(int avx2, const float* z, float* e, float* dx, Py_ssize_t th,
                    Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w, Py_ssize_t ph,
                    Py_ssize_t pw, Py_ssize_t s) noexcept nogil
    void gs_wig_f64(int avx2, const double* z, double* e, double* dx, Py_ssize_t th,
                    Py_ssize_t tw, Py_ssize_t h, Py_ssize_t w, Py_ssize_t ph,
                    Py_ssize_t pw, Py_ssize_t s) noexcept nogil


cdef inline void _input_rows(const real* pp, const real* tl, real* r, real* v, Py_ssize_t th,
                             Py_ssize_t tw, Py_ssize_t stride) noexcept nogil:
    if real is float:
        gs_wi_f32(kernel_avx2(), pp, tl, r, v, th, tw, stride)
    else:
        gs_wi_f64(kernel_avx2(), pp, tl, r, v, th, tw, stride)


cdef inline void _output_rows(const real* m, real* s, real* y, const Tiles* t,
                              Py_ssize_t stride) noexcept nogil:
    if real is float:
        gs_wo_f32(kernel_avx2(), m, s, y, t.th, t.tw, t.h, t.w, stride)
    else:
        gs_wo_f64(kernel_avx2(), m, s, y, t.th, t.tw, t.h, t.w, stride)


cdef inline void _grad_rows(const real* g, real* r, real* q, Py_ssize_t th, Py_ssize_t tw,
                            Py_ssize_t stride) noexcept nogil:
    if real is float:
        gs_wg_f32(kernel_avx2(), g, r, q, th, tw, stride)
    else:
        gs_wg_f64(kernel_avx2(), g, r, q, th, tw, stride)


cdef inline void _input_grad_rows(const real* z, real* e, real* dx, const Tiles* t,
                                  Py_ssize_t stride) noexcept nogil:
    if real is float:
        gs_wig_f32(kernel_avx2(), z, e, dx, t.th, t.tw, t.h, t.w, t.ph, t.pw, stride)
    else:
        gs_wig_f64(kernel_avx2(), z, e, dx, t.th, t.tw, t.h, t.w, t.ph, t.pw, stride)


# ---------------------------------------------------------------------------------------
# The loops: one (sample, channel) plane each.  Positions are p = 4 * i + j of the 4x4
# transformed tile; `stride` is the distance between two positions (C * T elements), t0
# the plane's first tile.
#
# Note [Winograd's transforms run along rows of tiles]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A tile at a time, the 16 numbers of a tile go to 16 places C * T apart and the 4x4 tile
# is gathered with bounds checks: measured 39 ns a tile at the ResNet's first stage, the
# transforms took 2-3x the time of the products they feed.  So every loop runs along a row
# of tiles (tx), each statement one position of all the row's tiles: loads and stores are
# contiguous (or of stride 2) and the compiler vectorises them.  The plane is first copied
# into a zero-padded scratch plane (the input's padding, and whole tiles past an odd
# edge), so that no loop checks bounds; the input gradient is added up in such a plane and
# copied out.  The input's row transform (d B) is made once per padded row, for the two
# rows of tiles that share it, and the input gradient's inverse row transform too.
# Scratch is allocated per plane (a few KiB).

@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _pad_plane(const real* x, real* pp, Py_ssize_t h, Py_ssize_t w, Py_ssize_t hp,
                     Py_ssize_t wp, Py_ssize_t ph, Py_ssize_t pw) noexcept nogil:
    """``pp[y + ph, x + pw] = x[y, x]`` inside ``hp x wp``, zero elsewhere."""
    cdef Py_ssize_t y, xx, yy
    for y in range(hp * wp):
        pp[y] = 0
    for y in range(h):
        yy = y + ph
        if yy >= hp:
            break
        for xx in range(min(w, wp - pw)):
            pp[yy * wp + xx + pw] = x[y * w + xx]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _pad_rows(const real* x, real* pp, real* tl, Py_ssize_t h, Py_ssize_t w,
                    Py_ssize_t th, Py_ssize_t tw, Py_ssize_t ph, Py_ssize_t pw) noexcept nogil:
    """The zero-padded plane of :func:`_input_plane`'s layout (Note [Winograd's input
    transform in two flat passes]): padded row ``i`` (of ``2 th + 2``) at rank ``i / 2``
    when even and ``th + 1 + i / 2`` when odd, its first ``2 tw`` columns in ``pp`` (rows
    ``2 tw`` apart, two zeros after the last) and its last two in ``tl``."""
    cdef Py_ssize_t hp = 2 * th + 2, wq = 2 * tw, i, c, y, rank, lo, hi
    cdef real* dst
    for i in range(hp * wq + 2):
        pp[i] = 0
    for i in range(2 * hp):
        tl[i] = 0
    lo = pw                                  # the first padded column holding x
    for i in range(hp):
        y = i - ph
        if y < 0 or y >= h:
            continue
        rank = i // 2 if i % 2 == 0 else th + 1 + i // 2
        dst = pp + rank * wq
        hi = min(w + pw, wq)                 # past the last main column holding x
        for c in range(lo, hi):
            dst[c] = x[y * w + c - pw]
        for c in range(wq, wq + 2):
            if lo <= c < w + pw:
                tl[2 * rank + c - wq] = x[y * w + c - pw]


# Note [Winograd's input transform in two flat passes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Along rows of tiles (Note [Winograd's transforms run along rows of tiles]) the loops are
# ``tw`` long: 16 at the ResNet's first stage, 4 at its last, where the setup of each
# vectorised loop (GCC's overlap checks, the remainder) took most of the time (perf: the
# input transform was 1.0 ms of a 2.4 ms forward at 16 channels and 32x32).  So the padded
# plane is laid out for two loops over the whole plane: its rows ``2 tw`` apart (the last
# two columns, read only by a row's last tile, kept apart in a tail), the even rows first
# and the odd rows after them.  The row transform (``d B``) is then one loop over all the
# plane's ``(2 th + 2) tw`` row-tiles (a row's last tile, which read the next row's first
# columns, computed again from the tail), and the column transform (``B^T (d B)``) one
# loop over the plane's ``th tw`` tiles per column position: tile ``k``'s four rows are
# ``E[k], O[k], E[k + tw], O[k + tw]`` of the even rows ``E`` and the odd rows ``O``.  The
# arithmetic of every number is the same as before (the same additions of the same
# operands), so the values are the same bits.  The gradient's and the output's transforms
# take a flat pass over bands of whole rows of tiles, at most GS_W_BAND (256) tiles: over
# a whole 100x100 plane their scratch left the L1 cache and they ran 15-25% slower than
# along rows, in bands as fast (0.36 and 0.33 ms at 4 x 10 x 100 x 100, one thread).

@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _input_plane(const real* x, real* v, const Tiles* t, Py_ssize_t t0,
                      Py_ssize_t stride) noexcept nogil:
    """``B^T d B`` of the plane's tiles into ``v[p * stride + t0 + tile]`` (Note
    [Winograd's input transform in two flat passes]); -1 when out of memory."""
    cdef Py_ssize_t th = t.th, tw = t.tw
    cdef Py_ssize_t hp = 2 * th + 2, wq = 2 * tw
    cdef real* pp = <real*>malloc((hp * wq + 2 + 2 * hp + 4 * hp * tw) * sizeof(real))
    if pp == NULL:
        return -1
    cdef real* tl = pp + hp * wq + 2
    _pad_rows(x, pp, tl, t.h, t.w, th, tw, t.ph, t.pw)
    _input_rows(pp, tl, tl + 2 * hp, v + t0, th, tw, stride)
    free(pp)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _output_plane(const real* m, real* y, const Tiles* t, Py_ssize_t t0,
                       Py_ssize_t stride) noexcept nogil:
    """``A^T m A`` of the plane's tiles, the 2x2 blocks inside the ``h x w`` plane: the
    column transform over the whole plane at once, the row transform a row of tiles at a
    time (Note [Winograd's input transform in two flat passes])."""
    cdef real* s = <real*>malloc((8 * t.th * t.tw + 2 * t.tw + 1) * sizeof(real))
    if s == NULL:
        return -1
    _output_rows(m + t0, s, y, t, stride)
    free(s)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _grad_plane(const real* g, real* q, const Tiles* t, Py_ssize_t t0,
                     Py_ssize_t stride) noexcept nogil:
    """``A g A^T`` of the plane's 2x2 blocks (zero outside ``h x w``): the column
    transform a row of blocks at a time, the row transform over the whole plane at once
    (Note [Winograd's input transform in two flat passes])."""
    cdef Py_ssize_t th = t.th, tw = t.tw, wq = 2 * tw
    cdef bint padded = t.h != 2 * th or t.w != wq
    cdef real* pp = <real*>malloc(((2 * th * wq) * padded + 4 * th * wq + 1) * sizeof(real))
    if pp == NULL:
        return -1
    cdef real* r = pp + (2 * th * wq) * padded
    cdef const real* src = g
    if padded:
        _pad_plane(g, pp, t.h, t.w, 2 * th, wq, 0, 0)
        src = pp
    _grad_rows(src, r, q + t0, th, tw, stride)
    free(pp)
    return 0


# Note [Winograd's input gradient in flat passes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The transpose of Note [Winograd's input transform in two flat passes]: the column
# transform adds each tile's four rows into the padded rows, laid out even rows first and
# odd rows after them, in two loops over the plane's tiles (rows 2 ty and 2 ty + 1, then
# rows 2 ty + 2 and 2 ty + 3: a row then gets the contributions of its two tiles from
# separate loops, so no loop reads what it wrote); the row transform is one loop over all
# the rows' tiles, a tile's columns 2 tx and 2 tx + 1 into one plane and 2 tx + 2 and
# 2 tx + 3 into another, added as they are copied out.  Every number of the padded plane
# is the sum, from zero, of the same one or two terms as in the loops along rows of tiles
# (the first one added first there: ``(0 + a) + b``, here ``(0 + a) + (0 + b)``, and
# ``(0 + b) + a`` in the columns); IEEE addition commutes and ``0 + a`` is never ``-0``,
# so these are the same bits.

@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _input_grad_plane(const real* z, real* dx, const Tiles* t, Py_ssize_t t0,
                           Py_ssize_t stride) noexcept nogil:
    """``B z B^T`` of the plane's tiles added up in a padded plane, copied to ``dx``
    (Note [Winograd's input gradient in flat passes])."""
    cdef real* e = <real*>malloc((8 * (2 * t.th + 2) * t.tw + 1) * sizeof(real))
    if e == NULL:
        return -1
    _input_grad_rows(z + t0, e, dx, t, stride)
    free(e)
    return 0


# ---------------------------------------------------------------------------------------
# The drivers: one plane per iteration, planes across threads.

cdef Py_ssize_t _input_tiles(const real* x, real* v, const Tiles* t, int nthreads) noexcept nogil:
    cdef Py_ssize_t per = t.th * t.tw, T = t.n * t.th * t.tw
    cdef Py_ssize_t plane, n, c, failed = 0
    for plane in prange(t.n * t.c, nogil=True, num_threads=nthreads, schedule="static"):
        n = plane // t.c
        c = plane % t.c
        failed += _input_plane(x + plane * t.h * t.w, v + c * T, t, n * per, t.c * T) != 0
    return failed


cdef Py_ssize_t _output_tiles(const real* m, real* y, const Tiles* t, int nthreads) noexcept nogil:
    cdef Py_ssize_t per = t.th * t.tw, T = t.n * t.th * t.tw
    cdef Py_ssize_t plane, n, c, failed = 0
    for plane in prange(t.n * t.c, nogil=True, num_threads=nthreads, schedule="static"):
        n = plane // t.c
        c = plane % t.c
        failed += _output_plane(m + c * T, y + plane * t.h * t.w, t, n * per, t.c * T) != 0
    return failed


cdef Py_ssize_t _grad_tiles(const real* g, real* q, const Tiles* t, int nthreads) noexcept nogil:
    cdef Py_ssize_t per = t.th * t.tw, T = t.n * t.th * t.tw
    cdef Py_ssize_t plane, n, c, failed = 0
    for plane in prange(t.n * t.c, nogil=True, num_threads=nthreads, schedule="static"):
        n = plane // t.c
        c = plane % t.c
        failed += _grad_plane(g + plane * t.h * t.w, q + c * T, t, n * per, t.c * T) != 0
    return failed


cdef Py_ssize_t _input_grad(const real* z, real* dx, const Tiles* t, int nthreads) noexcept nogil:
    cdef Py_ssize_t per = t.th * t.tw, T = t.n * t.th * t.tw
    cdef Py_ssize_t plane, n, c, failed = 0
    for plane in prange(t.n * t.c, nogil=True, num_threads=nthreads, schedule="static"):
        n = plane // t.c
        c = plane % t.c
        failed += _input_grad_plane(z + c * T, dx + plane * t.h * t.w, t, n * per, t.c * T) != 0
    return failed


# ---------------------------------------------------------------------------------------
# The Python-visible kernels

def winograd_input_tiles(x, padding, th, tw, out=None, max_threads=None):
    """``B^T d B`` of every 4x4 tile of the zero-padded input, in the tile layout.

    Parameters
    ----------
    x : ndarray
        ``(N, C, H, W)``, float32 or float64, C-contiguous.
    padding : pair of int
        The input's zero padding: tile ``(ty, tx)`` starts at row ``2 ty - padding[0]``,
        column ``2 tx - padding[1]``.
    th, tw : int
        Tiles down and across (non-negative).
    out : ndarray, optional
        Where to write (C-contiguous, the result's shape and dtype, not overlapping ``x``).
    max_threads : int, optional
        At most this many threads (Note [Winograd's transforms split planes across
        threads]); 1 for a caller that runs the kernel on many small pieces in a row.

    Returns
    -------
    ndarray
        ``(16, C, N * th * tw)``: position ``4 i + j`` of tile ``(n * th + ty) * tw + tx``.

    Raises
    ------
    TypeError, ValueError
        If an operand is not a C-contiguous float32/float64 array of the shapes above, or
        a size is not a non-negative int.

    Examples
    --------
    >>> import numpy as np
    >>> v = winograd_input_tiles(np.arange(16.).reshape(1, 1, 4, 4), (0, 0), 1, 1)
    >>> v[:, 0, 0].reshape(4, 4)
    array([[  0., -16.,   0.,   0.],
           [ -4.,  30.,   2.,  -4.],
           [  0.,   8.,   0.,   0.],
           [  0., -16.,   0.,   0.]])
    """
    cdef str func = "winograd_input_tiles"
    cdef Tiles t
    _plane_layout(func, "x", x, &t)
    _padding(func, padding, &t)
    _tile_counts(func, th, tw, &t)
    cdef cnp.ndarray res = _result(func, out, (16, t.c, t.n * t.th * t.tw), x.dtype, (x,))
    cdef int nthreads = _capped(
        func, max_threads, _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
    )
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef Py_ssize_t failed
    cdef void* dst = cnp.PyArray_DATA(res)
    if x.dtype == np.float32:
        with nogil:
            failed = _input_tiles(<const float*>src, <float*>dst, &t, nthreads)
    else:
        with nogil:
            failed = _input_tiles(<const double*>src, <double*>dst, &t, nthreads)
    if failed:
        raise MemoryError(f"{func}: out of memory for a plane's scratch")
    return res


def winograd_output_tiles(m, n, oh, ow, out=None, max_threads=None):
    """``A^T m A`` of every tile: the 2x2 output blocks, cropped to ``oh x ow``.

    Parameters
    ----------
    m : ndarray
        ``(16, O, n * th * tw)`` in the tile layout, ``th = ceil(oh / 2)``,
        ``tw = ceil(ow / 2)``; float32 or float64, C-contiguous.
    n, oh, ow : int
        The batch and the output's plane.
    out : ndarray, optional
        Where to write (``(n, O, oh, ow)``, C-contiguous, ``m``'s dtype).
    max_threads : int, optional
        At most this many threads (Note [Winograd's transforms split planes across
        threads]); 1 for a caller that runs the kernel on many small pieces in a row.

    Returns
    -------
    ndarray
        ``(n, O, oh, ow)``.

    Raises
    ------
    TypeError, ValueError
        If an operand is not a C-contiguous float32/float64 array of the shapes above.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.zeros((16, 1, 1)); m[5] = 1.
    >>> winograd_output_tiles(m, 1, 2, 2)[0, 0]
    array([[1., 1.],
           [1., 1.]])
    """
    cdef str func = "winograd_output_tiles"
    cdef Tiles t
    for name, v in (("n", n), ("oh", oh), ("ow", ow)):
        _int(func, name, v)
        if v < 0:
            raise ValueError(f"{func}: {name} must be non-negative, got {v}")
    _check_input(func, "m", m)
    if (<cnp.ndarray>m).ndim != 3:
        raise ValueError(f"{func}: m must be (16, O, tiles), got shape {m.shape}")
    t.n, t.c, t.h, t.w = n, m.shape[1], oh, ow
    t.th, t.tw, t.ph, t.pw = (oh + 1) // 2, (ow + 1) // 2, 0, 0
    _tile_input(func, "m", m, t.c, t.n * t.th * t.tw, m.dtype)
    cdef cnp.ndarray res = _result(func, out, (t.n, t.c, t.h, t.w), m.dtype, (m,))
    cdef int nthreads = _capped(
        func, max_threads, _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
    )
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>m)
    cdef Py_ssize_t failed
    cdef void* dst = cnp.PyArray_DATA(res)
    if m.dtype == np.float32:
        with nogil:
            failed = _output_tiles(<const float*>src, <float*>dst, &t, nthreads)
    else:
        with nogil:
            failed = _output_tiles(<const double*>src, <double*>dst, &t, nthreads)
    if failed:
        raise MemoryError(f"{func}: out of memory for a plane's scratch")
    return res


def winograd_grad_tiles(g, out=None, max_threads=None):
    """``A g A^T`` of every 2x2 block of the output gradient (zero outside), in the tile
    layout: the operand of the backward's products (Note [The backward is the forward
    transposed]).

    Parameters
    ----------
    g : ndarray
        ``(N, O, oh, ow)``, float32 or float64, C-contiguous.
    out : ndarray, optional
        Where to write (``(16, O, N * th * tw)``, ``th = ceil(oh / 2)``,
        ``tw = ceil(ow / 2)``).
    max_threads : int, optional
        At most this many threads (Note [Winograd's transforms split planes across
        threads]); 1 for a caller that runs the kernel on many small pieces in a row.

    Returns
    -------
    ndarray
        ``(16, O, N * th * tw)``.

    Raises
    ------
    TypeError, ValueError
        If an operand is not a C-contiguous float32/float64 array of the shapes above.

    Examples
    --------
    >>> import numpy as np
    >>> winograd_grad_tiles(np.array([[[[1., 2.], [3., 4.]]]]))[:, 0, 0].reshape(4, 4)
    array([[ 1.,  3., -1., -2.],
           [ 4., 10., -2., -6.],
           [-2., -4.,  0.,  2.],
           [-3., -7.,  1.,  4.]])
    """
    cdef str func = "winograd_grad_tiles"
    cdef Tiles t
    _plane_layout(func, "g", g, &t)
    t.th, t.tw, t.ph, t.pw = (t.h + 1) // 2, (t.w + 1) // 2, 0, 0
    cdef cnp.ndarray res = _result(func, out, (16, t.c, t.n * t.th * t.tw), g.dtype, (g,))
    cdef int nthreads = _capped(
        func, max_threads, _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
    )
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>g)
    cdef Py_ssize_t failed
    cdef void* dst = cnp.PyArray_DATA(res)
    if g.dtype == np.float32:
        with nogil:
            failed = _grad_tiles(<const float*>src, <float*>dst, &t, nthreads)
    else:
        with nogil:
            failed = _grad_tiles(<const double*>src, <double*>dst, &t, nthreads)
    if failed:
        raise MemoryError(f"{func}: out of memory for a plane's scratch")
    return res


def winograd_input_grad(z, n, h, w, padding, th, tw, out=None, max_threads=None):
    """``B z B^T`` of every tile, added up where the tiles overlap: the input gradient, the
    transpose of :func:`winograd_input_tiles`.

    Parameters
    ----------
    z : ndarray
        ``(16, C, n * th * tw)`` in the tile layout, float32 or float64, C-contiguous.
    n, h, w : int
        The batch and the input's plane.
    padding, th, tw
        As :func:`winograd_input_tiles`.
    out : ndarray, optional
        Where to write (``(n, C, h, w)``, C-contiguous, ``z``'s dtype); overwritten.
    max_threads : int, optional
        At most this many threads (Note [Winograd's transforms split planes across
        threads]); 1 for a caller that runs the kernel on many small pieces in a row.

    Returns
    -------
    ndarray
        ``(n, C, h, w)``.

    Raises
    ------
    TypeError, ValueError
        If an operand is not a C-contiguous float32/float64 array of the shapes above, or
        a size is not a non-negative int.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.arange(16.).reshape(1, 1, 4, 4)
    >>> v = winograd_input_tiles(x, (0, 0), 1, 1)
    >>> float((v * v).sum()), float((x * winograd_input_grad(v, 1, 4, 4, (0, 0), 1, 1)).sum())
    (1512.0, 1512.0)
    """
    cdef str func = "winograd_input_grad"
    cdef Tiles t
    for name, v in (("n", n), ("h", h), ("w", w)):
        _int(func, name, v)
        if v < 0:
            raise ValueError(f"{func}: {name} must be non-negative, got {v}")
    _check_input(func, "z", z)
    if (<cnp.ndarray>z).ndim != 3:
        raise ValueError(f"{func}: z must be (16, C, tiles), got shape {z.shape}")
    _padding(func, padding, &t)
    _tile_counts(func, th, tw, &t)
    t.n, t.c, t.h, t.w = n, z.shape[1], h, w
    _tile_input(func, "z", z, t.c, t.n * t.th * t.tw, z.dtype)
    cdef cnp.ndarray res = _result(func, out, (t.n, t.c, t.h, t.w), z.dtype, (z,))
    cdef int nthreads = _capped(
        func, max_threads, _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
    )
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>z)
    cdef Py_ssize_t failed
    cdef void* dst = cnp.PyArray_DATA(res)
    if z.dtype == np.float32:
        with nogil:
            failed = _input_grad(<const float*>src, <float*>dst, &t, nthreads)
    else:
        with nogil:
            failed = _input_grad(<const double*>src, <double*>dst, &t, nthreads)
    if failed:
        raise MemoryError(f"{func}: out of memory for a plane's scratch")
    return res


# ---------------------------------------------------------------------------------------
# The filter's transforms
#
# Note [Winograd's filter transforms in one loop]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``U = G w G^T`` and ``dw = G^T dU G`` are 16 x 9 numbers per (output, input) channel
# pair, computed in double and rounded once.  As two stacked numpy products (with the
# transposes and casts between them) they took 0.27 and 0.52 ms at 64 x 64 channels (one
# thread), 1.1 ms of a forward and backward at the ResNet's last stage.  One loop over
# the pairs, with ``G``'s numbers as constants, took 0.25 ms: its 16 positions' rows are
# ``4 * pairs`` bytes apart (16 KiB at 64 x 64), and 16 stores a pair at that distance
# alias in the L1 cache; written (and read) through a block of 32 pairs, 0.07 and 0.04 ms.
# Each sum runs over its terms in order from zero, as BLAS's products summed them (every
# product of ``G``'s 0, +-1/2 and 1 with a float32 number is exact in double), so the
# values are the numpy products' bits (checked over random, zero, -0 and 1e+-30 weights).

cdef extern from *:
    """
    #include <string.h>
    /* Note [Winograd's filter transforms in one loop]: G's numbers as constants, so that
       the compiler unrolls the sums (products by 0 stay: they are -0 or NaN at times) */
    static const double gs_wf_g[4][3] = {
        {1.0, 0.0, 0.0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0.0, 0.0, 1.0}};
    #define GS_WF_BLOCK 32  /* pairs per block: the 16 positions' rows are written
                                  (read) a block at a time, not 16 numbers per pair 4 *
                                  pairs bytes apart (which alias in the L1 cache) */
    #define GS_WF(SUF, T)                                                             \
    static void gs_wf_tiles_##SUF(const T* w, T* u, Py_ssize_t pairs) {               \
        Py_ssize_t k0, k, nk; int a, b, i, l;                                         \
        T blk[16][GS_WF_BLOCK];                                                       \
        for (k0 = 0; k0 < pairs; k0 += GS_WF_BLOCK) {                                 \
            nk = pairs - k0 < GS_WF_BLOCK ? pairs - k0 : GS_WF_BLOCK;                 \
            for (k = 0; k < nk; k++) {                                                \
                const T* wk = w + 9 * (k0 + k);                                       \
                double t[3][4];                                                       \
                for (a = 0; a < 3; a++)                                               \
                    for (l = 0; l < 4; l++) {                                         \
                        double acc = 0;                                               \
                        for (b = 0; b < 3; b++)                                       \
                            acc = acc + (double)wk[3 * a + b] * gs_wf_g[l][b];        \
                        t[a][l] = acc;                                                \
                    }                                                                 \
                for (i = 0; i < 4; i++)                                               \
                    for (l = 0; l < 4; l++) {                                         \
                        double acc = 0;                                               \
                        for (a = 0; a < 3; a++)                                       \
                            acc = acc + t[a][l] * gs_wf_g[i][a];                      \
                        blk[4 * i + l][k] = (T)acc;                                   \
                    }                                                                 \
            }                                                                         \
            for (i = 0; i < 16; i++)                                                  \
                memcpy(u + i * pairs + k0, blk[i], nk * sizeof(T));                   \
        }                                                                             \
    }                                                                                 \
    static void gs_wf_grad_##SUF(const T* du, T* dw, Py_ssize_t pairs) {              \
        Py_ssize_t k0, k, nk; int a, b, i, l;                                         \
        T blk[16][GS_WF_BLOCK];                                                       \
        for (k0 = 0; k0 < pairs; k0 += GS_WF_BLOCK) {                                 \
            nk = pairs - k0 < GS_WF_BLOCK ? pairs - k0 : GS_WF_BLOCK;                 \
            for (i = 0; i < 16; i++)                                                  \
                memcpy(blk[i], du + i * pairs + k0, nk * sizeof(T));                  \
            for (k = 0; k < nk; k++) {                                                \
                double s[4][3];                                                       \
                for (i = 0; i < 4; i++)                                               \
                    for (b = 0; b < 3; b++) {                                         \
                        double acc = 0;                                               \
                        for (l = 0; l < 4; l++)                                       \
                            acc = acc + (double)blk[4 * i + l][k] * gs_wf_g[l][b];    \
                        s[i][b] = acc;                                                \
                    }                                                                 \
                for (a = 0; a < 3; a++)                                               \
                    for (b = 0; b < 3; b++) {                                         \
                        double acc = 0;                                               \
                        for (i = 0; i < 4; i++)                                       \
                            acc = acc + gs_wf_g[i][a] * s[i][b];                      \
                        dw[9 * (k0 + k) + 3 * a + b] = (T)acc;                        \
                    }                                                                 \
            }                                                                         \
        }                                                                             \
    }
    GS_WF(f32, float)
    GS_WF(f64, double)
    """
    void gs_wf_tiles_f32(const float* w, float* u, Py_ssize_t pairs) noexcept nogil
    void gs_wf_tiles_f64(const double* w, double* u, Py_ssize_t pairs) noexcept nogil
    void gs_wf_grad_f32(const float* du, float* dw, Py_ssize_t pairs) noexcept nogil
    void gs_wf_grad_f64(const double* du, double* dw, Py_ssize_t pairs) noexcept nogil


def winograd_filter_tiles(w):
    """``U = G w G^T`` of every (output, input) channel pair of a 3x3 weight, in double,
    rounded once (Note [Winograd's filter transforms in one loop]).

    Parameters
    ----------
    w : ndarray
        ``(O, C, 3, 3)``, float32 or float64, C-contiguous.

    Returns
    -------
    ndarray
        ``(16, O, C)`` in ``w``'s dtype: position ``4 i + l`` of pair ``(o, c)``.

    Raises
    ------
    TypeError, ValueError
        If ``w`` is not a C-contiguous float32/float64 array of that shape.

    Examples
    --------
    >>> import numpy as np
    >>> winograd_filter_tiles(np.ones((1, 1, 3, 3)))[:, 0, 0].reshape(4, 4)
    array([[1.  , 1.5 , 0.5 , 1.  ],
           [1.5 , 2.25, 0.75, 1.5 ],
           [0.5 , 0.75, 0.25, 0.5 ],
           [1.  , 1.5 , 0.5 , 1.  ]])
    """
    cdef str func = "winograd_filter_tiles"
    _check_input(func, "w", w)
    if (<cnp.ndarray>w).ndim != 4 or w.shape[2:] != (3, 3):
        raise ValueError(f"{func}: w must be (O, C, 3, 3), got shape {w.shape}")
    cdef Py_ssize_t o = w.shape[0], c = w.shape[1]
    cdef cnp.ndarray res = np.empty((16, o, c), dtype=w.dtype)
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>w)
    cdef void* dst = cnp.PyArray_DATA(res)
    if w.dtype == np.float32:
        with nogil:
            gs_wf_tiles_f32(<const float*>src, <float*>dst, o * c)
    else:
        with nogil:
            gs_wf_tiles_f64(<const double*>src, <double*>dst, o * c)
    return res


def winograd_filter_grad(du):
    """``dw = G^T dU G`` of the summed products ``dU``: the weight's gradient, in double,
    rounded once (Note [Winograd's filter transforms in one loop]); the transpose of
    :func:`winograd_filter_tiles`.

    Parameters
    ----------
    du : ndarray
        ``(16, O, C)``, float32 or float64, C-contiguous.

    Returns
    -------
    ndarray
        ``(O, C, 3, 3)`` in ``du``'s dtype.

    Raises
    ------
    TypeError, ValueError
        If ``du`` is not a C-contiguous float32/float64 array of that shape.

    Examples
    --------
    >>> import numpy as np
    >>> winograd_filter_grad(np.ones((16, 1, 1)))[0, 0]
    array([[4., 0., 4.],
           [0., 0., 0.],
           [4., 0., 4.]])
    """
    cdef str func = "winograd_filter_grad"
    _check_input(func, "du", du)
    if (<cnp.ndarray>du).ndim != 3 or du.shape[0] != 16:
        raise ValueError(f"{func}: du must be (16, O, C), got shape {du.shape}")
    cdef Py_ssize_t o = du.shape[1], c = du.shape[2]
    cdef cnp.ndarray res = np.empty((o, c, 3, 3), dtype=du.dtype)
    cdef void* src = cnp.PyArray_DATA(<cnp.ndarray>du)
    cdef void* dst = cnp.PyArray_DATA(res)
    if du.dtype == np.float32:
        with nogil:
            gs_wf_grad_f32(<const float*>src, <float*>dst, o * c)
    else:
        with nogil:
            gs_wf_grad_f64(<const double*>src, <double*>dst, o * c)
    return res
