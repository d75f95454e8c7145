"""The 2-d convolution on arrays: forward and backward as im2col + BLAS products.

``conv2d_forward`` and ``conv2d_backward`` are the kernels of tensor-core's ``conv2d`` op
and of its first-order gradient (graph-engine's ``ConvolutionBackward0``): the im2col and
col2im passes of ``_window_kernels.pyx`` (C, torch's loops) around numpy's BLAS products,
each product in the orientation that runs fastest at a convolution's shapes (Note [The
orientation of a convolution's products]), over chunks of the batch whose columns stay
small (Note [A convolution's columns are made a chunk at a time]).  Nothing is saved
between the forward and the backward but the input and the weight: the backward makes
the columns again, as torch's ``ConvolutionBackward0`` does.

Both take C-contiguous float32/float64 arrays of one dtype (they make them so, by a copy,
when they are not contiguous), check shapes before touching memory and raise ValueError
or TypeError saying what was wrong.  Public as ``gradstack_tensor.kernels``.

Note [The orientation of a convolution's products]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
With the columns ``cols[n]`` of a sample ``(K, L)`` (``K = C * kh * kw`` rows, one column
a window, im2col's layout) and the output's gradient ``g[n]`` ``(O, L)``:

- forward: ``out[n] = W (O, K) @ cols[n]``, one product per sample (numpy's matmul over
  the batch), written straight into the ``(N, O, L)`` result: an ``(O, N * L)`` product
  would need the result transposed after it, and measured slower (the per-sample operand
  stays in cache);
- weight: ``grad_W^T (K, O) = sum_n cols[n] @ g[n]^T``.  The obvious
  ``g[n] @ cols[n]^T`` (what matmul's gradient computes) makes OpenBLAS transpose the
  ``(K, L)`` columns: at ResNet's shapes (K = 144, L = 1024, O = 16, batch 32, one thread)
  it took 8.6-9.3 ms against 2.9-3.7 ms for this orientation, and over a ResNet step's
  convolutions 24-29 ms against 14;
- input: ``grad_cols[n] = W^T (K, O) @ g[n]``, then col2im.

Note [A convolution's columns are made a chunk at a time]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The columns are ``kh * kw`` times the input (9 times for a 3x3 kernel): made for the
whole batch at once, a ResNet stage's columns are 18 MiB, held through the product (and
the input gradient's columns as much again).  They are made for a chunk of samples at a
time instead, at most ``_CHUNK_ELEMENTS`` elements (whole samples, at least one), so the
buffer stays in the cache between im2col and the product and the step's peak memory does
not grow with it.  Measured on the benchmark's ResNet and LeNet-5 steps (one thread, CPU
time, chunks of 2^15 to 2^19 elements and the whole batch): the step times agree within
the noise from 2^16 up (2^15 costs LeNet ~10%), and the peak memory of a step
(tracemalloc) is ResNet 21.4 MiB at 2^17 against 26.1 MiB at 2^19 (88 MiB when the graph
held the columns), LeNet-5 4.2 against 6.9 MiB; so 2^17 (512 KiB of float32, a core's L2
cache).  The chunks' products are the same products: the values do not depend on the
chunk size.

Examples
--------
>>> import numpy as np
>>> x = np.arange(16.).reshape(1, 1, 4, 4)
>>> w = np.ones((1, 1, 2, 2))
>>> conv2d_forward(x, w, None, (2, 2), (0, 0), (1, 1), 1)[0, 0]
array([[10., 18.],
       [42., 50.]])
>>> gx, gw, gb = conv2d_backward(np.ones((1, 1, 2, 2)), x, w, (2, 2), (0, 0), (1, 1), 1,
...                              (True, True, True))
>>> gw[0, 0], gb
(array([[20., 24.],
       [36., 40.]]), array([4.]))
"""

from __future__ import annotations

import numpy as np

from . import _conv_winograd as _winograd
from ._window_kernels import _pair_arg as _pair  # a pair of Python ints, or TypeError
from ._window_kernels import col2im as _col2im
from ._window_kernels import im2col as _im2col

__all__ = ["conv2d_forward", "conv2d_backward"]

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# Note [A convolution's columns are made a chunk at a time]
_CHUNK_ELEMENTS = 1 << 17


def _array(func: str, name: str, a, dtype=None) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{func}: {name} must be a numpy array, got {type(a).__name__}")
    if a.dtype not in _DTYPES:
        raise TypeError(f"{func}: {name} must be float32 or float64, got {a.dtype}")
    if dtype is not None and a.dtype != dtype:
        raise TypeError(f"{func}: {name} is {a.dtype} but the input is {dtype}; cast it")
    return np.ascontiguousarray(a)


