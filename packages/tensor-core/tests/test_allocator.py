"""The large-block cache behind numpy's data allocator (``_allocator.pyx``).

Note [Large blocks are reused, not returned to the kernel]: freed blocks of at least
128 KiB that gradstack's ops allocated are kept (up to a byte limit) and handed back for the
next op's allocation of the same size; Note [Only gradstack's own blocks are cached]: the
user's own numpy arrays get numpy's default allocator.  These tests check that reuse
happens, that it never shows stale or wrong data, that the user's blocks are never kept or
served, that the limit holds, and that the handler can be turned off.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _allocator

BIG = 1 << 20  # float32 elements: 4 MiB


def _handler_name():
    return (
        np.core.multiarray.get_handler_name()
        if not hasattr(np, "_core")
        else np._core.multiarray.get_handler_name()
    )


@pytest.fixture(autouse=True)
def _restore_limit():
    before = _allocator.cache_info()["limit"]
    yield
    _allocator.set_cache_limit(before)


def test_installed_at_import_in_this_thread():
    assert _handler_name() == "gradstack_block_cache"
    info = _allocator.cache_info()
    assert info["installed"] and info["limit"] == 256 << 20


def _op_result(n=BIG, value=1.0):
    """A float32 tensor of ``n`` elements made by a gradstack op (its block is gradstack's)."""
    return gt.zeros(n) + value


def test_a_freed_large_block_of_an_op_is_reused_with_fresh_contents():
    x = gt.ones(BIG)
    a = x * 7.0
    address = a.data_ptr()
    del a
    hits = _allocator.cache_info()["hits"]
    b = x * 3.0  # the next op's result of the same size takes the freed block
    assert b.data_ptr() == address
    assert _allocator.cache_info()["hits"] == hits + 1
    np.testing.assert_array_equal(b.numpy(), 3.0)


def test_a_users_numpy_block_is_not_kept_even_right_after_ops():
    x = gt.ones(BIG)
    y = (x * 2.0).sin()  # gradstack ops just ran in this thread
    before = _allocator.cache_info()
    user = np.empty(4 << 20)  # 32 MiB of the user's own
    user.fill(1.0)
    del user
    after = _allocator.cache_info()
    for key in ("held", "blocks", "hits", "misses", "live"):
        assert after[key] == before[key], key
    assert after["passed"] == before["passed"] + 1  # handed to numpy's default handler
    np.testing.assert_allclose(y.numpy(), np.sin(2.0), rtol=1e-6)


def test_a_users_allocation_is_never_served_a_cached_block():
    x = gt.ones(BIG)
    a = x * 2.0
    address = a.data_ptr()
    del a  # cached
    info = _allocator.cache_info()
    assert info["blocks"] >= 1
    user = np.empty(BIG, np.float32)  # the same size, but the user's: not from the cache
    assert user.ctypes.data != address
    after = _allocator.cache_info()
    assert (after["hits"], after["held"]) == (info["hits"], info["held"])
    b = x * 5.0  # the op still finds its block
    assert b.data_ptr() == address
    np.testing.assert_array_equal(b.numpy(), 5.0)


def test_a_kernel_that_raises_leaves_the_thread_outside_ops():
    x = gt.ones(BIG)
    with pytest.raises(RuntimeError):
        x + gt.ones(3)  # shapes do not broadcast: the kernel raises
    before = _allocator.cache_info()
    user = np.ones(BIG, np.float32)
    del user
    after = _allocator.cache_info()
    assert after["passed"] == before["passed"] + 1 and after["held"] == before["held"]


def test_zeros_are_zeros_even_when_a_block_is_cached():
    x = gt.ones(BIG)
    a = x * 5.0
    del a
    z = gt.zeros_like(x) + 0.0  # whatever block the op takes, the values are fresh
    assert not z.numpy().any()
    y = np.zeros(BIG, np.float32)  # the user's calloc: never served from the cache
    assert not y.any()


def test_small_blocks_are_not_cached():
    held = _allocator.cache_info()["held"]
    a = gt.ones(1000) * 2.0
    b = np.ones(1000, np.float32)
    del a, b
    assert _allocator.cache_info()["held"] == held


def test_the_limit_bounds_what_is_held():
    _allocator.set_cache_limit(10 << 20)
    x = gt.ones(BIG)
    results = [x * float(k) for k in range(6)]  # 24 MiB of op results
    del results
    info = _allocator.cache_info()
    assert info["held"] <= 10 << 20 and info["blocks"] <= 2
    _allocator.set_cache_limit(0)
    assert _allocator.cache_info()["held"] == 0


def test_release_frees_everything_and_keeps_the_limit():
    a = gt.ones(BIG) * 2.0
    del a
    _allocator.release()
    info = _allocator.cache_info()
    assert info["held"] == 0 and info["blocks"] == 0 and info["limit"] == 256 << 20


def test_resize_goes_through_realloc():
    a = np.arange(BIG, dtype=np.float32)
    a.resize(2 * BIG, refcheck=False)
    np.testing.assert_array_equal(a[:BIG], np.arange(BIG, dtype=np.float32))
    assert not a[BIG:].any()


def test_a_resized_op_result_is_no_longer_gradstacks():
    t = gt.arange(BIG, dtype=gt.float32) * 1.0
    a = t.numpy().copy()  # (a copy made by numpy in user code: the user's block)
    live = _allocator.cache_info()["live"]
    data = (t * 1.0).numpy()
    assert _allocator.cache_info()["live"] == live + 1
    data.resize(2 * BIG, refcheck=False)  # numpy reallocs the op's block
    assert _allocator.cache_info()["live"] == live
    np.testing.assert_array_equal(data[:BIG], a)
    before = _allocator.cache_info()
    del data
    after = _allocator.cache_info()
    assert after["held"] == before["held"] and after["passed"] == before["passed"] + 1


def test_live_blocks_are_tracked_in_numbers():
    """Many live op results at once (the set grows), freed in another order."""
    x = gt.ones(BIG // 4)
    live = _allocator.cache_info()["live"]
    results = [x * float(k) for k in range(200)]
    assert _allocator.cache_info()["live"] == live + 200
    for k in range(0, 200, 3):
        results[k] = None
    assert _allocator.cache_info()["live"] == live + 200 - 67
    kept = [(k, float(r[0]), float(r[-1])) for k, r in enumerate(results) if r is not None]
    assert all(first == last == float(k) for k, first, last in kept) and len(kept) == 133
    results.clear()
    assert _allocator.cache_info()["live"] == live


def test_arrays_from_other_threads_are_freed_safely():
    made = []

    def work():
        for _ in range(20):
            made.append(np.full(BIG, 2.0, np.float32))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(float(m[0]) == 2.0 and float(m[-1]) == 2.0 for m in made)
    made.clear()
    c = np.ones(BIG, np.float32)
    np.testing.assert_array_equal(c, 1.0)


def test_threads_count_their_own_ops():
    """One thread's user arrays are the user's while another thread runs gradstack kernels
    (which release the GIL on large arrays): the count of ops is per thread."""
    rounds = 30
    errors = []
    start = threading.Barrier(2)

    def ops():
        _allocator.install(256 << 20)  # a new thread's context has numpy's default handler
        x = gt.ones(4 * BIG)
        start.wait()
        for k in range(rounds):
            y = (x * float(k)).exp()
            if float(y[-1]) != pytest.approx(np.exp(float(k)), rel=1e-5):
                errors.append(("ops", k))

    def user():
        _allocator.install(256 << 20)
        start.wait()
        for k in range(rounds):
            before = _allocator.cache_info()["passed"]
            a = np.full(4 * BIG, float(k), np.float32)
            b = a * 2.0  # numpy's own op, in user code
            if float(b[-1]) != 2.0 * k:
                errors.append(("user", k))
            del a, b
            if _allocator.cache_info()["passed"] < before + 2:
                errors.append(("kept", k))

    def guarded(fn):
        def run():
            try:
                fn()
            except Exception as e:  # an error in a thread fails the test, not only warns
                errors.append(repr(e))
                start.abort()

        return run

    threads = [threading.Thread(target=guarded(ops)), threading.Thread(target=guarded(user))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("bad, error", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_bad_limits_are_refused(bad, error):
    with pytest.raises(error, match="limit_bytes"):
        _allocator.set_cache_limit(bad)


def _name_in_subprocess(value):
    code = (
        "import warnings; warnings.simplefilter('error');"
        "import gradstack_tensor, numpy as np;"
        "print(np._core.multiarray.get_handler_name())"
    )
    env = {"GRADSTACK_ALLOCATOR_CACHE_MB": value, "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_the_environment_variable_opts_out():
    out = _name_in_subprocess("0")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "default_allocator"


def test_a_bad_environment_value_warns():
    out = _name_in_subprocess("lots")
    assert out.returncode != 0 and "GRADSTACK_ALLOCATOR_CACHE_MB='lots'" in out.stderr


def test_old_sizes_are_evicted_for_new_ones():
    """A table full of blocks of sizes no longer used still takes (and reuses) new ones."""
    _allocator.release()
    for k in range(270):  # 270 distinct sizes > 256 slots
        a = _op_result(BIG // 16 + 1024 * k)
        del a
    info = _allocator.cache_info()
    assert info["blocks"] <= 256 and info["held"] <= info["limit"]
    b = _op_result(BIG + 4096)  # a size never seen
    address = b.data_ptr()
    del b
    hits = _allocator.cache_info()["hits"]
    c = _op_result(BIG + 4096, 3.0)
    assert _allocator.cache_info()["hits"] >= hits + 1 and c.data_ptr() == address
    np.testing.assert_array_equal(c.numpy(), 3.0)


def test_the_block_freed_last_is_reused_first():
    # Note [The block freed last is reused first]: last in, first out, as malloc
    _allocator.release()
    x = gt.ones(BIG)
    a, b, c = (x * float(i) for i in range(3))
    addresses = [a.data_ptr(), b.data_ptr(), c.data_ptr()]
    del a
    del b
    del c  # freed last
    reused = [(x * 5.0) for _ in range(3)]
    assert [r.data_ptr() for r in reused] == addresses[::-1]
    for r in reused:
        np.testing.assert_array_equal(r.numpy(), 5.0)


def test_a_block_of_half_a_mebibyte_is_reused():
    # Note [Blocks from 128 KiB, 256 of them]: a (1024, 128) float32 activation, 512 KiB
    x = gt.ones(1024, 128)
    a = x * 7.0
    address = a.data_ptr()
    del a
    b = x * 3.0
    assert b.data_ptr() == address
    np.testing.assert_array_equal(b.numpy(), 3.0)


def test_blocks_below_128_kib_are_not_cached():
    assert _allocator.MIN_CACHED_BYTES == 128 << 10
    held = _allocator.cache_info()["held"]
    a = gt.ones((128 << 10) // 4 - 1) * 2.0  # one float32 short of 128 KiB
    del a
    assert _allocator.cache_info()["held"] == held
