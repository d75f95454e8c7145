# cython: language_level=3
"""Fused and threaded array kernels for gradstack's hot paths: what they share, and the
in-place accumulation.

The backward engine (gradient accumulation), the optimisers (the SGD update) and the
reduction of broadcast gradients call these functions on raw ``numpy.ndarray`` objects
(never on Tensors).  Each kernel replaces a numpy expression that would take several
passes over memory, or that numpy runs slowly for the shapes autodiff produces
(``grad.sum(axis=0)`` for a bias gradient).  The fused backward formulas of single ops
(``sin_backward``, ``mul_backward`` ...) are graph-engine's (``_backward_kernels.pyx``),
compiled with the thread settings, AVX2 switch and checks of this module (Note [Kernels
of the layers above]).

The kernels are one module per family, and ``gradstack_tensor.kernels`` is their public
interface::

    _kernels.pyx                   threads, argument checks, the AVX2/AVX-512 switches,
                                   ``fusable``, and ``accumulate_``/``add_scaled_``
    _float32_transcendentals.pyx   float32 sin, cos and tanh (the forward ops' loops)
    _sgd_update.pyx                the SGD update, ``sgd_update_``
    _sum_to_shape.pyx              the reduction of broadcast gradients, ``sum_to_shape``
    _activation_kernels.pyx        GELU, SiLU, erf and erfinv, forward and backward
    _window_kernels.pyx            im2col/col2im, max and average pooling (and backwards)
    _batch_norm_kernels.pyx        batch norm's statistics, output and backward sums
    _index_kernels.pyx             indexing: ``take_rows``, ``embedding_backward``,
                                   ``scatter_add_``, ``scatter_``, ``gather``
    _scatter_reduce_kernels.pyx    ``scatter_reduce_`` (scatter_reduce, index_reduce)
    _rnn_kernels.pyx               the fused LSTM and GRU cells, forward and backward
    _recurrent_gemm.pyx            an RNN step's product by a weight packed once a layer
    _norm_kernels.pyx              softmax/log_softmax and layer norm, forward and backward
    _adam_update.pyx               the Adam/AdamW update, ``adam_update_``
    _special_kernels.pyx           lgamma, digamma, trigamma, polygamma, zeta (torch's Math.h)
    _bessel_kernels.pyx            torch.special's Bessel functions; the entry of the next two
    _polynomial_kernels.pyx        torch.special's orthogonal polynomials
    _erfcx_igamma_kernels.pyx      erfcx, igamma and igammac
    _division_kernels.pyx          fmod, remainder and floor division of floats
    _loss_kernels.pyx              smooth L1 and Huber losses, forward and backward
    _scan_kernels.pyx              cumsum, forward and reversed
    _order_kernels.pyx             topk's selection per row, torch's (C++: ``topk_rows``)
    _nll_kernels.pyx               the NLL loss (nll_loss, nll_loss2d), forward and backward
    _sum_kernels.pyx               the sum of every element of a float32 array
    _pointwise_kernels.pyx         sign (float32/float64) and the float32 exp2
    _triangle_kernels.pyx          tril and triu by rows (any numeric dtype)
    _log_sigmoid_kernels.pyx       log_sigmoid (forward and backward) and softplus
    _outer_kernels.pyx             the outer product (``outer``, mv's backward)
    _erfc_kernels.pyx              the float32 erfc, erfc's backward
    _nextafter_kernels.pyx         nextafter by the bits (float32/float64)
    _exp_kernels.pyx               the float32 exp, log1p and sigmoid

The other modules cimport what they share from ``_kernels.pxd``.

Arrays
------
Every operand is a float32 or float64 ``numpy.ndarray`` in native byte order, and all the
operands of one call share one dtype and one shape: the kernels never broadcast and never
cast.  Element-wise kernels also need C-contiguous (and aligned) operands; ``sum_to_shape``
takes any strides.  ``fusable(*arrays)`` tells a caller whether the arrays qualify, so that
it can take the numpy expression otherwise.  Anything else raises ``TypeError`` (a wrong
type or dtype) or ``ValueError`` (a wrong shape, layout, writability or overlap) before any
memory is touched.  Functions whose name ends in ``_`` work in place and return None; the
others return new C-contiguous arrays.

Threading
---------
Kernels run on one thread below ``PARALLEL_THRESHOLD`` elements.  At or above it they
release the GIL and split the work across ``get_num_threads()`` OpenMP threads.  Threads
are opt-in: the default is ``GRADSTACK_NUM_THREADS`` when set, else ``OMP_NUM_THREADS``
when set, else 1 (Note [Threads are opt-in]); ``set_num_threads(n)`` changes it.  The
threshold sits where a second thread clearly pays for starting it (Note [Choosing
PARALLEL_THRESHOLD]).

Results never depend on the number of threads: element-wise kernels compute every element
the same way whichever thread runs it, and reductions split their work into pieces whose
size depends only on the shape (Note [Deterministic parallel reductions] in
``_sum_to_shape.pyx``).
"""

