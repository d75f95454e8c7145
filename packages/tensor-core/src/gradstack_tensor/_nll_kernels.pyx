# cython: language_level=3, cdivision=True
"""The negative log-likelihood loss, forward and backward, each one pass over the targets.

``nll_loss`` and ``nll_loss2d`` (and so ``F.cross_entropy`` over its log_softmax) took a
chain of numpy calls per call: a bounds check, the per-target weights, a fancy-indexed
pick, a product and a sum forward; a mask, a fill and a scatter backward, ~10 us of
numpy overhead each at any size where torch's whole loss is 3-5 us.  Here the input is
seen as ``(N, C, S)`` (C-contiguous; ``S`` is 1 for a 2-D input, the product of the
spatial dims for ``nll_loss2d``), the targets as ``N * S`` int64 indices, and each
kernel walks the targets once (Note [The NLL kernels follow torch's loops]).  The
ops' kernels (``_impl_nn.py``) and graph-engine's backward call them on C-contiguous
float32/float64 inputs and keep their numpy path for everything else; public as
``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from libc.string cimport memset

import numpy as np

from ._kernels cimport _check_input

cnp.import_array()

__all__ = ["nll_loss_backward", "nll_loss_forward"]


# Note [The NLL kernels follow torch's loops]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ATen's nll_loss_out_frame and nll_loss2d_forward_out_frame (aten/src/ATen/native/
# LossNLL.cpp, LossNLL2d.cpp), in the input's dtype with their roundings in their order:
# a reduced loss is a cascade sum over the targets in order (8 levels of partial sums,
# level j + 1 taking level j whenever the linear index is a multiple of 2**(p (j + 1)),
# p = max(4, CeilLog2(count) / 8)), ``loss -= x[n, t, s]`` or ``loss -= x[n, t, s] *
# w[t]``; the total weight is the count of targets not ignored, or the same cascade
# over w[t]; ``mean`` divides the loss by it (0 / 0 = NaN when every target is ignored
# or there are none).  ``none`` writes ``-x[n, t, s] * w[t]`` per target (0 where
# ignored).  Backward (nll_loss_backward_out_frame): the input's gradient is 0 except at
# each counted target, ``w[t] * g'`` with ``g' = -(g / total)`` for ``mean`` and ``-g``
# for ``sum`` (rounded in the dtype, as torch computes it once), or ``-w[t] * g[n, s]``
# for ``none``.  So the values are torch's to the bit, not only to float32 rounding.
# A target outside [0, C) that is not ignore_index raises IndexError ("Target 7 is out
# of bounds.", torch's message) before anything is written: the check is a loop of its
# own over the targets, so that memory outside the result is never touched.

cdef enum:
    RED_NONE = 0
    RED_MEAN = 1
    RED_SUM = 2
    LEVELS = 8      # torch's cascade_sum_num_levels


ctypedef fused real_t:
    float
    double


cdef inline Py_ssize_t _ceil_log2(Py_ssize_t x) noexcept nogil:
    """c10::CeilLog2: 1 for x <= 2, else the number of bits of x - 1."""
    cdef Py_ssize_t bits = 0
    cdef unsigned long long v
    if x <= 2:
        return 1
    v = <unsigned long long>(x - 1)
    while v:
        bits += 1
        v >>= 1
    return bits


cdef Py_ssize_t _bad_target(const cnp.int64_t* t, Py_ssize_t count, Py_ssize_t classes,
                            cnp.int64_t ignore) noexcept nogil:
    """The position of the first target outside [0, classes) that is not `ignore`, or -1."""
    cdef Py_ssize_t i
    cdef cnp.int64_t v
    for i in range(count):
        v = t[i]
        if (v < 0 or v >= classes) and v != ignore:
            return i
    return -1


cdef Py_ssize_t _ignored(const cnp.int64_t* t, Py_ssize_t count,
                         cnp.int64_t ignore) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    for i in range(count):
        if t[i] == ignore:
            k += 1
    return k


cdef void _reduced(const real_t* x, const real_t* w, const cnp.int64_t* t, Py_ssize_t n,
                   Py_ssize_t classes, Py_ssize_t s, cnp.int64_t ignore, bint want_loss,
                   real_t* loss_out, real_t* weight_out) noexcept nogil:
    """torch's cascade sums of the loss and the weights (Note [The NLL kernels follow
    torch's loops]); the targets are checked."""
    cdef real_t loss_sums[LEVELS]
    cdef real_t weight_sums[LEVELS]
    cdef Py_ssize_t count = n * s
    cdef Py_ssize_t power = _ceil_log2(count) // LEVELS
    cdef Py_ssize_t b, e, j, idx, ignored = 0, mask
    cdef cnp.int64_t cur
    cdef real_t data, wv, total, loss
    if power < 4:
        power = 4
    mask = (1 << power) - 1
    for j in range(LEVELS):
        loss_sums[j] = 0
        weight_sums[j] = 0
    for b in range(n):
        for e in range(s):
            idx = b * s + e
            cur = t[idx]
            if cur == ignore:
                ignored += 1
                continue
            if want_loss:
                data = x[(b * classes + cur) * s + e]
                if w != NULL:
                    wv = w[cur]
                    loss_sums[0] -= data * wv
                    weight_sums[0] += wv
                else:
                    loss_sums[0] -= data
            elif w != NULL:
                weight_sums[0] += w[cur]
            for j in range(LEVELS - 1):
                if (idx & (mask << (j * power))) != 0:
                    break
                weight_sums[j + 1] += weight_sums[j]
                loss_sums[j + 1] += loss_sums[j]
                weight_sums[j] = 0
                loss_sums[j] = 0
    if w == NULL:
        total = <real_t>(count - ignored)
    else:
        total = 0
        for j in range(LEVELS):
            total = total + weight_sums[j]
    loss = 0
    for j in range(LEVELS):
        loss = loss + loss_sums[j]
    loss_out[0] = loss
    weight_out[0] = total


