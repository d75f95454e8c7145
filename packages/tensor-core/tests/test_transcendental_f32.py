"""float32 sin, cos and tanh by tensor-core's own loops (Note [float32 sin and cos], Note
[float32 tanh] in _float32_transcendentals.pyx): correctly rounded, torch's special values,
any layout."""

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _float32_transcendentals, _kernels, kernels

NAMES = ("sin", "cos", "tanh")
F32 = np.float32


def correctly_rounded(name, x):
    """The float64 value rounded once to float32 (float64 is ~1e-16 from exact)."""
    return getattr(np, name)(x.astype(np.float64)).astype(F32)


def every_binade(n, seed, limit=None):
    """n float32 values spread over all exponents and both signs (finite only)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**31 - 2**23, n, dtype=np.uint32)  # below the inf/nan exponent
    x = bits.view(F32) * rng.choice(F32([-1, 1]), n)
    if limit is not None:
        x = x[np.abs(x) <= limit]
    return x


@pytest.mark.parametrize("name", NAMES)
def test_correctly_rounded_on_random_and_spread_inputs(name):
    rng = np.random.default_rng(1)
    limit = 262144.0 if name != "tanh" else None  # sin/cos beyond: libm's pass (1 ulp)
    x = np.concatenate(
        [
            rng.uniform(-4, 4, 200_000).astype(F32),
            rng.uniform(-20, 20, 100_000).astype(F32),
            every_binade(400_000, 2, limit),
        ]
    )
    got = _float32_transcendentals._transcendental_f32(name, x)
    want = correctly_rounded(name, x)
    assert got.dtype == F32 and got.shape == x.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_trig_beyond_the_reduction_limit_is_within_an_ulp(name):
    x = np.concatenate([every_binade(50_000, 3), F32([262145.0, -3e5, 1e30, 3.4e38])])
    x = x[np.abs(x) > 262144.0]
    got = _float32_transcendentals._transcendental_f32(name, x)
    np.testing.assert_array_max_ulp(got, correctly_rounded(name, x), maxulp=1)


def test_special_values_follow_libm_and_torch():
    x = F32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 9.0, 9.02, -9.5, 1e16, -3e38])
    sin = _float32_transcendentals._transcendental_f32("sin", x)
    cos = _float32_transcendentals._transcendental_f32("cos", x)
    tanh = _float32_transcendentals._transcendental_f32("tanh", x)
    # signed zeros: sin(-0.0) and tanh(-0.0) are -0.0, as in torch
    assert list(np.signbit(sin[:2])) == [False, True]
    assert list(np.signbit(tanh[:2])) == [False, True]
    assert cos[0] == cos[1] == 1
    assert np.isnan(sin[2:5]).all() and np.isnan(cos[2:5]).all()
    assert list(tanh[2:4]) == [1, -1] and np.isnan(tanh[4])
    assert list(sin[5:7]) == list(x[5:7]) and list(tanh[5:7]) == list(x[5:7])
    assert tanh[7] == F32(np.tanh(9.0)) and list(tanh[8:]) == [1, -1, 1, -1]


@pytest.mark.parametrize("name", NAMES)
def test_the_avx2_switch_gives_the_same_bits(name):
    x = np.concatenate([every_binade(100_000, 4), np.random.default_rng(5).uniform(-9, 9, 5000)])
    x = x.astype(F32)
    before, before_512 = _kernels._avx2(), _kernels._avx512()
    try:
        _kernels._avx2(False)
        plain = _float32_transcendentals._transcendental_f32(name, x)
        _kernels._avx2(True)
        _kernels._avx512(False)
        clone = _float32_transcendentals._transcendental_f32(name, x)
        _kernels._avx512(True)  # (no effect without AVX-512: the AVX2 copy again)
        clone_512 = _float32_transcendentals._transcendental_f32(name, x)
    finally:
        _kernels._avx2(before)
        _kernels._avx512(before_512)
    assert plain.tobytes() == clone.tobytes() == clone_512.tobytes()


def test_the_avx512_copies_run_only_with_the_avx2_ones():
    before, before_512 = _kernels._avx2(), _kernels._avx512()
    try:
        _kernels._avx2(True)
        supported = _kernels._avx512(True)
        assert _kernels._avx512(False) is False
        assert _kernels._avx512(True) is supported
    finally:
        _kernels._avx2(before)
        _kernels._avx512(before_512)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_threads_do_not_change_the_result(name, threads):
    x = np.random.default_rng(6).uniform(-5, 5, 50_001).astype(F32)
    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(threads)
        got = _float32_transcendentals._transcendental_f32(name, x)
    finally:
        kernels.set_num_threads(before)
    np.testing.assert_array_equal(got, correctly_rounded(name, x))


@pytest.mark.parametrize("name", NAMES)
def test_tensor_ops_take_the_loops_in_every_layout(name):
    t = gt.tensor(np.random.default_rng(7).uniform(-6, 6, (300, 200)).astype(F32))
    for view in (t, t.t(), t[::2], t[:, ::3]):
        got = getattr(view, name)()
        assert got.dtype == gt.float32 and got.shape == view.shape
        np.testing.assert_array_equal(got.numpy(), correctly_rounded(name, view.numpy()))
        inplace = view.clone()
        getattr(inplace, name + "_")()
        np.testing.assert_array_equal(inplace.numpy(), got.numpy())
    # a transposed input keeps its layout, as torch's result does
    assert getattr(t.t(), name)().stride() == t.t().stride()


def test_bad_arguments_of_the_test_hook():
    with pytest.raises(ValueError, match="'sin', 'cos' or 'tanh'"):
        _float32_transcendentals._transcendental_f32("exp", np.zeros(2, F32))
    with pytest.raises(TypeError, match="C-contiguous float32"):
        _float32_transcendentals._transcendental_f32("sin", np.zeros(2))
    with pytest.raises(TypeError, match="C-contiguous float32"):
        _float32_transcendentals._transcendental_f32("sin", np.zeros((2, 2), F32).T)


# ---------------------------------------------------------------------------------------
# sin and cos from one pass, and the by-product they leave (Note [sin and cos from one
# pass], Note [A kernel's by-product])


def test_sincos_gives_the_bits_of_sin_and_cos():
    x = np.concatenate(
        [
            np.random.default_rng(8).uniform(-10, 10, 300_000).astype(F32),
            every_binade(300_000, 9),
            F32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 262145.0, 3e38]),
        ]
    )
    s, c = _float32_transcendentals._sincos_f32(x)
    assert s.tobytes() == _float32_transcendentals._transcendental_f32("sin", x).tobytes()
    assert c.tobytes() == _float32_transcendentals._transcendental_f32("cos", x).tobytes()
    assert list(np.signbit(s[-9:-7])) == [False, True]


def test_sincos_does_not_depend_on_the_avx2_switch_nor_threads():
    x = every_binade(200_000, 10)
    before, before_512 = _kernels._avx2(), _kernels._avx512()
    threads = kernels.get_num_threads()
    try:
        _kernels._avx2(False)
        plain = _float32_transcendentals._sincos_f32(x)
        _kernels._avx2(True)
        _kernels._avx512(False)
        kernels.set_num_threads(2)
        clone = _float32_transcendentals._sincos_f32(x)
        _kernels._avx512(True)
        clone_512 = _float32_transcendentals._sincos_f32(x)
    finally:
        _kernels._avx2(before)
        _kernels._avx512(before_512)
        kernels.set_num_threads(threads)
    for other in (clone, clone_512):
        assert all(a.tobytes() == b.tobytes() for a, b in zip(plain, other, strict=True))


def _run(op, x, wanted):
    """``op`` of ``x`` by the kernel alone (nothing records it), with the by-product asked
    for or not, as the recording layer does around the kernel."""
    from gradstack_tensor._elementwise import _set_byproduct_wanted

    _set_byproduct_wanted(wanted)
    try:
        return gt.get_op(op).run_kernel(x)
    finally:
        _set_byproduct_wanted(False)


@pytest.mark.parametrize("op", ["sin", "cos"])
def test_a_requires_grad_input_leaves_the_other_function_when_asked(op):
    from gradstack_tensor.extension import take_byproduct

    a = np.random.default_rng(11).uniform(-3, 3, (100, 70)).astype(F32)
    other = "cos" if op == "sin" else "sin"
    for view in (lambda t: t, lambda t: t.t(), lambda t: t[::2]):
        x = view(gt.tensor(a))
        x._requires_grad = True  # as the autograd layer would see it, without recording
        try:
            out = _run(op, x, True)
            assert take_byproduct(x, _run(op, x, False)) is None  # not asked: none left
            out = _run(op, x, True)
        finally:
            x._requires_grad = False
        kept = take_byproduct(x, out)
        assert kept is not None and kept.shape == tuple(x.shape)
        np.testing.assert_array_equal(kept, correctly_rounded(other, x.numpy()))
        assert take_byproduct(x, out) is None  # emptied when taken
    # none for an input that does not require grad, nor for another pair of arrays
    x = gt.tensor(a)
    out = _run(op, x, True)
    assert take_byproduct(x, out) is None
    x._requires_grad = True
    try:
        out = _run(op, x, True)
    finally:
        x._requires_grad = False
    assert take_byproduct(gt.tensor(a), out) is None
    assert take_byproduct(x, x) is None
    assert take_byproduct(x, out) is not None
