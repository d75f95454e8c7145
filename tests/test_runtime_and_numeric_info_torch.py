"""``finfo``/``iinfo`` and the runtime switches of the facade (_runtime.py) against torch
2.13: values, reprs, errors, and the getters returning what the setters kept."""

from __future__ import annotations

import warnings

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")

FIELDS = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", None])
def test_finfo_matches_torch(dtype):
    ours = gs.finfo(getattr(gs, dtype)) if dtype else gs.finfo()
    theirs = torch.finfo(getattr(torch, dtype)) if dtype else torch.finfo()
    assert [getattr(ours, f) for f in FIELDS] == [getattr(theirs, f) for f in FIELDS]
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_torch(dtype):
    ours, theirs = gs.iinfo(getattr(gs, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (ours.bits, ours.max, ours.min, ours.dtype) == (
        theirs.bits,
        theirs.max,
        theirs.min,
        theirs.dtype,
    )
    assert repr(ours) == repr(theirs)


def test_info_errors_match_torch():
    for lib in (gs, torch):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match="requires an integer input type"):
            lib.iinfo(lib.float32)


def test_runtime_switches_keep_their_values_as_torch():
    for lib in (gs, torch):
        assert lib.get_float32_matmul_precision() == "highest"
        lib.set_float32_matmul_precision("high")
        assert lib.get_float32_matmul_precision() == "high"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_float32_matmul_precision("bogus")
        assert any("is not one of 'highest'" in str(w.message) for w in caught)
        assert lib.get_float32_matmul_precision() == "high"
        lib.set_float32_matmul_precision("highest")
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled()
        assert lib.is_deterministic_algorithms_warn_only_enabled()
        assert lib.get_deterministic_debug_mode() == 1
        lib.use_deterministic_algorithms(False)
        assert lib.get_deterministic_debug_mode() == 0
        assert lib.typename(lib.ones(2)) == "torch.FloatTensor"
        assert lib.typename(lib.ones(2, dtype=lib.int64)) == "torch.LongTensor"
        assert lib.typename(3) == "int"


def test_compile_returns_the_model_to_run_eagerly():
    model = gs.nn.Linear(2, 1)
    assert gs.compile(model) is model
    fn = gs.compile(fullgraph=True)(lambda x: x * 2)
    assert fn(gs.tensor([1.0])).tolist() == [2.0]