cdef void _unreduced(const real_t* x, const real_t* w, const cnp.int64_t* t, Py_ssize_t n,
                     Py_ssize_t classes, Py_ssize_t s, cnp.int64_t ignore,
                     real_t* out) noexcept nogil:
    cdef Py_ssize_t b, e, idx
    cdef cnp.int64_t cur
    for b in range(n):
        for e in range(s):
            idx = b * s + e
            cur = t[idx]
            if cur == ignore:
                out[idx] = 0
            elif w != NULL:
                out[idx] = -x[(b * classes + cur) * s + e] * w[cur]
            else:
                out[idx] = -x[(b * classes + cur) * s + e]


cdef void _scatter(const real_t* g, Py_ssize_t g_step, real_t scale, const real_t* w,
                   const cnp.int64_t* t, Py_ssize_t n, Py_ssize_t classes, Py_ssize_t s,
                   cnp.int64_t ignore, real_t* out) noexcept nogil:
    """out (zeroed) at each counted target: w[t] * scale (g NULL), or -w[t] * g[idx]."""
    cdef Py_ssize_t b, e, idx
    cdef cnp.int64_t cur
    cdef real_t v
    for b in range(n):
        for e in range(s):
            idx = b * s + e
            cur = t[idx]
            if cur == ignore:
                continue
            if g == NULL:
                v = w[cur] * scale if w != NULL else scale
            else:
                v = -w[cur] * g[idx * g_step] if w != NULL else -g[idx * g_step]
            out[(b * classes + cur) * s + e] = v


cdef int _reduction_code(str func, object reduction) except -1:
    if reduction == "none":
        return RED_NONE
    if reduction == "mean":
        return RED_MEAN
    if reduction == "sum":
        return RED_SUM
    raise ValueError(f"{func}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


cdef tuple _check(str func, object x_shape, int typenum, object target, object weight,
                  object ignore_index):
    """(n, classes, s) of an input of shape `x_shape` seen as (N, C, S), the targets and
    weight checked against it."""
    if type(ignore_index) is not int:
        raise TypeError(f"{func}: ignore_index must be an int, got "
                        f"{type(ignore_index).__name__}")
    if len(x_shape) < 2:
        raise ValueError(f"{func}: the input must have at least 2 dims (N, C, ...), got "
                         f"shape {tuple(x_shape)}; a 1-d input takes the numpy path")
    cdef Py_ssize_t n = x_shape[0], classes = x_shape[1], s = 1, k
    for k in range(2, len(x_shape)):
        s *= x_shape[k]
    if not cnp.PyArray_Check(target) or cnp.PyArray_TYPE(<cnp.ndarray>target) != cnp.NPY_INT64:
        raise TypeError(f"{func}: target must be an int64 ndarray, got "
                        f"{getattr(target, 'dtype', type(target).__name__)}; cast it with "
                        "target.astype(np.int64)")
    if not cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>target):
        raise ValueError(f"{func}: target must be C-contiguous and aligned; pass "
                         "np.ascontiguousarray(target)")
    if cnp.PyArray_SIZE(<cnp.ndarray>target) != n * s:
        raise ValueError(f"{func}: target must have N * S = {n * s} elements for an input "
                         f"of shape {tuple(x_shape)}, got shape {target.shape}")
    if weight is not None:
        if _check_input(func, "weight", weight) != typenum:
            raise TypeError(f"{func}: weight must have the input's dtype, got {weight.dtype}")
        if cnp.PyArray_SIZE(<cnp.ndarray>weight) != classes:
            raise ValueError(f"{func}: weight must have C = {classes} elements, got shape "
                             f"{weight.shape}")
    cdef Py_ssize_t bad = _bad_target(<const cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>target),
                                      n * s, classes, <cnp.int64_t>ignore_index)
    if bad >= 0:
        raise IndexError(f"Target {int(target.reshape(-1)[bad])} is out of bounds.")
    return n, classes, s


