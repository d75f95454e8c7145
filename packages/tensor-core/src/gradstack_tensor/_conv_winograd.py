"""Winograd's F(2x2, 3x3) convolution on arrays: the 3x3, stride-1 convolutions of
``_conv_arrays.py`` (forward and backward) as 16 matrix products over transformed tiles
(Note [Winograd's F(2x2, 3x3) convolution]).

Private to tensor-core: ``_conv_arrays.conv2d_forward``/``conv2d_backward`` call
:func:`winograd_applies` and, where it says so, :func:`winograd_forward` and
:func:`winograd_backward`, on arrays they have already checked (C-contiguous, one
float32/float64 dtype, shapes that fit).

Note [Winograd's F(2x2, 3x3) convolution]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A 3x3 convolution computes each 2x2 block of outputs from a 4x4 tile of the input.  In
Winograd's minimal filtering algorithm (Lavin and Gray, "Fast Algorithms for
Convolutional Neural Networks", 2015) the block is ``A^T [(G w G^T) ⊙ (B^T d B)] A``
summed over the input channels: the sum over channels of the element-wise products is,
for each of the 16 positions ``p`` of the transformed tile, a matrix product
``M[p] (O, T) = U[p] (O, C) @ V[p] (C, T)`` over the ``T`` tiles.  That is 16 products of
``O * C * T`` multiplications where im2col's product has ``9 * O * C * 4 T``: 2.25x fewer.
The transforms (``_winograd.pyx``) are additions, one pass each over the input and the
products.  The backward is the forward transposed (Note [The backward is the forward
transposed] in ``_winograd.pyx``): ``Q = A g A^T`` of the output gradient, then
``Z[p] = U[p]^T @ Q[p]`` for the input gradient (its tiles added where they overlap) and
``dU[p] = Q[p] @ V[p]^T`` (summed over the tiles by the product) for the weight's,
``dw = G^T dU G``.

Values: F(2x2, 3x3)'s transforms hold only 0, +-1 and 1/2, so its rounding error is that
of a convolution: measured in float32 at the benchmark ResNet's shapes against a float64
convolution, the forward's largest error was 2.3e-7 to 3.0e-7 of the largest output,
im2col + sgemm's 4.8e-7 to 6.8e-7 and torch's 3.0e-7 to 3.9e-7 (Note [Why F(2x2, 3x3)
and not F(4x4, 3x3)] in ``_winograd.pyx``; ``tests/test_conv_winograd.py`` checks the
forward and both gradients against torch).  ``U = G w G^T`` and ``dw = G^T dU G`` are
computed in float64 (16 x 9 numbers per channel pair, one loop in ``_winograd.pyx``) and
rounded once.

Note [Where Winograd pays]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The products have ``C`` (forward, weight gradient) or ``O`` (input gradient) as their
inner dimension; with few channels they are short and BLAS runs them far below its peak,
while the transforms cost the same per element.  Measured on the benchmark ResNet's
convolutions (batch 32, float32, one thread, a loaded 2-core host, best of 15): the stem
(3 -> 16 channels, 32x32) took 1.1 ms forward and 1.4 ms backward by Winograd against
0.5 and 0.5 by im2col, so a convolution needs ``_MIN_CHANNELS`` = 8 channels in and out;
the four 16-, 32- and 64-channel convolutions (forward and both gradients) took 61-63 ms
against 87-92 ms by im2col.  The transforms are most of Winograd's time (at 16 channels
and 32x32: the input's 1.1-1.4 ms, the products' 0.8 ms of a forward).

Note [Winograd's tiles are made a chunk at a time]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The transformed tiles are 4x the input (16 numbers per 4 outputs): the whole batch's
would be 8 MiB at the ResNet's first stage, and as much again for the products.  As
im2col's columns (Note [A convolution's columns are made a chunk at a time] in
``_conv_arrays.py``), they are made for a chunk of whole samples at a time, at most
``_CHUNK_ELEMENTS`` numbers per buffer, so that they stay in the cache and the step's
peak memory does not grow (two buffers, as im2col's: the backward's input tiles and its
input-gradient tiles take turns in one).  Measured as above, chunks of 2^15, 2^16 and
2^17 elements took the same time (63 ms), 2^18 83 ms; and the ResNet step's peak memory
was 24.6 MiB at 2^18 with three buffers, 22.6 MiB at 2^17 with two (im2col's 21.4 MiB,
torch's 22.9 MiB); so 2^16.  The values do not depend on the chunk but for the weight
gradient's sums over the chunks, added in chunk order.
"""

