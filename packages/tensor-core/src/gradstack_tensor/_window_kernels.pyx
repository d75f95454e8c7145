# cython: language_level=3
"""The sliding-window kernels: ``im2col``/``col2im`` (torch's ``F.unfold``/``F.fold``, and
so the convolutions), max pooling with indices and its backward, average pooling and its
backward, each one direct pass over the windows of every ``(H, W)`` plane.

Every kernel takes C-contiguous float32/float64 arrays whose last two dims are the plane
(the dims in front are the planes, ``N * C`` of an ``(N, C, H, W)`` input), checks them
and its window arguments before touching memory (``_kernels.pyx``'s checks, ValueError or
TypeError with what to do), and returns a new array.  The loops follow torch 2.13's CPU
kernels element for element (Note [Window kernels follow torch's CPU loops]), so values
and gradients are torch's to the bit.  Public as ``gradstack_tensor.kernels``.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor.kernels import im2col, max_pool2d_forward
>>> x = np.arange(9.).reshape(1, 1, 3, 3)
>>> im2col(x, (2, 2), (1, 1), (0, 0), (1, 1))[0, :, 0]
array([0., 1., 3., 4.])
>>> values, indices = max_pool2d_forward(x, (2, 2), (1, 1), (0, 0), (1, 1), False)
>>> values.ravel(), indices.ravel()
(array([4., 5., 7., 8.]), array([4, 5, 7, 8]))
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport INFINITY, isnan
from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset

from ._kernels cimport _check_input, kernel_parallel_threshold, kernel_threads, real

import numpy as np

cnp.import_array()

__all__ = [
    "im2col", "col2im", "max_pool2d_forward", "max_pool2d_backward", "avg_pool2d_forward",
    "avg_pool2d_backward",
]

# Note [Window kernels follow torch's CPU loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch 2.13's CPU kernels (aten/src/ATen/native/im2col.h, cpu/MaxPoolKernel.cpp,
# cpu/AvgPoolKernel.cpp on contiguous NCHW input) are loops over each plane's windows;
# these are the same loops, in the same order, in the same dtype:
# - im2col copies; col2im adds each column back in the order (channel, kh, kw, out_h,
#   out_w), so overlapping windows sum in torch's order;
# - max pooling starts each window at -inf with index its first element inside the input
#   (the start moved in along the dilation), and takes ``val > max || isnan(val)``: the
#   first of equal maxima, the last NaN; its backward adds each output's gradient at its
#   index, in output order;
# - average pooling sums its window in the input's dtype, row by row, and divides by
#   the divisor (the window's size within the padded input with count_include_pad, within
#   the input without, or divisor_override); a window with nothing inside gives 0; its
#   backward adds ``grad / divisor`` to each element of the window, in output order.
#
# Note [Locals for the loops' sizes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The window's sizes live in a struct read through a pointer; a loop that stores through
# another pointer of the same type family must reload ``g.sw`` at every element (C cannot
# prove the store does not change it), which also keeps GCC from vectorising the loop.
# The stride is copied into a local first, and col2im's unit-stride rows (every stride-1
# convolution's input gradient) get a loop of their own, ``dst[xo] += src[xo]``, which
# GCC vectorises.
#
# Note [Max pooling's windows inside the plane]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Without padding or dilation, and with every window inside the plane (ceil_mode's last
# window may overhang), the window is kh rows of kw neighbours: the loop reads them at
# fixed offsets from the window's corner, with no clipping or moving-in along the
# dilation.  The scan and its rule are the general loop's (start at -inf, take
# ``v > top || isnan(v)``, the first index when nothing beats -inf), so values and
# indices are the same; the take is written as selects rather than a branch: on random
# data half the comparisons go either way, and a mispredicted jump per element made the
# loop 4 ns an input element (LeNet's 2x2 pools of (64, 6, 28, 28): 1.26 ms).
#
# Note [Window kernels split planes across threads]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Every plane is independent (col2im and the backwards write only their own plane), so a
# team of threads takes whole planes and the results do not depend on the thread count.
# Threads start from kernel_parallel_threshold() elements touched (input plus output),
# the threshold of the other memory-bound kernels: below it a team costs more than it saves.
# A caller that runs im2col/col2im on many pieces in a row (the convolution's chunks of the
# batch) passes max_threads=1: a team per piece cost ~50x the work on a loaded 2-core host
# (ResNet's stride-1 convolutions, 2 threads: 1.17 s forward against 24 ms on one).


cdef struct Window:
    Py_ssize_t h, w            # input plane
    Py_ssize_t oh, ow          # windows along each dim
    Py_ssize_t kh, kw          # kernel
    Py_ssize_t sh, sw          # stride
    Py_ssize_t ph, pw          # padding
    Py_ssize_t dh, dw          # dilation


cdef inline Py_ssize_t _first_inside(Py_ssize_t start, Py_ssize_t step) noexcept nogil:
    """``start`` moved forward by whole ``step``s until it is >= 0 (torch's ``while``)."""
    if start < 0:
        start += ((-start + step - 1) // step) * step
    return start


# -------------------------------------------------------------------------------------
# argument checks (Python-visible errors, before any memory is touched)

def _pair_arg(str func, str name, object value):
    """A pair of Python ints."""
    try:
        a, b = value
    except (TypeError, ValueError):
        raise TypeError(f"{func}: {name} must be a pair of ints, got {value!r}") from None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (a, b)):
        raise TypeError(f"{func}: {name} must be a pair of ints, got {value!r}")
    return int(a), int(b)


cdef int _window_args(str func, Window* win, object kernel_size, object stride,
                      object padding, object dilation) except -1:
    win.kh, win.kw = _pair_arg(func, "kernel_size", kernel_size)
    win.sh, win.sw = _pair_arg(func, "stride", stride)
    win.ph, win.pw = _pair_arg(func, "padding", padding)
    win.dh, win.dw = _pair_arg(func, "dilation", dilation)
    if min(win.kh, win.kw, win.sh, win.sw, win.dh, win.dw) <= 0 or min(win.ph, win.pw) < 0:
        raise ValueError(
            f"{func}: kernel_size, stride and dilation must be positive and padding "
            f"non-negative, got kernel_size={kernel_size}, stride={stride}, "
            f"padding={padding}, dilation={dilation}"
        )
    return 0


cdef cnp.ndarray _plane_input(str func, str name, object x):
    """A checked float array of at least 2 dims (its last two the plane)."""
    _check_input(func, name, x)
    if cnp.PyArray_NDIM(<cnp.ndarray>x) < 2:
        raise ValueError(
            f"{func}: {name} must have at least 2 dims (the last two the plane), got shape "
            f"{x.shape}"
        )
    return <cnp.ndarray>x


cdef cnp.ndarray _result(str func, object out, tuple shape, object dtype, object source):
    """A new result array, or ``out`` once checked: an ndarray of ``shape`` and ``dtype``,
    C-contiguous, writeable, not overlapping ``source``."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if (not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype
            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError(
            f"{func}: out must be a writeable C-contiguous {dtype} ndarray of shape {shape}, "
            f"got {type(out).__name__} {getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}"
        )
    if np.may_share_memory(out, source):
        raise ValueError(f"{func}: out must not overlap the input; pass a separate array")
    return <cnp.ndarray>out


cdef Py_ssize_t _planes(cnp.ndarray a, int trailing):
    """The product of the dims of ``a`` in front of its last ``trailing``."""
    cdef Py_ssize_t n = 1
    cdef int i
    for i in range(cnp.PyArray_NDIM(a) - trailing):
        n *= cnp.PyArray_DIM(a, i)
    return n


cdef Py_ssize_t _pooled_size(Py_ssize_t size, Py_ssize_t k, Py_ssize_t p, Py_ssize_t s,
                             Py_ssize_t d, bint ceil_mode):
    """torch's ``pooling_output_shape`` (floor division of possibly negative numbers)."""
    cdef Py_ssize_t top = size + 2 * p - d * (k - 1) - 1 + ((s - 1) if ceil_mode else 0)
    cdef Py_ssize_t out = top // s + 1     # Python semantics: cdivision is off here
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


cdef int _pool_window(str func, Window* win, cnp.ndarray x, object kernel_size,
                      object stride, object padding, object dilation,
                      bint ceil_mode) except -1:
    _window_args(func, win, kernel_size, stride, padding, dilation)
    win.h = cnp.PyArray_DIM(x, cnp.PyArray_NDIM(x) - 2)
    win.w = cnp.PyArray_DIM(x, cnp.PyArray_NDIM(x) - 1)
    win.oh = _pooled_size(win.h, win.kh, win.ph, win.sh, win.dh, ceil_mode)
    win.ow = _pooled_size(win.w, win.kw, win.pw, win.sw, win.dw, ceil_mode)
    if win.oh < 1 or win.ow < 1 or win.h < 1 or win.w < 1:
        raise ValueError(
            f"{func}: input plane {win.h}x{win.w} gives output {win.oh}x{win.ow}, which is "
            "too small; use a larger input, a smaller kernel or more padding"
        )
    return 0


cdef int _threads(Py_ssize_t touched, Py_ssize_t planes) noexcept nogil:
    """Note [Window kernels split planes across threads]."""
    cdef int n = kernel_threads(touched, kernel_parallel_threshold())
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


# -------------------------------------------------------------------------------------
# im2col / col2im


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _im2col_plane(const real* x, real* cols, const Window* g) noexcept nogil:
    """One channel's ``(kh * kw, oh * ow)`` block of columns."""
    cdef Py_ssize_t i, j, y, xo, iy, ix0, lo, hi, L = g.oh * g.ow
    cdef Py_ssize_t sw = g.sw   # Note [Locals for the loops' sizes]
    cdef real* row
    cdef real* dst
    cdef const real* src
    for i in range(g.kh):
        for j in range(g.kw):
            row = cols + (i * g.kw + j) * L
            # the outputs whose column stays inside: 0 <= xo * sw - pw + j * dw < w
            ix0 = j * g.dw - g.pw
            lo = 0 if ix0 >= 0 else (-ix0 + sw - 1) // sw
            hi = 0 if g.w - ix0 <= 0 else (g.w - ix0 - 1) // sw + 1
            if hi > g.ow:
                hi = g.ow
            if lo > hi:
                lo = hi
            for y in range(g.oh):
                iy = y * g.sh - g.ph + i * g.dh
                dst = row + y * g.ow
                if iy < 0 or iy >= g.h:
                    memset(dst, 0, g.ow * sizeof(real))
                    continue
                src = x + iy * g.w + ix0
                if lo:
                    memset(dst, 0, lo * sizeof(real))
                if sw == 1:
                    memcpy(dst + lo, src + lo, (hi - lo) * sizeof(real))
                else:
                    for xo in range(lo, hi):
                        dst[xo] = src[xo * sw]
                if hi < g.ow:
                    memset(dst + hi, 0, (g.ow - hi) * sizeof(real))


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _col2im_plane(const real* cols, real* x, const Window* g) noexcept nogil:
    """One channel's columns added back into its zeroed ``(h, w)`` plane."""
    cdef Py_ssize_t i, j, y, xo, iy, ix0, lo, hi, L = g.oh * g.ow
    cdef Py_ssize_t sw = g.sw   # a local: the loop's stores cannot alias it (Note [Locals
    cdef const real* src        # for the loops' sizes])
    cdef real* dst
    memset(x, 0, g.h * g.w * sizeof(real))
    for i in range(g.kh):
        for j in range(g.kw):
            ix0 = j * g.dw - g.pw
            lo = 0 if ix0 >= 0 else (-ix0 + sw - 1) // sw
            hi = 0 if g.w - ix0 <= 0 else (g.w - ix0 - 1) // sw + 1
            if hi > g.ow:
                hi = g.ow
            for y in range(g.oh):
                iy = y * g.sh - g.ph + i * g.dh
                if iy < 0 or iy >= g.h:
                    continue
                src = cols + (i * g.kw + j) * L + y * g.ow
                dst = x + iy * g.w + ix0
                if sw == 1:
                    for xo in range(lo, hi):
                        dst[xo] += src[xo]
                else:
                    for xo in range(lo, hi):
                        dst[xo * sw] += src[xo]


cdef void _im2col_all(const real* x, real* cols, const Window* g, Py_ssize_t planes,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t p, size_in = g.h * g.w, size_out = g.kh * g.kw * g.oh * g.ow
    if nthreads <= 1:
        for p in range(planes):
            _im2col_plane(x + p * size_in, cols + p * size_out, g)
    else:
        for p in prange(planes, schedule="static", num_threads=nthreads):
            _im2col_plane(x + p * size_in, cols + p * size_out, g)


cdef void _col2im_all(const real* cols, real* x, const Window* g, Py_ssize_t planes,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t p, size_in = g.h * g.w, size_out = g.kh * g.kw * g.oh * g.ow
    if nthreads <= 1:
        for p in range(planes):
            _col2im_plane(cols + p * size_out, x + p * size_in, g)
    else:
        for p in prange(planes, schedule="static", num_threads=nthreads):
            _col2im_plane(cols + p * size_out, x + p * size_in, g)


def im2col(x, kernel_size, dilation, padding, stride, out=None, max_threads=None):
    """Every window of the zero-padded planes of ``x`` as a column, in torch's ``im2col``
    layout, which is also the layout of the convolution's product.

    Parameters
    ----------
    x : ndarray
        ``(N, C, H, W)`` (or ``(C, H, W)``, or any dims in front of the plane),
        float32 or float64, C-contiguous.
    kernel_size, dilation, padding, stride : pair of int
        As torch's ``im2col`` (its argument order); positive (padding non-negative).
    out : ndarray, optional
        Where to write the columns (a C-contiguous array of the result's shape and dtype,
        not overlapping ``x``): a buffer reused across calls.
    max_threads : int, optional
        At most this many threads (Note [Window kernels split planes across threads]);
        1 for a caller that runs the kernel on many small pieces in a row.

    Returns
    -------
    ndarray
        ``(N, C * kh * kw, L)`` for a 4-d ``x`` (``(C * kh * kw, L)`` for 3-d), L the
        number of windows ``out_h * out_w``; column ``l`` of row ``(c, i, j)`` is
        ``x[n, c, y * sh - ph + i * dh, x * sw - pw + j * dw]`` (0 outside).

    Raises
    ------
    TypeError
        If ``x`` is not a float32/float64 ndarray or a size is not a pair of ints.
    ValueError
        If ``x`` is not C-contiguous, has fewer than 3 dims, or the windows do not fit.

    Examples
    --------
    >>> import numpy as np
    >>> im2col(np.arange(4.).reshape(1, 1, 2, 2), (1, 2), (1, 1), (0, 0), (1, 1))
    array([[[0., 2.],
            [1., 3.]]])
    """
    cdef str func = "im2col"
    cdef cnp.ndarray a = _plane_input(func, "x", x)
    if cnp.PyArray_NDIM(a) < 3:
        raise ValueError(f"{func}: x must be (N, C, H, W) or (C, H, W), got shape {x.shape}")
    cdef Window g
    _window_args(func, &g, kernel_size, stride, padding, dilation)
    g.h = cnp.PyArray_DIM(a, cnp.PyArray_NDIM(a) - 2)
    g.w = cnp.PyArray_DIM(a, cnp.PyArray_NDIM(a) - 1)
    g.oh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) // g.sh + 1
    g.ow = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) // g.sw + 1
    if g.oh < 1 or g.ow < 1:
        raise ValueError(
            f"{func}: the windows do not fit the padded {g.h}x{g.w} plane (blocks "
            f"{g.oh}x{g.ow}); use a smaller kernel or dilation, or more padding"
        )
    cdef tuple lead = x.shape[:-3]
    cdef Py_ssize_t c = cnp.PyArray_DIM(a, cnp.PyArray_NDIM(a) - 3)
    cdef Py_ssize_t planes = _planes(a, 2)
    cdef cnp.ndarray res = _result(func, out, lead + (c * g.kh * g.kw, g.oh * g.ow), x.dtype, x)
    cdef int nthreads = _capped(func, max_threads, _threads(
        planes * (g.h * g.w + g.kh * g.kw * g.oh * g.ow), planes))
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        with nogil:
            _im2col_all(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(res), &g,
                        planes, nthreads)
    else:
        with nogil:
            _im2col_all(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(res),
                        &g, planes, nthreads)
    return res


def col2im(cols, output_size, kernel_size, dilation, padding, stride, out=None,
           max_threads=None):
    """The adjoint of :func:`im2col`: each column added back into its window of a zero
    ``output_size`` plane (overlaps sum, in torch's order).

    Parameters
    ----------
    cols : ndarray
        ``(N, C * kh * kw, L)`` (or ``(C * kh * kw, L)``), float32 or float64,
        C-contiguous, L the number of windows of the padded ``output_size`` plane.
    output_size, kernel_size, dilation, padding, stride : pair of int
        As torch's ``col2im`` (its argument order).
    out : ndarray, optional
        Where to write the result (a C-contiguous array of its shape and dtype, not
        overlapping ``cols``): a slice of a larger result, written without a copy.
    max_threads : int, optional
        At most this many threads, as :func:`im2col`'s.

    Returns
    -------
    ndarray
        ``(N, C, H, W)`` (or ``(C, H, W)``), ``(H, W) = output_size``.

    Raises
    ------
    TypeError
        If ``cols`` is not a float32/float64 ndarray or a size is not a pair of ints.
    ValueError
        If ``cols`` is not C-contiguous, or its shape does not match the windows.

    Examples
    --------
    >>> import numpy as np
    >>> col2im(np.ones((1, 4, 4)), (3, 3), (2, 2), (1, 1), (0, 0), (1, 1))[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    cdef str func = "col2im"
    cdef cnp.ndarray a = _plane_input(func, "cols", cols)
    cdef Window g
    _window_args(func, &g, kernel_size, stride, padding, dilation)
    g.h, g.w = _pair_arg(func, "output_size", output_size)
    if g.h <= 0 or g.w <= 0:
        raise ValueError(f"{func}: output_size must be positive, got {output_size}")
    g.oh = (g.h + 2 * g.ph - g.dh * (g.kh - 1) - 1) // g.sh + 1
    g.ow = (g.w + 2 * g.pw - g.dw * (g.kw - 1) - 1) // g.sw + 1
    cdef Py_ssize_t rows = cnp.PyArray_DIM(a, cnp.PyArray_NDIM(a) - 2)
    cdef Py_ssize_t L = cnp.PyArray_DIM(a, cnp.PyArray_NDIM(a) - 1)
    if g.oh < 1 or g.ow < 1 or L != g.oh * g.ow or rows % (g.kh * g.kw):
        raise ValueError(
            f"{func}: cols of shape {cols.shape} do not match kernel_size={kernel_size} over "
            f"the padded output {output_size} ({max(g.oh, 0)} * {max(g.ow, 0)} windows); "
            "pass cols of shape (N, C * kh * kw, out_h * out_w)"
        )
    cdef Py_ssize_t c = rows // (g.kh * g.kw)
    cdef Py_ssize_t planes = _planes(a, 2) * c
    cdef cnp.ndarray res = _result(func, out, cols.shape[:-2] + (c, g.h, g.w), cols.dtype, cols)
    cdef int nthreads = _capped(func, max_threads, _threads(
        planes * (g.h * g.w + g.kh * g.kw * L), planes))
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        with nogil:
            _col2im_all(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(res), &g,
                        planes, nthreads)
    else:
        with nogil:
            _col2im_all(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(res),
                        &g, planes, nthreads)
    return res


# -------------------------------------------------------------------------------------
# max pooling


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _max_pool_plane(const real* x, real* values, int64_t* indices,
                          const Window* g) noexcept nogil:
    # the window's sizes as locals (Note [Locals for the loops' sizes])
    cdef Py_ssize_t h = g.h, w = g.w, oh = g.oh, ow = g.ow, kh = g.kh, kw = g.kw
    cdef Py_ssize_t sh = g.sh, sw = g.sw, ph = g.ph, pw = g.pw, dh = g.dh, dw = g.dw
    cdef Py_ssize_t y, xo, ih, iw, ih0, ih1, iw0, iw1, index, best, i, j
    cdef bint take
    cdef real v, top
    cdef const real* row
    if (ph == 0 and pw == 0 and dh == 1 and dw == 1 and (oh - 1) * sh + kh <= h
            and (ow - 1) * sw + kw <= w):
        # Note [Max pooling's windows inside the plane]
        for y in range(oh):
            for xo in range(ow):
                best = y * sh * w + xo * sw
                top = -INFINITY
                index = 0
                for i in range(kh):
                    row = x + best + i * w
                    for j in range(kw):
                        v = row[j]
                        take = (v > top) | (v != v)   # branch-free: no mispredicted jumps
                        top = v if take else top
                        index = (i * w + j) if take else index
                values[y * ow + xo] = top
                indices[y * ow + xo] = best + index
        return
    for y in range(oh):
        ih0 = y * sh - ph
        ih1 = min(ih0 + (kh - 1) * dh + 1, h)
        ih0 = _first_inside(ih0, dh)
        for xo in range(ow):
            iw0 = xo * sw - pw
            iw1 = min(iw0 + (kw - 1) * dw + 1, w)
            iw0 = _first_inside(iw0, dw)
            best = ih0 * w + iw0
            top = -INFINITY
            ih = ih0
            while ih < ih1:
                iw = iw0
                while iw < iw1:
                    index = ih * w + iw
                    v = x[index]
                    if v > top or isnan(v):
                        top = v
                        best = index
                    iw += dw
                ih += dh
            values[y * ow + xo] = top
            indices[y * ow + xo] = best


cdef void _max_pool_all(const real* x, real* values, int64_t* indices, const Window* g,
                        Py_ssize_t planes, int nthreads) noexcept nogil:
    cdef Py_ssize_t p, size_in = g.h * g.w, size_out = g.oh * g.ow
    if nthreads <= 1:
        for p in range(planes):
            _max_pool_plane(x + p * size_in, values + p * size_out, indices + p * size_out, g)
    else:
        for p in prange(planes, schedule="static", num_threads=nthreads):
            _max_pool_plane(x + p * size_in, values + p * size_out, indices + p * size_out, g)


def max_pool2d_forward(x, kernel_size, stride, padding, dilation, ceil_mode):
    """The largest element of each window of each plane of ``x`` (-inf padding) and its
    flat index in the plane, as torch's ``max_pool2d_with_indices`` (a NaN wins, the
    last one; of equal maxima the first).

    Parameters
    ----------
    x : ndarray
        ``(..., H, W)``, float32 or float64, C-contiguous; every plane is pooled.
    kernel_size, stride, padding, dilation : pair of int
        The window (torch's order of arguments).
    ceil_mode : bool
        Count a last, partial window that starts inside the input or its left padding.

    Returns
    -------
    (ndarray, ndarray)
        The maxima ``(..., out_h, out_w)`` in ``x``'s dtype and their int64 indices.

    Raises
    ------
    TypeError, ValueError
        For an array the kernel does not take, or windows that do not fit.

    Examples
    --------
    >>> import numpy as np
    >>> v, i = max_pool2d_forward(np.array([[1., 3.], [3., 0.]]), (2, 2), (2, 2), (0, 0),
    ...                           (1, 1), False)
    >>> v, i
    (array([[3.]]), array([[1]]))
    """
    cdef str func = "max_pool2d_forward"
    cdef cnp.ndarray a = _plane_input(func, "x", x)
    cdef Window g
    _pool_window(func, &g, a, kernel_size, stride, padding, dilation, bool(ceil_mode))
    cdef Py_ssize_t planes = _planes(a, 2)
    cdef tuple shape = x.shape[:-2] + (g.oh, g.ow)
    cdef cnp.ndarray values = np.empty(shape, dtype=x.dtype)
    cdef cnp.ndarray indices = np.empty(shape, dtype=np.int64)
    cdef int nthreads = _threads(planes * (g.h * g.w + g.oh * g.ow), planes)
    cdef int64_t* ip = <int64_t*>cnp.PyArray_DATA(indices)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        with nogil:
            _max_pool_all(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(values),
                          ip, &g, planes, nthreads)
    else:
        with nogil:
            _max_pool_all(<const double*>cnp.PyArray_DATA(a),
                          <double*>cnp.PyArray_DATA(values), ip, &g, planes, nthreads)
    return values, indices


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _scatter_plane(const real* grad, const int64_t* indices, real* out,
                         Py_ssize_t n_out, Py_ssize_t n_in) noexcept nogil:
    cdef Py_ssize_t k
    cdef int64_t index
    memset(out, 0, n_in * sizeof(real))
    for k in range(n_out):
        index = indices[k]
        if 0 <= index < n_in:       # a window with nothing inside the input picked nothing
            out[index] += grad[k]


cdef void _scatter_all(const real* grad, const int64_t* indices, real* out,
                       Py_ssize_t n_out, Py_ssize_t n_in, Py_ssize_t planes,
                       int nthreads) noexcept nogil:
    cdef Py_ssize_t p
    if nthreads <= 1:
        for p in range(planes):
            _scatter_plane(grad + p * n_out, indices + p * n_out, out + p * n_in, n_out, n_in)
    else:
        for p in prange(planes, schedule="static", num_threads=nthreads):
            _scatter_plane(grad + p * n_out, indices + p * n_out, out + p * n_in, n_out, n_in)


def max_pool2d_backward(grad, indices, input_size):
    """The gradient of :func:`max_pool2d_forward`: each output's gradient added at its
    index in a zero ``input_size`` plane, in output order (torch's
    ``max_pool2d_with_indices_backward``); indices outside the plane add nothing.

    Parameters
    ----------
    grad : ndarray
        ``(..., out_h, out_w)``, float32 or float64, C-contiguous.
    indices : ndarray
        int64 of ``grad``'s shape, C-contiguous: flat positions in the ``(H, W)`` plane.
    input_size : pair of int
        ``(H, W)``.

    Returns
    -------
    ndarray
        ``(..., H, W)`` in ``grad``'s dtype.

    Raises
    ------
    TypeError, ValueError
        For arrays the kernel does not take or shapes that differ.

    Examples
    --------
    >>> import numpy as np
    >>> max_pool2d_backward(np.array([[2.]]), np.array([[1]]), (2, 2))
    array([[0., 2.],
           [0., 0.]])
    """
    cdef str func = "max_pool2d_backward"
    cdef cnp.ndarray g = _plane_input(func, "grad", grad)
    if (not isinstance(indices, np.ndarray) or indices.dtype != np.int64
            or not indices.flags.c_contiguous or indices.shape != grad.shape):
        raise ValueError(
            f"{func}: indices must be a C-contiguous int64 ndarray of grad's shape "
            f"{grad.shape}, got {type(indices).__name__} "
            f"{getattr(indices, 'dtype', '')} {getattr(indices, 'shape', '')}"
        )
    cdef Py_ssize_t h, w
    h, w = _pair_arg(func, "input_size", input_size)
    if h < 0 or w < 0:
        raise ValueError(f"{func}: input_size must be non-negative, got {input_size}")
    cdef Py_ssize_t planes = _planes(g, 2)
    cdef Py_ssize_t n_out = cnp.PyArray_DIM(g, cnp.PyArray_NDIM(g) - 2) * cnp.PyArray_DIM(
        g, cnp.PyArray_NDIM(g) - 1)
    cdef cnp.ndarray out = np.empty(grad.shape[:-2] + (h, w), dtype=grad.dtype)
    cdef int nthreads = _threads(planes * (n_out + h * w), planes)
    cdef const int64_t* ip = <const int64_t*>cnp.PyArray_DATA(<cnp.ndarray>indices)
    if cnp.PyArray_TYPE(g) == cnp.NPY_FLOAT:
        with nogil:
            _scatter_all(<const float*>cnp.PyArray_DATA(g), ip, <float*>cnp.PyArray_DATA(out),
                         n_out, h * w, planes, nthreads)
    else:
        with nogil:
            _scatter_all(<const double*>cnp.PyArray_DATA(g), ip,
                         <double*>cnp.PyArray_DATA(out), n_out, h * w, planes, nthreads)
    return out


# -------------------------------------------------------------------------------------
# average pooling


cdef struct AvgOptions:
    bint count_include_pad
    Py_ssize_t divisor          # 0: none given


@cython.cdivision(True)
cdef inline Py_ssize_t _avg_bounds(const Window* g, const AvgOptions* o, Py_ssize_t y,
                                   Py_ssize_t xo, Py_ssize_t* ih0, Py_ssize_t* ih1,
                                   Py_ssize_t* iw0, Py_ssize_t* iw1) noexcept nogil:
    """The window of output (y, xo) clipped to the input, and its divisor (torch's)."""
    cdef Py_ssize_t h0 = y * g.sh - g.ph, w0 = xo * g.sw - g.pw
    cdef Py_ssize_t h1 = min(h0 + g.kh, g.h + g.ph), w1 = min(w0 + g.kw, g.w + g.pw)
    cdef Py_ssize_t pool_size = (h1 - h0) * (w1 - w0)
    h0 = max(h0, 0)
    w0 = max(w0, 0)
    h1 = min(h1, g.h)
    w1 = min(w1, g.w)
    ih0[0], ih1[0], iw0[0], iw1[0] = h0, h1, w0, w1
    if o.divisor:
        return o.divisor
    if o.count_include_pad:
        return pool_size
    return (h1 - h0) * (w1 - w0)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _avg_pool_plane(const real* x, real* out, const Window* g,
                          const AvgOptions* o) noexcept nogil:
    cdef Py_ssize_t y, xo, ih, iw, ih0, ih1, iw0, iw1, divisor
    cdef real total
    for y in range(g.oh):
        for xo in range(g.ow):
            divisor = _avg_bounds(g, o, y, xo, &ih0, &ih1, &iw0, &iw1)
            if ih0 >= ih1 or iw0 >= iw1:
                out[y * g.ow + xo] = 0
                continue
            total = 0
            for ih in range(ih0, ih1):
                for iw in range(iw0, iw1):
                    total = total + x[ih * g.w + iw]
            out[y * g.ow + xo] = total / <real>divisor


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _avg_pool_backward_plane(const real* grad, real* out, const Window* g,
                                   const AvgOptions* o) noexcept nogil:
    cdef Py_ssize_t y, xo, ih, iw, ih0, ih1, iw0, iw1, divisor
    cdef real delta
    memset(out, 0, g.h * g.w * sizeof(real))
    for y in range(g.oh):
        for xo in range(g.ow):
            divisor = _avg_bounds(g, o, y, xo, &ih0, &ih1, &iw0, &iw1)
            delta = grad[y * g.ow + xo] / <real>divisor
            for ih in range(ih0, ih1):
                for iw in range(iw0, iw1):
                    out[ih * g.w + iw] += delta


cdef void _avg_pool_all(const real* src, real* dst, const Window* g, const AvgOptions* o,
                        Py_ssize_t planes, bint backward, int nthreads) noexcept nogil:
    cdef Py_ssize_t p, size_in = g.h * g.w, size_out = g.oh * g.ow
    if backward:
        if nthreads <= 1:
            for p in range(planes):
                _avg_pool_backward_plane(src + p * size_out, dst + p * size_in, g, o)
        else:
            for p in prange(planes, schedule="static", num_threads=nthreads):
                _avg_pool_backward_plane(src + p * size_out, dst + p * size_in, g, o)
    elif nthreads <= 1:
        for p in range(planes):
            _avg_pool_plane(src + p * size_in, dst + p * size_out, g, o)
    else:
        for p in prange(planes, schedule="static", num_threads=nthreads):
            _avg_pool_plane(src + p * size_in, dst + p * size_out, g, o)


cdef int _avg_options(str func, AvgOptions* o, object count_include_pad,
                      object divisor_override) except -1:
    o.count_include_pad = bool(count_include_pad)
    o.divisor = 0
    if divisor_override is not None:
        if isinstance(divisor_override, bool) or not isinstance(
                divisor_override, (int, np.integer)) or divisor_override == 0:
            raise ValueError(f"{func}: divisor_override must be a non-zero int or None, got "
                             f"{divisor_override!r}")
        o.divisor = int(divisor_override)
    return 0


def avg_pool2d_forward(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override):
    """The mean of each window of each plane of ``x``, as torch's ``avg_pool2d``.

    Parameters
    ----------
    x : ndarray
        ``(..., H, W)``, float32 or float64, C-contiguous.
    kernel_size, stride, padding : pair of int
        The window.
    ceil_mode, count_include_pad : bool
        As torch's: count a last partial window; divide by the window's size within the
        padded input (True) or within the input (False).
    divisor_override : int or None
        The divisor of every window instead.

    Returns
    -------
    ndarray
        ``(..., out_h, out_w)`` in ``x``'s dtype.

    Examples
    --------
    >>> import numpy as np
    >>> avg_pool2d_forward(np.arange(4.).reshape(2, 2), (2, 2), (2, 2), (0, 0), False,
    ...                    True, None)
    array([[1.5]])
    """
    cdef str func = "avg_pool2d_forward"
    cdef cnp.ndarray a = _plane_input(func, "x", x)
    cdef Window g
    cdef AvgOptions o
    _pool_window(func, &g, a, kernel_size, stride, padding, (1, 1), bool(ceil_mode))
    _avg_options(func, &o, count_include_pad, divisor_override)
    cdef Py_ssize_t planes = _planes(a, 2)
    cdef cnp.ndarray out = np.empty(x.shape[:-2] + (g.oh, g.ow), dtype=x.dtype)
    cdef int nthreads = _threads(planes * (g.h * g.w + g.oh * g.ow), planes)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        with nogil:
            _avg_pool_all(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), &g,
                          &o, planes, False, nthreads)
    else:
        with nogil:
            _avg_pool_all(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out),
                          &g, &o, planes, False, nthreads)
    return out


