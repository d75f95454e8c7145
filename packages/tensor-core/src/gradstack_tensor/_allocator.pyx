# cython: language_level=3
"""A numpy data allocator that keeps a few large blocks gradstack freed, for reuse.

Note [Large blocks are reused, not returned to the kernel]
A forward and backward pass over large tensors allocates its intermediates, frees them all
when the graph goes, and allocates the same sizes again at the next step.  glibc serves
blocks of this size from fresh mmap'd or trimmed memory, so every step page-faults its
intermediates back in: measured on the 1M-element chain of tools/compare.py, ~40% of the
step (gradstack 27 ms against torch's 20 ms; 15 ms once the faults were gone).  This
handler, installed with numpy's ``PyDataMem_SetHandler``, keeps freed blocks of at least
``MIN_CACHED_BYTES`` in a small table (at most ``SLOTS`` blocks and ``limit`` bytes in all,
the oldest evicted to make room) and hands one back for an allocation of exactly the same
size.  numpy frees each array with the handler that allocated it, so arrays made before
(or in other threads, whose context keeps numpy's default handler) are unaffected.

Note [Only gradstack's own blocks are cached]
The handler is numpy's for the whole context (the importing thread), so it also sees the
user's own numpy code; a user's ``np.empty(4 << 20)`` must be returned to the system when
freed, as numpy's default handler does, not kept in a cache it never asked for.  So the
cache takes only blocks gradstack allocated:

- at allocation, a large block (>= ``MIN_CACHED_BYTES``) is gradstack's when this thread is
  inside an op's kernel (the per-thread count of the dispatch point, Note [Inside a
  gradstack op] in ``_dispatch.pyx``).  Only those are served from the cache, and their
  addresses go into a set of live gradstack blocks (open addressing, grown by doubling;
  large blocks are few, so it stays small);
- at free, a large block is kept only if it leaves that set; any other block goes to
  numpy's default handler, as does every small or non-gradstack allocation: the user's
  arrays get exactly numpy's default behaviour (its small-block cache, its huge pages).
  ``realloc`` of a gradstack block (``ndarray.resize``) drops it from the set.

Setting numpy's handler around each op instead (numpy's handler is a context variable) was
the other candidate: a context-variable set and reset on every op, small ones included,
costs ~850 instructions (callgrind: ``ContextVar.set`` + ``reset`` against two empty calls),
where the count costs ~14 per kernel call (2000 tiny ``mul`` + backward: 16,008
instructions per step before, 15,836 after, the small blocks now taking numpy's own
small-block cache) and the allocator's extra work is confined to blocks of 128 KiB and
more (a mutex and a hash lookup, against a ``malloc`` that page-faults).  A kernel registered
with ``register_op`` runs inside the count: its allocations are the op's.

Gradients the autograd engine allocates outside a kernel (its fused backward kernels, the
buffer of a new ``.grad``) are gradstack's too, but counted only where the engine wraps
them in ``enter_op``/``exit_op`` (``_dispatch.pxd``); until then they are numpy's default
blocks (on the 1M-element chain, 2 of the 6 large blocks of a step).

The cache is on by default with a limit of 256 MiB (``GRADSTACK_ALLOCATOR_CACHE_MB`` sets
it at import, 0 turns the handler off); ``set_cache_limit`` changes it and ``cache_info``
reports what is held.  A mutex guards the table and the set: numpy may free from any thread.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_New
from cpython.ref cimport PyObject
from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport strncpy

cimport numpy as cnp

from ._dispatch cimport op_depth

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
    PyObject* PyDataMem_DefaultHandler

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    int pthread_mutex_init(pthread_mutex_t*, void*)
    int pthread_mutex_lock(pthread_mutex_t*)
    int pthread_mutex_unlock(pthread_mutex_t*)

# Note [Blocks from 128 KiB, 256 of them]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The cache first took blocks of 1 MiB and more, 32 of them.  The character GPT of
# benchmarks/model_zoo.py allocates mostly (1024, 128) float32 arrays, 512 KiB: glibc served
# them from the top of its heap (its mmap threshold had grown past them) and trimmed that
# top when the backward freed them, so every step grew the heap back by ~10 MiB: 2,625
# page faults a step (torch's: 1,557), ~5% of its CPU time.  From 128 KiB (glibc's initial
# mmap threshold: below it blocks come from the heap's free lists) and with room for the
# blocks a step holds at once (the character GPT ~60, minGPT ~120: with 128 slots it
# still evicted, and faulted 2,275 times a step), a step of either page-faults two or
# three times (``cache_info()`` after a step: 56 blocks, 46 MiB held; 122 blocks, 107 MiB);
# the character GPT's CPU time 103.7 -> 98.2 ms a step (median of 15 interleaved rounds,
# load ~10).  A lookup scans the slots: ~0.2 us, against the ~0.2 ms of a 512 KiB block's
# faults.
cdef enum:
    SLOTS = 256
MIN_CACHED_BYTES = 1 << 17
cdef size_t _MIN = 1 << 17

cdef void* _ptrs[SLOTS]
cdef size_t _sizes[SLOTS]
cdef size_t _stamps[SLOTS]       # when each block was stored (eviction takes the oldest)
cdef size_t _clock = 0
cdef size_t _held = 0            # bytes held in the table
cdef size_t _limit = 0           # 0: cache nothing
cdef size_t _hits = 0
cdef size_t _misses = 0
cdef size_t _passed = 0          # large blocks freed that were not gradstack's
cdef pthread_mutex_t _lock
cdef PyDataMem_Handler _handler
cdef PyDataMemAllocator _default  # numpy's default allocator: everything not gradstack's
cdef bint _installed = False

# the set of live large blocks gradstack allocated: open addressing, linear probing,
# NULL is an empty slot; at most half full (grown by doubling)
cdef void** _live = NULL
cdef size_t _live_cap = 0        # a power of two, or 0 before the first block
cdef size_t _live_n = 0

pthread_mutex_init(&_lock, NULL)


cdef inline size_t _home(void* ptr, size_t cap) noexcept nogil:
    """The first slot to probe for ``ptr`` (Fibonacci hashing of the address)."""
    return <size_t>(((<uintptr_t>ptr >> 4) * <uintptr_t>0x9E3779B97F4A7C15ULL) >> 20) & (cap - 1)


cdef bint _live_grow() noexcept nogil:
    """Double the set (lock held); False if memory ran out (the set is unchanged)."""
    global _live, _live_cap
    cdef size_t cap = _live_cap * 2 if _live_cap else 64
    cdef void** table = <void**>calloc(cap, sizeof(void*))
    cdef size_t i, j
    if table == NULL:
        return False
    for i in range(_live_cap):
        if _live[i] != NULL:
            j = _home(_live[i], cap)
            while table[j] != NULL:
                j = (j + 1) & (cap - 1)
            table[j] = _live[i]
    free(_live)
    _live = table
    _live_cap = cap
    return True


cdef bint _live_add(void* ptr) noexcept nogil:
    """Record ``ptr`` as a live gradstack block (lock held); False if it cannot be
    recorded (out of memory: the block is then treated as anyone's, and freed)."""
    global _live_n
    cdef size_t j
    if 2 * (_live_n + 1) > _live_cap and not _live_grow():
        return False
    j = _home(ptr, _live_cap)
    while _live[j] != NULL:
        j = (j + 1) & (_live_cap - 1)
    _live[j] = ptr
    _live_n += 1
    return True


cdef bint _live_remove(void* ptr) noexcept nogil:
    """Forget ``ptr`` (lock held); whether it was a live gradstack block.

    Deletion shifts the following entries of the probe run back (no tombstones), so a
    lookup still stops at the first empty slot.
    """
    global _live_n
    cdef size_t i, j, k, mask
    if _live_n == 0:
        return False
    mask = _live_cap - 1
    i = _home(ptr, _live_cap)
    while _live[i] != ptr:
        if _live[i] == NULL:
            return False
        i = (i + 1) & mask
    _live[i] = NULL
    _live_n -= 1
    j = i
    while True:
        j = (j + 1) & mask
        if _live[j] == NULL:
            return True
        k = _home(_live[j], _live_cap)
        # the entry at j may move to the hole at i unless its home lies cyclically in (i, j]
        if (j > i and (k <= i or k > j)) or (j < i and (k <= i and k > j)):
            _live[i] = _live[j]
            _live[j] = NULL
            i = j


cdef void* _take(size_t size) noexcept nogil:
    """The cached block of exactly ``size`` bytes freed last (lock held), or NULL.

    Note [The block freed last is reused first]
    A pass over the block freed last finds it in the CPU's caches; the first block of the
    size in the table, as it was taken before, was often the one freed longest ago, cold.
    Last in, first out, as malloc's free lists: the 1M-element chain of tools/compare.py
    spends its time in passes over 4 MB arrays (measured in docs/benchmarks.md).
    """
    global _held, _hits, _misses
    cdef int i, best = -1
    cdef void* p
    for i in range(SLOTS):
        if _ptrs[i] != NULL and _sizes[i] == size and (best < 0 or _stamps[i] > _stamps[best]):
            best = i
    if best < 0:
        _misses += 1
        return NULL
    p = _ptrs[best]
    _ptrs[best] = NULL
    _held -= size
    _hits += 1
    return p


cdef int _oldest() noexcept nogil:
    """The occupied slot stored longest ago, or -1."""
    cdef int i, best = -1
    for i in range(SLOTS):
        if _ptrs[i] != NULL and (best < 0 or _stamps[i] < _stamps[best]):
            best = i
    return best


cdef bint _keep(void* ptr, size_t size) noexcept nogil:
    """Put a freed gradstack block in the table (lock held), evicting the oldest blocks to
    make room.

    False when the block alone exceeds the limit (the caller frees it).  Evicting keeps
    the table useful when a program moves on to other sizes (Note [Large blocks ...]).
    """
    global _held, _clock
    cdef int i, free_slot = -1
    if size > _limit:
        return False
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
    return True


cdef void* _gradstack_block(size_t size, bint zeroed) noexcept nogil:
    """A large block for an op's result: from the table when one fits (never for a zeroed
    block: calloc's pages come zeroed for free), recorded as a live gradstack block.  A
    block the set cannot record (out of memory) is freed later as anyone's."""
    cdef void* p = NULL
    if not zeroed:
        pthread_mutex_lock(&_lock)
        p = _take(size)
        pthread_mutex_unlock(&_lock)
    if p == NULL:
        p = calloc(size, 1) if zeroed else malloc(size)
    if p != NULL:
        pthread_mutex_lock(&_lock)
        _live_add(p)
        pthread_mutex_unlock(&_lock)
    return p


cdef void* _cached_malloc(void* ctx, size_t size) noexcept nogil:
    if size >= _MIN and op_depth() > 0:
        return _gradstack_block(size, False)
    return _default.malloc(_default.ctx, size)


cdef void* _cached_calloc(void* ctx, size_t nelem, size_t elsize) noexcept nogil:
    cdef size_t size
    if elsize != 0 and nelem <= (<size_t>-1) // elsize:      # no overflow
        size = nelem * elsize
        if size >= _MIN and op_depth() > 0:
            return _gradstack_block(size, True)
    return _default.calloc(_default.ctx, nelem, elsize)


cdef void* _cached_realloc(void* ctx, void* ptr, size_t new_size) noexcept nogil:
    cdef bint ours
    if ptr != NULL:
        pthread_mutex_lock(&_lock)
        ours = _live_remove(ptr)
        pthread_mutex_unlock(&_lock)
        if ours:        # a gradstack block resized by numpy: from now on anyone's block
            return realloc(ptr, new_size if new_size > 0 else 1)
    return _default.realloc(_default.ctx, ptr, new_size)


cdef void _cached_free(void* ctx, void* ptr, size_t size) noexcept nogil:
    global _passed
    cdef bint kept
    if ptr != NULL and size >= _MIN:
        pthread_mutex_lock(&_lock)
        if _live_remove(ptr):
            kept = _keep(ptr, size)
            pthread_mutex_unlock(&_lock)
            if not kept:
                free(ptr)
            return
        _passed += 1
        pthread_mutex_unlock(&_lock)
    _default.free(_default.ctx, ptr, size)


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

    Large blocks allocated inside a gradstack op are cached when freed; everything else is
    numpy's default allocator's (Note [Only gradstack's own blocks are cached]).

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
    >>> before = _allocator.cache_info()["limit"]
    >>> _allocator.install(64 << 20)
    True
    >>> _ = _allocator.set_cache_limit(before)  # the process's limit, as it was
    """
    global _installed, _default
    cdef PyDataMem_Handler* default_handler
    set_cache_limit(limit_bytes)
    if not _installed:
        default_handler = <PyDataMem_Handler*>PyCapsule_GetPointer(
            <object>PyDataMem_DefaultHandler, "mem_handler")
        _default = default_handler.allocator
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
    """What the block cache holds and did.

    Returns
    -------
    dict
        ``installed`` (the handler was installed), ``limit`` and ``held`` (bytes), ``blocks``
        (cached), ``hits`` and ``misses`` (large allocations inside an op served from the
        cache or not), ``live`` (large gradstack blocks in use), ``passed`` (large blocks
        freed that were not gradstack's, given back as numpy's default handler does).
    """
    cdef int i, blocks = 0
    pthread_mutex_lock(&_lock)
    for i in range(SLOTS):
        if _ptrs[i] != NULL:
            blocks += 1
    info = {"installed": _installed, "limit": _limit, "held": _held, "blocks": blocks,
            "hits": _hits, "misses": _misses, "live": _live_n, "passed": _passed}
    pthread_mutex_unlock(&_lock)
    return info


def release():
    """Free every cached block now (the limit stays)."""
    _release_all(0)
