# cython: language_level=3
"""``bernoulli_scalar_fill_`` and ``bernoulli_scalar_draw_``: dropout's mask,
``bernoulli_(p)`` of a float32/float64 array with a number ``p``, in one pass over the
generator's raw draws, given or drawn (Note [Dropout's mask in one pass]).

Its arrays are checked by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t

from ._kernels cimport _check_output, real

import numpy as np

cnp.import_array()

__all__ = ["bernoulli_scalar_draw_", "bernoulli_scalar_fill_"]

# Note [Dropout's mask in one pass]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's bernoulli_(p) with a number p (bernoulli_scalar_kernel_default, the CPU path
# off Intel's MKL) draws, per element in memory order, one double u from random64() (two
# 32-bit draws, the first the high word; u = (r64 & (2**53 - 1)) * 2**-53, as
# _random_kernels.pyx's gsr_u53) and stores u < p.  Composed of numpy calls that was five
# passes and four temporaries of the tensor's size (the 64-bit draws, the doubles, the
# comparison, its cast); here the raw draws are read once and the 0/1 written straight
# into the tensor: the same draws, the same values.  bernoulli_scalar_draw_ goes further:
# it asks numpy's bit generator for each 32-bit draw through its C interface (the
# bitgen_t of its capsule, under its lock), the same stream random_raw returns, so not
# even the 16 bytes per element of raw draws are written (a (4, 6, 128, 128) mask: 6 MiB
# of draws that random_raw wrote and the fill read back).  One thread: the draws are
# sequential.


cdef void _fill(real* out, const uint64_t* raw, Py_ssize_t n, double p) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t r64
    cdef uint64_t low53 = (<uint64_t>1 << 53) - 1
    cdef double scale = 1.0 / 9007199254740992.0
    for i in range(n):
        r64 = (raw[2 * i] << 32) | raw[2 * i + 1]
        out[i] = 1 if <double>(r64 & low53) * scale < p else 0


def bernoulli_scalar_fill_(out, raw, p):
    """Fill ``out`` (flat, in memory order) with ``u < p`` as 0/1, ``u`` torch's double of
    the 64-bit draw made of ``raw[2 * i]`` (high) and ``raw[2 * i + 1]`` (low) (Note
    [Dropout's mask in one pass]).

    Parameters
    ----------
    out : ndarray
        float32 or float64, C-contiguous, writable; written in place.
    raw : ndarray
        uint64 (32-bit draws), C-contiguous, ``2 * out.size`` of them.
    p : float
        The probability of a 1.

    Returns
    -------
    None

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import bernoulli_scalar_fill_
    >>> out = np.empty(2, np.float32)
    >>> bernoulli_scalar_fill_(out, np.array([0, 1, 0x7fffffff, 0], np.uint64), 0.5); out
    array([1., 0.], dtype=float32)
    """
    cdef str func = "bernoulli_scalar_fill_"
    cdef int typenum = _check_output(func, "out", out)
    if not cnp.PyArray_Check(raw) or raw.dtype != np.uint64:
        raise TypeError(f"{func}: raw must be a uint64 ndarray (the generator's raw draws)")
    if not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>raw):
        raise ValueError(f"{func}: raw must be C-contiguous; pass np.ascontiguousarray(raw)")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>out)
    if cnp.PyArray_SIZE(<cnp.ndarray>raw) != 2 * n:
        raise ValueError(
            f"{func}: raw must hold two draws per element ({2 * n}), got {raw.size}"
        )
    cdef double q = p
    cdef void* op = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef const uint64_t* rp = <const uint64_t*>cnp.PyArray_DATA(<cnp.ndarray>raw)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _fill(<float*>op, rp, n, q)
        else:
            _fill(<double*>op, rp, n, q)


cdef extern from *:
    """
    /* Note [MT19937 in blocks]: numpy's MT19937 state (numpy/random/src/mt19937/
       mt19937.h: the 624 words and the position), its twist and its tempering, as
       numpy's mt19937_gen and mt19937_next; words tempered a run at a time. */
    #include <stdint.h>
    #define GS_MT_N 624
    #define GS_MT_M 397
    typedef struct { uint32_t key[GS_MT_N]; int pos; } gs_mt_state;

    static void gs_mt_twist(gs_mt_state* st) {
        uint32_t* k = st->key;
        uint32_t y;
        int i;
        for (i = 0; i < GS_MT_N - GS_MT_M; i++) {
            y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
            k[i] = k[i + GS_MT_M] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        for (; i < GS_MT_N - 1; i++) {
            y = (k[i] & 0x80000000u) | (k[i + 1] & 0x7fffffffu);
            k[i] = k[i + (GS_MT_M - GS_MT_N)] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        }
        y = (k[GS_MT_N - 1] & 0x80000000u) | (k[0] & 0x7fffffffu);
        k[GS_MT_N - 1] = k[GS_MT_M - 1] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
        st->pos = 0;
    }

    /* the next `count` 32-bit draws into out */
    static void gs_mt_draws(gs_mt_state* st, uint32_t* out, Py_ssize_t count) {
        Py_ssize_t done = 0, j, run;
        while (done < count) {
            if (st->pos >= GS_MT_N)
                gs_mt_twist(st);
            run = GS_MT_N - st->pos;
            if (run > count - done)
                run = count - done;
            const uint32_t* src = st->key + st->pos;
            uint32_t* dst = out + done;
            for (j = 0; j < run; j++) {
                uint32_t y = src[j];
                y ^= (y >> 11);
                y ^= (y << 7) & 0x9d2c5680u;
                y ^= (y << 15) & 0xefc60000u;
                y ^= (y >> 18);
                dst[j] = y;
            }
            st->pos += (int)run;
            done += run;
        }
    }
    """
    ctypedef struct gs_mt_state:
        int pos
    void gs_mt_draws(gs_mt_state* st, uint32_t* out, Py_ssize_t count) noexcept nogil


cdef enum:
    DRAW_BLOCK = 1024              # elements per block of draws (8 KiB of draws)


cdef void _draw(real* out, bitgen_t* rng, Py_ssize_t n, double p) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t r64
    cdef uint64_t low53 = (<uint64_t>1 << 53) - 1
    cdef double scale = 1.0 / 9007199254740992.0
    for i in range(n):
        r64 = <uint64_t>rng.next_uint32(rng.state) << 32
        r64 = r64 | <uint64_t>rng.next_uint32(rng.state)
        out[i] = 1 if <double>(r64 & low53) * scale < p else 0


cdef void _draw_blocks(real* out, gs_mt_state* st, Py_ssize_t n, double p) noexcept nogil:
    cdef uint32_t words[2 * DRAW_BLOCK]
    cdef Py_ssize_t start = 0, m, j
    cdef uint64_t r64
    cdef uint64_t low53 = (<uint64_t>1 << 53) - 1
    cdef double scale = 1.0 / 9007199254740992.0
    while start < n:
        m = min(<Py_ssize_t>DRAW_BLOCK, n - start)
        gs_mt_draws(st, words, 2 * m)
        for j in range(m):
            r64 = (<uint64_t>words[2 * j] << 32) | <uint64_t>words[2 * j + 1]
            out[start + j] = 1 if <double>(r64 & low53) * scale < p else 0
        start += m


# Note [MT19937 in blocks]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# Through bitgen_t, each draw is a call through a function pointer that checks the
# position and tempers one word: ~5 ns a draw here, two draws per element, most of
# minGPT's dropout time.  For numpy's MT19937 (the generator gradstack's Generator wraps)
# the kernel instead works on the state itself, numpy's mt19937_state (624 words and a
# position, behind bitgen_t.state): it twists the words as numpy's mt19937_gen does when
# they are used up and tempers a run of them at a time, a loop the compiler vectorises,
# and leaves the position where numpy's own draws would have left it.  The layout is
# numpy's, not a public interface, so the first use checks it: the kernel and random_raw
# must give the same 2000 draws and leave the same next draws, from a generator whose
# position is mid-block; on any difference the kernel keeps the bitgen_t calls.

cdef int _blocks_ok = -1           # unknown until checked


cdef bint _blocks_work():
    global _blocks_ok
    if _blocks_ok >= 0:
        return _blocks_ok
    cdef double[::1] got = np.empty(1000)
    ours, ref = np.random.MT19937(20261207), np.random.MT19937(20261207)
    ours.random_raw(7)
    ref.random_raw(7)
    cdef bitgen_t* rng = <bitgen_t*>PyCapsule_GetPointer(ours.capsule, "BitGenerator")
    with ours.lock:
        _draw_blocks(&got[0], <gs_mt_state*>rng.state, 1000, 0.5)
    raw = ref.random_raw(2000)
    r64 = (raw[0::2] << np.uint64(32)) | raw[1::2]
    want = ((r64 & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53 < 0.5)
    _blocks_ok = int(
        np.array_equal(np.asarray(got), want.astype(np.float64))
        and np.array_equal(ours.random_raw(700), ref.random_raw(700))
    )
    return _blocks_ok


def _mt_blocks(enable=None):
    """Whether bernoulli_scalar_draw_ works on numpy's MT19937 state itself (Note [MT19937
    in blocks]); with ``enable``, first switch that off (False) or back to the layout
    check (True).  For tests."""
    global _blocks_ok
    if enable is not None:
        _blocks_ok = -1 if enable else 0
    return bool(_blocks_work())


def bernoulli_scalar_draw_(out, bit_generator, p):
    """:func:`bernoulli_scalar_fill_` drawing its raw 32-bit draws from ``bit_generator``
    (a ``numpy.random.BitGenerator``; ``2 * out.size`` of them, the stream its
    ``random_raw`` gives), with no array of draws (Note [Dropout's mask in one pass]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import bernoulli_scalar_draw_, bernoulli_scalar_fill_
    >>> a, b = np.empty(1000), np.empty(1000)
    >>> bernoulli_scalar_draw_(a, np.random.MT19937(7), 0.3)
    >>> bernoulli_scalar_fill_(b, np.random.MT19937(7).random_raw(2000), 0.3)
    >>> bool((a == b).all())
    True
    """
    cdef str func = "bernoulli_scalar_draw_"
    cdef int typenum = _check_output(func, "out", out)
    capsule = getattr(bit_generator, "capsule", None)
    if capsule is None or not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise TypeError(
            f"{func}: bit_generator must be a numpy.random.BitGenerator (MT19937 for "
            f"torch's stream), got {type(bit_generator).__name__}"
        )
    cdef bitgen_t* rng = <bitgen_t*>PyCapsule_GetPointer(capsule, "BitGenerator")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>out)
    cdef double q = p
    cdef void* op = cnp.PyArray_DATA(<cnp.ndarray>out)
    # Note [MT19937 in blocks]: numpy's MT19937 itself, once its layout is checked
    cdef bint blocks = type(bit_generator) is np.random.MT19937 and _blocks_work()
    cdef gs_mt_state* st = <gs_mt_state*>rng.state
    with bit_generator.lock:
        with nogil:
            if blocks and typenum == cnp.NPY_FLOAT:
                _draw_blocks(<float*>op, st, n, q)
            elif blocks:
                _draw_blocks(<double*>op, st, n, q)
            elif typenum == cnp.NPY_FLOAT:
                _draw(<float*>op, rng, n, q)
            else:
                _draw(<double*>op, rng, n, q)
