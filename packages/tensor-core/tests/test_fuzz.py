"""Fuzzing every op and Tensor method with random shapes, dtypes and strides.

Each call either returns tensors of the shape numpy's reference gives, or raises one of
TypeError / ValueError / RuntimeError / IndexError / NotImplementedError with a message:
never another exception, never a crash, never values that depend on the memory layout.

* layout fuzz: the op database's samples in every dtype, each tensor argument re-laid out
  with random strides (transposed copies, negative strides from flipped numpy arrays,
  every-other-element slices) must give the same result as the contiguous call;
* shape fuzz: tensor arguments replaced by random shapes (0-d, zero-size, up to 4-d) and
  integer arguments by random dims/sizes/indices;
* raw fuzz: ``OPS[name](*args)`` called below the Tensor methods, with random arguments;
* method fuzz: every public Tensor method called with random arguments.

Seeded (``SEED``); the whole file runs in a few seconds.
"""

from __future__ import annotations

import importlib
import math
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest

db = importlib.import_module("gradstack_tensor_tests_op_db")

# var/std over fewer elements than the correction: numpy warns as torch does (a UserWarning
# there); the value (nan or inf) is what these tests check
pytestmark = pytest.mark.filterwarnings("ignore:Degrees of freedom <= 0:RuntimeWarning")
SEED = 20261122
ALLOWED = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError)
DTYPES = ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool")
TRIALS = 12


def _rng(*keys):
    return np.random.default_rng([SEED, *(sum(map(ord, str(k))) for k in keys)])


# ---------------------------------------------------------------------------------------
# Re-laying out arrays