cimport numpy as cnp
from cython.parallel cimport prange

import operator
import os

import numpy as np

cnp.import_array()

__all__ = [
    "PARALLEL_THRESHOLD", "accumulate_", "add_scaled_", "fusable", "get_num_threads",
    "set_num_threads",
]


# Note [No typed memoryviews in entry points]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Many calls come from the backward engine on tiny arrays (a 6-element bias gradient),
# where the kernel's own loop takes nanoseconds and the call's overhead is the whole cost.
# Acquiring a typed memoryview costs ~100 ns per argument (buffer protocol, format-string
# parsing), more than the work itself.  The entry points therefore check their arguments
# with numpy's C API (type number, flags, dims: a few loads each), take the data pointers
# with PyArray_DATA and allocate outputs with PyArray_EMPTY.  The loops below work on raw
# pointers and may assume checked, C-contiguous operands of equal size.

cdef enum:
    MAX_THREADS = 1024            # more would only exhaust the OS; see set_num_threads

# Note [Choosing PARALLEL_THRESHOLD]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Waking an OpenMP team and joining it costs microseconds, while a memory-bound kernel
# such as accumulate_ handles several elements per nanosecond on one core.  Measured on
# 2 cores (AMD EPYC, float32, time on 1 thread / time on 2 threads; thresholds forced to 1):
#
#     elements          1k    2k    4k    8k   16k   32k   64k  128k
#     tanh_backward   0.16  0.22  0.30  0.47  0.76  0.94  1.55  1.71
#     mul_backward    0.21  0.29  0.31  0.47  0.67  0.88  1.61  1.46
#     accumulate_     0.13  0.18  0.29  0.41  0.64  1.02  1.51  1.98
#     sgd_update_     0.15  0.20  0.30  0.44  0.71  0.95  1.39  1.52
#     sum_to_shape    0.50  0.53  0.60  0.65  0.74  1.24  1.52  1.77   (full sum)
#     sin_backward    0.99  1.32  1.57  1.74  1.87  1.94  1.96  1.97   (float32)
#     sin_backward    1.30  1.55  1.74  1.83  2.24  2.12  2.04  2.01   (float64)
#
# Each threshold is the smallest size where two threads win clearly (>= 1.3x): 64k
# elements for the cheap kernels (at 32k they only break even, and a parallel region
# risks a stall when another process holds a core), 2k for sin/cos, which spend ~5-10 ns
# per element.  (The *_backward kernels are graph-engine's now, in _backward_kernels.pyx:
# its TRANSCENDENTAL_THRESHOLD is the 2k measured here, and its other kernels use
# PARALLEL_THRESHOLD through kernel_parallel_threshold().)
cdef Py_ssize_t _parallel_threshold = 1 << 16

PARALLEL_THRESHOLD = _parallel_threshold


# ---------------------------------------------------------------------------------------
# Threads

