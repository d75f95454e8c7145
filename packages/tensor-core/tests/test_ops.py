"""Generic tests over the op database (``op_db.py``): every registered op, every dtype.

* the registry and the database agree (a registered op without an entry fails);
* values match the numpy reference on every sample (0-d, empty, broadcast,
  non-contiguous and negatively strided inputs);
* values, result dtype and shape match torch 2.13 when it is installed;
* dtypes the op does not support raise, as in torch;
* the method form and the function form agree;
* in-place ops return their input and bump its version; views share storage and version;
* out-of-place ops leave their inputs untouched;
* the small-array C loops agree with the numpy path (Note [Small float arrays take C loops]).
"""

from __future__ import annotations

import importlib.util
import operator
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor._loops import _unary_c_limit

db = importlib.import_module("gradstack_tensor_tests_op_db")

# var/std over fewer elements than the correction: numpy warns as torch does (a UserWarning
# there); the value (nan or inf) is what these tests check
pytestmark = pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning")
OP_DB, SKIPS, ALL = db.OP_DB, db.SKIPS, db.ALL

SEED = 1234


@pytest.fixture(scope="module", autouse=True)
def _torch_on_one_thread():
    """torch's reductions of tiny tensors wake its thread pool: milliseconds per call on a
    busy machine unless OMP_NUM_THREADS=1 (as `hatch run test` sets).  Pin it here, and put
    it back afterwards."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


ERRORS = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError)


def _rng(name, dtype):
    return np.random.default_rng([SEED, sum(map(ord, name)), sum(map(ord, dtype))])


def _samples(info, dtype):
    return list(info.sample_inputs(info, dtype, _rng(info.name, dtype)))


def _supported():
    return [
        pytest.param(info, d, id=f"{name}-{d}")
        for name, info in sorted(OP_DB.items())
        for d in info.dtypes
    ]


def _unsupported():
    return [
        pytest.param(info, d, id=f"{name}-{d}")
        for name, info in sorted(OP_DB.items())
        for d in ALL
        if d not in info.dtypes
    ]


def _both_forms():
    return [
        pytest.param(info, d, id=f"{name}-{d}")
        for name, info in sorted(OP_DB.items())
        if info.function and info.method
        for d in info.dtypes
    ]


def call_gs(info, sample, form=None):
    """Call the op on ``sample`` through its public API (``form``: function/method/call)."""
    x = db.to_gs(sample.input, gt)
    args = db.to_gs(sample.args, gt)
    kwargs = db.to_gs(sample.kwargs, gt)
    form = form or ("function" if info.function else "method" if info.method else "call")
    if form == "function":
        return x, getattr(gt, info.function)(x, *args, **kwargs)
    if form == "method":
        return x, getattr(x, info.method)(*args, **kwargs)
    return x, info.call(gt, x, *args, **kwargs)


def call_torch(info, sample, torch):
    x = db.to_torch(sample.input, torch)
    args = db.to_torch(sample.args, torch)
    kwargs = db.to_torch(sample.kwargs, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # var's "degrees of freedom <= 0" ...
        if info.torch_call is not None:
            return x, info.torch_call(torch, x, *args, **kwargs)
        if info.function:
            return x, getattr(torch, info.function)(x, *args, **kwargs)
        return x, getattr(x, info.method)(*args, **kwargs)


def call_ref(info, ref_args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy's "Mean of empty slice" ...
        return info.ref(ref_args[0], *ref_args[1], **ref_args[2])


def as_numpy(r):
    if isinstance(r, gt.Tensor):
        return r.numpy()
    if isinstance(r, (tuple, list)):
        return tuple(as_numpy(v) for v in r)
    return np.asarray(r)


def assert_values(actual, expected, info, what):
    """``actual`` (numpy, from gradstack) against ``expected`` (reference), shape and values."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), what
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_values(a, e, info, f"{what}, output {i}")
        return
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind == "f" or expected.dtype.kind == "f":
        rtol, atol = info.tolerance(actual.dtype.name if actual.dtype.kind == "f" else "float64")
        np.testing.assert_allclose(
            actual.astype(np.float64),
            expected.astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=what,
        )
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


# ---------------------------------------------------------------------------------------
# The registry and the database


def _own(op):
    """Registered by tensor-core itself (upper layers may register_op their own ops)."""
    return op.kernel is None or op.kernel.__module__.startswith("gradstack_tensor.")