cdef inline void* _data_or_null(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a) if a is not None else NULL


def nll_loss_forward(x, target, weight, reduction, ignore_index):
    """torch's NLL loss of `x` seen as ``(N, C, S)`` and its total weight.

    Parameters
    ----------
    x : ndarray
        float32 or float64, C-contiguous, at least 2-d: ``(N, C)`` or ``(N, C, *S)``.
    target : ndarray
        int64 class indices, C-contiguous, ``N * prod(S)`` elements (any shape).
    weight : ndarray or None
        C per-class weights in `x`'s dtype (C-contiguous), or None for ones.
    reduction : str
        ``'none'``, ``'mean'`` or ``'sum'``.
    ignore_index : int
        A target value that counts for nothing.

    Returns
    -------
    tuple
        ``(loss, total_weight)``: `loss` a new array, 0-d for ``'mean'``/``'sum'``, else
        1-d of ``N * prod(S)`` elements (reshape it to the target's shape);
        `total_weight` a 0-d array in `x`'s dtype (0 for ``'none'``).  Values are
        torch's (Note [The NLL kernels follow torch's loops]).

    Raises
    ------
    IndexError
        A target outside ``[0, C)`` that is not `ignore_index` (torch's message).
    TypeError, ValueError
        Wrong dtypes, layouts or sizes (checked before any memory is read).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import nll_loss_forward
    >>> logp = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    >>> loss, total = nll_loss_forward(logp, np.array([0, 2]), None, "mean", -100)
    >>> round(float(loss), 6), float(total)
    (0.458145, 2.0)
    >>> nll_loss_forward(logp, np.array([0, -100]), None, "none", -100)[0].round(4)
    array([0.6931, 0.    ])
    """
    cdef str func = "nll_loss_forward"
    cdef int typenum = _check_input(func, "x", x)
    cdef int red = _reduction_code(func, reduction)
    cdef Py_ssize_t n, classes, s
    n, classes, s = _check(func, x.shape, typenum, target, weight, ignore_index)
    cdef cnp.int64_t ignore = <cnp.int64_t>ignore_index
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>x)
    cdef void* wp = _data_or_null(weight)
    cdef const cnp.int64_t* tp = <const cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>target)
    cdef cnp.npy_intp dims[1]
    dims[0] = n * s
    cdef cnp.ndarray total = cnp.PyArray_ZEROS(0, dims, typenum, 0)
    cdef cnp.ndarray out
    cdef void* op_
    cdef void* totp = cnp.PyArray_DATA(total)
    if red == RED_NONE:
        out = cnp.PyArray_EMPTY(1, dims, typenum, 0)
        op_ = cnp.PyArray_DATA(out)
        with nogil:
            if typenum == cnp.NPY_FLOAT:
                _unreduced(<const float*>xp, <const float*>wp, tp, n, classes, s, ignore,
                           <float*>op_)
            else:
                _unreduced(<const double*>xp, <const double*>wp, tp, n, classes, s, ignore,
                           <double*>op_)
        return out, total
    out = cnp.PyArray_EMPTY(0, dims, typenum, 0)
    op_ = cnp.PyArray_DATA(out)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _reduced(<const float*>xp, <const float*>wp, tp, n, classes, s, ignore, True,
                     <float*>op_, <float*>totp)
            if red == RED_MEAN:
                (<float*>op_)[0] = (<float*>op_)[0] / (<float*>totp)[0]
        else:
            _reduced(<const double*>xp, <const double*>wp, tp, n, classes, s, ignore, True,
                     <double*>op_, <double*>totp)
            if red == RED_MEAN:
                (<double*>op_)[0] = (<double*>op_)[0] / (<double*>totp)[0]
    return out, total