def avg_pool2d_backward(grad, input_size, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override):
    """The gradient of :func:`avg_pool2d_forward` (and its adjoint): each output's
    gradient divided by its divisor and added to every element of its window.

    Parameters
    ----------
    grad : ndarray
        ``(..., out_h, out_w)``, float32 or float64, C-contiguous.
    input_size : pair of int
        ``(H, W)`` of the pooled input.
    kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
        As :func:`avg_pool2d_forward`.

    Returns
    -------
    ndarray
        ``(..., H, W)`` in ``grad``'s dtype.

    Examples
    --------
    >>> import numpy as np
    >>> avg_pool2d_backward(np.array([[4.]]), (2, 2), (2, 2), (2, 2), (0, 0), False,
    ...                     True, None)
    array([[1., 1.],
           [1., 1.]])
    """
    cdef str func = "avg_pool2d_backward"
    cdef cnp.ndarray a = _plane_input(func, "grad", grad)
    cdef Window g
    cdef AvgOptions o
    h, w = _pair_arg(func, "input_size", input_size)
    probe = np.empty((0, h, w), dtype=grad.dtype)
    _pool_window(func, &g, probe, kernel_size, stride, padding, (1, 1), bool(ceil_mode))
    _avg_options(func, &o, count_include_pad, divisor_override)
    if grad.shape[-2:] != (g.oh, g.ow):
        raise ValueError(
            f"{func}: grad of shape {grad.shape} does not match the {g.oh}x{g.ow} windows "
            f"of a {h}x{w} input"
        )
    cdef Py_ssize_t planes = _planes(a, 2)
    cdef cnp.ndarray out = np.empty(grad.shape[:-2] + (g.h, g.w), dtype=grad.dtype)
    cdef int nthreads = _threads(planes * (g.h * g.w + g.oh * g.ow), planes)
    if cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT:
        with nogil:
            _avg_pool_all(<const float*>cnp.PyArray_DATA(a), <float*>cnp.PyArray_DATA(out), &g,
                          &o, planes, True, nthreads)
    else:
        with nogil:
            _avg_pool_all(<const double*>cnp.PyArray_DATA(a), <double*>cnp.PyArray_DATA(out),
                          &g, &o, planes, True, nthreads)
    return out