OWN_OPS = sorted(name for name, op in gt.OPS.items() if _own(op))


def test_every_registered_op_has_an_entry_or_a_reason():
    missing = sorted(n for n in OWN_OPS if n not in OP_DB and n not in SKIPS)
    assert not missing, (
        f"registered ops without an op_db entry (add one, or a reason to SKIPS): {missing}"
    )
    assert all(isinstance(r, str) and r for r in SKIPS.values())


def test_every_entry_names_a_registered_op():
    stale = sorted(n for n in OP_DB if n not in gt.OPS)
    assert not stale, f"op_db entries for ops that are not registered: {stale}"


@pytest.mark.parametrize("name", OWN_OPS)
def test_every_registered_op_has_a_kernel(name):
    assert gt.OPS[name].has_kernel, f"op {name!r} is registered without a kernel"


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_public_forms_exist(name):
    """The database declares torch's function and method names; gradstack has them."""
    info = OP_DB[name]
    if info.function:
        assert callable(getattr(gt, info.function, None)), f"gradstack_tensor.{info.function}"
    if info.method:
        assert callable(getattr(gt.Tensor, info.method, None)), f"Tensor.{info.method}"
    assert info.function or info.method or info.call


class _Recorder(gt.DispatchLayer):
    def __init__(self):
        super().__init__(priority=100)
        self.names = []

    def handle(self, op, args, next_index):
        self.names.append(op.name)
        return self.call_next(op, args, next_index)


@pytest.mark.parametrize("name", sorted(OP_DB))
def test_public_call_goes_through_the_dispatch_point(name):
    """Calling the function or method form dispatches the op of that name."""
    info = OP_DB[name]
    dtype = "float32" if "float32" in info.dtypes else info.dtypes[0]
    rec = _Recorder()
    gt.register_layer(rec)
    try:
        for sample in _samples(info, dtype):
            for form in ("function", "method", "call"):
                if (form == "call" and info.call) or getattr(info, form, None):
                    call_gs(info, sample, form)
    finally:
        gt.unregister_layer(rec)
    assert name in rec.names, f"no public call of {name} dispatched it (saw {set(rec.names)})"


# ---------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize(("info", "dtype"), _supported())
def test_values_match_numpy_reference(info, dtype):
    for sample in _samples(info, dtype):
        what = f"{info.name}({sample.desc})"
        ref_args = db.to_ref((sample.input, sample.args, sample.kwargs))
        before = db.to_ref(sample.input)
        x, result = call_gs(info, sample)
        if info.inplace:
            assert result is x, f"{what}: an in-place op returns its input"
            assert x._version >= 1, f"{what}: an in-place op bumps the version"
            out = as_numpy(result)
        else:
            out = as_numpy(result)
            if not isinstance(sample.input, list):
                assert_values(np.asarray(sample.input), before, info, f"{what}: input modified")
        if info.check is not None:
            info.check(out, sample)
            continue
        expected = call_ref(info, ref_args)
        if info.inplace:
            expected = np.broadcast_to(np.asarray(expected), out.shape).astype(out.dtype)
        assert_values(
            out, expected if isinstance(expected, tuple) else np.asarray(expected), info, what
        )


@pytest.mark.parametrize(("info", "dtype"), _supported())
def test_matches_torch(info, dtype):
    torch = pytest.importorskip("torch")
    if info.torch_skip:
        pytest.skip(info.torch_skip)
    for sample in _samples(info, dtype):
        what = f"{info.name}({sample.desc})"
        _, expected = call_torch(info, sample, torch)
        _, result = call_gs(info, sample)
        _compare_torch(result, expected, info, what)


def _compare_torch(result, expected, info, what):
    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)), f"{what}: expected a tuple"
        assert len(result) == len(expected), f"{what}: {len(result)} outputs != {len(expected)}"
        for i, (r, e) in enumerate(zip(result, expected)):
            _compare_torch(r, e, info, f"{what}, output {i}")
        return
    assert isinstance(result, gt.Tensor), f"{what}: returned {type(result).__name__}"
    assert result.dtype.name == str(expected.dtype).removeprefix("torch."), (
        f"{what}: dtype {result.dtype.name} != torch's {expected.dtype}"
    )
    assert tuple(result.shape) == tuple(expected.shape), (
        f"{what}: shape {tuple(result.shape)} != torch's {tuple(expected.shape)}"
    )
    assert_values(result.numpy(), expected.numpy(), info, what)


