# cython: language_level=3
"""A numpy data allocator that keeps a few large freed blocks for reuse.

Note [Large blocks are reused, not returned to the kernel]
A forward and backward pass over large tensors allocates its intermediates, frees them all
when the graph goes, and allocates the same sizes again at the next step.  glibc serves
blocks of this size from fresh mmap'd or trimmed memory, so every step page-faults its
intermediates back in: measured on the 1M-element chain of tools/compare.py, ~40% of the
step (gradstack 27 ms against torch's 20 ms; 15 ms once the faults were gone).  This
handler, installed with numpy's ``PyDataMem_SetHandler``, keeps freed blocks of at least
``MIN_CACHED_BYTES`` in a small table (at most ``SLOTS`` blocks and ``limit`` bytes in all,
the oldest evicted to make room) and hands one back for an allocation of exactly the same
size.  Everything else goes
straight to malloc/calloc/realloc/free.  numpy frees each array with the handler that
allocated it, so arrays made before (or in other threads, whose context keeps numpy's
default handler) are unaffected.

The cache is on by default with a limit of 256 MiB (``GRADSTACK_ALLOCATOR_CACHE_MB`` sets
it at import, 0 turns the handler off); ``set_cache_limit`` changes it and ``cache_info``
reports what is held.  A mutex guards the table: numpy may free from any thread.
"""

from cpython.pycapsule cimport PyCapsule_New
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport strncpy

cimport numpy as cnp

cnp.import_array()

cdef extern from "numpy/ndarraytypes.h":
    ctypedef struct PyDataMemAllocator:
        void* ctx
        void* (*malloc)(void* ctx, size_t size) noexcept nogil
        void* (*calloc)(void* ctx, size_t nelem, size_t elsize) noexcept nogil
        void* (*realloc)(void* ctx, void* ptr, size_t new_size) noexcept nogil
        void (*free)(void* ctx, void* ptr, size_t size) noexcept nogil

    ctypedef struct PyDataMem_Handler:
        char name[127]
        unsigned char version
        PyDataMemAllocator allocator

cdef extern from "numpy/arrayobject.h":
    object PyDataMem_SetHandler(object handler)

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    int pthread_mutex_init(pthread_mutex_t*, void*)
    int pthread_mutex_lock(pthread_mutex_t*)
    int pthread_mutex_unlock(pthread_mutex_t*)

cdef enum:
    SLOTS = 32
MIN_CACHED_BYTES = 1 << 20
cdef size_t _MIN = 1 << 20

cdef void* _ptrs[SLOTS]
cdef size_t _sizes[SLOTS]
cdef size_t _stamps[SLOTS]       # when each block was stored (eviction takes the oldest)
cdef size_t _clock = 0
cdef size_t _held = 0            # bytes held in the table
cdef size_t _limit = 0           # 0: cache nothing
cdef size_t _hits = 0
cdef size_t _misses = 0
cdef pthread_mutex_t _lock
cdef PyDataMem_Handler _handler
cdef bint _installed = False

pthread_mutex_init(&_lock, NULL)


cdef void* _take(size_t size) noexcept nogil:
    """A cached block of exactly ``size`` bytes, or NULL."""
    global _held, _hits, _misses
    cdef int i
    cdef void* p = NULL
    pthread_mutex_lock(&_lock)
    for i in range(SLOTS):
        if _ptrs[i] != NULL and _sizes[i] == size:
            p = _ptrs[i]
            _ptrs[i] = NULL
            _held -= size
            _hits += 1
            break
    if p == NULL:
        _misses += 1
    pthread_mutex_unlock(&_lock)
    return p


cdef int _oldest() noexcept nogil:
    """The occupied slot stored longest ago, or -1."""
    cdef int i, best = -1
    for i in range(SLOTS):
        if _ptrs[i] != NULL and (best < 0 or _stamps[i] < _stamps[best]):
            best = i
    return best