# Note [Threads are opt-in]
# A parallel region waits for its slowest thread.  libgomp's idle workers spin, and so do
# the worker threads of the BLAS numpy ships (OpenBLAS): on two cores the two pools take
# turns holding the cores and every region waits a scheduler time slice.  Measured with
# both pools at two threads: a TinyModel training step took 80 ms instead of 0.38 ms, and
# OMP_WAIT_POLICY=passive still left 60 ms spikes.  So kernels use one thread unless asked:
# GRADSTACK_NUM_THREADS (or OMP_NUM_THREADS, which also pins libgomp's other users), or
# set_num_threads(n) -- worth it for large arrays when BLAS runs single-threaded
# (OPENBLAS_NUM_THREADS=1) or the machine has cores to spare.
def _default_num_threads():
    """``GRADSTACK_NUM_THREADS``, else ``OMP_NUM_THREADS`` (first entry), else 1."""
    for var in ("GRADSTACK_NUM_THREADS", "OMP_NUM_THREADS"):
        first = os.environ.get(var, "").split(",")[0].strip()
        if first.isdecimal() and int(first) > 0:
            return min(int(first), MAX_THREADS)
    return 1


cdef int _num_threads = _default_num_threads()


def set_num_threads(n):
    """Set how many OpenMP threads kernels use on arrays above the parallel threshold.

    Parameters
    ----------
    n : int
        The number of threads, from 1 (never start threads) to 1024.  It applies to this
        module only: numpy's BLAS and other OpenMP users keep their own settings.

    Raises
    ------
    TypeError
        If `n` is not an integer.
    ValueError
        If `n` is below 1 or above 1024.

    Examples
    --------
    >>> from gradstack_tensor import _kernels
    >>> old = _kernels.get_num_threads()
    >>> _kernels.set_num_threads(1)
    >>> _kernels.get_num_threads()
    1
    >>> _kernels.set_num_threads(old)
    """
    global _num_threads
    try:
        count = operator.index(n)
    except TypeError:
        raise TypeError(
            f"set_num_threads: n must be an integer, got {type(n).__name__}"
        ) from None
    if not 1 <= count <= MAX_THREADS:
        raise ValueError(f"set_num_threads: n must be between 1 and {MAX_THREADS}, got {count}")
    _num_threads = count


def get_num_threads():
    """Return how many OpenMP threads kernels use on arrays above the parallel threshold.

    Examples
    --------
    >>> from gradstack_tensor import _kernels
    >>> _kernels.get_num_threads() >= 1
    True
    """
    return _num_threads


cdef inline int _threads_for(Py_ssize_t n, Py_ssize_t threshold) noexcept nogil:
    """The team size for `n` elements: 1 below `threshold`, the configured count above."""
    return _num_threads if n >= threshold else 1


# (_block_size is kernel_block_size, inline in _kernels.pxd)
cdef Py_ssize_t _block_size(Py_ssize_t n, int nblocks) noexcept nogil:
    return kernel_block_size(n, nblocks)


# Note [Kernels of the layers above]
# Layers that compile kernels of their own (graph-engine's fused backward formulas) share
# the settings and checks of these: ``kernel_threads`` (the team size for n elements,
# from set_num_threads), ``kernel_parallel_threshold``, ``kernel_avx2`` (whether the AVX2
# copies run: one switch, ``_avx2``, for every module) and the argument checks, declared
# in _kernels.pxd and re-exported by gradstack_tensor.extension.

cdef int kernel_threads(Py_ssize_t n, Py_ssize_t threshold) noexcept nogil:
    """The team size for `n` elements: 1 below `threshold`, the configured count above."""
    return _threads_for(n, threshold)


cdef Py_ssize_t kernel_parallel_threshold() noexcept nogil:
    """PARALLEL_THRESHOLD: from this many elements, memory-bound kernels use threads."""
    return _parallel_threshold


cdef int kernel_avx2() noexcept nogil:
    """Whether kernels take their AVX2 copies (Note [AVX2 clones]; ``_avx2`` switches)."""
    return gs_avx2