@pytest.mark.parametrize(("info", "dtype"), _unsupported())
def test_unsupported_dtypes_raise(info, dtype):
    """A dtype the op does not support raises a Python exception with a message.

    Mixed samples (a bool tensor minus an int scalar ...) may still be valid, so each sample
    either raises one of ERRORS or returns a tensor; at least one raises.
    """
    raised = []
    for sample in _samples(info, dtype):
        try:
            call_gs(info, sample)
        except ERRORS as e:
            assert str(e), f"{info.name}({sample.desc}): an empty error message"
            raised.append(sample)
    assert raised, f"{info.name} accepted every {dtype} sample: is {dtype} supported?"


@pytest.mark.parametrize(("info", "dtype"), _unsupported())
def test_unsupported_dtypes_agree_with_torch(info, dtype):
    """Sample by sample: gradstack raises where torch raises, and matches it elsewhere."""
    torch = pytest.importorskip("torch")
    for sample in _samples(info, dtype):
        what = f"{info.name}({sample.desc})"
        try:
            _, expected = call_torch(info, sample, torch)
        except (RuntimeError, TypeError, NotImplementedError, ValueError, IndexError):
            with pytest.raises(ERRORS):
                call_gs(info, sample)
            continue
        if info.check is not None:
            continue
        if _numel(expected) == 0 or _has_empty(sample):
            # torch skips its dtype checks when there is nothing to compute; raising is fine
            try:
                result = call_gs(info, sample)[1]
            except ERRORS:
                continue
        else:
            result = call_gs(info, sample)[1]
        _compare_torch(result, expected, info, what)


def _has_empty(sample):
    arrays = [sample.input, *sample.args]
    return any(isinstance(a, np.ndarray) and a.size == 0 for a in arrays)


def _numel(r):
    if isinstance(r, (tuple, list)):
        return sum(_numel(v) for v in r)
    return r.numel()


@pytest.mark.parametrize(("info", "dtype"), _both_forms())
def test_method_and_function_agree(info, dtype):
    for s1, s2 in zip(_samples(info, dtype), _samples(info, dtype)):
        _, r1 = call_gs(info, s1, "function")
        _, r2 = call_gs(info, s2, "method")
        if info.check is not None:  # random ops: same shapes and dtypes only
            assert r1.shape == r2.shape and r1.dtype == r2.dtype
            continue
        a, b = as_numpy(r1), as_numpy(r2)
        for u, v in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
            assert u.dtype == v.dtype and u.shape == v.shape, s1.desc
            np.testing.assert_array_equal(u, v, err_msg=f"{info.name}({s1.desc})")


# ---------------------------------------------------------------------------------------
# Views and in-place ops, generically


def _views():
    return [pytest.param(info, id=name) for name, info in sorted(OP_DB.items()) if info.view]


@pytest.mark.parametrize("info", _views())
def test_view_ops_share_storage_and_version(info):
    for sample in _samples(info, "float32"):
        x, result = call_gs(info, sample)
        outs = result if isinstance(result, tuple) else (result,)
        x.zero_() if x.numpy().flags.writeable else x._bump_version("test")
        for r in outs:
            assert r._version == x._version, f"{info.name}({sample.desc}): version not shared"
            assert r._base is (x._base if x._base is not None else x), sample.desc
            if r.numel():
                assert np.shares_memory(r.numpy(), x.numpy()), sample.desc
                assert (r.numpy() == 0).all(), f"{info.name}({sample.desc}): write not seen"


def _inplace():
    return [pytest.param(info, id=name) for name, info in sorted(OP_DB.items()) if info.inplace]


@pytest.mark.parametrize("info", _inplace())
def test_inplace_ops_bump_the_version_of_views(info):
    """An in-place op on a view bumps the version its base and sibling views share."""
    dtype = "float32" if "float32" in info.dtypes else info.dtypes[0]
    for sample in _samples(info, dtype):
        if not isinstance(sample.input, np.ndarray):
            continue
        base = gt.from_numpy(sample.input)
        view = base[...]
        sibling = base.view(base.shape)
        sample = db.SampleInput(view.numpy(), sample.args, sample.kwargs, sample.desc)
        args = db.to_gs(sample.args, gt)
        kwargs = db.to_gs(sample.kwargs, gt)
        before = base._version
        if info.function:
            getattr(gt, info.function)(view, *args, **kwargs)
        elif info.method:
            getattr(view, info.method)(*args, **kwargs)
        else:
            info.call(gt, view, *args, **kwargs)
        assert base._version == sibling._version == view._version == before + 1, sample.desc