from __future__ import annotations

import numpy as np

from ._winograd import (
    winograd_filter_grad,
    winograd_filter_tiles,
    winograd_grad_tiles,
    winograd_input_grad,
    winograd_input_tiles,
    winograd_output_tiles,
)

# Note [Where Winograd pays]
_MIN_CHANNELS = 8

# Note [Winograd's tiles are made a chunk at a time]
_CHUNK_ELEMENTS = 1 << 16


def winograd_applies(g) -> bool:
    """Whether a checked convolution geometry (``_conv_arrays._Geometry``) takes F(2x2, 3x3):
    a 3x3 kernel, stride and dilation 1, one group, enough channels (Note [Where Winograd
    pays]) and a non-empty batch."""
    return (
        g.kh == 3
        and g.kw == 3
        and g.s == (1, 1)
        and g.d == (1, 1)
        and g.groups == 1
        and g.n > 0
        and min(g.c, g.o) >= _MIN_CHANNELS
    )


def _tiles(g) -> tuple[int, int]:
    return (g.oh + 1) // 2, (g.ow + 1) // 2


def _chunk(g, th: int, tw: int) -> int:
    """Samples per chunk (Note [Winograd's tiles are made a chunk at a time])."""
    per = 16 * max(g.c, g.o) * th * tw
    return max(1, min(g.n, _CHUNK_ELEMENTS // per))


def winograd_forward(x: np.ndarray, weight: np.ndarray, g) -> np.ndarray:
    """The convolution of ``x`` with the 3x3 ``weight`` (no bias) by F(2x2, 3x3):
    ``(N, O, oh, ow)``."""
    th, tw = _tiles(g)
    u = winograd_filter_tiles(weight)
    out = np.empty((g.n, g.o, g.oh, g.ow), dtype=x.dtype)
    step = _chunk(g, th, tw)
    full = step * th * tw
    vbuf = np.empty((16, g.c, full), dtype=x.dtype)
    mbuf = np.empty((16, g.o, full), dtype=x.dtype)
    for start in range(0, g.n, step):
        stop = min(start + step, g.n)
        t = (stop - start) * th * tw
        v = vbuf if t == full else np.empty((16, g.c, t), x.dtype)
        winograd_input_tiles(x[start:stop], g.p, th, tw, out=v, max_threads=1)
        m = mbuf if t == full else np.empty((16, g.o, t), x.dtype)
        np.matmul(u, v, out=m)
        winograd_output_tiles(m, stop - start, g.oh, g.ow, out=out[start:stop], max_threads=1)
    return out


def winograd_backward(grad: np.ndarray, x: np.ndarray, weight: np.ndarray, g, need_x: bool,
                      need_w: bool):  # fmt: skip
    """The input's and the weight's gradients of :func:`winograd_forward` (None where not
    needed), Note [The backward is the forward transposed] in ``_winograd.pyx``."""
    th, tw = _tiles(g)
    step = _chunk(g, th, tw)
    full = step * th * tw
    gx = gw = None
    if need_x:
        ut = np.ascontiguousarray(winograd_filter_tiles(weight).transpose(0, 2, 1))  # (16, C, O)
        gx = np.empty_like(x)
    if need_w:
        du = np.zeros((16, g.o, g.c), dtype=x.dtype)
        part = np.empty_like(du)
    # the input's tiles and the input gradient's take turns in one buffer
    vbuf = np.empty((16, g.c, full), dtype=x.dtype)
    qbuf = np.empty((16, g.o, full), dtype=x.dtype)
    for start in range(0, g.n, step):
        stop = min(start + step, g.n)
        m = stop - start
        t = m * th * tw
        q = qbuf if t == full else np.empty((16, g.o, t), x.dtype)
        winograd_grad_tiles(grad[start:stop], out=q, max_threads=1)
        if need_w:
            v = vbuf if t == full else np.empty((16, g.c, t), x.dtype)
            winograd_input_tiles(x[start:stop], g.p, th, tw, out=v, max_threads=1)
            np.matmul(q, v.transpose(0, 2, 1), out=part)
            du += part
        if need_x:
            z = vbuf if t == full else np.empty((16, g.c, t), x.dtype)
            np.matmul(ut, q, out=z)
            winograd_input_grad(z, m, g.h, g.w, g.p, th, tw, out=gx[start:stop], max_threads=1)
    if need_w:
        gw = winograd_filter_grad(du)
    return gx, gw