cdef int kernel_avx512() noexcept nogil:
    """Whether the float32 sin, cos and tanh loops take their AVX-512 copies, where the AVX2
    copies run (Note [AVX-512 copies of the transcendental loops]; ``_avx512`` switches)."""
    return gs_avx512


# ---------------------------------------------------------------------------------------
# Argument checks.  They return quickly on good input; the messages are built only on the
# error path, by the plain-Python helpers after them.

cdef inline bint _is_kernel_array(object obj) noexcept:
    """True for a native-order float32/float64 ndarray that is C-contiguous and aligned."""
    if not cnp.PyArray_Check(obj):
        return False
    cdef cnp.ndarray arr = <cnp.ndarray>obj
    cdef int typenum = cnp.PyArray_TYPE(arr)
    return ((typenum == cnp.NPY_FLOAT or typenum == cnp.NPY_DOUBLE)
            and cnp.PyArray_ISNOTSWAPPED(arr) and cnp.PyArray_ISCARRAY_RO(arr))


cdef int _check_float_array(str func, str name, object obj) except -1:
    """Check that `obj` is a native-order float32/float64 ndarray; return its type number."""
    if not cnp.PyArray_Check(obj):
        raise TypeError(_not_an_array_message(func, name, obj))
    cdef cnp.ndarray arr = <cnp.ndarray>obj
    cdef int typenum = cnp.PyArray_TYPE(arr)
    if ((typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE)
            or not cnp.PyArray_ISNOTSWAPPED(arr)):
        raise TypeError(_dtype_message(func, name, arr))
    return typenum


cdef int _check_input(str func, str name, object obj) except -1:
    """Check an operand of an element-wise kernel; return its type number."""
    cdef int typenum = _check_float_array(func, name, obj)
    if not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>obj):
        raise ValueError(_layout_message(func, name, obj))
    return typenum


cdef int _check_output(str func, str name, object obj) except -1:
    """Check an operand that is written in place; return its type number."""
    cdef int typenum = _check_input(func, name, obj)
    if not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>obj):
        raise ValueError(
            f"{func}: {name} is read-only, but it is updated in place; "
            f"pass a writable array (for example {name}.copy())"
        )
    return typenum


cdef int _check_same(str func, str name_a, object a, str name_b, object b) except -1:
    """Check that two checked operands share dtype and shape."""
    cdef cnp.ndarray arr_a = <cnp.ndarray>a
    cdef cnp.ndarray arr_b = <cnp.ndarray>b
    if cnp.PyArray_TYPE(arr_a) != cnp.PyArray_TYPE(arr_b):
        raise TypeError(
            f"{func}: {name_a} and {name_b} must have the same dtype, got {arr_a.dtype} "
            f"({name_a}) and {arr_b.dtype} ({name_b}); cast one of them, for example "
            f"{name_b}.astype({name_a}.dtype)"
        )
    if not cnp.PyArray_SAMESHAPE(arr_a, arr_b):
        raise ValueError(_shape_message(func, name_a, a.shape, name_b, b.shape))
    return 0


cdef inline bint _overlap(cnp.ndarray a, cnp.ndarray b) noexcept:
    """True when the memory of two C-contiguous arrays intersects."""
    cdef char* a0 = <char*>cnp.PyArray_DATA(a)
    cdef char* b0 = <char*>cnp.PyArray_DATA(b)
    return a0 < b0 + cnp.PyArray_NBYTES(b) and b0 < a0 + cnp.PyArray_NBYTES(a)


cdef int _check_disjoint(str func, str name_a, object a, str name_b, object b) except -1:
    """Two arrays both written in place must not share memory."""
    if _overlap(<cnp.ndarray>a, <cnp.ndarray>b):
        raise ValueError(
            f"{func}: {name_a} and {name_b} share memory, but both are updated in place; "
            f"pass separate arrays (for example {name_b}.copy())"
        )
    return 0


