# cython: language_level=3
"""The fused LSTM and GRU cells: one pass over a time step's gates, forward and backward,
as torch's ``_thnn_fused_lstm_cell`` and ``_thnn_fused_gru_cell`` (and their ``_backward``).

A recurrent layer computes a step's gate pre-activations with two GEMMs (the input's,
for the whole sequence at once, and the hidden state's); everything after them is
elementwise on rows of ``4 * H`` (LSTM) or ``3 * H`` (GRU) values, which these kernels
do in one pass a row (Note [One pass over a cell's row]).  Public as
``gradstack_tensor.kernels``; tensor-core's ops ``_thnn_fused_lstm_cell`` and
``_thnn_fused_gru_cell`` (``_impl_nn.py``) run the forward kernels, graph-engine's
derivative rows the backward ones.

Arrays are float32 or float64, native byte order, C-contiguous, of one dtype (the checks
of ``_kernels.pyx``): gates ``(N, G * H)``, states ``(N, H)``, biases ``(G * H,)``.
Anything else raises ``TypeError``/``ValueError`` before memory is touched.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor.kernels import lstm_cell_forward
>>> gates = np.zeros((1, 4), np.float32)
>>> hy, cy, workspace = lstm_cell_forward(gates, gates, np.ones((1, 1), np.float32))
>>> cy, workspace
(array([[0.5]], dtype=float32), array([[0.5, 0.5, 0. , 0.5]], dtype=float32))
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport exp, tanh
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from ._float32_transcendentals cimport _tanh_range
from ._kernels cimport (
    _check_input, kernel_avx2, kernel_block_size, kernel_threads, real,
)

import numpy as np

cnp.import_array()

__all__ = [
    "RNN_PARALLEL_THRESHOLD", "gru_cell_backward", "gru_cell_forward", "lstm_cell_backward",
    "lstm_cell_forward",
]


# Note [One pass over a cell's row]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch's CPU LSTMCell (aten/src/ATen/native/RNN.cpp) runs, per step, after its two
# linear layers: an add, four chunked activations, three multiplies, an add and a tanh,
# each a pass over memory and, under autograd, a node whose backward is another pass.
# These kernels do a row of the batch at a time, its gates in a scratch row that stays in
# L1: the sum of the gate pre-activations, the activations (written to the workspace,
# which the backward reads), the cell and hidden state.  The arithmetic is torch's, in
# its order and the input's dtype, so that float32 results round as torch's do:
#
#     LSTM   i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (ig + hg [+ ib] [+ hb])
#            cy = f * cx + i * g;   hy = o * tanh(cy)
#     GRU    r, z = sigmoid(ig + hg [+ ib] [+ hb]);   hn = hg_n [+ hb_n]
#            n = tanh((ig_n [+ ib_n]) + r * hn);   hy = (hx - n) * z + n
#
# (torch's GRUCell returns ``(hidden - new_gate).mul_(input_gate).add_(new_gate)``.)
# The backward formulas are torch's ``_thnn_fused_lstm_cell_backward_impl`` and
# ``_thnn_fused_gru_cell_backward``, written as its autograd composes the CPU ops'
# derivatives (``sigmoid_backward(g, y) = g * (1 - y) * y``, ``tanh_backward(g, y) =
# g * (1 - y * y)``), so that the create_graph path (the same formulas in gradstack ops,
# graph-engine's derivatives/nn.py) gives the same values.  The workspace is torch's:
# the activated gates ``[i, f, g, o]`` (LSTM, ``(N, 4H)``) and ``[r, z, n, hx, hn]``
# (GRU, ``(N, 5H)``); the LSTM backward takes tanh(cy) again (the same bits).  The
# module is compiled for baseline x86-64, where there is no fma for the compiler to
# contract ``f * cx + i * g`` into: each product rounds, as torch's separate ops do.
#
# Note [float32 sigmoid in one rounding]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# float32 tanh is tensor-core's (Note [float32 tanh] in _float32_transcendentals.pyx: the
# same bits as ``Tensor.tanh``).  float32 sigmoid is 1 / (1 + exp(-x)) in float64,
# rounded once: exp by the same branch-free reduction as that tanh (k = round(y / ln 2),
# r = y - k ln 2 with ln 2 split in two, exp(r) by its Taylor series to r**12, 2**k from
# k's bits), with y = -x clamped to [-200, 200] by arithmetic (sigmoid rounds to 0 or 1
# in float32 long before), so that the loop vectorises (an AVX2 copy with fma, Note [AVX2
# clones] in _kernels.pyx; the explicit fmas give both copies the same float32 bits).
# The float64 value is within a few 1e-16 of sigmoid(x), so the float32 result is the
# correctly rounded one but within that of a rounding boundary; torch's (Sleef's expf,
# one float32 reciprocal) is within an ulp of it.  |x| > 1e15 and nan are redone by libm.
# float64 takes libm's exp and tanh, as torch's scalar fallbacks.

cdef extern from *:
    """
    /* Note [float32 sigmoid in one rounding]; GS_BODY and GS_DISPATCH: _kernels.pxd */
    #include <math.h>
    #include <stdint.h>
    #include <string.h>

    #define GS_RNN_ROUNDER 6755399441055744.0          /* 1.5 * 2**52 */
    #define GS_RNN_INV_LN2 1.44269504088896338700e+00
    #define GS_RNN_LN2_HI 6.93147180369123816490e-01   /* fdlibm's ln2_hi */
    #define GS_RNN_LN2_LO 1.90821492927058770002e-10   /* ln 2 - GS_RNN_LN2_HI */
    #define GS_RNN_CLAMP 200.0
    #define GS_RNN_LIMIT 1e15f                        /* the clamp is exact below */

    GS_BODY double gs_rnn_madd(double a, double b, double c, int fused) {
    #if GS_AVX2_CLONES
        if (fused)
            return __builtin_fma(a, b, c);
    #endif
        return a * b + c;
    }

    /* sigmoid(x) in float64 rounded to float32, for |x| <= GS_RNN_LIMIT. */
    GS_BODY float gs_rnn_sigmoid_one_f32(float xf, int fused) {
        double y = -(double)xf;
        y = y - (y > GS_RNN_CLAMP) * (y - GS_RNN_CLAMP);
        y = y - (y < -GS_RNN_CLAMP) * (y + GS_RNN_CLAMP);
        double kr = gs_rnn_madd(y, GS_RNN_INV_LN2, GS_RNN_ROUNDER, fused);
        double k = kr - GS_RNN_ROUNDER;
        double r = gs_rnn_madd(-k, GS_RNN_LN2_LO, gs_rnn_madd(-k, GS_RNN_LN2_HI, y, fused),
                               fused);
        double p = gs_rnn_madd(r, 1.0 / 479001600.0, 1.0 / 39916800.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 3628800.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 362880.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 40320.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 5040.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 720.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 120.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 24.0, fused);
        p = gs_rnn_madd(r, p, 1.0 / 6.0, fused);
        p = gs_rnn_madd(r, p, 0.5, fused);
        double em1_r = gs_rnn_madd(r * r, p, r, fused);     /* expm1(r) */
        uint64_t bits;
        memcpy(&bits, &kr, sizeof bits);                    /* ... + k in the low bits */
        bits = (bits + 1023) << 52;                         /* 2**k: |k| <= 289 */
        double scale;
        memcpy(&scale, &bits, sizeof scale);
        double e = gs_rnn_madd(scale, em1_r, scale, fused);  /* exp(y) */
        return (float)(1.0 / (1.0 + e));
    }

    /* out = sigmoid(x) on [0, n); returns whether some |x| > GS_RNN_LIMIT or nan. */
    GS_BODY int gs_rnn_sigmoid_body(const float* x, float* out, Py_ssize_t n, int fused) {
        int outside = 0;
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            outside |= !(fabsf(x[i]) <= GS_RNN_LIMIT);
            out[i] = gs_rnn_sigmoid_one_f32(x[i], fused);
        }
        return outside;
    }

    static int gs_rnn_sigmoid_f32_default(const float* x, float* out, Py_ssize_t n) {
        return gs_rnn_sigmoid_body(x, out, n, 0);
    }

    #if GS_AVX2_CLONES
    __attribute__((target("avx2,fma")))
    static int gs_rnn_sigmoid_f32_avx2(const float* x, float* out, Py_ssize_t n) {
        return gs_rnn_sigmoid_body(x, out, n, 1);
    }
    #endif

    static int gs_rnn_sigmoid_f32(int gs_avx2, const float* x, float* out, Py_ssize_t n) {
        return GS_DISPATCH(gs_rnn_sigmoid_f32, (x, out, n));
    }
    """
    float GS_RNN_LIMIT
    int gs_rnn_sigmoid_f32(int avx2, const float* x, float* out,
                           Py_ssize_t n) noexcept nogil


# Note [When a cell's rows take threads]
# A row of H = 256 costs ~2 us forward (five activations of 256 values and the cell
# arithmetic) and ~1 us backward, so the batch's rows are split across threads from
# RNN_PARALLEL_THRESHOLD elements of state (N * H).  Measured with H = 256, float32 (AMD
# EPYC, 2 cores, load average ~9 from other jobs; time on 1 thread / time on 2):
#
#     N * H        512   1k    2k    4k    8k    16k
#     forward     0.99  1.01  2.17  1.81  1.89  1.51
#     backward    1.00  1.00  1.07  1.58  1.79  1.37
#
# (below 2k the rows ran on one thread either way: a block of one row is no gain.)  From 2k
# both win or break even, as for the transcendental kernels (Note [Choosing
# PARALLEL_THRESHOLD] in _kernels.pyx).  Results do not depend on the split: each row is
# computed alike.  The bias gradients are column sums over the rows, taken after the
# rows, in row order, on one thread.
cdef Py_ssize_t _rnn_threshold = 1 << 11
RNN_PARALLEL_THRESHOLD = _rnn_threshold


# ---------------------------------------------------------------------------------------
# activations on a row (out must not be x: the libm passes read x again)

cdef inline void _sigmoid(const real* x, real* out, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if real is float:
        if gs_rnn_sigmoid_f32(kernel_avx2(), x, out, n):
            for i in range(n):
                if not (x[i] <= GS_RNN_LIMIT and x[i] >= -GS_RNN_LIMIT):
                    out[i] = <float>(1.0 / (1.0 + exp(-<double>x[i])))
    else:
        for i in range(n):
            out[i] = 1.0 / (1.0 + exp(-x[i]))


cdef inline void _tanh(const real* x, real* out, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    if real is float:
        _tanh_range(x, out, 0, n)
    else:
        for i in range(n):
            out[i] = tanh(x[i])


cdef inline void _gate_sums(const real* a, const real* b, const real* ib, const real* hb,
                            real* out, Py_ssize_t n) noexcept nogil:
    """out = a + b [+ ib] [+ hb], left to right (torch's order)."""
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = a[j] + b[j]
    if ib != NULL:
        for j in range(n):
            out[j] = out[j] + ib[j]
    if hb != NULL:
        for j in range(n):
            out[j] = out[j] + hb[j]


# ---------------------------------------------------------------------------------------
# LSTM rows (Note [One pass over a cell's row])

cdef int _lstm_forward_rows(const real* ig, const real* hg, const real* cx, const real* ib,
                            const real* hb, real* hy, real* cy, real* ws, Py_ssize_t H,
                            Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef Py_ssize_t r, j, G = 4 * H
    cdef real* s = <real*>malloc((G + 1) * sizeof(real))
    cdef real* w
    cdef real* c
    cdef real* h
    cdef const real* c0
    if s == NULL:
        return 1  # the caller raises MemoryError
    for r in range(r0, r1):
        w = ws + r * G
        c = cy + r * H
        h = hy + r * H
        c0 = cx + r * H
        _gate_sums(ig + r * G, hg + r * G, ib, hb, s, G)
        _sigmoid(s, w, 2 * H)
        _tanh(s + 2 * H, w + 2 * H, H)
        _sigmoid(s + 3 * H, w + 3 * H, H)
        for j in range(H):
            c[j] = w[H + j] * c0[j] + w[j] * w[2 * H + j]
        _tanh(c, s, H)
        for j in range(H):
            h[j] = w[3 * H + j] * s[j]
    free(s)
    return 0


cdef int _lstm_backward_rows(const real* ghy, const real* gcy, const real* cx,
                             const real* cy, const real* ws, real* gg, real* gcx,
                             Py_ssize_t H, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef Py_ssize_t r, j, G = 4 * H
    cdef real* t = <real*>malloc((H + 1) * sizeof(real))
    cdef const real* w
    cdef real* d
    cdef real i, f, g, o, th, gc
    cdef real one = 1   # (a literal 1 would be a double: the float32 products must round)
    if t == NULL:
        return 1
    for r in range(r0, r1):
        w = ws + r * G
        d = gg + r * G
        _tanh(cy + r * H, t, H)
        for j in range(H):
            i = w[j]
            f = w[H + j]
            g = w[2 * H + j]
            o = w[3 * H + j]
            th = t[j]
            d[3 * H + j] = ((ghy[r * H + j] * th) * (one - o)) * o
            gc = (ghy[r * H + j] * o) * (one - th * th) + gcy[r * H + j]
            d[j] = ((gc * g) * (one - i)) * i
            d[H + j] = ((gc * cx[r * H + j]) * (one - f)) * f
            d[2 * H + j] = (gc * i) * (one - g * g)
            gcx[r * H + j] = gc * f
    free(t)
    return 0


# ---------------------------------------------------------------------------------------
# GRU rows

cdef int _gru_forward_rows(const real* ig, const real* hg, const real* hx, const real* ib,
                           const real* hb, real* hy, real* ws, Py_ssize_t H,
                           Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    cdef Py_ssize_t r, j, G = 3 * H, W = 5 * H
    cdef real* s = <real*>malloc((2 * H + 1) * sizeof(real))
    cdef const real* a
    cdef const real* b
    cdef const real* h0
    cdef real* w
    cdef real* h
    if s == NULL:
        return 1
    for r in range(r0, r1):
        a = ig + r * G
        b = hg + r * G
        h0 = hx + r * H
        w = ws + r * W
        h = hy + r * H
        _gate_sums(a, b, ib, hb, s, 2 * H)
        _sigmoid(s, w, 2 * H)                       # r, z
        for j in range(H):                          # hn
            w[4 * H + j] = b[2 * H + j]
        if hb != NULL:
            for j in range(H):
                w[4 * H + j] = w[4 * H + j] + hb[2 * H + j]
        for j in range(H):                          # in [+ ib_n]
            s[j] = a[2 * H + j]
        if ib != NULL:
            for j in range(H):
                s[j] = s[j] + ib[2 * H + j]
        for j in range(H):
            s[j] = s[j] + w[j] * w[4 * H + j]
        _tanh(s, w + 2 * H, H)                      # n
        for j in range(H):
            w[3 * H + j] = h0[j]
            h[j] = (h0[j] - w[2 * H + j]) * w[H + j] + w[2 * H + j]
    free(s)
    return 0


cdef void _gru_backward_rows(const real* ghy, const real* ws, real* gig, real* ghg,
                             real* ghx, Py_ssize_t H, Py_ssize_t r0,
                             Py_ssize_t r1) noexcept nogil:
    cdef Py_ssize_t r, j, G = 3 * H, W = 5 * H
    cdef const real* w
    cdef real rg, z, n, h0, hn, go, gn, gr
    cdef real one = 1
    for r in range(r0, r1):
        w = ws + r * W
        for j in range(H):
            rg = w[j]
            z = w[H + j]
            n = w[2 * H + j]
            h0 = w[3 * H + j]
            hn = w[4 * H + j]
            go = ghy[r * H + j]
            ghx[r * H + j] = go * z
            gn = (go * (one - z)) * (one - n * n)
            gr = ((gn * hn) * (one - rg)) * rg
            gig[r * G + j] = gr
            ghg[r * G + j] = gr
            z = ((go * (h0 - n)) * (one - z)) * z
            gig[r * G + H + j] = z
            ghg[r * G + H + j] = z
            gig[r * G + 2 * H + j] = gn
            ghg[r * G + 2 * H + j] = gn * rg


cdef void _column_sums(const real* x, real* out, Py_ssize_t rows,
                       Py_ssize_t cols) noexcept nogil:
    """out[j] = sum over the rows of x[:, j], in row order."""
    cdef Py_ssize_t r, j
    memset(out, 0, cols * sizeof(real))
    for r in range(rows):
        for j in range(cols):
            out[j] = out[j] + x[r * cols + j]


# ---------------------------------------------------------------------------------------
# the drivers: rows split into blocks across threads (Note [When a cell's rows take threads])

# (the kinds of cell and the Cell struct: _rnn_kernels.pxd)


cdef int _rows(const Cell* c, real* dummy, Py_ssize_t r0, Py_ssize_t r1) noexcept nogil:
    """Run rows r0..r1 of the cell; 1 when a scratch row could not be allocated."""
    if c.kind == LSTM_FORWARD:
        return _lstm_forward_rows(<const real*>c.a[0], <const real*>c.a[1],
                                  <const real*>c.a[2], <const real*>c.a[3],
                                  <const real*>c.a[4], <real*>c.out[0], <real*>c.out[1],
                                  <real*>c.out[2], c.H, r0, r1)
    elif c.kind == LSTM_BACKWARD:
        return _lstm_backward_rows(<const real*>c.a[0], <const real*>c.a[1],
                                   <const real*>c.a[2], <const real*>c.a[3],
                                   <const real*>c.a[4], <real*>c.out[0], <real*>c.out[1],
                                   c.H, r0, r1)
    elif c.kind == GRU_FORWARD:
        return _gru_forward_rows(<const real*>c.a[0], <const real*>c.a[1],
                                 <const real*>c.a[2], <const real*>c.a[3],
                                 <const real*>c.a[4], <real*>c.out[0], <real*>c.out[1],
                                 c.H, r0, r1)
    _gru_backward_rows(<const real*>c.a[0], <const real*>c.a[1], <real*>c.out[0],
                       <real*>c.out[1], <real*>c.out[2], c.H, r0, r1)
    return 0


cdef int _run_typed(const Cell* c, real* dummy, Py_ssize_t rows,
                    int nthreads) noexcept nogil:
    """Run every row, across threads; the number of blocks whose scratch row could not
    be allocated (their rows are not written)."""
    cdef Py_ssize_t block, start, step
    cdef int failed = 0
    if nthreads <= 1 or rows < 2:
        return _rows(c, dummy, 0, rows)
    step = kernel_block_size(rows, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        if start < rows:
            failed += _rows(c, dummy, start, min(start + step, rows))
    return failed


cdef int run_cell_rows_f32(const Cell* c, Py_ssize_t rows, int nthreads) noexcept nogil:
    """The rows of a float32 cell across ``nthreads`` (the layer loops of
    _recurrent_layers.pyx); the number of blocks that could not allocate their scratch."""
    return _run_typed(c, <float*>NULL, rows, nthreads)


cdef int cell_threads(Py_ssize_t rows, Py_ssize_t H) noexcept nogil:
    """The team for a cell of ``rows`` x ``H`` (Note [When a cell's rows take threads])."""
    return kernel_threads(rows * H, _rnn_threshold)


cdef int _run(Cell* c, int typenum, Py_ssize_t rows) except -1:
    """Run the cell's rows; each block of rows allocates a scratch row, and a block that
    cannot raises MemoryError here (its rows were left unwritten: nothing is returned)."""
    cdef int nthreads = kernel_threads(rows * c.H, _rnn_threshold)
    cdef int failed
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            failed = _run_typed(c, <float*>NULL, rows, nthreads)
        else:
            failed = _run_typed(c, <double*>NULL, rows, nthreads)
    if failed:
        raise MemoryError(
            f"RNN cell kernel: cannot allocate a scratch row of {4 * c.H} values"
        )
    return 0


# ---------------------------------------------------------------------------------------
# argument checks (before any memory is touched)

cdef int _check_2d(str func, str name, object a, int typenum, Py_ssize_t rows,
                   Py_ssize_t cols) except -1:
    """``a`` is a checked kernel operand of dtype ``typenum`` and shape (rows, cols); rows
    -1 takes any."""
    if _check_input(func, name, a) != typenum:
        raise TypeError(
            f"{func}: {name} must have the dtype of the gates, got {a.dtype}; cast it "
            f"with {name}.astype(input_gates.dtype)"
        )
    if a.ndim != 2 or (rows >= 0 and a.shape[0] != rows) or a.shape[1] != cols:
        want = f"({'N' if rows < 0 else rows}, {cols})"
        raise ValueError(f"{func}: {name} must have shape {want}, got {tuple(a.shape)}")
    return 0


cdef int _check_bias(str func, str name, object b, int typenum, Py_ssize_t cols) except -1:
    if b is None:
        return 0
    if _check_input(func, name, b) != typenum:
        raise TypeError(f"{func}: {name} must have the dtype of the gates, got {b.dtype}")
    if b.ndim != 1 or b.shape[0] != cols:
        raise ValueError(f"{func}: {name} must have shape ({cols},), got {tuple(b.shape)}")
    return 0


cdef Py_ssize_t _hidden(str func, object gates, int count) except -1:
    """H, from gates of shape (N, count * H)."""
    if gates.ndim != 2 or gates.shape[1] % count:
        raise ValueError(
            f"{func}: input_gates must have shape (N, {count} * hidden_size), got "
            f"{tuple(gates.shape)}"
        )
    return gates.shape[1] // count


cdef cnp.ndarray _empty(Py_ssize_t rows, Py_ssize_t cols, int typenum):
    cdef cnp.npy_intp dims[2]
    dims[0] = rows
    dims[1] = cols
    return cnp.PyArray_EMPTY(2, dims, typenum, 0)


cdef object _grad_or_zeros(str func, str name, object g, int typenum, Py_ssize_t rows,
                           Py_ssize_t cols):
    if g is None:
        return np.zeros((rows, cols), dtype=np.float32 if typenum == cnp.NPY_FLOAT
                        else np.float64)
    _check_2d(func, name, g, typenum, rows, cols)
    return g


cdef cnp.ndarray _bias_grad(cnp.ndarray grad, int typenum):
    cdef Py_ssize_t rows = grad.shape[0], cols = grad.shape[1]
    cdef cnp.npy_intp dim = cols
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(1, &dim, typenum, 0)
    if typenum == cnp.NPY_FLOAT:
        _column_sums(<const float*>_ptr(grad), <float*>_ptr(out), rows, cols)
    else:
        _column_sums(<const double*>_ptr(grad), <double*>_ptr(out), rows, cols)
    return out


# ---------------------------------------------------------------------------------------
# entry points


def lstm_cell_forward(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """One LSTM step after its GEMMs, fused: torch's ``_thnn_fused_lstm_cell``.

    Computes (Note [One pass over a cell's row]) ``i, f, g, o`` = sigmoid, sigmoid, tanh,
    sigmoid of the chunks of ``input_gates + hidden_gates [+ input_bias] [+ hidden_bias]``,
    ``cy = f * cx + i * g`` and ``hy = o * tanh(cy)``.

    Parameters
    ----------
    input_gates, hidden_gates : ndarray
        ``(N, 4 * H)``, the two products (``x W_ih^T [+ b_ih]``, ``h W_hh^T [+ b_hh]``),
        float32 or float64, C-contiguous.
    cx : ndarray
        The cell state, ``(N, H)``.
    input_bias, hidden_bias : ndarray or None
        ``(4 * H,)`` biases added to the gates, or None.

    Returns
    -------
    hy, cy : ndarray
        ``(N, H)``: the new hidden and cell states.
    workspace : ndarray
        ``(N, 4 * H)``: the activated gates ``[i, f, g, o]``, for :func:`lstm_cell_backward`.

    Raises
    ------
    TypeError
        An argument that is not a float32/float64 array, or dtypes that differ.
    ValueError
        Shapes that do not fit, or arrays that are not C-contiguous.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import lstm_cell_forward
    >>> hy, cy, ws = lstm_cell_forward(np.full((1, 4), 10.0), np.zeros((1, 4)), np.ones((1, 1)))
    >>> round(float(cy[0, 0]), 6), round(float(hy[0, 0]), 6)
    (1.999909, 0.963977)
    """
    cdef str func = "lstm_cell_forward"
    cdef int typenum = _check_input(func, "input_gates", input_gates)
    cdef Py_ssize_t H = _hidden(func, input_gates, 4), N = input_gates.shape[0]
    _check_2d(func, "hidden_gates", hidden_gates, typenum, N, 4 * H)
    _check_2d(func, "cx", cx, typenum, N, H)
    _check_bias(func, "input_bias", input_bias, typenum, 4 * H)
    _check_bias(func, "hidden_bias", hidden_bias, typenum, 4 * H)
    cdef cnp.ndarray hy = _empty(N, H, typenum)
    cdef cnp.ndarray cy = _empty(N, H, typenum)
    cdef cnp.ndarray ws = _empty(N, 4 * H, typenum)
    cdef Cell c
    c.kind = LSTM_FORWARD
    c.H = H
    c.a[0] = _ptr(input_gates)
    c.a[1] = _ptr(hidden_gates)
    c.a[2] = _ptr(cx)
    c.a[3] = NULL if input_bias is None else _ptr(input_bias)
    c.a[4] = NULL if hidden_bias is None else _ptr(hidden_bias)
    c.out[0] = _ptr(hy)
    c.out[1] = _ptr(cy)
    c.out[2] = _ptr(ws)
    if N and H:
        _run(&c, typenum, N)
    return hy, cy, ws


def lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace, has_bias=False):
    """The gradients of :func:`lstm_cell_forward`: torch's ``_thnn_fused_lstm_cell_backward``.

    Parameters
    ----------
    grad_hy, grad_cy : ndarray or None
        ``(N, H)`` gradients of ``hy`` and ``cy``; None for zeros (not both).
    cx, cy : ndarray
        ``(N, H)``: the cell's input state and its result.
    workspace : ndarray
        ``(N, 4 * H)``: the forward's workspace.
    has_bias : bool
        Whether to return the bias gradient too.

    Returns
    -------
    grad_gates : ndarray
        ``(N, 4 * H)``: the gradient of both ``input_gates`` and ``hidden_gates``.
    grad_cx : ndarray
        ``(N, H)``.
    grad_bias : ndarray or None
        ``grad_gates`` summed over the rows (``(4 * H,)``) when `has_bias`, else None.

    Raises
    ------
    TypeError, ValueError
        As :func:`lstm_cell_forward`; ValueError also when both gradients are None.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import lstm_cell_backward, lstm_cell_forward
    >>> hy, cy, ws = lstm_cell_forward(np.zeros((1, 4)), np.zeros((1, 4)), np.ones((1, 1)))
    >>> gates, gcx, gb = lstm_cell_backward(None, np.ones((1, 1)), np.ones((1, 1)), cy, ws)
    >>> gates.tolist(), gcx.tolist(), gb
    ([[0.0, 0.25, 0.5, 0.0]], [[0.5]], None)
    """
    cdef str func = "lstm_cell_backward"
    if grad_hy is None and grad_cy is None:
        raise ValueError(f"{func}: grad_hy and grad_cy are both None; pass one of them")
    cdef int typenum = _check_input(func, "workspace", workspace)
    cdef Py_ssize_t H = _hidden(func, workspace, 4), N = workspace.shape[0]
    _check_2d(func, "cx", cx, typenum, N, H)
    _check_2d(func, "cy", cy, typenum, N, H)
    grad_hy = _grad_or_zeros(func, "grad_hy", grad_hy, typenum, N, H)
    grad_cy = _grad_or_zeros(func, "grad_cy", grad_cy, typenum, N, H)
    cdef cnp.ndarray gg = _empty(N, 4 * H, typenum)
    cdef cnp.ndarray gcx = _empty(N, H, typenum)
    cdef Cell c
    c.kind = LSTM_BACKWARD
    c.H = H
    c.a[0] = _ptr(grad_hy)
    c.a[1] = _ptr(grad_cy)
    c.a[2] = _ptr(cx)
    c.a[3] = _ptr(cy)
    c.a[4] = _ptr(workspace)
    c.out[0] = _ptr(gg)
    c.out[1] = _ptr(gcx)
    if N and H:
        _run(&c, typenum, N)
    return gg, gcx, (_bias_grad(gg, typenum) if has_bias else None)


def gru_cell_forward(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """One GRU step after its GEMMs, fused: torch's ``_thnn_fused_gru_cell``.

    With ``(ir, iz, in)`` and ``(hr, hz, hn)`` the chunks of the gates (biases added as
    given): ``r = sigmoid(ir + hr)``, ``z = sigmoid(iz + hz)``, ``n = tanh(in + r * hn)``,
    ``hy = (hx - n) * z + n`` (Note [One pass over a cell's row]).

    Parameters
    ----------
    input_gates, hidden_gates : ndarray
        ``(N, 3 * H)``, float32 or float64, C-contiguous.
    hx : ndarray
        The hidden state, ``(N, H)``.
    input_bias, hidden_bias : ndarray or None
        ``(3 * H,)`` biases, or None.

    Returns
    -------
    hy : ndarray
        ``(N, H)``.
    workspace : ndarray
        ``(N, 5 * H)``: ``[r, z, n, hx, hn]`` (``hn`` with its bias), for
        :func:`gru_cell_backward`.

    Raises
    ------
    TypeError, ValueError
        As :func:`lstm_cell_forward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gru_cell_forward
    >>> hy, ws = gru_cell_forward(np.zeros((1, 3)), np.zeros((1, 3)), np.ones((1, 1)))
    >>> hy.tolist(), ws.tolist()
    ([[0.5]], [[0.5, 0.5, 0.0, 1.0, 0.0]])
    """
    cdef str func = "gru_cell_forward"
    cdef int typenum = _check_input(func, "input_gates", input_gates)
    cdef Py_ssize_t H = _hidden(func, input_gates, 3), N = input_gates.shape[0]
    _check_2d(func, "hidden_gates", hidden_gates, typenum, N, 3 * H)
    _check_2d(func, "hx", hx, typenum, N, H)
    _check_bias(func, "input_bias", input_bias, typenum, 3 * H)
    _check_bias(func, "hidden_bias", hidden_bias, typenum, 3 * H)
    cdef cnp.ndarray hy = _empty(N, H, typenum)
    cdef cnp.ndarray ws = _empty(N, 5 * H, typenum)
    cdef Cell c
    c.kind = GRU_FORWARD
    c.H = H
    c.a[0] = _ptr(input_gates)
    c.a[1] = _ptr(hidden_gates)
    c.a[2] = _ptr(hx)
    c.a[3] = NULL if input_bias is None else _ptr(input_bias)
    c.a[4] = NULL if hidden_bias is None else _ptr(hidden_bias)
    c.out[0] = _ptr(hy)
    c.out[1] = _ptr(ws)
    if N and H:
        _run(&c, typenum, N)
    return hy, ws


def gru_cell_backward(grad_hy, workspace, has_bias=False):
    """The gradients of :func:`gru_cell_forward`: torch's ``_thnn_fused_gru_cell_backward``.

    Parameters
    ----------
    grad_hy : ndarray
        ``(N, H)``.
    workspace : ndarray
        ``(N, 5 * H)``: the forward's workspace.
    has_bias : bool
        Whether to return the bias gradients too.

    Returns
    -------
    grad_input_gates, grad_hidden_gates : ndarray
        ``(N, 3 * H)`` each.
    grad_hx : ndarray
        ``(N, H)``: the gradient through ``hy``'s direct dependence on ``hx``.
    grad_input_bias, grad_hidden_bias : ndarray or None
        The gate gradients summed over the rows when `has_bias`, else None.

    Raises
    ------
    TypeError, ValueError
        As :func:`lstm_cell_forward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gru_cell_backward, gru_cell_forward
    >>> hy, ws = gru_cell_forward(np.zeros((1, 3)), np.zeros((1, 3)), np.ones((1, 1)))
    >>> gi, gh, ghx, _, _ = gru_cell_backward(np.ones((1, 1)), ws)
    >>> gi.tolist(), gh.tolist(), ghx.tolist()
    ([[0.0, 0.25, 0.5]], [[0.0, 0.25, 0.25]], [[0.5]])
    """
    cdef str func = "gru_cell_backward"
    cdef int typenum = _check_input(func, "workspace", workspace)
    cdef Py_ssize_t H = _hidden(func, workspace, 5), N = workspace.shape[0]
    _check_2d(func, "grad_hy", grad_hy, typenum, N, H)
    cdef cnp.ndarray gig = _empty(N, 3 * H, typenum)
    cdef cnp.ndarray ghg = _empty(N, 3 * H, typenum)
    cdef cnp.ndarray ghx = _empty(N, H, typenum)
    cdef Cell c
    c.kind = GRU_BACKWARD
    c.H = H
    c.a[0] = _ptr(grad_hy)
    c.a[1] = _ptr(workspace)
    c.out[0] = _ptr(gig)
    c.out[1] = _ptr(ghg)
    c.out[2] = _ptr(ghx)
    if N and H:
        _run(&c, typenum, N)
    if not has_bias:
        return gig, ghg, ghx, None, None
    return gig, ghg, ghx, _bias_grad(gig, typenum), _bias_grad(ghg, typenum)
