"""Winograd's F(2x2, 3x3) convolution (``_winograd.pyx``'s transforms, ``_conv_winograd.py``'s
driver, taken by ``_conv_arrays.conv2d_forward``/``conv2d_backward`` for 3x3 stride-1
convolutions of enough channels) against torch 2.13: forward, input and weight
gradients in float32 and float64 over odd sizes, every padding, chunks of the batch,
non-contiguous operands, an empty batch; its float32 error against a float64 convolution
compared with im2col's; the fall-back geometries; the transforms' argument checks."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_tensor import _conv_arrays, _conv_winograd, kernels
from gradstack_tensor.kernels import conv2d_backward, conv2d_forward

torch = pytest.importorskip("torch")
F = torch.nn.functional

DTYPES = {"float32": (np.float32, 2e-5, 5e-5), "float64": (np.float64, 1e-12, 1e-11)}

# (input shape, out channels, padding): every one takes Winograd (3x3, stride 1, >= 8
# channels); odd planes end in half tiles
CASES = [
    ((2, 8, 5, 7), 8, (1, 1)),
    ((3, 9, 6, 6), 11, (0, 0)),
    ((1, 8, 4, 9), 8, (2, 1)),
    ((2, 8, 3, 3), 10, (3, 0)),  # padding past the kernel
    ((1, 12, 1, 1), 8, (1, 1)),  # one pixel
    ((4, 16, 9, 8), 16, (1, 1)),
]


def _arrays(shape, o, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = (rng.standard_normal((o, shape[1], 3, 3)) / np.sqrt(9 * shape[1])).astype(dtype)
    b = rng.standard_normal(o).astype(dtype)
    return x, w, b


def _torch(x, w, b, padding, grad=None):
    tx = torch.tensor(x.astype(np.float64), requires_grad=True)
    tw = torch.tensor(w.astype(np.float64), requires_grad=True)
    tb = None if b is None else torch.tensor(b.astype(np.float64))
    out = F.conv2d(tx, tw, tb, 1, padding)
    if grad is None:
        return out.detach().numpy(), None, None
    gx, gw = torch.autograd.grad(out, (tx, tw), torch.tensor(grad.astype(np.float64)))
    return out.detach().numpy(), gx.numpy(), gw.numpy()


def _geometry(x, w, padding):
    return _conv_arrays._Geometry("test", x, w, (1, 1), padding, (1, 1), 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_and_gradients_match_torch(case, dtype):
    dt, rtol, atol = DTYPES[dtype]
    shape, o, padding = case
    x, w, b = _arrays(shape, o, dt)
    assert _conv_winograd.winograd_applies(_geometry(x, w, padding))
    out = conv2d_forward(x, w, b, (1, 1), padding, (1, 1), 1)
    g = np.random.default_rng(1).standard_normal(out.shape).astype(dt)
    ref, rgx, rgw = _torch(x, w, b, padding, g)
    assert out.dtype == dt and out.shape == ref.shape and out.flags.c_contiguous
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
    gx, gw, gb = conv2d_backward(g, x, w, (1, 1), padding, (1, 1), 1, (True, True, True))
    assert gx.dtype == dt and gw.dtype == dt and gw.shape == w.shape
    np.testing.assert_allclose(gx, rgx, rtol=rtol, atol=atol)
    np.testing.assert_allclose(gw, rgw, rtol=rtol, atol=atol * 10)
    np.testing.assert_allclose(gb, g.astype(np.float64).sum((0, 2, 3)), rtol=rtol, atol=atol)


@pytest.mark.parametrize("need", [(True, False, False), (False, True, False), (False, False, True)])
def test_only_the_gradients_asked_for(need):
    x, w, b = _arrays((2, 8, 6, 5), 8, np.float64)
    g = np.random.default_rng(2).standard_normal((2, 8, 6, 5))
    got = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, need)
    full = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, True))
    for flag, a, ref in zip(need, got, full):
        if flag:
            np.testing.assert_array_equal(a, ref)
        else:
            assert a is None


@pytest.mark.parametrize("chunk", [1, 3000, 1 << 30])
def test_chunks_of_the_batch_give_the_same_values(monkeypatch, chunk):
    """Note [Winograd's tiles are made a chunk at a time]: one sample per chunk, chunks
    with a remainder, one chunk."""
    x, w, b = _arrays((7, 8, 6, 7), 9, np.float64)
    g = np.random.default_rng(3).standard_normal((7, 9, 6, 7))
    monkeypatch.setattr(_conv_winograd, "_CHUNK_ELEMENTS", chunk)
    out = conv2d_forward(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    gx, gw, _ = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, False))
    ref, rgx, rgw = _torch(x, w, b, (1, 1), g)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, rgx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, rgw, rtol=1e-12, atol=1e-11)


def test_non_contiguous_operands():
    x, w, b = _arrays((2, 8, 7, 6), 8, np.float32)
    xt = np.asfortranarray(x)
    wt = w.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)
    assert not xt.flags.c_contiguous and not wt.flags.c_contiguous
    out = conv2d_forward(xt, wt, b, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_array_equal(out, conv2d_forward(x, w, b, (1, 1), (1, 1), (1, 1), 1))
    g = np.random.default_rng(4).standard_normal(out.shape).astype(np.float32)
    got = conv2d_backward(g[:, :, ::-1][:, :, ::-1], xt, wt, (1, 1), (1, 1), (1, 1), 1,
                          (True, True, False))  # fmt: skip
    ref = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, False))
    for a, r in zip(got[:2], ref[:2]):
        np.testing.assert_array_equal(a, r)


def test_empty_batch():
    x = np.zeros((0, 8, 5, 5), np.float32)
    w = np.ones((8, 8, 3, 3), np.float32)
    out = conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    assert out.shape == (0, 8, 5, 5)
    gx, gw, gb = conv2d_backward(out, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, True))
    assert gx.shape == x.shape and not gw.any() and gw.shape == w.shape and not gb.any()


@pytest.mark.parametrize(
    "wshape, stride, dilation, groups, channels",
    [
        ((8, 8, 3, 3), (2, 2), (1, 1), 1, 8),  # stride 2
        ((8, 8, 3, 3), (1, 1), (2, 2), 1, 8),  # dilation
        ((8, 4, 3, 3), (1, 1), (1, 1), 2, 8),  # groups
        ((8, 8, 5, 5), (1, 1), (1, 1), 1, 8),  # 5x5
        ((8, 8, 3, 1), (1, 1), (1, 1), 1, 8),  # 3x1
        ((16, 3, 3, 3), (1, 1), (1, 1), 1, 3),  # too few channels (Note [Where Winograd pays])
    ],
)
def test_other_geometries_fall_back_to_im2col(wshape, stride, dilation, groups, channels):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, channels, 9, 9))
    w = rng.standard_normal(wshape)
    g = _conv_arrays._Geometry("test", x, w, stride, (1, 1), dilation, groups)
    assert not _conv_winograd.winograd_applies(g)
    out = conv2d_forward(x, w, None, stride, (1, 1), dilation, groups)
    ref = F.conv2d(torch.tensor(x), torch.tensor(w), None, stride, 1, dilation, groups)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c, h", [(16, 32), (32, 16), (64, 8)])
def test_float32_error_is_not_above_im2col(monkeypatch, c, h):
    """Note [Why F(2x2, 3x3) and not F(4x4, 3x3)]: at the benchmark ResNet's convolutions
    (a smaller batch), Winograd's float32 error against a float64 convolution is no larger
    than im2col + BLAS's, for the output and both gradients (largest error over the
    largest value, with a 1.5x margin for the rounding's luck)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, c, h, h)).astype(np.float32)
    w = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    g = rng.standard_normal((4, c, h, h)).astype(np.float32)
    refs = _torch(x, w, None, (1, 1), g)

    def errors():
        out = conv2d_forward(x, w, None, (1, 1), (1, 1), (1, 1), 1)
        gx, gw, _ = conv2d_backward(g, x, w, (1, 1), (1, 1), (1, 1), 1, (True, True, False))
        return [np.abs(a - r).max() / np.abs(r).max() for a, r in zip((out, gx, gw), refs)]

    wino = errors()
    monkeypatch.setattr(_conv_winograd, "_MIN_CHANNELS", 1 << 30)
    im2col = errors()
    for a, b in zip(wino, im2col):
        assert a <= 1.5 * b + 1e-7, (wino, im2col)


def test_transforms_are_exported_and_checked():
    for name in ("winograd_input_tiles", "winograd_output_tiles", "winograd_grad_tiles",
                 "winograd_input_grad"):  # fmt: skip
        assert name in kernels.__all__
    x = np.ones((1, 2, 4, 4), np.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.winograd_input_tiles(x.astype(np.int64), (1, 1), 2, 2)
    with pytest.raises(ValueError, match="contiguous"):
        kernels.winograd_input_tiles(x[:, :, ::2], (1, 1), 2, 2)
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        kernels.winograd_input_tiles(x[0], (1, 1), 2, 2)
    with pytest.raises(TypeError, match="padding"):
        kernels.winograd_input_tiles(x, 1, 2, 2)
    with pytest.raises(ValueError, match="non-negative"):
        kernels.winograd_input_tiles(x, (1, 1), -1, 2)
    with pytest.raises(ValueError, match="out must be"):
        kernels.winograd_input_tiles(x, (1, 1), 2, 2, out=np.empty((16, 2, 3), np.float32))
    with pytest.raises(ValueError, match="out must be"):
        kernels.winograd_input_tiles(x, (1, 1), 2, 2, out=np.empty((16, 2, 4), np.float64))
    m = np.zeros((16, 2, 4), np.float32)
    with pytest.raises(ValueError, match=r"\(16, 2, 1\)"):
        kernels.winograd_output_tiles(m, 1, 2, 2)
    with pytest.raises(ValueError, match="overlaps"):
        big = np.zeros(16 * 2 * 4, np.float32)
        kernels.winograd_input_grad(big.reshape(16, 2, 4), 1, 4, 4, (1, 1), 2, 2,
                                    out=big[:32].reshape(1, 2, 4, 4))  # fmt: skip
    with pytest.raises(TypeError, match="int"):
        kernels.winograd_input_grad(m, 1.0, 4, 4, (1, 1), 2, 2)
    with pytest.raises(ValueError, match="read-only"):
        out = np.empty((16, 2, 1), np.float32)
        out.flags.writeable = False
        kernels.winograd_grad_tiles(np.ones((1, 2, 2, 2), np.float32), out=out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_input_grad_is_the_transpose_of_input_tiles(dtype):
    """<winograd_input_tiles(x), z> == <x, winograd_input_grad(z)> for any padding and
    odd planes (the adjoint the backward relies on)."""
    rng = np.random.default_rng(7)
    for h, w, p, th, tw in [(5, 7, (1, 1), 3, 4), (4, 4, (0, 2), 1, 3), (3, 6, (2, 0), 2, 2)]:
        x = rng.standard_normal((2, 3, h, w)).astype(dtype)
        z = rng.standard_normal((16, 3, 2 * th * tw)).astype(dtype)
        lhs = (kernels.winograd_input_tiles(x, p, th, tw).astype(np.float64) * z).sum()
        rhs = (x.astype(np.float64) * kernels.winograd_input_grad(z, 2, h, w, p, th, tw)).sum()
        np.testing.assert_allclose(lhs, rhs, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_threads_give_the_same_bits():
    """Note [Winograd's transforms split planes across threads]: above the parallel
    threshold the planes go to two threads, each plane computed alike."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 16, 20, 18)).astype(np.float32)
    z = rng.standard_normal((16, 16, 8 * 10 * 9)).astype(np.float32)
    g = rng.standard_normal((8, 16, 20, 18)).astype(np.float32)
    m = rng.standard_normal((16, 16, 8 * 10 * 9)).astype(np.float32)

    def run():
        return (
            kernels.winograd_input_tiles(x, (1, 1), 10, 9),
            kernels.winograd_input_grad(z, 8, 20, 18, (1, 1), 10, 9),
            kernels.winograd_grad_tiles(g),
            kernels.winograd_output_tiles(m, 8, 20, 18),
        )

    before = kernels.get_num_threads()
    try:
        kernels.set_num_threads(1)
        one = run()
        kernels.set_num_threads(2)
        two = run()
    finally:
        kernels.set_num_threads(before)
    assert 16 * x.size >= kernels.PARALLEL_THRESHOLD
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    capped = kernels.winograd_input_tiles(x, (1, 1), 10, 9, max_threads=1)
    np.testing.assert_array_equal(capped, one[0])
    with pytest.raises(ValueError, match="max_threads"):
        kernels.winograd_grad_tiles(g, max_threads=0)


# Winograd's F(2x2, 3x3) matrices, for the references below
_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)

# (n, c, h, w, padding, th, tw): odd planes, paddings past the kernel, one tile, more
# tiles than the plane holds, none (Note [Winograd's input transform in two flat passes])
_TILINGS = [
    (2, 3, 5, 7, (1, 1), 3, 4),
    (1, 2, 4, 4, (0, 0), 1, 1),
    (1, 1, 1, 1, (1, 1), 1, 1),
    (2, 2, 6, 3, (2, 3), 5, 2),
    (1, 2, 9, 8, (0, 1), 2, 6),
    (1, 1, 3, 3, (1, 0), 0, 2),
    (1, 1, 3, 3, (1, 0), 2, 0),
    (1, 1, 67, 40, (1, 1), 33, 20),  # bands of 12 rows of tiles (GS_W_BAND)
    (1, 1, 5, 600, (1, 2), 2, 300),  # a row of tiles past the band
]


def _padded(x, padding, th, tw):
    """The input zero-padded (and cut) to the ``2 th + 2`` x ``2 tw + 2`` the tiles read."""
    n, c, h, w = x.shape
    out = np.zeros((n, c, 2 * th + 2, 2 * tw + 2))
    ph, pw = padding
    rows, cols = min(h, out.shape[2] - ph), min(w, out.shape[3] - pw)
    out[:, :, ph : ph + rows, pw : pw + cols] = x[:, :, :rows, :cols]
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tiling", _TILINGS, ids=str)
def test_tile_transforms_match_a_per_tile_reference(tiling, dtype):
    """Each transform against its formula tile by tile in float64 (the transforms are
    additions of at most four numbers, so float32 agrees to its rounding)."""
    n, c, h, w, p, th, tw = tiling
    rng = np.random.default_rng(9)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    z = rng.standard_normal((16, c, n * th * tw)).astype(dtype)
    pad = _padded(x.astype(np.float64), p, th, tw)
    v = np.zeros((16, c, n, th, tw))
    for ty in range(th):
        for tx in range(tw):
            d = pad[:, :, 2 * ty : 2 * ty + 4, 2 * tx : 2 * tx + 4]
            v[:, :, :, ty, tx] = np.einsum("ia,ncab,jb->ijcn", _BT, d, _BT).reshape(16, c, n)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(kernels.winograd_input_tiles(x, p, th, tw),
                               v.reshape(16, c, -1), rtol=tol, atol=tol)  # fmt: skip
    # the input gradient is the transpose: B z B^T of every tile, added where they overlap
    zt = z.astype(np.float64).reshape(4, 4, c, n, th, tw)
    acc = np.zeros((n, c, 2 * th + 2, 2 * tw + 2))
    for ty in range(th):
        for tx in range(tw):
            acc[:, :, 2 * ty : 2 * ty + 4, 2 * tx : 2 * tx + 4] += np.einsum(
                "ia,ijcn,jb->ncab", _BT, zt[:, :, :, :, ty, tx], _BT
            )
    ref = np.zeros((n, c, h, w))
    ph, pw = p
    rows, cols = min(h, acc.shape[2] - ph), min(w, acc.shape[3] - pw)
    ref[:, :, :rows, :cols] = acc[:, :, ph : ph + rows, pw : pw + cols]
    np.testing.assert_allclose(kernels.winograd_input_grad(z, n, h, w, p, th, tw), ref,
                               rtol=tol * 4, atol=tol * 4)  # fmt: skip
    # the output gradient's transform: A g A^T of every 2x2 block, zero past the plane
    g = x
    gh, gw = (h + 1) // 2, (w + 1) // 2
    gp = np.zeros((n, c, 2 * gh, 2 * gw))
    gp[:, :, :h, :w] = g
    q = np.einsum("ai,ncyaxb,bj->ijcnyx", _AT, gp.reshape(n, c, gh, 2, gw, 2), _AT)
    np.testing.assert_allclose(kernels.winograd_grad_tiles(g), q.reshape(16, c, -1),
                               rtol=tol, atol=tol)  # fmt: skip
    # the output transform: A^T m A of every tile, cropped to the plane
    m = z.astype(np.float64).reshape(4, 4, c, n, th, tw)
    y = np.einsum("ai,ijcnyx,bj->ncyaxb", _AT, m, _AT).reshape(n, c, 2 * th, 2 * tw)
    oh, ow = max(2 * th - 1, 0), max(2 * tw - 1, 0)
    np.testing.assert_allclose(kernels.winograd_output_tiles(z, n, oh, ow), y[:, :, :oh, :ow],
                               rtol=tol * 4, atol=tol * 4)  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_filter_transforms_match_their_formulas(dtype):
    """U = G w G^T and dw = G^T dU G in float64, rounded once; checked arguments."""
    rng = np.random.default_rng(10)
    w = rng.standard_normal((5, 3, 3, 3)).astype(dtype)
    du = rng.standard_normal((16, 5, 3)).astype(dtype)
    u = np.einsum("ia,ocab,lb->iloc", _G, w.astype(np.float64), _G).reshape(16, 5, 3)
    dw = np.einsum("ia,iloc,lb->ocab", _G, du.astype(np.float64).reshape(4, 4, 5, 3), _G)
    got_u, got_dw = kernels.winograd_filter_tiles(w), kernels.winograd_filter_grad(du)
    assert got_u.dtype == dtype and got_dw.dtype == dtype
    tol = 1e-7 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got_u, u.astype(dtype), rtol=tol, atol=tol)
    np.testing.assert_allclose(got_dw, dw.astype(dtype), rtol=tol, atol=tol)
    with pytest.raises(ValueError, match=r"\(O, C, 3, 3\)"):
        kernels.winograd_filter_tiles(np.ones((2, 2, 5, 5), dtype))
    with pytest.raises(ValueError, match=r"\(16, O, C\)"):
        kernels.winograd_filter_grad(np.ones((9, 2, 2), dtype))
    with pytest.raises(TypeError, match="float32 or float64"):
        kernels.winograd_filter_tiles(np.ones((2, 2, 3, 3), np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        kernels.winograd_filter_grad(np.ones((16, 2, 4), dtype)[:, :, ::2])
    assert kernels.winograd_filter_tiles(np.ones((0, 2, 3, 3), dtype)).shape == (16, 0, 2)