cdef int _check_not_shifted(str func, str name_w, object written, str name_r,
                            object read) except -1:
    """An input may be the very array written in place, but not a shifted view of it.

    Each element is read before the same element is written, so exact aliasing
    (``accumulate_(a, a)``) is safe; a partial overlap would read elements that another
    element's update has already changed.
    """
    cdef cnp.ndarray w = <cnp.ndarray>written
    cdef cnp.ndarray r = <cnp.ndarray>read
    if _overlap(w, r) and cnp.PyArray_DATA(w) != cnp.PyArray_DATA(r):
        raise ValueError(
            f"{func}: {name_r} partially overlaps {name_w}, which is updated in place; "
            f"pass a copy ({name_r}.copy()) or the very same array"
        )
    return 0


def _not_an_array_message(func, name, obj):
    return (
        f"{func}: {name} must be a numpy.ndarray, got {type(obj).__name__}; "
        f"convert it with np.asarray({name}, dtype=np.float32)"
    )


def _dtype_message(func, name, arr):
    dtype = arr.dtype
    if dtype.kind == "f" and dtype.itemsize in (4, 8):
        return (
            f"{func}: {name} has non-native byte order (dtype {dtype.str!r}); "
            f"convert it with {name}.astype(np.{dtype.name})"
        )
    if dtype == np.float16:
        return (
            f"{func}: {name} is float16, which the kernels do not support; use the numpy "
            f"expression instead, or cast with {name}.astype(np.float32)"
        )
    return (
        f"{func}: {name} must be float32 or float64, got {dtype}; "
        f"cast it with {name}.astype(np.float32)"
    )


def _layout_message(func, name, arr):
    return (
        f"{func}: {name} must be C-contiguous and aligned, got shape {arr.shape} with "
        f"strides {arr.strides}; pass np.ascontiguousarray({name}), or use the numpy "
        f"expression"
    )


def _shape_message(func, name_a, shape_a, name_b, shape_b):
    if len(shape_a) != len(shape_b):
        detail = (f"{name_a} has {len(shape_a)} dimension(s) and "
                  f"{name_b} has {len(shape_b)}")
    else:
        dim = next(k for k, (m, n) in enumerate(zip(shape_a, shape_b)) if m != n)
        detail = (f"the size of {name_a} ({shape_a[dim]}) must match the size of "
                  f"{name_b} ({shape_b[dim]}) at dimension {dim}")
    return (
        f"{func}: {name_a} and {name_b} must have the same shape, got {shape_a} and "
        f"{shape_b}: {detail}. The kernels do not broadcast; broadcast explicitly or use "
        f"the numpy expression"
    )


# ---------------------------------------------------------------------------------------
# AVX2 clones of the loops that SSE2 leaves slower than numpy