def nll_loss_backward(grad, x_shape, target, weight, reduction, ignore_index):
    """The gradient of :func:`nll_loss_forward` with respect to `x`, a new array.

    Parameters
    ----------
    grad : ndarray
        The loss's gradient in the input's dtype: one element for ``'mean'``/``'sum'``,
        C-contiguous with ``N * prod(S)`` elements for ``'none'``.
    x_shape : tuple of int
        The forward input's shape (at least 2 dims).
    target, weight, reduction, ignore_index
        As for :func:`nll_loss_forward` (the total weight of ``'mean'`` is recomputed
        from them as the forward takes it).

    Returns
    -------
    ndarray
        A new C-contiguous array of shape `x_shape`: 0 except at each counted target
        (Note [The NLL kernels follow torch's loops]).

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import nll_loss_backward
    >>> nll_loss_backward(np.array(1.0), (2, 3), np.array([0, 2]), None, "mean", -100)
    array([[-0.5,  0. ,  0. ],
           [ 0. ,  0. , -0.5]])
    """
    cdef str func = "nll_loss_backward"
    cdef int typenum = _check_input(func, "grad", grad)
    cdef int red = _reduction_code(func, reduction)
    x_shape = tuple(x_shape)
    cdef Py_ssize_t n, classes, s
    n, classes, s = _check(func, x_shape, typenum, target, weight, ignore_index)
    cdef Py_ssize_t g_step = 0
    if red == RED_NONE:
        if cnp.PyArray_SIZE(<cnp.ndarray>grad) != n * s:
            raise ValueError(f"{func}: grad of an unreduced loss must have N * S = {n * s} "
                             f"elements, got shape {grad.shape}")
        g_step = 1
    elif cnp.PyArray_SIZE(<cnp.ndarray>grad) != 1:
        raise ValueError(f"{func}: grad of a reduced loss must have one element, got shape "
                         f"{grad.shape}")
    cdef cnp.ndarray out = np.empty(x_shape, dtype=grad.dtype)
    cdef cnp.int64_t ignore = <cnp.int64_t>ignore_index
    cdef const void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* wp = _data_or_null(weight)
    cdef const cnp.int64_t* tp = <const cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>target)
    cdef void* op_ = cnp.PyArray_DATA(out)
    cdef size_t nbytes = cnp.PyArray_NBYTES(out)
    cdef float loss32 = 0, total32 = 0, scale32
    cdef double loss64 = 0, total64 = 0, scale64
    with nogil:
        # Note [A scattered gradient is zeroed by a fill] (graph-engine's derivatives/nn.py)
        memset(op_, 0, nbytes)
        if typenum == cnp.NPY_FLOAT:
            if red == RED_NONE:
                _scatter(<const float*>gp, g_step, <float>0, <const float*>wp, tp, n,
                         classes, s, ignore, <float*>op_)
            else:
                scale32 = (<const float*>gp)[0]
                if red == RED_MEAN:
                    if wp != NULL:
                        _reduced(<const float*>NULL, <const float*>wp, tp, n, classes, s,
                                 ignore, False, &loss32, &total32)
                    else:
                        total32 = <float>(n * s - _ignored(tp, n * s, ignore))
                    scale32 = scale32 / total32
                _scatter(<const float*>NULL, 0, -scale32, <const float*>wp, tp, n, classes,
                         s, ignore, <float*>op_)
        else:
            if red == RED_NONE:
                _scatter(<const double*>gp, g_step, <double>0, <const double*>wp, tp, n,
                         classes, s, ignore, <double*>op_)
            else:
                scale64 = (<const double*>gp)[0]
                if red == RED_MEAN:
                    if wp != NULL:
                        _reduced(<const double*>NULL, <const double*>wp, tp, n, classes, s,
                                 ignore, False, &loss64, &total64)
                    else:
                        total64 = <double>(n * s - _ignored(tp, n * s, ignore))
                    scale64 = scale64 / total64
                _scatter(<const double*>NULL, 0, -scale64, <const double*>wp, tp, n,
                         classes, s, ignore, <double*>op_)
    return out
