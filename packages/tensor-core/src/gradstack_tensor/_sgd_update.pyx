# cython: language_level=3
"""The SGD update, ``sgd_update_``: one step of ``torch.optim.SGD`` on one parameter, fused
into one pass over its arrays (Note [SGD follows torch's _single_tensor_sgd]).

Its arguments are checked, and its threads set, by ``_kernels.pyx``'s shared code (see its
docstring for the arrays every kernel takes); public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange

from ._kernels cimport (
    _as_float, _check_disjoint, _check_input, _check_not_shifted, _check_output, _check_same,
    kernel_block_size, kernel_parallel_threshold, kernel_threads, real,
)

cnp.import_array()

__all__ = ["sgd_update_"]


# Note [SGD follows torch's _single_tensor_sgd]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch.optim.SGD (torch 2.x, torch/optim/sgd.py) negates the gradient *first* when
# maximize is set, so weight decay and the momentum buffer see -grad:
#
#     g = -grad if maximize else grad
#     if weight_decay != 0:  g = g + weight_decay * param
#     if momentum != 0:
#         buf = g                                       on the first step
#         buf = momentum * buf + (1 - dampening) * g    afterwards
#         g = g + momentum * buf if nesterov else buf
#     param = param - lr * g
#
# (Negating the final step instead would differ whenever weight_decay != 0.)  The kernel
# does the same arithmetic in the same order in the parameter's dtype, the scalars rounded
# to that dtype as torch's CPU kernels do.  torch's vectorised code may fuse a multiply and
# an add (FMA), so float32 results can differ from torch by an ulp.

cdef struct SgdOptions:
    double lr
    double momentum
    double dampening
    double weight_decay
    bint nesterov
    bint maximize
    bint first_step


cdef inline real _with_decay(real g, real p, real weight_decay, bint decay) noexcept nogil:
    return g + weight_decay * p if decay else g


cdef void _sgd_range(const SgdOptions* opt, real* param, const real* grad, real* buf,
                     Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """One SGD step for elements [start, stop); `buf` is unused when momentum == 0.

    One loop per momentum state, each free of branches (the options become selects), so
    that the compiler vectorises it; multiplying by sign = -1 or 1 negates exactly.
    """
    cdef real sign = -1 if opt.maximize else 1
    cdef real neg_lr = <real>(-opt.lr)
    cdef real momentum = <real>opt.momentum
    cdef real keep = <real>(1.0 - opt.dampening)
    cdef real weight_decay = <real>opt.weight_decay
    cdef bint decay = opt.weight_decay != 0
    cdef bint nesterov = opt.nesterov
    cdef Py_ssize_t i
    cdef real g, b
    if opt.momentum == 0:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            param[i] = param[i] + neg_lr * g
    elif opt.first_step:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            buf[i] = g
            param[i] = param[i] + neg_lr * (g + momentum * g if nesterov else g)
    else:
        for i in range(start, stop):
            g = _with_decay(sign * grad[i], param[i], weight_decay, decay)
            b = buf[i] * momentum + keep * g
            buf[i] = b
            param[i] = param[i] + neg_lr * (g + momentum * b if nesterov else b)


cdef void _sgd(const SgdOptions* opt, real* param, const real* grad, real* buf,
               Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _sgd_range(opt, param, grad, buf, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _sgd_range(opt, param, grad, buf, start, min(start + step, n))


cdef void _sgd_typed(const SgdOptions* opt, int typenum, void* param, const void* grad,
                     void* buf, Py_ssize_t n, int nthreads) noexcept nogil:
    if typenum == cnp.NPY_FLOAT:
        _sgd(opt, <float*>param, <const float*>grad, <float*>buf, n, nthreads)
    else:
        _sgd(opt, <double*>param, <const double*>grad, <double*>buf, n, nthreads)


cdef int _check_sgd_arrays(object param, object grad, object momentum_buffer,
                           bint use_buffer) except -1:
    cdef str func = "sgd_update_"
    cdef int typenum = _check_output(func, "param", param)
    _check_input(func, "grad", grad)
    _check_same(func, "param", param, "grad", grad)
    _check_not_shifted(func, "param", param, "grad", grad)
    if not use_buffer:
        return typenum
    if momentum_buffer is None:
        raise ValueError(
            "sgd_update_: momentum_buffer is None but momentum != 0; pass an array of "
            "param's shape and dtype (np.empty_like(param)) with first_step=True"
        )
    _check_output(func, "momentum_buffer", momentum_buffer)
    _check_same(func, "param", param, "momentum_buffer", momentum_buffer)
    _check_disjoint(func, "param", param, "momentum_buffer", momentum_buffer)
    _check_not_shifted(func, "momentum_buffer", momentum_buffer, "grad", grad)
    return typenum


def sgd_update_(param, grad, momentum_buffer, lr, *, momentum=0.0, dampening=0.0,
                weight_decay=0.0, nesterov=False, maximize=False, first_step=False):
    """One step of ``torch.optim.SGD`` on one parameter, fused into one pass, in place.

    Computes (Note [SGD follows torch's _single_tensor_sgd])::

        g = -grad if maximize else grad
        if weight_decay != 0: g = g + weight_decay * param
        if momentum != 0:
            buf = g if first_step else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        param -= lr * g

    Parameters
    ----------
    param : ndarray
        The parameter, updated in place: float32 or float64, C-contiguous, writable.
    grad : ndarray
        Its gradient: same shape and dtype, C-contiguous.  It may be `param` itself but
        must not partially overlap `param` or `momentum_buffer`.
    momentum_buffer : ndarray or None
        The momentum buffer, updated in place (same shape and dtype as `param`,
        C-contiguous, writable, sharing no memory with `param`).  Required when
        ``momentum != 0``, ignored (may be None) otherwise.  On the first step its content
        is ignored and overwritten: allocate it with ``np.empty_like(param)``.
    lr : float
        The learning rate.
    momentum, dampening, weight_decay : float, optional
        As in ``torch.optim.SGD``; all default to 0.
    nesterov, maximize : bool, optional
        As in ``torch.optim.SGD``; both default to False.  Like the functional
        ``torch.optim.sgd``, this kernel does not check that nesterov comes with
        ``momentum > 0`` and ``dampening == 0``: the optimiser's constructor does.
    first_step : bool, optional
        True on the first step of this parameter, when torch starts the buffer as a copy
        of the gradient instead of updating it.

    Raises
    ------
    TypeError
        If an array argument is not an ndarray, its dtype is not float32/float64, the
        dtypes differ, or a scalar is not a real number.
    ValueError
        If the shapes differ, an array is not C-contiguous, `param` or `momentum_buffer`
        is read-only, arrays overlap, or `momentum_buffer` is None while momentum != 0.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import sgd_update_
    >>> param, grad, buf = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.empty(2)
    >>> sgd_update_(param, grad, buf, 0.1, momentum=0.9, first_step=True)
    >>> param
    array([0.95, 2.1 ])
    >>> sgd_update_(param, grad, buf, 0.1, momentum=0.9)
    >>> buf
    array([ 0.95, -1.9 ])
    """
    cdef SgdOptions opt
    opt.lr = _as_float("sgd_update_", "lr", lr)
    opt.momentum = _as_float("sgd_update_", "momentum", momentum)
    opt.dampening = _as_float("sgd_update_", "dampening", dampening)
    opt.weight_decay = _as_float("sgd_update_", "weight_decay", weight_decay)
    opt.nesterov = nesterov
    opt.maximize = maximize
    opt.first_step = first_step
    cdef bint use_buffer = opt.momentum != 0
    cdef int typenum = _check_sgd_arrays(param, grad, momentum_buffer, use_buffer)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>param)
    cdef Py_ssize_t threshold = kernel_parallel_threshold()
    cdef int nthreads = kernel_threads(n, threshold)
    cdef void* pp = cnp.PyArray_DATA(<cnp.ndarray>param)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* bp = cnp.PyArray_DATA(<cnp.ndarray>momentum_buffer) if use_buffer else NULL
    if n >= threshold:
        with nogil:
            _sgd_typed(&opt, typenum, pp, gp, bp, n, nthreads)
    else:
        _sgd_typed(&opt, typenum, pp, gp, bp, n, nthreads)
    return None