def relayout(a, rng):
    """The same values as ``a`` in memory laid out another way (numpy makes the views)."""
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    kind = rng.integers(4)
    if kind == 0 and a.ndim >= 2:  # column-major: transposed strides
        return np.asfortranarray(a)
    if kind == 1:  # negative strides on every axis
        flipped = np.flip(a).copy()
        return np.flip(flipped)
    if kind == 2:  # every other element
        wide = np.empty(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    axes = tuple(rng.permutation(a.ndim))  # a permuted copy, permuted back
    return np.ascontiguousarray(a.transpose(axes)).transpose(np.argsort(axes))


def relayout_args(obj, rng):
    if isinstance(obj, np.ndarray):
        return relayout(obj, rng)
    if isinstance(obj, list):
        return [relayout_args(v, rng) for v in obj]
    if isinstance(obj, tuple):
        return tuple(relayout_args(v, rng) for v in obj)
    if isinstance(obj, dict):
        return {k: relayout_args(v, rng) for k, v in obj.items()}
    return obj


def contiguous_args(obj):
    """C-contiguous copies of the arrays (the layout every other one is compared with)."""
    if isinstance(obj, np.ndarray):
        return np.array(obj, order="C", copy=True)
    if isinstance(obj, list):
        return [contiguous_args(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(contiguous_args(v) for v in obj)
    if isinstance(obj, dict):
        return {k: contiguous_args(v) for k, v in obj.items()}
    return obj


def call(info, sample):
    x = db.to_gs(sample.input, gt)
    args = db.to_gs(sample.args, gt)
    kwargs = db.to_gs(sample.kwargs, gt)
    if info.function:
        return x, getattr(gt, info.function)(x, *args, **kwargs)
    if info.method:
        return x, getattr(x, info.method)(*args, **kwargs)
    return x, info.call(gt, x, *args, **kwargs)


def outcome(info, sample):
    """``("ok", arrays)`` or ``("raised", exception type)``; anything else fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            x, r = call(info, sample)
    except ALLOWED as e:
        assert str(e), f"{info.name}({sample.desc}): empty message for {type(e).__name__}"
        return "raised", type(e)
    except Exception as e:  # noqa: BLE001 - the point of the fuzz
        pytest.fail(f"{info.name}({sample.desc}) raised {type(e).__name__}: {e}")
    outs = r if isinstance(r, tuple) else (r,)
    for o in outs:
        assert isinstance(o, gt.Tensor), f"{info.name}({sample.desc}) returned {type(o).__name__}"
        assert isinstance(o.numpy(), np.ndarray)
    if info.inplace:
        assert r is x, f"{info.name}: an in-place op returns its input"
    return "ok", tuple(o.numpy().copy() for o in outs)


def ref_shapes(info, sample):
    if info.ref is None:
        return None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = info.ref(
                *db.to_ref((sample.input,) + tuple(sample.args)), **db.to_ref(sample.kwargs)
            )
    except Exception:  # noqa: BLE001 - numpy refuses: nothing to compare
        return None
    r = r if isinstance(r, tuple) else (r,)
    return tuple(np.shape(v) for v in r)


# whether these succeed depends on the strides, by definition
LAYOUT_DEPENDENT = {"view"}


def assert_same_values(u, v, what):
    """Exact for integers and bools; floats may differ in the last bits, because the C loops
    (contiguous inputs) round libm's double result while numpy's SIMD loops do not, and
    numpy/BLAS add in another order for other strides."""
    if u.dtype.kind != "f":
        np.testing.assert_array_equal(u, v, err_msg=what)
        return
    tol = {np.dtype("float16"): 2e-3, np.dtype("float32"): 1e-5}.get(u.dtype, 1e-12)
    np.testing.assert_allclose(
        u.astype(np.float64), v.astype(np.float64), rtol=tol, atol=tol, equal_nan=True, err_msg=what
    )


def _ops():
    return [pytest.param(info, id=name) for name, info in sorted(db.OP_DB.items())]


# ---------------------------------------------------------------------------------------
# Layout fuzz


@pytest.mark.parametrize("info", _ops())
def test_layout_never_changes_the_result(info):
    rng = _rng("layout", info.name)
    for dtype in rng.choice(DTYPES, size=5, replace=False):  # a seeded third of the work
        samples = list(info.sample_inputs(info, dtype, _rng("samples", info.name, dtype)))
        for k in rng.choice(len(samples), size=min(TRIALS, len(samples)), replace=False):
            sample = samples[k]
            moved = db.SampleInput(
                relayout_args(sample.input, rng),
                relayout_args(sample.args, rng),
                relayout_args(sample.kwargs, rng),
                sample.desc + " (re-laid out)",
            )
            plain = db.SampleInput(
                contiguous_args(sample.input),
                contiguous_args(sample.args),
                contiguous_args(sample.kwargs),
                sample.desc,
            )
            a, b = outcome(info, plain), outcome(info, moved)
            if info.name in LAYOUT_DEPENDENT and a[0] == "ok" and b[0] == "raised":
                continue
            assert a[0] == b[0], f"{info.name}({sample.desc}) {dtype}: {a} vs {b} by layout"
            if a[0] == "raised" or info.check is not None:
                continue
            for u, v in zip(a[1], b[1]):
                assert u.dtype == v.dtype and u.shape == v.shape, f"{info.name}({sample.desc})"
                assert_same_values(u, v, f"{info.name}({sample.desc}) {dtype}")
            shapes = ref_shapes(info, plain)
            if shapes is not None and a[0] == "ok":
                assert tuple(u.shape for u in a[1]) == shapes, f"{info.name}({sample.desc}) {dtype}"


# ---------------------------------------------------------------------------------------
# Shape and argument fuzz


def random_array(rng, dtype=None):
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(s) for s in rng.integers(0, 4, size=ndim))
    dtype = dtype or DTYPES[rng.integers(len(DTYPES))]
    a = db.make_array(shape, dtype, rng)
    return relayout(a, rng) if rng.random() < 0.5 else a


def perturb(obj, rng, depth=0):
    """Replace arrays by random ones and small ints by random dims/sizes (sometimes)."""
    if isinstance(obj, np.ndarray):
        if rng.random() < 0.5:
            return random_array(rng, obj.dtype.name if rng.random() < 0.7 else None)
        return obj
    if isinstance(obj, bool) or obj is None:
        return obj
    if isinstance(obj, int) and not isinstance(obj, db.DT):
        return int(rng.integers(-4, 5)) if rng.random() < 0.4 else obj
    if isinstance(obj, list) and depth < 3:
        return [perturb(v, rng, depth + 1) for v in obj]
    if isinstance(obj, tuple) and depth < 3:
        return tuple(perturb(v, rng, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return {k: perturb(v, rng, depth + 1) for k, v in obj.items()}
    return obj


def _size_ok(sample):
    """Skip samples whose perturbed sizes would ask for huge allocations."""

    def walk(o):
        if isinstance(o, (list, tuple)):
            return all(walk(v) for v in o)
        return not isinstance(o, int) or isinstance(o, bool) or abs(o) < 64

    return walk(sample.args) and walk(list(sample.kwargs.values()))


@pytest.mark.parametrize("info", _ops())
def test_random_shapes_and_arguments(info):
    rng = _rng("shapes", info.name)
    cache = {}
    for _ in range(3 * TRIALS):
        dtype = DTYPES[rng.integers(len(DTYPES))]
        if dtype not in cache:
            cache[dtype] = list(info.sample_inputs(info, dtype, _rng("s", info.name, dtype)))
        samples = cache[dtype]
        base = samples[rng.integers(len(samples))]
        sample = db.SampleInput(
            perturb(base.input, rng), perturb(base.args, rng), perturb(base.kwargs, rng)
        )
        sample.desc = (
            f"{db.describe(sample.input)}, {db.describe(list(sample.args))}, {sample.kwargs}"
        )
        if not _size_ok(sample):
            continue
        status, arrays = outcome(info, sample)
        if status == "ok" and info.check is None:
            shapes = ref_shapes(info, sample)
            if shapes is not None and len(shapes) == len(arrays):
                got = tuple(a.shape for a in arrays)
                assert got == shapes, f"{info.name}({sample.desc}): shape {got} != numpy's {shapes}"


# ---------------------------------------------------------------------------------------
# Raw calls below the methods: OPS[name](*args)


def random_value(rng):
    k = rng.integers(9)
    if k < 3:
        return gt.from_numpy(random_array(rng))
    return [None, True, int(rng.integers(-3, 4)), float(rng.normal()), (0, 1), "x", gt.float64][
        k - 3
    ]


@pytest.fixture
def no_layers():
    """tensor-core's kernels alone: upper layers registered in this session step aside."""
    layers = gt.registered_layers()
    for layer in layers:
        gt.unregister_layer(layer)
    yield
    for layer in layers:
        gt.register_layer(layer)


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, op in gt.OPS.items()
        if op.kernel is None or op.kernel.__module__.startswith("gradstack_tensor.")
    ),
)
def test_raw_op_calls_raise_python_errors(name, no_layers):
    op = gt.OPS[name]
    rng = _rng("raw", name)
    for _ in range(2 * TRIALS):
        nargs = int(rng.integers(0, 5))
        args = tuple(random_value(rng) for _ in range(nargs))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = op(*args)
        except ALLOWED:
            continue
        except Exception as e:  # noqa: BLE001
            pytest.fail(
                f"OPS[{name!r}]{tuple(_desc(a) for a in args)} raised {type(e).__name__}: {e}"
            )
        outs = r if isinstance(r, tuple) else (r,)
        assert all(isinstance(o, gt.Tensor) for o in outs), (
            f"OPS[{name!r}]{tuple(_desc(a) for a in args)} returned {r!r}"
        )


def _desc(a):
    if isinstance(a, gt.Tensor):
        return f"{a.dtype.name}{list(a.shape)}{'' if a.is_contiguous() else ' nc'}"
    return repr(a)


# ---------------------------------------------------------------------------------------
# Every Tensor method, random arguments

_SKIP_METHODS = {
    "backward",
    "register_hook",
    "register_post_accumulate_grad_hook",
    "retain_grad",
    "_make_subclass",
    "new_empty",
    "new_zeros",
    "new_ones",
    "new_full",
}


def _methods():
    names = []
    for name in sorted(dir(gt.Tensor)):
        if name in _SKIP_METHODS or (name.startswith("__") and name not in _DUNDERS):
            continue
        if callable(getattr(gt.Tensor, name, None)) and not isinstance(
            getattr(gt.Tensor, name), type
        ):
            names.append(name)
    return names


_DUNDERS = {
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
    "__neg__",
    "__abs__",
    "__invert__",
    "__and__",
    "__or__",
    "__xor__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__getitem__",
    "__setitem__",
    "__iadd__",
    "__isub__",
    "__imul__",
    "__itruediv__",
    "__ipow__",
    "__len__",
    "__iter__",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__contains__",
    "__array__",
    "__repr__",
    "__format__",
}


@pytest.mark.parametrize("name", _methods())
def test_every_method_with_random_arguments(name):
    rng = _rng("method", name)
    for _ in range(2 * TRIALS):
        self_ = gt.from_numpy(random_array(rng))
        args = tuple(random_value(rng) for _ in range(int(rng.integers(0, 4))))
        if name in ("repeat", "expand", "view", "reshape", "new_tensor") and any(
            isinstance(a, int) and not isinstance(a, bool) and abs(a) > 64 for a in args
        ):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = getattr(self_, name)(*args)
                if name == "__iter__":
                    list(r)
        except ALLOWED:
            continue
        except Exception as e:  # noqa: BLE001
            pytest.fail(
                f"{_desc(self_)}.{name}{tuple(_desc(a) for a in args)} raised "
                f"{type(e).__name__}: {e}"
            )


def test_fuzz_is_seeded():
    a = random_array(_rng("x"))
    b = random_array(_rng("x"))
    assert a.dtype == b.dtype and a.shape == b.shape and (a.tobytes() == b.tobytes())
    assert math.isfinite(SEED)