# Note [AVX2 clones]
# ~~~~~~~~~~~~~~~~~~
# The extension is compiled for baseline x86-64 (SSE2), so that one wheel runs on every
# x86-64 CPU, while numpy picks AVX2 loops at run time.  With SSE2 the float32 loop of
# sin_backward and cos_backward (graph-engine's _backward_kernels.pyx, through
# trig_f32_range: Note [float32 sin and cos] in _float32_transcendentals.pyx, whose loops
# take their copy by this module's switches, kernel_avx2() and kernel_avx512()) costs ~5 ns
# per element, over twice numpy's grad * np.cos(x), and accumulate_ is no faster than
# numpy's +=.
# The C block below therefore compiles those loops twice from one always-inlined body:
# a default copy, and a copy marked __attribute__((target(...))) that may use AVX2 (GCC
# and clang on x86; other compilers and platforms build the default copy alone).
# gs_avx2_supported() asks the CPU once, at import (libgcc's and compiler-rt's checks
# include the OS's support for the ymm registers); every call then takes the same copy,
# so all elements of a call, on every thread, run the same code.
#   - Not target_clones: it dispatches through an ifunc, which musl, macOS and Windows
#     lack; a flag set from __builtin_cpu_supports works wherever GCC and clang do.
#   - The trig copy is target("avx2,fma").  Its multiply-adds that round (the reduction,
#     the Horner steps) are written gs_madd(a, b, c, fused), one fma in the AVX2 copy:
#     an explicit fma rounds the same in the vectorised loop and in its scalar
#     remainder, whereas GCC's implicit contraction (-ffp-contract=fast) might fuse only
#     one of them, and the results would depend on where the thread blocks start.  The
#     products it may still contract are exact (m * m; cos_m and sin_m are -1, 0 or 1),
#     so fusing them changes nothing.  The float64 value then differs from the default
#     copy's by ~1e-16 relatively, which rounding to float32 hides: the two copies give
#     the same float32 for every x with |x| <= GS_TRIG_LIMIT (all 2.4e9 of them
#     checked, for sin and cos), so the results do not depend on the CPU either.
#   - add_scaled_ (and accumulate_, its alpha = 1 case) gets target("avx2") without
#     fma, so that the compiler cannot fuse dst + alpha * src: numpy rounds the product
#     first, and a fused one would differ where the sum cancels.  float64 takes this
#     copy too.  The loop is memory-bound: switching copies in one process (_avx2)
#     gains only ~5% on one thread and ~20% on two, at 1M elements.
#   - The other element-wise kernels are memory-bound and beat numpy with SSE2 already.
# Measured on 2 cores (AMD EPYC with AVX2, 1M float32 elements, medians of 4 runs of
# benchmarks/kernels_vs_numpy.py; kernel time, and numpy time / kernel time; SSE2 is
# the build before this change):
#
#                     1 thread                       2 threads
#                     SSE2           AVX2            SSE2           AVX2
#     sin_backward    5.7 ms 0.48x   2.1 ms 1.13x    3.3 ms 0.72x   1.07 ms 2.49x
#     cos_backward    5.6 ms 0.58x   2.3 ms 1.44x    3.1 ms 1.05x   1.15 ms 2.23x
#     accumulate_     186 us 0.79x   145 us 0.98x    215 us 0.68x     71 us 1.88x
#
# sin/cos's TRANSCENDENTAL_THRESHOLD stays at 2k elements: with AVX2 two threads still win there
# (1.2x; 1.7x from 8k), if less clearly than with SSE2 (1.6x).  _avx2(False) switches
# the AVX2 copies off, so that tests and benchmarks can compare.

