"""Tests for tensor-core's kernels (``gradstack_tensor.kernels``): each kernel against the numpy
it replaces.

* ``accumulate_``/``add_scaled_`` vs numpy, float32 and float64, at sizes from 0 to above
  the parallel threshold, and bit-identical results on 1 and 2 threads (the fused
  backward formulas are graph-engine's: its ``tests/test_backward_kernels.py``);
* ``sum_to_shape`` on hand-picked layouts (every fast path, the numpy fallback, empty
  arrays) and on hypothesis-generated broadcast pairs with contiguous, strided,
  transposed, flipped and expanded (stride-0) gradients;
* ``sgd_update_`` vs a plain numpy transcription of torch's algorithm over every option
  combination, and vs ``torch.optim.SGD`` itself when torch is installed;
* argument checking: named errors for each kind of bad input, and a seeded fuzz loop
  that throws random bad arguments at every entry point.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import itertools
import re

import numpy as np
import pytest
from gradstack_tensor import _kernels
from gradstack_tensor import kernels as K
from gradstack_tensor_tests_kernel_checks import (
    BIG,
    DTYPES,
    SIZES,
    TIGHT,
    assert_bitwise_equal,
    random_operand_pairs,
    run_on_threads,
    uniform,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# the kernel modules that gradstack_tensor.kernels gathers (its `from .x import *` lines)
KERNEL_MODULES = re.findall(r"^from \.(\w+) import \*", inspect.getsource(K), re.M)


# ---------------------------------------------------------------------------------------
# Module-level behaviour


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    modules = [importlib.import_module(f"gradstack_tensor.{m}") for m in KERNEL_MODULES]
    tests = [t for m in modules for t in finder.find(m, m.__name__) if t.examples]
    public = [name for name in K.__all__ if callable(getattr(K, name))]
    covered = {t.name.rsplit(".", 1)[-1] for t in tests}
    assert set(public) <= covered, f"no runnable examples: {set(public) - covered}"
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_thread_count_settings(threads):
    threads(3)
    assert K.get_num_threads() == 3
    with pytest.raises(ValueError, match="between 1 and"):
        K.set_num_threads(0)
    with pytest.raises(ValueError, match="between 1 and"):
        K.set_num_threads(10**9)
    with pytest.raises(TypeError, match="integer"):
        K.set_num_threads(2.0)
    assert K.get_num_threads() == 3  # failed calls change nothing
    assert isinstance(K.PARALLEL_THRESHOLD, int) and K.PARALLEL_THRESHOLD < BIG


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ("3", 3),
        ("2,1", 2),
        (" 4 ", 4),
        ("0", 1),
        ("-2", 1),
        ("abc", 1),
        ("", 1),
    ],
)
def test_default_thread_count_follows_omp_num_threads(monkeypatch, env, expected):
    # Note [Threads are opt-in]: unset or invalid means one thread
    monkeypatch.delenv("GRADSTACK_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", env)
    assert _kernels._default_num_threads() == expected


def test_gradstack_num_threads_takes_precedence(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("GRADSTACK_NUM_THREADS", "2")
    assert _kernels._default_num_threads() == 2
    monkeypatch.delenv("GRADSTACK_NUM_THREADS")
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert _kernels._default_num_threads() == 1


# ---------------------------------------------------------------------------------------
# Element-wise kernels


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_accumulate_and_add_scaled(n, dtype):
    rng = np.random.default_rng(3)
    dst, src = uniform(rng, n, dtype), uniform(rng, n, dtype)
    want = dst + src
    assert K.accumulate_(dst, src) is None
    np.testing.assert_allclose(dst, want, **TIGHT[dtype])

    want = dst + dtype(-0.37) * src
    assert K.add_scaled_(dst, src, -0.37) is None
    np.testing.assert_allclose(dst, want, **TIGHT[dtype])


def test_in_place_kernels_accept_the_very_same_array():
    a = np.arange(5.0)
    K.accumulate_(a, a)
    np.testing.assert_array_equal(a, [0, 2, 4, 6, 8])
    K.add_scaled_(a, a.reshape(5), -0.5)  # another view of the same memory, same layout
    np.testing.assert_array_equal(a, [0, 1, 2, 3, 4])
    assert K.add_scaled_(a, a, np.float32(2)) is None  # numpy scalars are numbers too


@pytest.mark.parametrize("dtype", DTYPES)
def test_results_do_not_depend_on_thread_count(threads, dtype):
    n = BIG + 3  # uneven split
    rng = np.random.default_rng(5)
    g, a, b = (uniform(rng, n, dtype) for _ in range(3))

    def accumulated():
        dst = a.copy()
        K.add_scaled_(dst, b, 0.3)
        K.accumulate_(dst, g)
        return dst

    assert_bitwise_equal(run_on_threads(threads, accumulated))


# ---------------------------------------------------------------------------------------
# sum_to_shape


def sum_reference(grad, shape):
    """numpy's answer in float64, and a bound for float32/float64 rounding differences."""
    shape = tuple(shape)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + k for k, size in enumerate(shape) if size == 1 and grad.shape[lead + k] != 1
    )
    exact = grad.astype(np.float64).sum(axis=axes, keepdims=True).reshape(shape)
    magnitude = np.abs(grad.astype(np.float64)).sum(axis=axes, keepdims=True).reshape(shape)
    count = max(1, int(np.prod([grad.shape[k] for k in axes])))
    bound = 2 * np.finfo(grad.dtype).eps * (count + 1) * magnitude + 1e-300
    return exact, bound


