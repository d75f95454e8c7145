"""Tests for ``gradstack_autograd._backward_kernels``, the fused backward formulas that
derivative-table entries name in ``fused``: each kernel against the numpy expression it
replaces (float32 and float64, sizes from 0 to above the parallel threshold), results
that do not depend on the thread count nor on tensor-core's AVX2 switch, the float32 sin
and cos within one ulp, torch's corner cases, and argument checks that raise clean
errors before touching memory."""

from __future__ import annotations

import doctest
import functools

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_autograd import _backward_kernels as B
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


def test_docstring_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(B, "_backward_kernels") if t.examples]
    public = [name for name in B.__all__ if callable(getattr(B, name))]
    covered = {t.name.rsplit(".", 1)[-1] for t in tests}
    assert set(public) <= covered, f"no runnable examples: {set(public) - covered}"
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_every_fused_name_of_the_table_is_a_kernel_here():
    from gradstack_autograd import derivatives
    from gradstack_tensor import OPS

    native_only = {"add_backward", "sub_backward"}  # pass-through formulas (_native.pyx)
    named = {op.derivative.fused for op in OPS.values() if op.derivative is not None}
    named.discard(None)
    assert named - native_only <= set(B.__all__)
    assert derivatives.entry("sin").fused == "sin_backward"
    assert B.TRANSCENDENTAL_THRESHOLD <= K.PARALLEL_THRESHOLD


def relu_reference(grad, out):
    """torch's threshold_backward(grad, out, 0)."""
    return np.where(out <= 0, np.zeros_like(grad), grad)


POINTWISE = {
    # name: (kernel, numpy expression, inputs' range for the second operand)
    "sin_backward": (B.sin_backward, lambda g, x: g * np.cos(x), (-10.0, 10.0)),
    "cos_backward": (B.cos_backward, lambda g, x: -g * np.sin(x), (-10.0, 10.0)),
    "relu_backward": (B.relu_backward, relu_reference, (-1.0, 1.0)),
    "sigmoid_backward": (B.sigmoid_backward, lambda g, s: g * s * (1 - s), (0.0, 1.0)),
    "tanh_backward": (B.tanh_backward, lambda g, t: g * (1 - t * t), (-1.0, 1.0)),
    "square_backward": (B.square_backward, lambda g, x: g * (2 * x), (-1e3, 1e3)),
}


BINARY = {
    "mul_backward": (B.mul_backward, lambda g, a, b: (g * b, g * a)),
    "div_backward": (B.div_backward, lambda g, a, b: (g / b, -g * a / (b * b))),
}


