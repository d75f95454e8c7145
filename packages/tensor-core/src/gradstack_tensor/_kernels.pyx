# cython: language_level=3
"""Fused and threaded array kernels for gradstack's hot paths.

The backward engine (gradient accumulation), the optimisers (the SGD update) and the
reduction of broadcast gradients call these functions on raw ``numpy.ndarray`` objects
(never on Tensors).  Each kernel replaces a numpy expression that would take several
passes over memory, or that numpy runs slowly for the shapes autodiff produces
(``grad.sum(axis=0)`` for a bias gradient).  The fused backward formulas of single ops
(``sin_backward``, ``mul_backward`` ...) are graph-engine's (``_backward_kernels.pyx``),
compiled with the thread settings, AVX2 switch and checks of this module (Note [Kernels
of the layers above]).

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
size depends only on the shape (Note [Deterministic parallel reductions]).
"""

cimport cython
cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc
from libc.math cimport cosf, fabsf, sinf, tanhf
from libc.string cimport memset

import operator
import os

import numpy as np

cnp.import_array()

__all__ = [
    "PARALLEL_THRESHOLD",
    "TRANSCENDENTAL_THRESHOLD",
    "accumulate_",
    "add_scaled_",
    "fusable",
    "get_num_threads",
    "set_num_threads",
    "sgd_update_",
    "sum_to_shape",
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

ctypedef fused real:
    float
    double

cdef enum:
    MAX_DIMS = 64                 # NPY_MAXDIMS in numpy 2
    MAX_THREADS = 1024            # more would only exhaust the OS; see set_num_threads
    STACK_COLUMNS = 256           # column sums of at most this many columns use the stack
    COLUMN_BLOCK = 256            # columns per task in the wide column-sum strategy
    WIDE_COLUMNS = 4096           # from this many columns, split column sums by columns
    REDUCTION_CHUNK = 1 << 14     # elements per task in chunked reductions
    MAX_ROW_CHUNKS = 256          # bounds the partial sums of tall column sums

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
    if (typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE) or not cnp.PyArray_ISNOTSWAPPED(arr):
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


cdef int _check_not_shifted(str func, str name_w, object written, str name_r, object read) except -1:
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
# sin_backward and cos_backward (graph-engine's _backward_kernels.pyx, Note [float32 sin
# and cos] there; it takes its copy by this module's switch, kernel_avx2()) costs ~5 ns per element,
# over twice numpy's grad * np.cos(x), and accumulate_ is no faster than numpy's +=.
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

# Note [AVX-512 copies of the transcendental loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# On a CPU with AVX-512 (F, DQ, VL), numpy's float32 sin, cos and tanh are 16-lane SIMD
# approximations (~0.5 ms and ~0.4 ms at 1M elements on an AMD EPYC with AVX-512),
# while the float32 loops of Note [float32 sin and cos] and Note [float32 tanh] compute
# in double: in the AVX2 copy, 4 lanes.  Those loops get a third copy, built from the
# same bodies for AVX-512 with 512-bit vectors preferred, taken when the CPU has it and
# the AVX2 copies are on (``_avx512`` switches it, for tests and benchmarks).  Its
# multiply-adds are the same explicit fmas as the AVX2 copy's, so it gives the same bits:
# checked for all 2**32 float32 inputs (sin, cos, tanh and the sin/cos pair), 0 differ.
# Medians on one thread, 1M float32 elements (AMD EPYC, AVX-512):
#
#              default    AVX2      AVX-512    numpy (AVX-512)
#     sin      4.0 ms     1.46 ms   1.17 ms    0.54 ms
#     cos      4.0 ms     1.45 ms   1.16 ms
#     tanh     5.2 ms     1.71 ms   1.09 ms    0.38 ms
#
# The double arithmetic that makes the results correctly rounded keeps them ~2-3x
# slower than numpy's float32 loops on such CPUs (on AVX2 CPUs they were faster than
# numpy's); on 500k random inputs numpy's sin differs from torch's on ~13% of them here,
# the correctly rounded one on ~5%.

cdef extern from *:
    """
    /* Note [AVX2 clones] in _kernels.pyx (the float32 sin and cos clones are in
       graph-engine's _backward_kernels.pyx). */
    #include <math.h>

    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #  define GS_AVX2_CLONES 1
    #  define GS_BODY static inline __attribute__((always_inline))
    #else
    #  define GS_AVX2_CLONES 0
    #  define GS_BODY static CYTHON_INLINE
    #endif

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

    /* dst += src (alpha == 1) or dst += alpha * src, with the product rounded first. */
    GS_BODY void gs_add_scaled_f32_body(float* dst, const float* src, float alpha,
                                        Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        if (alpha == 1)
            for (i = start; i < stop; i++) dst[i] = dst[i] + src[i];
        else
            for (i = start; i < stop; i++) dst[i] = dst[i] + alpha * src[i];
    }

    GS_BODY void gs_add_scaled_f64_body(double* dst, const double* src, double alpha,
                                        Py_ssize_t start, Py_ssize_t stop) {
        Py_ssize_t i;
        if (alpha == 1)
            for (i = start; i < stop; i++) dst[i] = dst[i] + src[i];
        else
            for (i = start; i < stop; i++) dst[i] = dst[i] + alpha * src[i];
    }

    static void gs_add_scaled_f32_default(float* dst, const float* src, float alpha,
                                          Py_ssize_t start, Py_ssize_t stop) {
        gs_add_scaled_f32_body(dst, src, alpha, start, stop);
    }

    static void gs_add_scaled_f64_default(double* dst, const double* src, double alpha,
                                          Py_ssize_t start, Py_ssize_t stop) {
        gs_add_scaled_f64_body(dst, src, alpha, start, stop);
    }

    #if GS_AVX2_CLONES
    __attribute__((target("avx2")))  /* no fma: see Note [AVX2 clones] */
    static void gs_add_scaled_f32_avx2(float* dst, const float* src, float alpha,
                                       Py_ssize_t start, Py_ssize_t stop) {
        gs_add_scaled_f32_body(dst, src, alpha, start, stop);
    }

    __attribute__((target("avx2")))
    static void gs_add_scaled_f64_avx2(double* dst, const double* src, double alpha,
                                       Py_ssize_t start, Py_ssize_t stop) {
        gs_add_scaled_f64_body(dst, src, alpha, start, stop);
    }
    #  define GS_DISPATCH(name, args) (gs_avx2 ? name##_avx2 args : name##_default args)
    #else
    #  define GS_DISPATCH(name, args) (name##_default args)
    #endif

    static void gs_add_scaled_f32(float* dst, const float* src, float alpha,
                                  Py_ssize_t start, Py_ssize_t stop) {
        GS_DISPATCH(gs_add_scaled_f32, (dst, src, alpha, start, stop));
    }

    static void gs_add_scaled_f64(double* dst, const double* src, double alpha,
                                  Py_ssize_t start, Py_ssize_t stop) {
        GS_DISPATCH(gs_add_scaled_f64, (dst, src, alpha, start, stop));
    }
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


cdef void _add_scaled(real* dst, const real* src, real alpha, Py_ssize_t n, int nthreads) noexcept nogil:
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
# float32 sin, cos and tanh: the forward ops and sin/cos's backward formulas

# Note [float32 sin and cos]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# glibc's sinf/cosf are scalar and branch on the quadrant of x, so on random data they
# cost ~8 ns per element (mispredicted branches), and numpy's float32 SIMD loop ~2.5 ns.
# For float32 these loops evaluate cos(x) themselves, in float64 and without a branch or
# an integer conversion, so that the compiler vectorises them (gs_trig_body in the C block
# below: ~5 ns per element with SSE2, ~1.9 ns with AVX2 and FMA, Note [AVX2 clones]):
#   - q = x * 2/pi rounded to an integer (adding and subtracting 1.5 * 2**52 rounds; this
#     needs the default strict floating point: -ffast-math would fold it away);
#   - r = x - q * pi/2, with pi/2 split in two parts (Cody-Waite, as in fdlibm): exact
#     for |x| <= GS_TRIG_LIMIT, since q * GS_PIO2_HI then fits in 53 bits;
#   - cos(r) and sin(r) by their Taylor series on |r| <= pi/4 (truncation < 1e-14);
#   - with m = q mod 4 taken in {-2, ..., 2} and u = m * m, the factors
#     cos(m pi/2) = (u - 1)(u - 6)/6 and sin(m pi/2) = m (4 - u)/3 are exact small
#     integers, and cos(x) = cos(m pi/2) cos(r) - sin(m pi/2) sin(r).  sin(x) is
#     cos(x - pi/2): the same with q + 3 for q.
# The float64 result is rounded once to float32.  On 2e7 random inputs it was the
# correctly rounded value every time (glibc's cosf misses ~1 in 70 by an ulp, numpy's
# and torch's SIMD loops are within an ulp or so).  |x| > GS_TRIG_LIMIT and non-finite x
# (where the float64 path produces garbage or nan) are rare: a second pass, taken only
# when the first saw one, redoes those elements with libm; so does a zero for sin, whose
# sign the formula may lose (sin(-0.0) is -0.0), and which a select in the loop would
# keep the compiler from vectorising.  float64 keeps libm's sin/cos, which numpy
# uses too.  The same loop computes the forward ops (sin, cos: ``trig_f32``) and
# graph-engine's sin_backward/cos_backward (``grad * cos(x)``, ``-grad * sin(x)``).
#
# Note [sin and cos from one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The gradient of sin is grad * cos(x), of cos -grad * sin(x): a backward pass would
# evaluate the other function again, a second transcendental pass over x.  Both come from
# the same reduction (r, sin r, cos r, and the quadrant's exact factors), so one pass can
# write both for about the cost of one (gs_sincos_body: two stores instead of one), and
# with the same operations, hence the same bits, as the loops that compute one.  The
# forward sin and cos of a float32 tensor that requires grad take that pass and leave the
# other function as the op's by-product (Note [A kernel's by-product] in _elementwise.pyx),
# which autograd keeps for the backward formula.
#
# Note [float32 tanh]
# ~~~~~~~~~~~~~~~~~~~
# numpy's float32 tanh costs ~3 ns per element, the most expensive pass of an MLP-style
# ``tanh(...)``.  gs_tanh_one_f32 computes it in float64 without a branch, so that it
# vectorises like the trig loop:
#   - a = min(|x|, 9.5): from |x| = 9.01 on, tanh rounds to 1 in float32 (written as
#     arithmetic, since GCC does not vectorise a loop with that select, and exact for
#     |x| <= 1e15; larger |x| and nan go to libm's tanhf in a second pass, taken only when
#     the first saw one);
#   - e = expm1(2a) = 2**k (1 + expm1(r)) - 1 with k = round(2a / ln 2) (0 to 28) and
#     r = 2a - k ln 2 (Cody-Waite, |r| <= 0.35, ln 2 split as in fdlibm); expm1(r) by its
#     Taylor series to r**12 (truncation < 1e-14), and 2**k built from k's bits (the
#     rounding constant leaves k in the low bits of 2a / ln 2 + 1.5 * 2**52);
#     2**k expm1(r) + (2**k - 1) is one rounding, with no cancellation (k = 0 gives
#     expm1(r) itself, which keeps full relative precision for small a);
#   - tanh(a) = e / (e + 2), and the sign of x is copied back (tanh(-0.0) is -0.0).
# The float64 value is within ~5e-16 relatively of tanh(a), so rounding it to float32
# gives the correctly rounded result except within 5e-16 of a rounding boundary: on
# 2**28 inputs spread over all float32 values it differed from the correctly rounded
# value nowhere (tests/test_transcendental_f32.py samples every binade).  nan stays nan
# and +-inf gives +-1.

cdef extern from *:
    """
    /* Note [float32 sin and cos], Note [float32 tanh] and Note [AVX2 clones] in
       _kernels.pyx */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    #define GS_TWO_OVER_PI 6.36619772367581382433e-01
    #define GS_PIO2_HI 1.57079632673412561417e+00  /* the first 33 bits of pi/2 */
    #define GS_PIO2_LO 6.07710050650619224932e-11  /* pi/2 - GS_PIO2_HI */
    #define GS_ROUNDER 6755399441055744.0          /* 1.5 * 2**52 */
    #define GS_TRIG_LIMIT 262144.0f                /* 2**18 */
    #define GS_INV_LN2 1.44269504088896338700e+00
    #define GS_LN2_HI 6.93147180369123816490e-01   /* fdlibm's ln2_hi: 32 bits of ln 2 */
    #define GS_LN2_LO 1.90821492927058770002e-10   /* ln 2 - GS_LN2_HI */
    #define GS_TANH_ONE 9.5                        /* tanh rounds to 1 in float32 beyond */
    #define GS_TANH_LIMIT 1e15f                    /* a - GS_TANH_ONE is exact below */

    /* a * b + c, as one fma in the AVX2 copy (fused is a constant after inlining). */
    GS_BODY double gs_madd(double a, double b, double c, int fused) {
    #if GS_AVX2_CLONES
        if (fused)
            return __builtin_fma(a, b, c);
    #endif
        return a * b + c;
    }

    /* x rounded to an integer, for |x| < 2**51, with arithmetic only (vectorisable). */
    GS_BODY double gs_round_half_even(double x) {
        return (x + GS_ROUNDER) - GS_ROUNDER;
    }

    /* x = q pi/2 + r with q an integer and |r| <= pi/4: q, sin(r) and cos(r), for
       |x| <= GS_TRIG_LIMIT (Note [float32 sin and cos]). */
    GS_BODY void gs_trig_reduce(float x, double* q, double* sin_r, double* cos_r, int fused) {
        double xd = x;
        double k = gs_madd(xd, GS_TWO_OVER_PI, GS_ROUNDER, fused) - GS_ROUNDER;
        double r = gs_madd(-k, GS_PIO2_LO, gs_madd(-k, GS_PIO2_HI, xd, fused), fused);
        double r2 = r * r;
        double s = gs_madd(r2, 1.0 / 6227020800.0, -1.0 / 39916800.0, fused);
        s = gs_madd(r2, s, 1.0 / 362880.0, fused);
        s = gs_madd(r2, s, -1.0 / 5040.0, fused);
        s = gs_madd(r2, s, 1.0 / 120.0, fused);
        s = gs_madd(r2, s, -1.0 / 6.0, fused);
        double c = gs_madd(r2, -1.0 / 87178291200.0, 1.0 / 479001600.0, fused);
        c = gs_madd(r2, c, -1.0 / 3628800.0, fused);
        c = gs_madd(r2, c, 1.0 / 40320.0, fused);
        c = gs_madd(r2, c, -1.0 / 720.0, fused);
        c = gs_madd(r2, c, 1.0 / 24.0, fused);
        c = gs_madd(r2, c, -0.5, fused);
        *q = k;
        *sin_r = gs_madd(r * r2, s, r, fused);
        *cos_r = gs_madd(r2, c, 1.0, fused);
    }

    /* cos(m pi/2) and sin(m pi/2) for the quarter turns `quadrant`: with m = quadrant mod 4
       in {-2, ..., 2} and u = m * m, (u - 1)(u - 6)/6 and m (4 - u)/3, exact small
       integers. */
    GS_BODY void gs_quarter_turns(double quadrant, double* cos_m, double* sin_m) {
        double m = quadrant - 4.0 * gs_round_half_even(quadrant * 0.25);
        double u = m * m;
        *cos_m = (u - 1.0) * (u - 6.0) * (1.0 / 6.0);
        *sin_m = m * (4.0 - u) * (1.0 / 3.0);
    }

    /* cos(x - shift * pi/2) for |x| <= GS_TRIG_LIMIT: cos(x) with shift 0, sin(x) with 3
       (but sin(-0.0) may come out +0.0: gs_trig_body sends zeros to libm). */
    GS_BODY float gs_cos_shifted_f32(float x, double shift, int fused) {
        double q, sin_r, cos_r, cos_m, sin_m;
        gs_trig_reduce(x, &q, &sin_r, &cos_r, fused);
        gs_quarter_turns(q + shift, &cos_m, &sin_m);
        return (float)(cos_m * cos_r - sin_m * sin_r);
    }

    /* out[i] = k_i * cos(x[i] - shift * pi/2), where k_i is sign * g[i] (g_step 1),
       sign * g[0] (g_step 0: a broadcast gradient) or 1 (g NULL), for |x| <=
       GS_TRIG_LIMIT; returns whether some x in [start, stop) was outside that range (or
       not finite), or a zero when computing sin (whose sign libm keeps).  One loop per
       case, so that each vectorises (a select on x == 0 in the loop would not). */
    GS_BODY int gs_trig_body(double shift, float sign, const float* g, Py_ssize_t g_step,
                             const float* x, float* out, Py_ssize_t start,
                             Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        /* the limit, or (for sin) just below the smallest nonzero: zeros count as outside */
        float low = shift != 0.0 ? 1e-45f : 0.0f;
        if (g == NULL) {
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = gs_cos_shifted_f32(x[i], shift, fused);
            }
        } else if (g_step == 0) {
            float k = sign * g[0];
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = k * gs_cos_shifted_f32(x[i], shift, fused);
            }
        } else {
            for (i = start; i < stop; i++) {
                outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= low);
                out[i] = (sign * g[i]) * gs_cos_shifted_f32(x[i], shift, fused);
            }
        }
        return outside;
    }

    /* sin(x) and cos(x) from one reduction, for |x| <= GS_TRIG_LIMIT: the same
       operations as gs_cos_shifted_f32 with shift 3 and 0 (cos((q + 3) pi/2) is
       sin(q pi/2) and sin((q + 3) pi/2) is -cos(q pi/2), exact small integers), so the
       same bits (Note [sin and cos from one pass]). */
    GS_BODY void gs_sincos_one_f32(float x, float* s, float* c, int fused) {
        double q, sin_r, cos_r, cos_m, sin_m;
        gs_trig_reduce(x, &q, &sin_r, &cos_r, fused);
        gs_quarter_turns(q, &cos_m, &sin_m);
        *c = (float)(cos_m * cos_r - sin_m * sin_r);
        *s = (float)(sin_m * cos_r + cos_m * sin_r);
    }

    /* s = sin(x), c = cos(x) on [start, stop); returns whether some x was zero, beyond
       GS_TRIG_LIMIT or not finite (the caller redoes those with libm, as for sin). */
    GS_BODY int gs_sincos_body(const float* x, float* s, float* c, Py_ssize_t start,
                               Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        for (i = start; i < stop; i++) {
            outside |= !(fabsf(x[i]) <= GS_TRIG_LIMIT) | !(fabsf(x[i]) >= 1e-45f);
            gs_sincos_one_f32(x[i], s + i, c + i, fused);
        }
        return outside;
    }

    /* tanh(x) in float64, rounded once to float32 (Note [float32 tanh]). */
    GS_BODY float gs_tanh_one_f32(float xf, int fused) {
        double x = xf;
        double a = fabs(x);
        /* min(a, GS_TANH_ONE), as arithmetic (GCC 12 vectorises neither a select here nor
           fmin); exact for a < GS_TANH_LIMIT, beyond which gs_tanh_body's caller redoes x */
        a = a - (a > GS_TANH_ONE) * (a - GS_TANH_ONE);
        double t = a + a;
        double kr = gs_madd(t, GS_INV_LN2, GS_ROUNDER, fused);
        double k = kr - GS_ROUNDER;
        double r = gs_madd(-k, GS_LN2_LO, gs_madd(-k, GS_LN2_HI, t, fused), fused);
        double p = gs_madd(r, 1.0 / 479001600.0, 1.0 / 39916800.0, fused);
        p = gs_madd(r, p, 1.0 / 3628800.0, fused);
        p = gs_madd(r, p, 1.0 / 362880.0, fused);
        p = gs_madd(r, p, 1.0 / 40320.0, fused);
        p = gs_madd(r, p, 1.0 / 5040.0, fused);
        p = gs_madd(r, p, 1.0 / 720.0, fused);
        p = gs_madd(r, p, 1.0 / 120.0, fused);
        p = gs_madd(r, p, 1.0 / 24.0, fused);
        p = gs_madd(r, p, 1.0 / 6.0, fused);
        p = gs_madd(r, p, 0.5, fused);
        double em1_r = gs_madd(r * r, p, r, fused);    /* expm1(r) */
        int64_t bits;
        memcpy(&bits, &kr, sizeof bits);               /* ... + k in the low bits */
        bits = (bits + 1023) << 52;                    /* 2**k: k + 1023 < 2048 */
        double scale;
        memcpy(&scale, &bits, sizeof scale);
        double e = gs_madd(scale, em1_r, scale - 1.0, fused);   /* expm1(2a) */
        return (float)copysign(e / (e + 2.0), x);
    }

    /* out = tanh(x) on [start, stop) for |x| <= GS_TANH_LIMIT; returns whether some x was
       beyond or nan (whose elements the caller redoes with libm). */
    GS_BODY int gs_tanh_body(const float* x, float* out, Py_ssize_t start,
                             Py_ssize_t stop, int fused) {
        int outside = 0;
        Py_ssize_t i;
        for (i = start; i < stop; i++) {
            outside |= !(fabsf(x[i]) <= GS_TANH_LIMIT);
            out[i] = gs_tanh_one_f32(x[i], fused);
        }
        return outside;
    }

    static int gs_trig_f32_default(double shift, float sign, const float* g,
                                   Py_ssize_t g_step, const float* x, float* out,
                                   Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 0);
    }

    static int gs_sincos_f32_default(const float* x, float* s, float* c, Py_ssize_t start,
                                     Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 0);
    }

    static int gs_tanh_f32_default(const float* x, float* out, Py_ssize_t start,
                                   Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 0);
    }

    #if GS_AVX2_CLONES
    __attribute__((target("avx2,fma")))
    static int gs_trig_f32_avx2(double shift, float sign, const float* g,
                                Py_ssize_t g_step, const float* x, float* out,
                                Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 1);
    }

    __attribute__((target("avx2,fma")))
    static int gs_sincos_f32_avx2(const float* x, float* s, float* c, Py_ssize_t start,
                                  Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 1);
    }

    __attribute__((target("avx2,fma")))
    static int gs_tanh_f32_avx2(const float* x, float* out, Py_ssize_t start,
                                Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 1);
    }

    /* Note [AVX-512 copies of the transcendental loops] */
    #  define GS_AVX512 \
        __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,prefer-vector-width=512")))
    GS_AVX512
    static int gs_trig_f32_avx512(double shift, float sign, const float* g,
                                  Py_ssize_t g_step, const float* x, float* out,
                                  Py_ssize_t start, Py_ssize_t stop) {
        return gs_trig_body(shift, sign, g, g_step, x, out, start, stop, 1);
    }

    GS_AVX512
    static int gs_sincos_f32_avx512(const float* x, float* s, float* c, Py_ssize_t start,
                                    Py_ssize_t stop) {
        return gs_sincos_body(x, s, c, start, stop, 1);
    }

    GS_AVX512
    static int gs_tanh_f32_avx512(const float* x, float* out, Py_ssize_t start,
                                  Py_ssize_t stop) {
        return gs_tanh_body(x, out, start, stop, 1);
    }
    #  define GS_DISPATCH_512(name, args) \
        (gs_avx2 && gs_avx512 ? name##_avx512 args : GS_DISPATCH(name, args))
    #else
    #  define GS_DISPATCH_512(name, args) GS_DISPATCH(name, args)
    #endif

    static int gs_trig_f32(double shift, float sign, const float* g, Py_ssize_t g_step,
                           const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_trig_f32, (shift, sign, g, g_step, x, out, start, stop));
    }

    static int gs_sincos_f32(const float* x, float* s, float* c, Py_ssize_t start,
                             Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_sincos_f32, (x, s, c, start, stop));
    }

    static int gs_tanh_f32(const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) {
        return GS_DISPATCH_512(gs_tanh_f32, (x, out, start, stop));
    }
    """
    float GS_TRIG_LIMIT
    float GS_TANH_LIMIT
    int gs_trig_f32(double shift, float sign, const float* g, Py_ssize_t g_step,
                    const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    int gs_tanh_f32(const float* x, float* out, Py_ssize_t start, Py_ssize_t stop) noexcept nogil
    int gs_sincos_f32(const float* x, float* s, float* c, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil


# sin, cos and tanh cost ~1-2 ns per element with AVX2 (more without): two threads win
# from 2k elements (Note [Choosing PARALLEL_THRESHOLD], measured for sin/cos_backward)
cdef Py_ssize_t _transcendental_threshold = 1 << 11
TRANSCENDENTAL_THRESHOLD = _transcendental_threshold


cdef void trig_f32_range(bint want_sin, float sign, const float* g, Py_ssize_t g_step,
                         const float* x, float* out, Py_ssize_t start,
                         Py_ssize_t stop) noexcept nogil:
    """out = k * cos(x), or k * sin(x) if want_sin, on [start, stop), where k is sign * g[i]
    (g_step 1), sign * g[0] (g_step 0) or 1 (g NULL) (Note [float32 sin and cos])."""
    cdef Py_ssize_t i
    cdef float k = 1
    if not gs_trig_f32(3.0 if want_sin else 0.0, sign, g, g_step, x, out, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TRIG_LIMIT) or (want_sin and x[i] == 0):
            if g != NULL:
                k = sign * g[i * g_step]
            out[i] = k * (sinf(x[i]) if want_sin else cosf(x[i]))


cdef void _trig_forward(bint want_sin, const float* x, float* out, Py_ssize_t n,
                        int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        trig_f32_range(want_sin, 1, NULL, 0, x, out, 0, n)
        return
    step = _block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        trig_f32_range(want_sin, 1, NULL, 0, x, out, start, min(start + step, n))


cdef void _sincos_range(const float* x, float* s, float* c, Py_ssize_t start,
                        Py_ssize_t stop) noexcept nogil:
    """s = sin(x), c = cos(x) on [start, stop) (Note [sin and cos from one pass])."""
    cdef Py_ssize_t i
    if not gs_sincos_f32(x, s, c, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TRIG_LIMIT) or x[i] == 0:
            s[i] = sinf(x[i])
            c[i] = cosf(x[i])


cdef void _sincos_forward(const float* x, float* s, float* c, Py_ssize_t n,
                          int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _sincos_range(x, s, c, 0, n)
        return
    step = _block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _sincos_range(x, s, c, start, min(start + step, n))


cdef tuple sincos_f32(cnp.ndarray x):
    """(sin(x), cos(x)) of a C-contiguous, aligned, native-order float32 array from one pass
    (Note [sin and cos from one pass]), the bits of transcendental_f32's; None for any
    other array."""
    cdef cnp.ndarray s, c
    cdef Py_ssize_t n
    cdef int nthreads
    cdef const float* xp
    cdef float* sp
    cdef float* cp
    if (cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not cnp.PyArray_ISCARRAY_RO(x)
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        return None
    s = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    c = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    n = cnp.PyArray_SIZE(x)
    nthreads = _threads_for(n, _transcendental_threshold)
    xp = <const float*>cnp.PyArray_DATA(x)
    sp = <float*>cnp.PyArray_DATA(s)
    cp = <float*>cnp.PyArray_DATA(c)
    with nogil:
        _sincos_forward(xp, sp, cp, n, nthreads)
    return (s, c)


def _sincos_f32(x):
    """(sin(x), cos(x)) of a C-contiguous float32 array from one pass; for tests.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import _sincos_f32
    >>> _sincos_f32(np.array([0.0, -0.0, 1.0], np.float32))
    (array([ 0.       , -0.       ,  0.84147096], dtype=float32), array([1.       , 1.       , 0.5403023], dtype=float32))
    """
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or not x.flags.c_contiguous:
        raise TypeError("_sincos_f32: x must be a C-contiguous float32 numpy array")
    return sincos_f32(x)


cdef void _tanh_range(const float* x, float* out, Py_ssize_t start,
                      Py_ssize_t stop) noexcept nogil:
    """out = tanh(x) on [start, stop) (Note [float32 tanh]); |x| > 1e15 and nan by libm."""
    cdef Py_ssize_t i
    if not gs_tanh_f32(x, out, start, stop):
        return
    for i in range(start, stop):
        if not (fabsf(x[i]) <= GS_TANH_LIMIT):
            out[i] = tanhf(x[i])


cdef void _tanh_forward(const float* x, float* out, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _tanh_range(x, out, 0, n)
        return
    step = _block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _tanh_range(x, out, start, min(start + step, n))


cdef object transcendental_f32(int which, cnp.ndarray x):
    """sin (0), cos (1) or tanh (2) of a C-contiguous, aligned, native-order float32 array
    by the loops above, as a new array of its shape; None for any other array (the caller
    takes numpy's loop)."""
    cdef cnp.ndarray out
    cdef Py_ssize_t n
    cdef int nthreads
    cdef const float* xp
    cdef float* op_
    if (cnp.PyArray_TYPE(x) != cnp.NPY_FLOAT or not cnp.PyArray_ISCARRAY_RO(x)
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        return None
    out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(x), cnp.PyArray_DIMS(x), cnp.NPY_FLOAT, 0)
    n = cnp.PyArray_SIZE(x)
    nthreads = _threads_for(n, _transcendental_threshold)
    xp = <const float*>cnp.PyArray_DATA(x)
    op_ = <float*>cnp.PyArray_DATA(out)
    with nogil:
        if which == 2:
            _tanh_forward(xp, op_, n, nthreads)
        else:
            _trig_forward(which == 0, xp, op_, n, nthreads)
    return out


def _transcendental_f32(str name, x):
    """``name`` ('sin', 'cos' or 'tanh') of a C-contiguous float32 array by the float32
    loops of Note [float32 sin and cos] and Note [float32 tanh]; for tests and benchmarks
    (the ops take these loops themselves).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import _transcendental_f32
    >>> _transcendental_f32("tanh", np.array([0.0, 1.0, -20.0], np.float32))
    array([ 0.       ,  0.7615942, -1.       ], dtype=float32)
    """
    which = {"sin": 0, "cos": 1, "tanh": 2}.get(name)
    if which is None:
        raise ValueError(f"_transcendental_f32: name must be 'sin', 'cos' or 'tanh', not {name!r}")
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or not x.flags.c_contiguous:
        raise TypeError("_transcendental_f32: x must be a C-contiguous float32 numpy array")
    return transcendental_f32(which, x)


# ---------------------------------------------------------------------------------------
# SGD

# Note [SGD follows torch's _single_tensor_sgd]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch.optim.SGD (torch 2.x, torch/optim/sgd.py) negates the gradient *first* when
# maximize is set, so weight decay and the momentum buffer see -grad:
#
#     g = -grad if maximize else grad
#     if weight_decay != 0:  g = g + weight_decay * param
#     if momentum != 0:
#         buf = g                                       on the first step
#         buf = momentum * buf + (1 - dampening) * g    afterwards
#         g = g + momentum * buf if nesterov else buf
#     param = param - lr * g
#
# (Negating the final step instead would differ whenever weight_decay != 0.)  The kernel
# does the same arithmetic in the same order in the parameter's dtype, the scalars rounded
# to that dtype as torch's CPU kernels do.  torch's vectorised code may fuse a multiply and
# an add (FMA), so float32 results can differ from torch by an ulp.

cdef struct SgdOptions:
    double lr
    double momentum
    double dampening
    double weight_decay
    bint nesterov
    bint maximize
    bint first_step


cdef inline real _with_decay(real g, real p, real weight_decay, bint decay) noexcept nogil:
    return g + weight_decay * p if decay else g


cdef void _sgd_range(const SgdOptions* opt, real* param, const real* grad, real* buf,
                     Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """One SGD step for elements [start, stop); `buf` is unused when momentum == 0.

    One loop per momentum state, each free of branches (the options become selects), so
    that the compiler vectorises it; multiplying by sign = -1 or 1 negates exactly.
    """
    cdef real sign = -1 if opt.maximize else 1
    cdef real neg_lr = <real>(-opt.lr)
    cdef real momentum = <real>opt.momentum
    cdef real keep = <real>(1.0 - opt.dampening)
    cdef real weight_decay = <real>opt.weight_decay
    cdef bint decay = opt.weight_decay != 0
    cdef bint nesterov = opt.nesterov
    cdef Py_ssize_t i
    cdef real g, b
    if opt.momentum == 0:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            param[i] = param[i] + neg_lr * g
    elif opt.first_step:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            buf[i] = g
            param[i] = param[i] + neg_lr * (g + momentum * g if nesterov else g)
    else:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            b = buf[i] * momentum + keep * g
            buf[i] = b
            param[i] = param[i] + neg_lr * (g + momentum * b if nesterov else b)


cdef void _sgd(const SgdOptions* opt, real* param, const real* grad, real* buf,
               Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _sgd_range(opt, param, grad, buf, 0, n)
        return
    step = _block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _sgd_range(opt, param, grad, buf, start, min(start + step, n))


cdef void _sgd_typed(const SgdOptions* opt, int typenum, void* param, const void* grad,
                     void* buf, Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _sgd(opt, <float*>param, <const float*>grad, <float*>buf, n, nthreads)
    else:
        _sgd(opt, <double*>param, <const double*>grad, <double*>buf, n, nthreads)


cdef int _check_sgd_arrays(object param, object grad, object momentum_buffer,
                           bint use_buffer) except -1:
    cdef str func = "sgd_update_"
    cdef int typenum = _check_output(func, "param", param)
    _check_input(func, "grad", grad)
    _check_same(func, "param", param, "grad", grad)
    _check_not_shifted(func, "param", param, "grad", grad)
    if not use_buffer:
        return typenum
    if momentum_buffer is None:
        raise ValueError(
            "sgd_update_: momentum_buffer is None but momentum != 0; pass an array of "
            "param's shape and dtype (np.empty_like(param)) with first_step=True"
        )
    _check_output(func, "momentum_buffer", momentum_buffer)
    _check_same(func, "param", param, "momentum_buffer", momentum_buffer)
    _check_disjoint(func, "param", param, "momentum_buffer", momentum_buffer)
    _check_not_shifted(func, "momentum_buffer", momentum_buffer, "grad", grad)
    return typenum


def sgd_update_(param, grad, momentum_buffer, lr, *, momentum=0.0, dampening=0.0,
                weight_decay=0.0, nesterov=False, maximize=False, first_step=False):
    """One step of ``torch.optim.SGD`` on one parameter, fused into one pass, in place.

    Computes (Note [SGD follows torch's _single_tensor_sgd])::

        g = -grad if maximize else grad
        if weight_decay != 0: g = g + weight_decay * param
        if momentum != 0:
            buf = g if first_step else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        param -= lr * g

    Parameters
    ----------
    param : ndarray
        The parameter, updated in place: float32 or float64, C-contiguous, writable.
    grad : ndarray
        Its gradient: same shape and dtype, C-contiguous.  It may be `param` itself but
        must not partially overlap `param` or `momentum_buffer`.
    momentum_buffer : ndarray or None
        The momentum buffer, updated in place (same shape and dtype as `param`,
        C-contiguous, writable, sharing no memory with `param`).  Required when
        ``momentum != 0``, ignored (may be None) otherwise.  On the first step its content
        is ignored and overwritten: allocate it with ``np.empty_like(param)``.
    lr : float
        The learning rate.
    momentum, dampening, weight_decay : float, optional
        As in ``torch.optim.SGD``; all default to 0.
    nesterov, maximize : bool, optional
        As in ``torch.optim.SGD``; both default to False.  Like the functional
        ``torch.optim.sgd``, this kernel does not check that nesterov comes with
        ``momentum > 0`` and ``dampening == 0``: the optimiser's constructor does.
    first_step : bool, optional
        True on the first step of this parameter, when torch starts the buffer as a copy
        of the gradient instead of updating it.

    Raises
    ------
    TypeError
        If an array argument is not an ndarray, its dtype is not float32/float64, the
        dtypes differ, or a scalar is not a real number.
    ValueError
        If the shapes differ, an array is not C-contiguous, `param` or `momentum_buffer`
        is read-only, arrays overlap, or `momentum_buffer` is None while momentum != 0.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor._kernels import sgd_update_
    >>> param, grad, buf = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.empty(2)
    >>> sgd_update_(param, grad, buf, 0.1, momentum=0.9, first_step=True)
    >>> param
    array([0.95, 2.1 ])
    >>> sgd_update_(param, grad, buf, 0.1, momentum=0.9)
    >>> buf
    array([ 0.95, -1.9 ])
    """
    cdef SgdOptions opt
    opt.lr = _as_float("sgd_update_", "lr", lr)
    opt.momentum = _as_float("sgd_update_", "momentum", momentum)
    opt.dampening = _as_float("sgd_update_", "dampening", dampening)
    opt.weight_decay = _as_float("sgd_update_", "weight_decay", weight_decay)
    opt.nesterov = nesterov
    opt.maximize = maximize
    opt.first_step = first_step
    cdef bint use_buffer = opt.momentum != 0
    cdef int typenum = _check_sgd_arrays(param, grad, momentum_buffer, use_buffer)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>param)
    cdef int nthreads = _threads_for(n, _parallel_threshold)
    cdef void* pp = cnp.PyArray_DATA(<cnp.ndarray>param)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* bp = cnp.PyArray_DATA(<cnp.ndarray>momentum_buffer) if use_buffer else NULL
    if n >= _parallel_threshold:
        with nogil:
            _sgd_typed(&opt, typenum, pp, gp, bp, n, nthreads)
    else:
        _sgd_typed(&opt, typenum, pp, gp, bp, n, nthreads)
    return None


# ---------------------------------------------------------------------------------------
# sum_to_shape
#
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
    >>> from gradstack_tensor._kernels import sum_to_shape
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
    cdef bint parallel = n >= _parallel_threshold
    cdef int nthreads = _num_threads
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