cdef bint _keep(void* ptr, size_t size) noexcept nogil:
    """Put a freed block in the table, evicting the oldest blocks to make room.

    False when the block alone exceeds the limit (the caller frees it).  Evicting keeps
    the table useful when a program moves on to other sizes (Note [Large blocks ...]).
    """
    global _held, _clock
    cdef int i, free_slot = -1
    if size > _limit:
        return False
    pthread_mutex_lock(&_lock)
    while True:
        free_slot = -1
        for i in range(SLOTS):
            if _ptrs[i] == NULL:
                free_slot = i
                break
        if free_slot >= 0 and _held + size <= _limit:
            break
        i = _oldest()
        free(_ptrs[i])
        _held -= _sizes[i]
        _ptrs[i] = NULL
    _ptrs[free_slot] = ptr
    _sizes[free_slot] = size
    _clock += 1
    _stamps[free_slot] = _clock
    _held += size
    pthread_mutex_unlock(&_lock)
    return True


cdef void* _cached_malloc(void* ctx, size_t size) noexcept nogil:
    cdef void* p
    if size >= _MIN:
        p = _take(size)
        if p != NULL:
            return p
    # numpy asks for at least one byte: malloc(0) may return NULL, read as out of memory
    return malloc(size if size > 0 else 1)


cdef void* _cached_calloc(void* ctx, size_t nelem, size_t elsize) noexcept nogil:
    return calloc(nelem if nelem > 0 else 1, elsize if elsize > 0 else 1)


cdef void* _cached_realloc(void* ctx, void* ptr, size_t new_size) noexcept nogil:
    return realloc(ptr, new_size if new_size > 0 else 1)


cdef void _cached_free(void* ctx, void* ptr, size_t size) noexcept nogil:
    if ptr == NULL:
        return
    if size >= _MIN and _keep(ptr, size):
        return
    free(ptr)


cdef void _release_all(size_t keep_at_most) noexcept nogil:
    """Free cached blocks until at most ``keep_at_most`` bytes are held."""
    global _held
    cdef int i
    pthread_mutex_lock(&_lock)
    for i in range(SLOTS):
        if _held <= keep_at_most:
            break
        if _ptrs[i] != NULL:
            free(_ptrs[i])
            _held -= _sizes[i]
            _ptrs[i] = NULL
    pthread_mutex_unlock(&_lock)


def install(limit_bytes):
    """Make this allocator numpy's data allocator in the current context.

    Parameters
    ----------
    limit_bytes : int
        The most bytes of freed blocks to keep for reuse (0 keeps none but still installs).

    Returns
    -------
    bool
        True (installing twice is harmless).

    Examples
    --------
    >>> from gradstack_tensor import _allocator
    >>> _allocator.install(64 << 20)
    True
    """
    global _installed
    set_cache_limit(limit_bytes)
    if not _installed:
        strncpy(_handler.name, b"gradstack_block_cache", 126)
        _handler.version = 1
        _handler.allocator.ctx = NULL
        _handler.allocator.malloc = _cached_malloc
        _handler.allocator.calloc = _cached_calloc
        _handler.allocator.realloc = _cached_realloc
        _handler.allocator.free = _cached_free
        _installed = True
    PyDataMem_SetHandler(PyCapsule_New(&_handler, "mem_handler", NULL))
    return True


def set_cache_limit(limit_bytes):
    """Keep at most ``limit_bytes`` of freed large blocks (0 frees and keeps none).

    Raises
    ------
    TypeError
        If ``limit_bytes`` is not an integer.
    ValueError
        If it is negative.
    """
    global _limit
    if isinstance(limit_bytes, bool) or not isinstance(limit_bytes, int):
        raise TypeError(f"set_cache_limit: limit_bytes must be an int, got "
                        f"{type(limit_bytes).__name__}")
    if limit_bytes < 0:
        raise ValueError(f"set_cache_limit: limit_bytes must be >= 0, got {limit_bytes}")
    _limit = <size_t>limit_bytes
    _release_all(_limit)


def cache_info():
    """``{"installed", "limit", "held", "blocks", "hits", "misses"}`` of the block cache."""
    cdef int i, blocks = 0
    pthread_mutex_lock(&_lock)
    for i in range(SLOTS):
        if _ptrs[i] != NULL:
            blocks += 1
    info = {"installed": _installed, "limit": _limit, "held": _held, "blocks": blocks,
            "hits": _hits, "misses": _misses}
    pthread_mutex_unlock(&_lock)
    return info


def release():
    """Free every cached block now (the limit stays)."""
    _release_all(0)