def assert_sums_to(grad, shape):
    out = K.sum_to_shape(grad, shape)
    assert out.shape == tuple(shape) and out.dtype == grad.dtype and out.flags.c_contiguous
    assert not np.shares_memory(out, grad)
    exact, bound = sum_reference(grad, shape)
    error = np.abs(out.astype(np.float64) - exact)
    assert (error <= bound).all(), f"{grad.shape} -> {shape}: max error {error.max()}"
    return out


LAYOUT_CASES = [
    # (grad shape, target shape): the fast paths, then numpy's
    ((4, 6), (6,)),  # column sums, the bias case
    ((4, 6), (1, 6)),
    ((4, 6), (4, 1)),  # row sums
    ((4, 6), ()),  # one sum
    ((4, 6), (1, 1)),
    ((4, 6), (4, 6)),  # nothing to sum: a copy
    ((2, 3, 4), (3, 4)),  # merged kept axes
    ((2, 3, 4), (4,)),  # merged summed axes
    ((2, 3, 4), (2, 1, 1)),
    ((2, 3, 4), (2, 1, 4)),  # summed axis between kept ones: numpy
    ((2, 3, 4, 5), (3, 1, 5)),
    ((1, 1, 5), (5,)),
    ((5,), (1,)),
    ((), ()),
    ((7,), ()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("grad_shape", "shape"), LAYOUT_CASES)
def test_sum_to_shape_layouts(grad_shape, shape, dtype):
    rng = np.random.default_rng(6)
    base = uniform(rng, grad_shape, dtype)
    assert_sums_to(base, shape)
    assert_sums_to(np.asfortranarray(base), shape)
    if base.ndim:
        flipped = base[(slice(None, None, -1),) * base.ndim]
        assert_sums_to(flipped, shape)
        strided = uniform(rng, tuple(2 * s for s in grad_shape), dtype)[
            (slice(None, None, 2),) * base.ndim
        ]
        assert_sums_to(strided, shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_to_shape_expanded_views(dtype):
    rng = np.random.default_rng(7)
    expanded_row = np.broadcast_to(uniform(rng, (1, 6), dtype), (5, 6))  # strides (0, item)
    expanded_col = np.broadcast_to(uniform(rng, (5, 1), dtype), (5, 6))  # strides (item, 0)
    for grad in (expanded_row, expanded_col):
        for shape in [(6,), (1, 6), (5, 1), (), (5, 6)]:
            assert_sums_to(grad, shape)
    scalar = np.broadcast_to(dtype(1.5), (3, 4, 5))  # all strides 0
    for shape in [(), (5,), (4, 1), (3, 1, 1), (3, 4, 5)]:
        assert_sums_to(scalar, shape)
    assert K.sum_to_shape(scalar, ()) == dtype(1.5 * 60)


def test_sum_to_shape_float32_accumulates_in_float64():
    grad = np.full((1 << 20,), 0.1, np.float32)
    exact = float(np.float32(0.1)) * (1 << 20)
    assert K.sum_to_shape(grad, ()) == np.float32(exact)
    tall = np.full((1 << 16, 3), 0.1, np.float32)
    exact = float(np.float32(0.1)) * (1 << 16)
    np.testing.assert_array_equal(K.sum_to_shape(tall, (3,)), np.float32(exact))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_to_shape_empty(dtype):
    for grad_shape, shape in [
        ((0, 3), (3,)),
        ((0, 3), (1, 3)),
        ((2, 0), (2, 1)),
        ((0,), ()),
        ((3, 0), (0,)),
        ((0, 0), (1, 0)),
    ]:
        out = K.sum_to_shape(np.empty(grad_shape, dtype), shape)
        assert out.shape == shape and out.dtype == dtype
        assert (out == 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("grad_shape", "shape"),
    [
        ((BIG // 4, 4), (4,)),  # tall column sums: row chunks
        ((BIG // 8192, 8192), (1, 8192)),  # wide column sums: column blocks
        ((BIG // 128, 128), (BIG // 128, 1)),  # row sums, one task per row
        ((2, BIG), (2, 1)),  # long rows: pieces per row
        ((BIG,), ()),  # one long sum
        ((BIG // 64, 64), (BIG // 64, 64)),  # copy
        ((4, BIG // 256, 64), (1, 1, 64)),
    ],
)
def test_sum_to_shape_parallel_paths(threads, grad_shape, shape, dtype):
    rng = np.random.default_rng(8)
    grad = uniform(rng, grad_shape, dtype)
    results = []
    for count in (1, 2, 3):
        threads(count)
        results.append([assert_sums_to(grad, shape)])
        results.append([assert_sums_to(grad.T.copy().T, shape)])  # Fortran order
    assert_bitwise_equal(results[0::2])
    assert_bitwise_equal(results[1::2])


@st.composite
def broadcast_pairs(draw):
    """(grad, shape): a float array in one of several layouts, and a shape broadcasting to it."""
    dtype = draw(st.sampled_from(DTYPES))
    grad_shape = draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=6))
    lead = draw(st.integers(0, len(grad_shape)))
    shape = tuple(1 if draw(st.booleans()) else size for size in grad_shape[lead:])
    layout = draw(
        st.sampled_from(["contiguous", "fortran", "strided", "flipped", "expanded", "transposed"])
    )
    if not grad_shape:  # 0-d: indexing gives a scalar, asfortranarray a 1-d array
        layout = draw(st.sampled_from(["contiguous", "expanded"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if layout == "expanded":  # some axes are stride-0 copies
        base_shape = tuple(1 if draw(st.booleans()) else size for size in grad_shape)
        grad = np.broadcast_to(uniform(rng, base_shape, dtype), grad_shape)
    elif layout == "strided":
        big = uniform(rng, tuple(2 * s + 1 for s in grad_shape), dtype)
        grad = big[tuple(slice(1, None, 2) for _ in grad_shape)]
    elif layout == "transposed" and len(grad_shape) > 1:
        order = draw(st.permutations(range(len(grad_shape))))
        inverse = np.argsort(order)
        grad = uniform(rng, tuple(grad_shape[k] for k in order), dtype).transpose(inverse)
    else:
        grad = uniform(rng, grad_shape, dtype)
        if layout == "fortran":
            grad = np.asfortranarray(grad)
        elif layout == "flipped" and grad.ndim:
            grad = grad[(slice(None, None, -1),) * grad.ndim]
    assert grad.shape == grad_shape
    return grad, shape


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broadcast_pairs())
def test_sum_to_shape_property(pair):
    grad, shape = pair
    assert_sums_to(grad, shape)
    assert_sums_to(grad, list(shape))


@settings(max_examples=200, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=5))
def test_sum_to_shape_undoes_broadcasting(shapes):
    # The engine's use: c = a + b broadcasts; each input's gradient is summed back.
    rng = np.random.default_rng(0)
    grad = uniform(rng, shapes.result_shape, np.float64)
    for shape in shapes.input_shapes:
        assert_sums_to(grad, shape)


def test_sum_to_shape_shape_arguments():
    grad = np.ones((2, 3))
    np.testing.assert_array_equal(K.sum_to_shape(grad, 3), [2, 2, 2])
    np.testing.assert_array_equal(K.sum_to_shape(grad, np.array([1, 3])), [[2, 2, 2]])
    np.testing.assert_array_equal(K.sum_to_shape(grad, (np.int64(2), True)), [[3], [3]])
    np.testing.assert_array_equal(K.sum_to_shape(grad, []), 6.0)


@pytest.mark.parametrize(
    ("grad_shape", "shape", "message"),
    [
        (
            (2, 3),
            (4,),
            r"shape \(4,\) is not broadcastable to grad's shape \(2, 3\): the size of "
            r"shape \(4\) must be 1 or match the size of grad \(3\) at dimension 1",
        ),
        ((2, 3), (2, 2), r"\(2, 2\) is not broadcastable to grad's shape \(2, 3\)"),
        ((3,), (1, 3), r"shape has 2 dimensions and grad only 1"),
        ((), (1,), r"shape \(1,\) is not broadcastable to grad's shape \(\)"),
        ((0, 3), (2, 3), r"the size of shape \(2\) must be 1 or match the size of grad \(0\)"),
        ((2, 3), (-1, 3), r"negative size"),
        ((2, 3), (2**70,), r"too large"),
        ((2, 3), (1,) * 65, r"at most 64"),
        ((2, 3), (1,) * 100, r"at most 64"),
    ],
)
def test_sum_to_shape_bad_shapes(grad_shape, shape, message):
    with pytest.raises(ValueError, match=message):
        K.sum_to_shape(np.ones(grad_shape), shape)


@pytest.mark.parametrize("shape", [None, 2.0, (2.0, 3), ("2", 3), "23", (None,), object()])
def test_sum_to_shape_shape_types(shape):
    with pytest.raises(TypeError, match="shape must be a tuple of ints"):
        K.sum_to_shape(np.ones((2, 3)), shape)


# ---------------------------------------------------------------------------------------
# sgd_update_

SGD_OPTIONS = [
    dict(
        momentum=momentum,
        dampening=dampening,
        weight_decay=weight_decay,
        nesterov=nesterov,
        maximize=maximize,
    )
    for momentum, dampening, weight_decay, nesterov, maximize in itertools.product(
        [0.0, 0.9], [0.0, 0.25], [0.0, 0.01], [False, True], [False, True]
    )
]


def option_id(options):
    return "-".join(f"{k}={v}" for k, v in options.items() if v)


def sgd_reference(
    param, grad, buf, lr, *, momentum, dampening, weight_decay, nesterov, maximize, first_step
):
    """torch/optim/sgd.py's _single_tensor_sgd, transcribed to numpy, in place."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    if momentum != 0:
        if first_step:
            buf[...] = g
        else:
            buf[...] = buf * momentum + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    param[...] = param + (-lr) * g


def gradients(rng, n, dtype, steps=3):
    return [uniform(rng, n, dtype) for _ in range(steps)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 6, 1000, BIG])
@pytest.mark.parametrize("options", SGD_OPTIONS, ids=option_id)
def test_sgd_matches_reference(options, n, dtype):
    rng = np.random.default_rng(9)
    param = uniform(rng, n, dtype)
    want_param, want_buf = param.copy(), np.empty_like(param)
    buf = np.empty_like(param)
    for step, grad in enumerate(gradients(rng, n, dtype)):
        K.sgd_update_(param, grad, buf, 0.05, first_step=step == 0, **options)
        sgd_reference(want_param, grad, want_buf, 0.05, first_step=step == 0, **options)
        np.testing.assert_allclose(param, want_param, **TIGHT[dtype])
        if options["momentum"]:
            np.testing.assert_allclose(buf, want_buf, **TIGHT[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_sgd_results_do_not_depend_on_thread_count(threads, dtype):
    rng = np.random.default_rng(10)
    start, grads = uniform(rng, BIG + 5, dtype), gradients(rng, BIG + 5, dtype)

    def train():
        param, buf = start.copy(), np.empty_like(start)
        for step, grad in enumerate(grads):
            K.sgd_update_(
                param,
                grad,
                buf,
                0.1,
                momentum=0.9,
                weight_decay=1e-3,
                nesterov=True,
                first_step=step == 0,
            )
        return param, buf

    assert_bitwise_equal(run_on_threads(threads, train))


def test_sgd_without_momentum_ignores_the_buffer():
    param, grad = np.ones(3), np.full(3, 2.0)
    K.sgd_update_(param, grad, None, 0.5)
    np.testing.assert_array_equal(param, 0.0)
    K.sgd_update_(param, grad, "not even an array", 0.5, maximize=True)
    np.testing.assert_array_equal(param, 1.0)


def test_sgd_grad_may_be_param_itself():
    param = np.array([1.0, 2.0])
    K.sgd_update_(param, param, None, 0.25)
    np.testing.assert_array_equal(param, [0.75, 1.5])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "options",
    # torch.optim.SGD refuses nesterov without momentum or with dampening
    [o for o in SGD_OPTIONS if not o["nesterov"] or (o["momentum"] and not o["dampening"])],
    ids=option_id,
)
def test_sgd_matches_torch(options, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    n = 1000
    param, buf = uniform(rng, n, dtype), np.empty(n, dtype)
    grads = gradients(rng, n, dtype)
    weight = torch.nn.Parameter(torch.from_numpy(param.copy()))
    optimiser = torch.optim.SGD([weight], lr=0.05, foreach=False, **options)
    for step, grad in enumerate(grads):
        weight.grad = torch.from_numpy(grad.copy())
        optimiser.step()
        K.sgd_update_(param, grad, buf, 0.05, first_step=step == 0, **options)
    # torch's vectorised CPU code fuses multiply-adds (FMA): allow a few ulps of the
    # operands' magnitude (~3) over three steps, also where the result cancels to ~0.
    tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(param, weight.detach().numpy(), **tol)
    if options["momentum"]:
        torch_buf = optimiser.state[weight]["momentum_buffer"].numpy()
        np.testing.assert_allclose(buf, torch_buf, **tol)


# ---------------------------------------------------------------------------------------
# Argument checking


def test_fusable():
    a = np.zeros((2, 3), np.float32)
    assert K.fusable(a) and K.fusable(a, a, np.ones((2, 3), np.float32))
    assert K.fusable(np.zeros(()), np.ones(()))
    assert not K.fusable()
    assert not K.fusable(a, a.T)
    assert not K.fusable(a, a.astype(np.float64))
    assert not K.fusable(a, np.zeros((3, 2), np.float32))
    assert not K.fusable(a[:, ::2])
    assert not K.fusable(a.astype(np.float16))
    assert not K.fusable(a.astype(">f4"))
    assert not K.fusable(a, None) and not K.fusable([1.0]) and not K.fusable(np.float32(1))


def test_error_messages_say_what_and_how():
    f32, f64 = np.ones((2, 3), np.float32), np.ones((2, 3))
    cases = [
        (
            lambda: K.accumulate_(f32, np.ones((2, 3), np.int64)),
            TypeError,
            r"accumulate_: src must be float32 or float64, got int64; cast it with "
            r"src\.astype\(np\.float32\)",
        ),
        (
            lambda: K.accumulate_(f32.astype(np.float16), f32),
            TypeError,
            r"dst is float16, which the kernels do not support",
        ),
        (
            lambda: K.add_scaled_(f32, f64, 2.0),
            TypeError,
            r"dst and src must have the same dtype, got float32 \(dst\) and float64 \(src\)",
        ),
        (
            lambda: K.accumulate_(f32, np.ones((2, 4), np.float32)),
            ValueError,
            r"dst and src must have the same shape, got \(2, 3\) and \(2, 4\): the size of "
            r"dst \(3\) must match the size of src \(4\) at dimension 1",
        ),
        (
            lambda: K.accumulate_(f32, np.ones((1, 2, 3), np.float32)),
            ValueError,
            r"dst has 2 dimension\(s\) and src has 3",
        ),
        (
            lambda: K.accumulate_(f32, np.ones((3, 2), np.float32).T),
            ValueError,
            r"src must be C-contiguous and aligned, got shape \(2, 3\) with strides \(4, 8\); "
            r"pass np\.ascontiguousarray\(src\)",
        ),
        (
            lambda: K.accumulate_([1.0], f32),
            TypeError,
            r"accumulate_: dst must be a numpy\.ndarray, got list",
        ),
        (
            lambda: K.add_scaled_(f32, None, 1.0),
            TypeError,
            r"src must be a numpy\.ndarray, got NoneType",
        ),
        (
            lambda: K.accumulate_(f32.astype(">f4"), f32),
            TypeError,
            r"dst has non-native byte order",
        ),
        (
            lambda: K.accumulate_(np.ones((3, 2), np.float32).T, f32),
            ValueError,
            r"dst must be C-contiguous",
        ),
        (lambda: K.sum_to_shape(np.ones(3, bool), ()), TypeError, r"got bool"),
        (
            lambda: K.add_scaled_(f32, f32, "0.5"),
            TypeError,
            r"alpha must be a real number, got str",
        ),
        (
            lambda: K.sgd_update_(f32, f32, None, 0.1, momentum=0.9),
            ValueError,
            r"momentum_buffer is None but momentum != 0",
        ),
        (lambda: K.sgd_update_(f32, f32, None, None), TypeError, r"lr must be a real number"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_read_only_and_overlapping_destinations():
    frozen = np.ones(4)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"dst is read-only.*pass a writable array"):
        K.accumulate_(frozen, np.ones(4))
    with pytest.raises(ValueError, match="param is read-only"):
        K.sgd_update_(frozen, np.ones(4), None, 0.1)
    with pytest.raises(ValueError, match="momentum_buffer is read-only"):
        K.sgd_update_(np.ones(4), np.ones(4), frozen, 0.1, momentum=0.9)

    a = np.arange(6.0)
    with pytest.raises(ValueError, match="src partially overlaps dst"):
        K.accumulate_(a[1:], a[:-1])
    with pytest.raises(ValueError, match="src partially overlaps dst"):
        K.add_scaled_(a[:-1], a[1:], 2.0)
    np.testing.assert_array_equal(a, np.arange(6.0))  # nothing was touched
    with pytest.raises(ValueError, match="param and momentum_buffer share memory"):
        K.sgd_update_(a, np.ones(6), a, 0.1, momentum=0.9)
    with pytest.raises(ValueError, match="grad partially overlaps param"):
        K.sgd_update_(a[:3], a[2:5], a[3:], 0.1, momentum=0.9)
    b = np.arange(9.0)
    with pytest.raises(ValueError, match="grad partially overlaps momentum_buffer"):
        K.sgd_update_(b[0:3], b[4:7], b[3:6], 0.1, momentum=0.9)


def bad_operands(rng):
    """Objects that are not valid kernel operands (next to a (3, 4) float64 partner)."""
    base = rng.uniform(size=(3, 4))
    unaligned = np.frombuffer(
        np.zeros(3 * 4 * 8 + 1, np.uint8).tobytes(), np.float64, count=12, offset=1
    ).reshape(3, 4)
    return [
        None,
        1.0,
        "x",
        [[1.0] * 4] * 3,
        object(),
        np.float64(1.0),
        base.astype(np.int64),
        base.astype(np.int32),
        base > 0.5,
        base.astype(np.float16),
        base.astype(object),
        base.astype(np.complex128),
        base.astype(">f8"),
        base.astype(np.float32),  # dtype differs from the partner
        np.asfortranarray(base),
        base.T.copy().T[:, ::-1],
        base[:, ::2],
        np.broadcast_to(base[:1], (3, 4)),
        unaligned,
        np.zeros(()),
        np.zeros(12),
        np.zeros((4, 3)),
        np.zeros((3, 4, 1)),
        np.zeros((1, 3, 4)),
        np.zeros((0, 4)),
        np.zeros((1,) * 32),
        np.zeros((1,) * 64),
    ]


def test_unaligned_input_is_a_layout_error():
    raw = np.zeros(8 * 12 + 1, np.uint8)
    unaligned = np.frombuffer(raw.tobytes(), np.float64, count=12, offset=1)
    assert not unaligned.flags.aligned
    with pytest.raises(ValueError, match="C-contiguous and aligned"):
        K.accumulate_(np.ones(12), unaligned)
    np.testing.assert_allclose(K.sum_to_shape(unaligned.reshape(3, 4), (4,)), 0.0)


ENTRY_POINTS = {
    # name: (call with a list of operands, number of array operands)
    "accumulate_": (lambda a: K.accumulate_(*a), 2),
    "add_scaled_": (lambda a: K.add_scaled_(*a, 0.5), 2),
    "sgd_update_": (lambda a: K.sgd_update_(*a, 0.1, momentum=0.9), 3),
    "adam_update_": (
        lambda a: K.adam_update_(
            *a, lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.0, step=1.0, amsgrad=True
        ),
        5,
    ),
}


def test_fuzz_bad_inputs_raise_cleanly():
    """Random bad operands in random positions: always TypeError/ValueError, never a crash."""
    rng = np.random.default_rng(12345)
    checked = 0
    for _ in range(500):
        pool = bad_operands(rng)
        for call, count in ENTRY_POINTS.values():
            operands = [rng.uniform(size=(3, 4)) for _ in range(count)]
            positions = rng.choice(count, size=rng.integers(1, count + 1), replace=False)
            for position in positions:
                operands[position] = pool[rng.integers(len(pool))]
            if all(K.fusable(o) for o in operands) and K.fusable(*operands):
                continue  # a bad operand that happens to pair with another bad one
            with pytest.raises((TypeError, ValueError)):
                call(operands)
            checked += 1
        # sum_to_shape: a bad grad, or a bad shape
        grad = pool[rng.integers(len(pool))]
        if not (
            isinstance(grad, np.ndarray)
            and grad.dtype in (np.float32, np.float64)
            and grad.dtype.isnative
        ):
            with pytest.raises((TypeError, ValueError)):
                K.sum_to_shape(grad, ())
            checked += 1
        bad_shape = [
            (4, 4),
            (3, 4, 1),
            (2, 3, 4),
            (-1, 4),
            (3.0, 4),
            None,
            "34",
            (1,) * 65,
            (2**63,),
            (3, 5),
            (0, 4),
            tuple(rng.integers(-3, 7, size=rng.integers(1, 6))),
        ][rng.integers(12)]
        grad = rng.uniform(size=(3, 4)).astype(DTYPES[rng.integers(2)])
        try:
            out = K.sum_to_shape(grad, bad_shape)
        except (TypeError, ValueError):
            checked += 1
        else:  # a random shape may happen to broadcast
            assert_sums_to(grad, tuple(out.shape))
    assert checked > 1000


def test_fuzz_random_operands_never_misbehave():
    """Random valid and invalid operands mixed: a result that matches numpy, or a clean error."""
    for operands in random_operand_pairs():
        before = operands[0].copy() if isinstance(operands[0], np.ndarray) else None
        try:
            K.add_scaled_(*operands, 0.5)
        except (TypeError, ValueError):
            assert not K.fusable(*operands) or not operands[0].flags.writeable
            if before is not None:  # a refused call writes nothing
                np.testing.assert_array_equal(operands[0], before)
        else:
            assert K.fusable(*operands)
            want = before + before.dtype.type(0.5) * operands[1]
            np.testing.assert_allclose(operands[0], want, rtol=1e-6)