def pointwise_inputs(name, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    low, high = POINTWISE[name][2]
    second = uniform(rng, n, dtype, low, high)
    if name == "relu_backward":
        second = np.maximum(second, 0)  # relu outputs: exact zeros included
    return uniform(rng, n, dtype), second


def binary_inputs(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    b = uniform(rng, n, dtype, 0.5, 3.0) * rng.choice([-1, 1], n).astype(dtype)
    return uniform(rng, n, dtype), uniform(rng, n, dtype), b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", POINTWISE)
def test_pointwise_matches_numpy(name, n, dtype):
    kernel, expression, _ = POINTWISE[name]
    grad, v = pointwise_inputs(name, n, dtype)
    out = kernel(grad, v)
    assert out.dtype == dtype and out.shape == (n,) and out.flags.c_contiguous
    assert not np.shares_memory(out, grad) and not np.shares_memory(out, v)
    if name in ("sin_backward", "cos_backward"):
        # float32: the kernel rounds the exact cos once; numpy's SIMD cos is within ~1 ulp.
        tol = dict(rtol=1e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-15, atol=1e-15)
    else:
        tol = TIGHT[dtype]
    np.testing.assert_allclose(out, expression(grad, v), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(name, n, dtype):
    kernel, expression = BINARY[name]
    g, a, b = binary_inputs(n, dtype)
    grad_a, grad_b = kernel(g, a, b)
    want_a, want_b = expression(g, a, b)
    for got, want in ((grad_a, want_a), (grad_b, want_b)):
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, **TIGHT[dtype])
    assert not np.shares_memory(grad_a, grad_b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pointwise_keeps_shape_including_0d(dtype):
    rng = np.random.default_rng(1)
    for shape in [(), (1,), (2, 3), (2, 1, 4), (0, 5)]:
        g, x = uniform(rng, shape, dtype), uniform(rng, shape, dtype)
        for name, (kernel, expression, _) in POINTWISE.items():
            out = kernel(g, x)
            assert out.shape == shape and isinstance(out, np.ndarray), name
            np.testing.assert_allclose(out, expression(g, x), rtol=1e-6, atol=1e-6)
        grad_a, grad_b = B.mul_backward(g, x, g)
        assert grad_a.shape == grad_b.shape == shape


@pytest.mark.parametrize("name", ["sin_backward", "cos_backward"])
def test_float32_trig_is_within_one_ulp_of_exact(name):
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [
            uniform(rng, 20000, np.float32, -4.0, 4.0),
            uniform(rng, 20000, np.float32, -3e5, 3e5),  # beyond TRIG_LIMIT: the libm pass
            np.float32(
                [
                    0.0,
                    -0.0,
                    1e-30,
                    -1e-30,
                    1.5707964,
                    3.1415927,
                    262144.0,
                    262145.0,
                    1e30,
                    -1e30,
                    np.finfo(np.float32).max,
                ]
            ),
        ]
    )
    ones = np.ones_like(x)
    x64 = x.astype(np.float64)
    exact = np.cos(x64) if name == "sin_backward" else -np.sin(x64)
    np.testing.assert_array_max_ulp(getattr(B, name)(ones, x), exact.astype(np.float32), maxulp=1)


@pytest.mark.parametrize("name", ["sin_backward", "cos_backward"])
def test_float32_trig_non_finite(name):
    x = np.float32([np.inf, -np.inf, np.nan, 1.0])
    g = np.float32([1.0, 1.0, 1.0, np.inf])
    out = getattr(B, name)(g, x)
    assert np.isnan(out[:3]).all() and np.isinf(out[3])


def test_relu_backward_follows_torch_in_corner_cases():
    grad = np.array([np.inf, np.nan, 2.0, 3.0, -1.0])
    out = np.array([0.0, -1.0, np.nan, 0.5, 0.0])
    # numpy's grad * (out > 0) gives [nan, nan, 0, 3, -0]; torch gives:
    np.testing.assert_array_equal(B.relu_backward(grad, out), [0.0, 0.0, 2.0, 3.0, 0.0])


def test_div_backward_by_zero_is_ieee_without_warnings():
    import warnings

    g, a, b = np.ones(3), np.array([1.0, 0.0, -1.0]), np.zeros(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad_a, grad_b = B.div_backward(g, a, b)
    assert np.isinf(grad_a).all()
    assert np.isneginf(grad_b[0]) and np.isnan(grad_b[1]) and np.isposinf(grad_b[2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_results_do_not_depend_on_thread_count(threads, dtype):
    n = BIG + 3  # uneven split
    for name, (kernel, _, _) in POINTWISE.items():
        grad, v = pointwise_inputs(name, n, dtype, seed=4)
        assert_bitwise_equal(run_on_threads(threads, functools.partial(kernel, grad, v)))
    g, a, b = binary_inputs(n, dtype, seed=5)
    for kernel, _ in BINARY.values():
        assert_bitwise_equal(run_on_threads(threads, functools.partial(kernel, g, a, b)))


@pytest.mark.parametrize("name", ["sin_backward", "cos_backward"])
def test_float32_trig_does_not_depend_on_the_avx2_switch(name):
    # tensor-core's switch (Note [AVX2 clones]) picks the copy here too; both copies give
    # the same float32 (a no-op on a CPU without AVX2)
    from gradstack_tensor import _kernels as switch

    rng = np.random.default_rng(6)
    g, x = uniform(rng, 5000, np.float32), uniform(rng, 5000, np.float32, -300.0, 300.0)
    before, before_512 = switch._avx2(), switch._avx512()
    try:
        switch._avx2(False)
        plain = getattr(B, name)(g, x)
        switch._avx2(True)
        switch._avx512(False)
        clone = getattr(B, name)(g, x)
        switch._avx512(True)  # (Note [AVX-512 copies of the transcendental loops])
        clone_512 = getattr(B, name)(g, x)
    finally:
        switch._avx2(before)
        switch._avx512(before_512)
    assert plain.tobytes() == clone.tobytes() == clone_512.tobytes()


def test_error_messages_say_what_and_how():
    f32, f64 = np.ones((2, 3), np.float32), np.ones((2, 3))
    cases = [
        (
            lambda: B.sin_backward(f32, np.ones((2, 3), np.int64)),
            TypeError,
            r"sin_backward: x must be float32 or float64, got int64; cast it with "
            r"x\.astype\(np\.float32\)",
        ),
        (
            lambda: B.sin_backward(f32.astype(np.float16), f32),
            TypeError,
            r"grad is float16, which the kernels do not support",
        ),
        (
            lambda: B.tanh_backward(f32, f64),
            TypeError,
            r"grad and t must have the same dtype, got float32 \(grad\) and float64 \(t\)",
        ),
        (
            lambda: B.relu_backward(f32, np.ones((2, 4), np.float32)),
            ValueError,
            r"grad and out must have the same shape, got \(2, 3\) and \(2, 4\): the size of "
            r"grad \(3\) must match the size of out \(4\) at dimension 1",
        ),
        (
            lambda: B.mul_backward(f32, f32, np.ones((1, 2, 3), np.float32)),
            ValueError,
            r"grad has 2 dimension\(s\) and b has 3",
        ),
        (
            lambda: B.sigmoid_backward(f32, np.ones((3, 2), np.float32).T),
            ValueError,
            r"s must be C-contiguous and aligned, got shape \(2, 3\) with strides \(4, 8\); "
            r"pass np\.ascontiguousarray\(s\)",
        ),
        (
            lambda: B.cos_backward([1.0], f32),
            TypeError,
            r"cos_backward: grad must be a numpy\.ndarray, got list",
        ),
        (
            lambda: B.div_backward(f32, None, f32),
            TypeError,
            r"a must be a numpy\.ndarray, got NoneType",
        ),
        (
            lambda: B.tanh_backward(f32.astype(">f4"), f32),
            TypeError,
            r"grad has non-native byte order",
        ),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_unaligned_input_is_a_layout_error():
    raw = np.zeros(8 * 12 + 1, np.uint8)
    unaligned = np.frombuffer(raw.tobytes(), np.float64, count=12, offset=1)
    assert not unaligned.flags.aligned
    with pytest.raises(ValueError, match="C-contiguous and aligned"):
        B.tanh_backward(np.ones(12), unaligned)


BAD = [
    None,
    1.0,
    [[1.0] * 4] * 3,
    np.float64(1.0),
    np.zeros((3, 4), np.int64),
    np.zeros((3, 4), bool),
    np.zeros((3, 4), np.float16),
    np.zeros((3, 4), np.complex128),
    np.zeros((3, 4), ">f8"),
    np.zeros((3, 4), np.float32),  # dtype differs from the partners
    np.asfortranarray(np.zeros((3, 4))),
    np.zeros((3, 8))[:, ::2],
    np.broadcast_to(np.zeros((1, 4)), (3, 4)),
    np.zeros(()),
    np.zeros(12),
    np.zeros((4, 3)),
    np.zeros((3, 4, 1)),
    np.zeros((0, 4)),
]


@pytest.mark.parametrize("name", sorted(set(B.__all__) - {"TRANSCENDENTAL_THRESHOLD"}))
def test_bad_operands_raise_cleanly_in_every_position(name):
    kernel = getattr(B, name)
    count = 3 if name in ("mul_backward", "div_backward") else 2
    rng = np.random.default_rng(7)
    for bad in BAD:
        for position in range(count):
            operands = [rng.uniform(size=(3, 4)) for _ in range(count)]
            operands[position] = bad
            with pytest.raises((TypeError, ValueError)):
                kernel(*operands)


def test_random_operands_give_numpy_or_a_clean_error():
    for operands in random_operand_pairs():
        try:
            out = B.tanh_backward(*operands)
        except (TypeError, ValueError):
            assert not K.fusable(*operands)
        else:
            assert K.fusable(*operands)
            np.testing.assert_allclose(out, operands[0] * (1 - operands[1] ** 2), rtol=1e-6)


# ---------------------------------------------------------------------------------------
# A broadcast gradient (Note [A broadcast gradient is one number])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 6, 1000, BIG])
@pytest.mark.parametrize("name", POINTWISE)
def test_a_broadcast_gradient_gives_the_bits_of_the_full_one(name, n, dtype, threads):
    kernel = POINTWISE[name][0]
    _, v = pointwise_inputs(name, n, dtype)
    for value in (2.5, -0.0, np.inf):
        one = np.asarray(value, dtype)
        full = np.full((n,), value, dtype)
        for count in (1, 2):
            threads(count)
            got = kernel(np.broadcast_to(one, (n,)), v)
            assert got.dtype == dtype and got.shape == (n,) and got.flags.c_contiguous
            assert got.tobytes() == kernel(full, v).tobytes(), (value, count)


def test_a_broadcast_gradient_of_several_dims():
    rng = np.random.default_rng(11)
    v = uniform(rng, (4, 5, 3), np.float32)
    g = np.broadcast_to(np.float32(3.0), v.shape)
    assert B.is_broadcast_grad(g, v)
    np.testing.assert_array_equal(B.tanh_backward(g, v), np.float32(3.0) * (1 - v * v))


def test_what_is_not_a_broadcast_gradient():
    v = np.zeros((2, 3), np.float32)
    one = np.float32(1.0)
    not_broadcast = [
        np.ones((2, 3), np.float32),  # a full array (the ordinary path)
        np.broadcast_to(np.float64(1.0), (2, 3)),  # another dtype
        np.broadcast_to(one, (3, 2)),  # another shape
        np.broadcast_to(one, (6,)),  # another rank
        np.broadcast_to(np.ones(3, np.float32), (2, 3)),  # broadcast along one dim only
        1.0,
        None,
    ]
    for g in not_broadcast:
        assert not B.is_broadcast_grad(g, v), g
    assert not B.is_broadcast_grad(np.broadcast_to(one, (0,)), np.zeros(0, np.float32))
    # a gradient broadcast along one dim is still a layout error for the kernels
    with pytest.raises(ValueError):
        B.tanh_backward(np.broadcast_to(np.ones(3, np.float32), (2, 3)), v)
    with pytest.raises((TypeError, ValueError), match="grad"):
        B.tanh_backward(np.broadcast_to(np.float64(1.0), (2, 3)), v)


@pytest.mark.parametrize("op", ["sin", "cos", "tanh", "sigmoid", "relu"])
def test_sum_backward_feeds_the_kernels_its_broadcast_gradient(op):
    import gradstack_autograd  # noqa: F401 - the autograd layer
    import gradstack_tensor as gt

    rng = np.random.default_rng(12)
    for dtype in (gt.float32, gt.float64):
        x = gt.tensor(rng.uniform(-3, 3, (64, 50)), dtype=dtype, requires_grad=True)
        (getattr(x, op)().sum() * 3).backward()
        xd = x.detach().numpy().astype(np.float64)
        want = {
            "sin": np.cos(xd),
            "cos": -np.sin(xd),
            "tanh": 1 - np.tanh(xd) ** 2,
            "sigmoid": (s := 1 / (1 + np.exp(-xd))) * (1 - s),
            "relu": (xd > 0).astype(np.float64),
        }[op]
        tol = 1e-6 if dtype == gt.float32 else 1e-14
        np.testing.assert_allclose(x.grad.numpy(), 3 * want, rtol=tol, atol=tol)


@pytest.mark.parametrize("exponent", [2, 2.0])
def test_a_square_taken_early_records_pow_backward(exponent):
    # tensor-core's Note [A float tensor squared is x * x, early] still goes through the
    # dispatcher: the node, its saved values and its gradients are pow's
    x = gt.tensor([1.5, -2.0], requires_grad=True)
    y = x**exponent
    assert type(y.grad_fn).__name__ == "PowBackward0"
    assert y.grad_fn._saved_exponent == exponent
    (g,) = ag.grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [3.0, -4.0]
    (gg,) = ag.grad(g.sum(), x)
    assert gg.tolist() == [2.0, 2.0]