# ---------------------------------------------------------------------------------------
# The small-array C loops and the numpy path (Note [Small float arrays take C loops])


def _strided_copy(a):
    """The same values in a non-contiguous array, which the C loops do not take."""
    wide = np.empty(a.shape + (2,), dtype=a.dtype)
    wide[..., 0] = a
    return wide[..., 0]


SPECIALS = np.array(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        np.inf,
        -np.inf,
        np.nan,
        1e-30,
        -1e-30,
        88.0,
        -88.0,
        1e30,
        -1e30,
        710.0,
        -710.0,
        0.5,
    ]
)


def _c_limit(name, dtype):
    """The largest contiguous size whose op takes the C loop (Note [Where the unary C loops
    stop]): per op and dtype for unary ops, SMALL_SIZE for the binary ones and sum."""
    if name in db.SMALL_PATH_UNARY:
        return _unary_c_limit(name, dtype)
    return gt._loops.SMALL_SIZE


def _small_cases(info, dtype, rng):
    for n in (0, 1, 7, 4096):
        yield make_in(info, dtype, rng, (n,))
    yield make_in(info, dtype, rng, (3, 5))
    yield SPECIALS.astype(dtype)
    limit = _c_limit(info.name, dtype)
    if limit < 4096:  # the largest array of the C loop (its own stream: the draws above stay)
        yield make_in(info, dtype, np.random.default_rng(limit), (limit,))


def make_in(info, dtype, rng, shape):
    return db.make_array(shape, dtype, rng, info.domain, nonzero=info.name == "div")


def _small_ops():
    return [
        pytest.param(name, d, id=f"{name}-{d}")
        for name in db.SMALL_PATH_UNARY + db.SMALL_PATH_BINARY + ("sum",)
        for d in ("float32", "float64")
    ]


def _ulp_close(a, b, dtype, what):
    """Equal up to a few units in the last place (the C loop rounds libm's double result;
    numpy's SIMD float32 loops differ from it by an ulp or two)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, what
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(
        a.astype(np.float64),
        b.astype(np.float64),
        rtol=4 * eps,
        atol=np.finfo(dtype).tiny,
        equal_nan=True,
        err_msg=what,
    )
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    zero = (a == 0) & (b == 0)
    assert (np.signbit(a[zero]) == np.signbit(b[zero])).all(), f"{what}: sign of zero"
    assert a.size < 4 or same.mean() >= 0.5, f"{what}: paths mostly disagree"


def _sum_close(a, b, x, what):
    """Sums of the same values: the C loop adds in order in double, numpy pairwise; both
    are within n * eps * sum(|x|) of the exact sum."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape == (), what
    bound = max(x.size, 1) * np.finfo(a.dtype).eps * np.nansum(np.abs(x.astype(np.float64)))
    if np.isfinite(bound) and np.isfinite(a) and np.isfinite(b):
        assert abs(float(a) - float(b)) <= bound, what
    else:
        assert np.isnan(a) == np.isnan(b) and (np.isnan(a) or a == b), what


_OPERATORS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
}


@pytest.mark.parametrize(("name", "dtype"), _small_ops())
def test_small_path_agrees_with_numpy_path(name, dtype):
    info = OP_DB[name]
    rng = _rng(name, dtype)
    fn = getattr(gt, name)
    for a in _small_cases(info, dtype, rng):
        fast = gt.from_numpy(np.ascontiguousarray(a))
        slow = gt.from_numpy(_strided_copy(a))
        assert fast.is_contiguous() and (a.size < 2 or not slow.is_contiguous())
        what = f"{name}({db.describe(a)})"
        if name == "sum":
            _sum_close(fn(fast).numpy(), fn(slow).numpy(), a, what)
            continue
        if name not in db.SMALL_PATH_BINARY:
            _ulp_close(fn(fast).numpy(), fn(slow).numpy(), dtype, what)
            continue
        py_op = _OPERATORS[name]
        b = make_in(info, dtype, rng, a.shape) if name == "div" else np.flip(a).copy()
        fast_b, slow_b = gt.from_numpy(b), gt.from_numpy(_strided_copy(b))
        _ulp_close(fn(fast, fast_b).numpy(), fn(slow, slow_b).numpy(), dtype, what)
        for s in (1.0001, 3, -0.0):
            _ulp_close(py_op(fast, s).numpy(), py_op(slow, s).numpy(), dtype, f"{what} (op) {s}")
            _ulp_close(py_op(s, fast).numpy(), py_op(s, slow).numpy(), dtype, f"{s} (op) {what}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", db.SMALL_PATH_UNARY + db.SMALL_PATH_BINARY)
