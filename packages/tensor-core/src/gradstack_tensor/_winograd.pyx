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

from ._kernels cimport _check_input, kernel_parallel_threshold, kernel_threads, real

import numpy as np

cnp.import_array()

__all__ = [
    "winograd_input_tiles",
    "winograd_output_tiles",
    "winograd_grad_tiles",
    "winograd_input_grad",
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


cdef int _threads(Py_ssize_t elements, Py_ssize_t planes) noexcept nogil:
    # Note [Winograd's transforms split planes across threads]: a plane's tiles stay on
    # one thread (the input gradient's overlapping tiles add into their own plane only)
    cdef int n = kernel_threads(elements, kernel_parallel_threshold())
    return <int>min(<Py_ssize_t>n, planes) if planes > 0 else 1


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
# copied out.  Scratch is allocated per plane (a few KiB).

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
cdef int _input_plane(const real* x, real* v, const Tiles* t, Py_ssize_t t0,
                      Py_ssize_t stride) noexcept nogil:
    """``B^T d B`` of the plane's tiles into ``v[p * stride + t0 + tile]`` (Note
    [Winograd's transforms run along rows of tiles]); -1 when out of memory."""
    cdef Py_ssize_t th = t.th, tw = t.tw
    cdef Py_ssize_t hp = 2 * th + 2, wp = 2 * tw + 2
    cdef real* pp = <real*>malloc((hp * wp + 16 * tw) * sizeof(real))
    if pp == NULL:
        return -1
    cdef real* r = pp + hp * wp
    cdef const real* row
    cdef real* o0
    cdef real* o1
    cdef real* o2
    cdef real* o3
    cdef const real* r0
    cdef const real* r1
    cdef const real* r2
    cdef const real* r3
    cdef Py_ssize_t ty, tx, i, j, base
    _pad_plane(x, pp, t.h, t.w, hp, wp, t.ph, t.pw)
    for ty in range(th):
        for i in range(4):  # rows: d B
            row = pp + (2 * ty + i) * wp
            o0 = r + (4 * i) * tw
            o1 = o0 + tw
            o2 = o1 + tw
            o3 = o2 + tw
            for tx in range(tw):
                o0[tx] = row[2 * tx] - row[2 * tx + 2]
                o1[tx] = row[2 * tx + 1] + row[2 * tx + 2]
                o2[tx] = row[2 * tx + 2] - row[2 * tx + 1]
                o3[tx] = row[2 * tx + 1] - row[2 * tx + 3]
        base = t0 + ty * tw
        for j in range(4):  # columns: B^T (d B)
            r0 = r + j * tw
            r1 = r0 + 4 * tw
            r2 = r1 + 4 * tw
            r3 = r2 + 4 * tw
            o0 = v + j * stride + base
            o1 = o0 + 4 * stride
            o2 = o1 + 4 * stride
            o3 = o2 + 4 * stride
            for tx in range(tw):
                o0[tx] = r0[tx] - r2[tx]
                o1[tx] = r1[tx] + r2[tx]
                o2[tx] = r2[tx] - r1[tx]
                o3[tx] = r1[tx] - r3[tx]
    free(pp)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _output_plane(const real* m, real* y, const Tiles* t, Py_ssize_t t0,
                       Py_ssize_t stride) noexcept nogil:
    """``A^T m A`` of the plane's tiles, the 2x2 blocks inside the ``h x w`` plane."""
    cdef Py_ssize_t th = t.th, tw = t.tw, h = t.h, w = t.w
    cdef real* s = <real*>malloc((8 * tw + 2 * tw) * sizeof(real))
    if s == NULL:
        return -1
    cdef real* orow = s + 8 * tw
    cdef real* dst
    cdef const real* m0
    cdef const real* m1
    cdef const real* m2
    cdef const real* m3
    cdef real* s0
    cdef real* s1
    cdef real* s2
    cdef real* s3
    cdef Py_ssize_t ty, tx, j, a, base, yy
    for ty in range(th):
        base = t0 + ty * tw
        for j in range(4):  # columns: A^T m
            m0 = m + j * stride + base
            m1 = m0 + 4 * stride
            m2 = m1 + 4 * stride
            m3 = m2 + 4 * stride
            s0 = s + j * tw
            s1 = s0 + 4 * tw
            for tx in range(tw):
                s0[tx] = m0[tx] + m1[tx] + m2[tx]
                s1[tx] = m1[tx] - m2[tx] - m3[tx]
        for a in range(2):  # rows: (A^T m) A
            yy = 2 * ty + a
            if yy >= h:
                break
            dst = y + yy * w if w == 2 * tw else orow
            s0 = s + 4 * a * tw
            s1 = s0 + tw
            s2 = s1 + tw
            s3 = s2 + tw
            for tx in range(tw):
                dst[2 * tx] = s0[tx] + s1[tx] + s2[tx]
                dst[2 * tx + 1] = s1[tx] - s2[tx] - s3[tx]
            if w != 2 * tw:
                for tx in range(w):
                    y[yy * w + tx] = orow[tx]
    free(s)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _grad_plane(const real* g, real* q, const Tiles* t, Py_ssize_t t0,
                     Py_ssize_t stride) noexcept nogil:
    """``A g A^T`` of the plane's 2x2 blocks (zero outside ``h x w``)."""
    cdef Py_ssize_t th = t.th, tw = t.tw, wq = 2 * tw
    cdef real* pp = NULL
    cdef const real* src = g
    if t.h != 2 * th or t.w != wq:
        pp = <real*>malloc(2 * th * wq * sizeof(real))
        if pp == NULL:
            return -1
        _pad_plane(g, pp, t.h, t.w, 2 * th, wq, 0, 0)
        src = pp
    cdef real* r = <real*>malloc(4 * wq * sizeof(real))
    if r == NULL:
        free(pp)
        return -1
    cdef const real* g0
    cdef const real* g1
    cdef real* ri
    cdef real* o0
    cdef real* o1
    cdef real* o2
    cdef real* o3
    cdef Py_ssize_t ty, tx, i
    for ty in range(th):
        g0 = src + 2 * ty * wq
        g1 = g0 + wq
        for tx in range(wq):  # columns: A g, A's rows (1, 0) (1, 1) (1, -1) (0, -1)
            r[tx] = g0[tx]
            r[wq + tx] = g0[tx] + g1[tx]
            r[2 * wq + tx] = g0[tx] - g1[tx]
            r[3 * wq + tx] = -g1[tx]
        for i in range(4):  # rows: (A g) A^T
            ri = r + i * wq
            o0 = q + 4 * i * stride + t0 + ty * tw
            o1 = o0 + stride
            o2 = o1 + stride
            o3 = o2 + stride
            for tx in range(tw):
                o0[tx] = ri[2 * tx]
                o1[tx] = ri[2 * tx] + ri[2 * tx + 1]
                o2[tx] = ri[2 * tx] - ri[2 * tx + 1]
                o3[tx] = -ri[2 * tx + 1]
    free(r)
    if pp != NULL:
        free(pp)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _input_grad_plane(const real* z, real* dx, const Tiles* t, Py_ssize_t t0,
                           Py_ssize_t stride) noexcept nogil:
    """``B z B^T`` of the plane's tiles added up in a padded plane, copied to ``dx``."""
    cdef Py_ssize_t th = t.th, tw = t.tw, h = t.h, w = t.w, ph = t.ph, pw = t.pw
    cdef Py_ssize_t hp = 2 * th + 2, wp = 2 * tw + 2
    cdef real* pp = <real*>malloc((hp * wp + 16 * tw) * sizeof(real))
    if pp == NULL:
        return -1
    cdef real* e = pp + hp * wp
    cdef real* row
    cdef const real* q0
    cdef const real* q1
    cdef const real* q2
    cdef const real* q3
    cdef real* e0
    cdef real* e1
    cdef real* e2
    cdef real* e3
    cdef Py_ssize_t ty, tx, i, j, base, y, xx, yy
    for y in range(hp * wp):
        pp[y] = 0
    for ty in range(th):
        base = t0 + ty * tw
        for j in range(4):  # columns: B z, B's rows (1,0,0,0) (0,1,-1,1) (-1,1,1,0) (0,0,0,-1)
            q0 = z + j * stride + base
            q1 = q0 + 4 * stride
            q2 = q1 + 4 * stride
            q3 = q2 + 4 * stride
            e0 = e + j * tw
            e1 = e0 + 4 * tw
            e2 = e1 + 4 * tw
            e3 = e2 + 4 * tw
            for tx in range(tw):
                e0[tx] = q0[tx]
                e1[tx] = q1[tx] - q2[tx] + q3[tx]
                e2[tx] = q1[tx] + q2[tx] - q0[tx]
                e3[tx] = -q3[tx]
        for i in range(4):  # rows: (B z) B^T, added where the tiles overlap
            row = pp + (2 * ty + i) * wp
            e0 = e + 4 * i * tw
            e1 = e0 + tw
            e2 = e1 + tw
            e3 = e2 + tw
            for tx in range(tw):
                row[2 * tx] += e0[tx]
                row[2 * tx + 1] += e1[tx] - e2[tx] + e3[tx]
            for tx in range(tw):
                row[2 * tx + 2] += e1[tx] + e2[tx] - e0[tx]
                row[2 * tx + 3] -= e3[tx]
    for y in range(h):
        yy = y + ph
        for xx in range(w):
            dx[y * w + xx] = pp[yy * wp + xx + pw] if yy < hp and xx + pw < wp else 0
    free(pp)
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

def winograd_input_tiles(x, padding, th, tw, out=None):
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
    cdef int nthreads = _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
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


def winograd_output_tiles(m, n, oh, ow, out=None):
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
    cdef int nthreads = _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
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


def winograd_grad_tiles(g, out=None):
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
    cdef int nthreads = _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
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


def winograd_input_grad(z, n, h, w, padding, th, tw, out=None):
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
    cdef int nthreads = _threads(16 * t.n * t.c * t.th * t.tw, t.n * t.c)
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
