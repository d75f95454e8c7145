"""The large-block cache behind numpy's data allocator (``_allocator.pyx``).

Note [Large blocks are reused, not returned to the kernel]: freed blocks of at least
1 MiB are kept (up to a byte limit) and handed back for allocations of the same size.
These tests check that reuse happens, that it never shows stale or wrong data, that the
limit holds, and that the handler can be turned off.
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


def test_a_freed_large_block_is_reused_with_fresh_contents():
    a = np.full(BIG, 7.0, np.float32)
    del a
    hits = _allocator.cache_info()["hits"]
    b = np.ones(BIG, np.float32)
    assert _allocator.cache_info()["hits"] == hits + 1
    np.testing.assert_array_equal(b, 1.0)
    t = gt.ones(BIG) * 3.0  # tensor ops allocate through it too
    np.testing.assert_array_equal(t.numpy(), 3.0)


def test_zeros_are_zeros_even_when_a_block_is_cached():
    a = np.full(BIG, 5.0, np.float32)
    del a
    z = np.zeros(BIG, np.float32)  # calloc: never served from the cache
    assert not z.any()


def test_small_blocks_are_not_cached():
    held = _allocator.cache_info()["held"]
    a = np.ones(1000, np.float32)
    del a
    assert _allocator.cache_info()["held"] == held


def test_the_limit_bounds_what_is_held():
    _allocator.set_cache_limit(10 << 20)
    arrays = [np.ones(BIG, np.float32) for _ in range(6)]  # 24 MiB
    del arrays
    info = _allocator.cache_info()
    assert info["held"] <= 10 << 20 and info["blocks"] <= 2
    _allocator.set_cache_limit(0)
    assert _allocator.cache_info()["held"] == 0


def test_release_frees_everything_and_keeps_the_limit():
    a = np.ones(BIG, np.float32)
    del a
    _allocator.release()
    info = _allocator.cache_info()
    assert info["held"] == 0 and info["blocks"] == 0 and info["limit"] == 256 << 20


def test_resize_goes_through_realloc():
    a = np.arange(BIG, dtype=np.float32)
    a.resize(2 * BIG, refcheck=False)
    np.testing.assert_array_equal(a[:BIG], np.arange(BIG, dtype=np.float32))
    assert not a[BIG:].any()


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
    for k in range(40):  # 40 distinct sizes > 32 slots
        a = np.ones(BIG // 4 + 1024 * k, np.float32)
        del a
    info = _allocator.cache_info()
    assert info["blocks"] <= 32 and info["held"] <= info["limit"]
    b = np.ones(BIG + 4096, np.float32)  # a size never seen
    del b
    hits = _allocator.cache_info()["hits"]
    c = np.full(BIG + 4096, 3.0, np.float32)
    assert _allocator.cache_info()["hits"] == hits + 1
    np.testing.assert_array_equal(c, 3.0)