cdef extern from *:
    """
    /* Note [AVX2 clones] in _kernels.pyx (GS_AVX2_CLONES, GS_BODY and GS_DISPATCH are
       _kernels.pxd's; the float32 sin, cos and tanh clones are in
       _float32_transcendentals.pyx). */
    #include <math.h>

    static int gs_avx2 = 0;  /* take the AVX2 copies; set at import */
    static int gs_avx512 = 0;  /* and, where there are some, the AVX-512 copies */

    static int gs_avx2_supported(void) {
    #if GS_AVX2_CLONES
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    #else
        return 0;
    #endif
    }

    static int gs_avx512_supported(void) {
    #if GS_AVX2_CLONES
        __builtin_cpu_init();
        return gs_avx2_supported() && __builtin_cpu_supports("avx512f")
               && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    #else
        return 0;
    #endif
    }

    /* dst += src (alpha == 1) or dst += alpha * src, with the product rounded first: the
       loop of element type T (suffix f32 or f64), its default and AVX2 copies (no fma:
       see Note [AVX2 clones]) and their dispatch */
    #if GS_AVX2_CLONES
    #  define GS_ADD_SCALED_AVX2(T, sfx)                                                 \\
        __attribute__((target("avx2")))                                                \\
        static void gs_add_scaled_##sfx##_avx2(T* dst, const T* src, T alpha,          \\
                                               Py_ssize_t start, Py_ssize_t stop) {    \\
            gs_add_scaled_##sfx##_body(dst, src, alpha, start, stop);                  \\
        }
    #else
    #  define GS_ADD_SCALED_AVX2(T, sfx)
    #endif
    #define GS_ADD_SCALED(T, sfx)                                                      \\
        GS_BODY void gs_add_scaled_##sfx##_body(T* dst, const T* src, T alpha,         \\
                                                Py_ssize_t start, Py_ssize_t stop) {   \\
            Py_ssize_t i;                                                              \\
            if (alpha == 1)                                                            \\
                for (i = start; i < stop; i++) dst[i] = dst[i] + src[i];               \\
            else                                                                       \\
                for (i = start; i < stop; i++) dst[i] = dst[i] + alpha * src[i];       \\
        }                                                                              \\
        static void gs_add_scaled_##sfx##_default(T* dst, const T* src, T alpha,       \\
                                                  Py_ssize_t start, Py_ssize_t stop) { \\
            gs_add_scaled_##sfx##_body(dst, src, alpha, start, stop);                  \\
        }                                                                              \\
        GS_ADD_SCALED_AVX2(T, sfx)                                                     \\
        static void gs_add_scaled_##sfx(T* dst, const T* src, T alpha,                 \\
                                        Py_ssize_t start, Py_ssize_t stop) {           \\
            GS_DISPATCH(gs_add_scaled_##sfx, (dst, src, alpha, start, stop));          \\
        }
    GS_ADD_SCALED(float, f32)
    GS_ADD_SCALED(double, f64)
    """
    int gs_avx2
    int gs_avx512
    int gs_avx2_supported() noexcept nogil
    int gs_avx512_supported() noexcept nogil
    void gs_add_scaled_f32(float* dst, const float* src, float alpha,
                           Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    void gs_add_scaled_f64(double* dst, const double* src, double alpha,
                           Py_ssize_t start, Py_ssize_t stop) noexcept nogil


gs_avx2 = gs_avx2_supported()
gs_avx512 = gs_avx512_supported()


def _avx2(enable=None):
    """Whether the AVX2 copies of the loops run (Note [AVX2 clones]); for tests and benchmarks.

    With `enable`, first switch them off (False) or back on (True, which has no effect on
    a CPU without AVX2 and FMA).  Not thread-safe: call it while no kernel runs.
    """
    global gs_avx2
    if enable is not None:
        gs_avx2 = bool(enable) and gs_avx2_supported()
    return bool(gs_avx2)


def _avx512(enable=None):
    """Whether the AVX-512 copies of the float32 sin, cos and tanh loops run (Note [AVX-512
    copies of the transcendental loops]); for tests and benchmarks.

    They run only while the AVX2 copies do (``_avx2(False)`` leaves the default copies
    alone).  With `enable`, first switch them off (False) or back on (True, which has no
    effect on a CPU without AVX-512F/DQ/VL).  Not thread-safe: call it while no kernel runs.
    """
    global gs_avx512
    if enable is not None:
        gs_avx512 = bool(enable) and gs_avx512_supported()
    return bool(gs_avx512)


# ---------------------------------------------------------------------------------------
# In-place accumulation: dst += alpha * src

cdef inline void _add_scaled_range(real* dst, const real* src, real alpha,
                                   Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """dst[i] += alpha * src[i] for i in [start, stop), in AVX2 when the CPU has it."""
    if real is float:
        gs_add_scaled_f32(dst, src, alpha, start, stop)
    else:
        gs_add_scaled_f64(dst, src, alpha, start, stop)


cdef void _add_scaled(real* dst, const real* src, real alpha, Py_ssize_t n,
                      int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _add_scaled_range(dst, src, alpha, 0, n)
        return
    step = _block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _add_scaled_range(dst, src, alpha, start, min(start + step, n))


cdef void _add_scaled_typed(int typenum, void* dst, const void* src, double alpha,
                            Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _add_scaled(<float*>dst, <const float*>src, <float>alpha, n, nthreads)
    else:
        _add_scaled(<double*>dst, <const double*>src, alpha, n, nthreads)


cdef object _run_add_scaled(str func, object dst, object src, double alpha):
    cdef int typenum = _check_output(func, "dst", dst)
    _check_input(func, "src", src)
    _check_same(func, "dst", dst, "src", src)
    _check_not_shifted(func, "dst", dst, "src", src)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>dst)
    cdef int nthreads = _threads_for(n, _parallel_threshold)
    cdef void* dp = cnp.PyArray_DATA(<cnp.ndarray>dst)
    cdef void* sp = cnp.PyArray_DATA(<cnp.ndarray>src)
    if n >= _parallel_threshold:
        with nogil:
            _add_scaled_typed(typenum, dp, sp, alpha, n, nthreads)
    else:
        _add_scaled_typed(typenum, dp, sp, alpha, n, nthreads)
    return None


def accumulate_(dst, src):
    """Add `src` into `dst` in place: ``dst += src``.

    Parameters
    ----------
    dst : ndarray
        The accumulator: float32 or float64, C-contiguous, writable.
    src : ndarray
        Same shape and dtype as `dst`, C-contiguous.  It may be `dst` itself, but not a
        view that partially overlaps it.

    Raises
    ------
    TypeError
        If an argument is not an ndarray, or its dtype is not float32/float64, or the
        dtypes differ.
    ValueError
        If the shapes differ, an argument is not C-contiguous, `dst` is read-only, or
        `src` partially overlaps `dst`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import accumulate_
    >>> total = np.zeros(3)
    >>> accumulate_(total, np.array([1.0, 2.0, 3.0]))
    >>> total
    array([1., 2., 3.])
    """
    return _run_add_scaled("accumulate_", dst, src, 1.0)


def add_scaled_(dst, src, alpha):
    """Add `alpha` times `src` into `dst` in place: ``dst += alpha * src``.

    Parameters
    ----------
    dst : ndarray
        The accumulator: float32 or float64, C-contiguous, writable.
    src : ndarray
        Same shape and dtype as `dst`, C-contiguous; it may be `dst` itself, but not a
        view that partially overlaps it.
    alpha : float
        The scale, rounded to `dst`'s dtype first (as numpy does for a Python float).

    Raises
    ------
    TypeError, ValueError
        As for `accumulate_`; TypeError also if `alpha` is not a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import add_scaled_
    >>> total = np.ones(3)
    >>> add_scaled_(total, np.array([1.0, 2.0, 3.0]), -0.5)
    >>> total
    array([ 0.5,  0. , -0.5])
    """
    return _run_add_scaled("add_scaled_", dst, src, _as_float("add_scaled_", "alpha", alpha))


cdef double _as_float(str func, str name, object value) except? -1:
    """`value` as a C double: any real number (not a string, unlike float())."""
    cdef double result
    try:
        result = value
    except TypeError:
        raise TypeError(
            f"{func}: {name} must be a real number, got {type(value).__name__}"
        ) from None
    return result


# ---------------------------------------------------------------------------------------
# fusable

def fusable(*arrays):
    """Whether the kernels accept these arrays as element-wise operands.

    True when there is at least one array and all are numpy arrays of one dtype, float32
    or float64 in native byte order, of one shape, C-contiguous and aligned.  Callers take
    the kernel when it is True and the numpy expression otherwise.  (In-place kernels also
    need a writable destination that does not partially overlap its sources.)

    Parameters
    ----------
    *arrays : object
        Anything; non-arrays make the answer False.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import fusable
    >>> a = np.zeros((2, 3), np.float32)
    >>> fusable(a, np.ones_like(a))
    True
    >>> fusable(a, a.T), fusable(a, a.astype(np.float64)), fusable(a, [0.0])
    (False, False, False)
    """
    cdef Py_ssize_t k, count = len(arrays)
    if count == 0 or not _is_kernel_array(arrays[0]):
        return False
    cdef cnp.ndarray first = <cnp.ndarray>arrays[0]
    cdef cnp.ndarray other
    for k in range(1, count):
        if not _is_kernel_array(arrays[k]):
            return False
        other = <cnp.ndarray>arrays[k]
        if (cnp.PyArray_TYPE(other) != cnp.PyArray_TYPE(first)
                or not cnp.PyArray_SAMESHAPE(other, first)):
            return False
    return True