class _Geometry:
    """The checked shapes of one convolution."""

    __slots__ = ("n", "c", "h", "w", "o", "kh", "kw", "groups", "oh", "ow", "s", "p", "d")

    def __init__(self, func, x, w, stride, padding, dilation, groups):
        self.s = _pair(func, "stride", stride)
        self.p = _pair(func, "padding", padding)
        self.d = _pair(func, "dilation", dilation)
        if min(self.s) <= 0 or min(self.d) <= 0 or min(self.p) < 0:
            raise ValueError(
                f"{func}: stride and dilation must be positive and padding non-negative, got "
                f"stride={stride}, padding={padding}, dilation={dilation}"
            )
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            raise ValueError(f"{func}: groups must be a positive int, got {groups!r}")
        if x.ndim != 4 or w.ndim != 4:
            raise ValueError(
                f"{func}: input must be (N, C, H, W) and weight (O, C / groups, kh, kw), got "
                f"{x.shape} and {w.shape}"
            )
        self.n, self.c, self.h, self.w = x.shape
        self.o, cg, self.kh, self.kw = w.shape
        self.groups = int(groups)
        if cg * self.groups != self.c or self.o % self.groups or not min(w.shape):
            raise ValueError(
                f"{func}: weight {w.shape} does not fit an input of {self.c} channels in "
                f"{groups} groups (weight must be (O, C / groups, kh, kw), O divisible by "
                "groups, no dim 0)"
            )
        if not min(self.c, self.h, self.w):
            raise ValueError(f"{func}: input {x.shape} has an empty channel or spatial dim")
        self.oh = (self.h + 2 * self.p[0] - self.d[0] * (self.kh - 1) - 1) // self.s[0] + 1
        self.ow = (self.w + 2 * self.p[1] - self.d[1] * (self.kw - 1) - 1) // self.s[1] + 1
        if self.oh < 1 or self.ow < 1:
            raise ValueError(
                f"{func}: the {self.kh}x{self.kw} kernel (dilation {self.d}) does not fit the "
                f"padded {self.h}x{self.w} input; use a smaller kernel or more padding"
            )

    @property
    def window(self):
        return (self.kh, self.kw), self.d, self.p, self.s

    def chunk(self) -> int:
        """Samples per chunk of columns (Note [A convolution's columns are made ...])."""
        per = self.c * self.kh * self.kw * self.oh * self.ow
        return max(1, min(self.n, _CHUNK_ELEMENTS // max(per, 1)))


def conv2d_forward(x, weight, bias, stride, padding, dilation, groups):
    """The cross-correlation of ``x`` with ``weight`` plus ``bias``, as torch's ``conv2d``
    on a 4-d input (Note [The orientation of a convolution's products]).

    Parameters
    ----------
    x : ndarray
        ``(N, C, H, W)``, float32 or float64.
    weight : ndarray
        ``(O, C / groups, kh, kw)``, ``x``'s dtype.
    bias : ndarray or None
        ``(O,)``, ``x``'s dtype.
    stride, padding, dilation : pair of int
        Positive (padding non-negative), symmetric zero padding.
    groups : int
        Input and output channels split into this many independent groups.

    Returns
    -------
    ndarray
        ``(N, O, out_h, out_w)`` in ``x``'s dtype, C-contiguous.

    Raises
    ------
    TypeError
        If an operand is not a float32/float64 array of ``x``'s dtype or a size is not a
        pair of ints.
    ValueError
        If the shapes do not fit each other or the kernel does not fit the padded input.

    Examples
    --------
    >>> import numpy as np
    >>> conv2d_forward(np.ones((1, 2, 3, 3)), np.ones((1, 2, 3, 3)), np.array([0.5]),
    ...                (1, 1), (0, 0), (1, 1), 1)
    array([[[[18.5]]]])
    """
    func = "conv2d_forward"
    x = _array(func, "x", x)
    weight = _array(func, "weight", weight, x.dtype)
    if bias is not None:
        bias = _array(func, "bias", bias, x.dtype)
    g = _Geometry(func, x, weight, stride, padding, dilation, groups)
    if bias is not None and bias.shape != (g.o,):
        raise ValueError(f"{func}: bias must be ({g.o},), got {bias.shape}")
    if _winograd.winograd_applies(g):  # Note [Winograd's F(2x2, 3x3) convolution]
        out = _winograd.winograd_forward(x, weight, g)
        if bias is not None:
            out += bias.reshape(g.o, 1, 1)
        return out
    G, L = g.groups, g.oh * g.ow
    w2 = weight.reshape(G, g.o // G, -1)
    out = np.empty((g.n, g.o, g.oh, g.ow), dtype=x.dtype)
    flat = out.reshape(g.n, G, g.o // G, L)
    step = g.chunk()
    window = g.window
    cbuf = np.empty((min(step, g.n), g.c * g.kh * g.kw, L), dtype=x.dtype)
    for start in range(0, g.n, step):
        stop = min(start + step, g.n)
        cols = _im2col(x[start:stop], *window, out=cbuf[: stop - start], max_threads=1)
        np.matmul(w2, cols.reshape(stop - start, G, -1, L), out=flat[start:stop])
    if bias is not None:
        out += bias.reshape(g.o, 1, 1)
    return out


def conv2d_backward(grad, x, weight, stride, padding, dilation, groups, need):
    """The gradients of :func:`conv2d_forward` with respect to the input, the weight and
    the bias, each only where ``need`` asks (Note [The orientation of a convolution's
    products]); the columns are made again from ``x``, a chunk of the batch at a time.

    Parameters
    ----------
    grad : ndarray
        ``(N, O, out_h, out_w)``, the gradient of the output, ``x``'s dtype.
    x, weight, stride, padding, dilation, groups
        As :func:`conv2d_forward`.
    need : triple of bool
        Which of the input's, the weight's and the bias's gradients to compute.

    Returns
    -------
    (ndarray or None, ndarray or None, ndarray or None)
        The gradients of ``x``, ``weight`` and the bias (``(O,)``), None where not needed.

    Raises
    ------
    TypeError, ValueError
        As :func:`conv2d_forward`, and for a ``grad`` not of the output's shape.

    Examples
    --------
    >>> import numpy as np
    >>> gx, gw, gb = conv2d_backward(np.ones((1, 1, 1, 1)), np.ones((1, 1, 2, 2)),
    ...                              np.full((1, 1, 2, 2), 3.), (1, 1), (0, 0), (1, 1), 1,
    ...                              (True, False, False))
    >>> gx[0, 0], gw, gb
    (array([[3., 3.],
           [3., 3.]]), None, None)
    """
    func = "conv2d_backward"
    x = _array(func, "x", x)
    weight = _array(func, "weight", weight, x.dtype)
    grad = _array(func, "grad", grad, x.dtype)
    g = _Geometry(func, x, weight, stride, padding, dilation, groups)
    if grad.shape != (g.n, g.o, g.oh, g.ow):
        raise ValueError(
            f"{func}: grad must be the output's shape {(g.n, g.o, g.oh, g.ow)}, got {grad.shape}"
        )
    need_x, need_w, need_b = (bool(v) for v in need)
    G, L, og, n = g.groups, g.oh * g.ow, g.o // g.groups, g.n
    kg = weight[0].size
    gflat = grad.reshape(n, G, og, L)
    gx = gw = gb = None
    if need_b:
        gb = grad.reshape(n, g.o, L).sum(axis=2).sum(axis=0)
    if (need_x or need_w) and _winograd.winograd_applies(g):
        # Note [Winograd's F(2x2, 3x3) convolution]
        gx, gw = _winograd.winograd_backward(grad, x, weight, g, need_x, need_w)
        return gx, gw, gb
    # Note [A convolution's columns are made a chunk at a time]: the chunk's buffers are
    # made once, and col2im writes into the input gradient's rows without a copy
    step = g.chunk()
    window, size = g.window, (g.h, g.w)
    if need_x:
        wt = np.ascontiguousarray(weight.reshape(G, og, kg).transpose(0, 2, 1))  # (G, Kg, Og)
        gx = np.empty_like(x)
        gbuf = np.empty((step, G, kg, L), dtype=x.dtype)
    if need_w:
        gwt = np.zeros((G, kg, og), dtype=x.dtype)
        cbuf = np.empty((step, G * kg, L), dtype=x.dtype)
        wbuf = np.empty((step, G, kg, og), dtype=x.dtype)
    for start in range(0, n, step):
        stop = min(start + step, n)
        m = stop - start
        chunk = gflat[start:stop]
        if need_w:
            cols = _im2col(x[start:stop], *window, out=cbuf[:m], max_threads=1).reshape(m, G, kg, L)
            part = np.matmul(cols, chunk.transpose(0, 1, 3, 2), out=wbuf[:m])
            gwt += part[0] if m == 1 else part.sum(axis=0)
        if need_x:
            gcols = np.matmul(wt, chunk, out=gbuf[:m]).reshape(m, G * kg, L)
            _col2im(gcols, size, *window, out=gx[start:stop], max_threads=1)
    if need_w:
        gw = np.ascontiguousarray(gwt.transpose(0, 2, 1)).reshape(weight.shape)
    return gx, gw, gb
