# cython: language_level=3
"""``bernoulli_scalar_fill_`` and ``bernoulli_scalar_draw_``: dropout's mask,
``bernoulli_(p)`` of a float32/float64 array with a number ``p``, in one pass over the
generator's raw draws, given or drawn (Note [Dropout's mask in one pass]).

Its arrays are checked by ``_kernels.pyx``'s shared code; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uint64_t
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


cdef void _draw(real* out, bitgen_t* rng, Py_ssize_t n, double p) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint64_t r64
    cdef uint64_t low53 = (<uint64_t>1 << 53) - 1
    cdef double scale = 1.0 / 9007199254740992.0
    for i in range(n):
        r64 = <uint64_t>rng.next_uint32(rng.state) << 32
        r64 = r64 | <uint64_t>rng.next_uint32(rng.state)
        out[i] = 1 if <double>(r64 & low53) * scale < p else 0


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
    with bit_generator.lock:
        with nogil:
            if typenum == cnp.NPY_FLOAT:
                _draw(<float*>op, rng, n, q)
            else:
                _draw(<double*>op, rng, n, q)