def test_small_path_threshold(name, dtype):
    """The op's C-loop limit takes the C loop, one more element the numpy path; both agree
    with the reference."""
    info = OP_DB[name]
    rng = _rng(name, dtype)
    limit = _c_limit(name, dtype)
    assert 32 <= limit <= gt._loops.SMALL_SIZE
    for n in (limit, limit + 1):
        a = make_in(info, dtype, rng, (n,))
        args = (a,) if name in db.SMALL_PATH_UNARY else (a, make_in(info, dtype, rng, (n,)))
        out = getattr(gt, name)(*(gt.from_numpy(v) for v in args)).numpy()
        with np.errstate(all="ignore"):
            expected = info.ref(*(v.astype(np.float64) for v in args))
        assert out.dtype == np.dtype(dtype)
        rtol, atol = info.tolerance(dtype)
        np.testing.assert_allclose(out, expected, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------------------
# Special values, against torch

EDGE_ARRAYS = {
    "nan": np.array([1.0, np.nan, 3.0, -1.0, np.nan], dtype=np.float32),
    "inf": np.array([np.inf, -np.inf, 0.0, -0.0, 2.0], dtype=np.float64),
    "ties": np.array([2, 1, 2, 1, 2], dtype=np.int64),
    "uint8": np.array([3, 0, 255, 7, 0], dtype=np.uint8),
    "int64_min": np.array([0, np.iinfo(np.int64).min, 5, -1], dtype=np.int64),
    "bool": np.array([True, False, True, False]),
}

EDGE_CALLS = {
    "sort": lambda t: t.sort(),
    "sort_desc": lambda t: t.sort(descending=True),
    "topk": lambda t: t.topk(2),
    "topk_smallest": lambda t: t.topk(2, largest=False),
    "max": lambda t: t.max(),
    "max_dim": lambda t: t.max(0),
    "min_dim": lambda t: t.min(0),
    "argmax": lambda t: t.argmax(),
    "argmin": lambda t: t.argmin(),
    "amax": lambda t: t.amax(),
    "clamp": lambda t: t.clamp(0, 2),
    "relu": lambda t: t.relu(),
    "sign": lambda t: t.sign(),
    "sgn": lambda t: t.sgn(),
    "abs": lambda t: t.abs(),
    "cumsum": lambda t: t.cumsum(0),
    "sum": lambda t: t.sum(),
    "prod": lambda t: t.prod(),
}


@pytest.mark.parametrize("call", list(EDGE_CALLS))
@pytest.mark.parametrize("data", list(EDGE_ARRAYS))
def test_special_values_match_torch(data, call):
    """NaN orders as the largest value, ties keep their order, unsigned and the most negative
    integer sort right: as torch, or both raise."""
    torch = pytest.importorskip("torch")
    a = EDGE_ARRAYS[data]
    if a.dtype == np.uint8 and call in ("topk", "topk_smallest"):
        pytest.skip("torch has no uint8 topk on CPU")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = EDGE_CALLS[call](torch.from_numpy(a.copy()))
    except (RuntimeError, TypeError, NotImplementedError):
        with pytest.raises(ERRORS):
            EDGE_CALLS[call](gt.from_numpy(a.copy()))
        return
    result = EDGE_CALLS[call](gt.from_numpy(a.copy()))
    info = db.OpInfo(call, None, None)
    if data == "ties" and call.startswith(("sort", "topk")):
        # torch does not promise an order among equal values: same values, and indices
        # that select them
        _compare_torch(result.values, expected.values, info, f"{call}({data})")
        np.testing.assert_array_equal(a[result.indices.numpy()], result.values.numpy())
        return
    _compare_torch(result, expected, info, f"{call}({data})")
