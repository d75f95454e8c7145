# cython: language_level=3, cdivision=True
"""The Adam update, ``adam_update_``: one step of ``torch.optim.Adam`` (or ``AdamW``) on
one parameter, fused into one pass over its arrays (Note [Adam follows torch's
_single_tensor_adam]).

Its arguments are checked, and its threads set, by ``_kernels.pyx``'s shared code (see its
docstring for the arrays every kernel takes); public as ``gradstack_tensor.kernels``.
"""

cimport numpy as cnp
from cython.parallel cimport prange
from libc.math cimport pow, sqrt, sqrtf

from ._kernels cimport (
    _as_float, _check_disjoint, _check_input, _check_not_shifted, _check_output, _check_same,
    kernel_block_size, kernel_parallel_threshold, kernel_threads, real,
)

cnp.import_array()

__all__ = ["adam_update_"]


# Note [Adam follows torch's _single_tensor_adam]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# torch.optim.Adam and AdamW (torch 2.13, torch/optim/adam.py, foreach=False and
# differentiable=False: the path torch takes for CPU tensors) run, for each parameter:
#
#     g = -grad if maximize else grad
#     step += 1
#     if weight_decay != 0:
#         param.mul_(1 - lr * weight_decay)       decoupled (AdamW)
#         g = g.add(param, alpha=weight_decay)    otherwise
#     exp_avg.lerp_(g, 1 - beta1)
#     exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
#     step_size = lr / (1 - beta1 ** step);  bc2_sqrt = (1 - beta2 ** step) ** 0.5
#     if amsgrad: torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
#     denom = (v.sqrt() / bc2_sqrt).add_(eps)     v: max_exp_avg_sq if amsgrad, else exp_avg_sq
#     param.addcdiv_(exp_avg, denom, value=-step_size)
#
# The scalars are Python floats (double), each rounded to the parameter's dtype where a
# tensor op takes it, as here; each element then goes through the same operations in the
# same order as torch's CPU kernels: lerp is ``m + w * (g - m)`` for w < 0.5 and ``g - (g
# - m) * (1 - w)`` otherwise, addcmul ``v + (value * g) * g``, addcdiv ``p + (value * m) /
# denom``.  torch's vectorised lerp and add(alpha=) fuse a multiply-add (one rounding
# instead of two), so float32 values may differ from torch's by an ulp per step (float64
# the same, relatively); the tests compare after several steps with float32/float64
# rounding tolerances.

cdef struct AdamOptions:
    double lr
    double beta1
    double beta2
    double eps
    double weight_decay
    double step_size
    double bc2_sqrt
    bint amsgrad
    bint maximize
    bint decoupled


cdef extern from *:
    """
    /* Note [A vectorisable Adam loop] in _adam_update.pyx: the float32 loop without
       amsgrad, four elements at a time with SSE2 (each lane the scalar loop's IEEE
       operations in its order: the same bits), the scalar loop for the rest. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #define GS_ADAM_SSE2 1
    static Py_ssize_t gs_adam_f32_sse2(float* param, const float* grad, float* m, float* v,
            Py_ssize_t start, Py_ssize_t stop, float sign, int decay, int decoupled,
            float wd, float keep, int small, float w1, float w1c, float beta2, float value2,
            float bc2, float eps, float neg_step) {
        Py_ssize_t i = start;
        __m128 vsign = _mm_set1_ps(sign), vwd = _mm_set1_ps(wd), vkeep = _mm_set1_ps(keep);
        __m128 vw1 = _mm_set1_ps(w1), vw1c = _mm_set1_ps(w1c), vb2 = _mm_set1_ps(beta2);
        __m128 vval2 = _mm_set1_ps(value2), vbc2 = _mm_set1_ps(bc2), veps = _mm_set1_ps(eps);
        __m128 vstep = _mm_set1_ps(neg_step);
        for (; i + 4 <= stop; i += 4) {
            __m128 g = _mm_mul_ps(vsign, _mm_loadu_ps(grad + i));
            __m128 p = _mm_loadu_ps(param + i);
            __m128 mi = _mm_loadu_ps(m + i), vi, d;
            if (decay) {
                if (decoupled) p = _mm_mul_ps(p, vkeep);
                else g = _mm_add_ps(g, _mm_mul_ps(vwd, p));
            }
            if (small) mi = _mm_add_ps(mi, _mm_mul_ps(vw1, _mm_sub_ps(g, mi)));
            else mi = _mm_sub_ps(g, _mm_mul_ps(_mm_sub_ps(g, mi), vw1c));
            _mm_storeu_ps(m + i, mi);
            vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), vb2),
                            _mm_mul_ps(_mm_mul_ps(vval2, g), g));
            _mm_storeu_ps(v + i, vi);
            d = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), vbc2), veps);
            _mm_storeu_ps(param + i, _mm_add_ps(p, _mm_div_ps(_mm_mul_ps(vstep, mi), d)));
        }
        return i;
    }
    #else
    #define GS_ADAM_SSE2 0
    static Py_ssize_t gs_adam_f32_sse2(float* param, const float* grad, float* m, float* v,
            Py_ssize_t start, Py_ssize_t stop, float sign, int decay, int decoupled,
            float wd, float keep, int small, float w1, float w1c, float beta2, float value2,
            float bc2, float eps, float neg_step) {
        return start;
    }
    #endif
    """
    Py_ssize_t gs_adam_f32_sse2(float* param, const float* grad, float* m, float* v,
                                Py_ssize_t start, Py_ssize_t stop, float sign, int decay,
                                int decoupled, float wd, float keep, int small, float w1,
                                float w1c, float beta2, float value2, float bc2, float eps,
                                float neg_step) noexcept nogil


# Note [A vectorisable Adam loop]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The step costs a square root and two divisions per element: scalar, they made the
# kernel slower than numpy's ten SIMD passes (~13 ns per element against ~11 for the
# tensor ops, 2.7M float32 elements, on the loaded 2-core EPYC).  GCC does not
# vectorise the scalar loop (sqrtf may set errno: "control flow in loop", and the
# no-math-errno pragma does not reach it), so the float32 loop without amsgrad is
# written with SSE2 intrinsics, four lanes that each do the scalar loop's operations
# in its order (IEEE: the same bits as the scalar loop), which runs the remainder,
# float64 and amsgrad (its maximum keeps torch's NaN rule, a branch).

cdef inline void _adam_loop(const AdamOptions* opt, real* param, const real* grad,
                            real* m, real* v, real* vmax, Py_ssize_t start,
                            Py_ssize_t stop, bint decay, bint decoupled, bint small,
                            bint amsgrad) noexcept nogil:
    cdef real sign = -1 if opt.maximize else 1
    cdef real wd = <real>opt.weight_decay
    cdef real keep = <real>(1.0 - opt.lr * opt.weight_decay)
    cdef real w1 = <real>(1.0 - opt.beta1)
    cdef real w1c = 1 - w1
    cdef real beta2 = <real>opt.beta2
    cdef real value2 = <real>(1.0 - opt.beta2)
    cdef real bc2 = <real>opt.bc2_sqrt
    cdef real eps = <real>opt.eps
    cdef real neg_step = <real>(-opt.step_size)
    cdef Py_ssize_t i
    cdef real g, p, mi, vi, d
    if real is float:
        if not amsgrad:
            start = gs_adam_f32_sse2(param, grad, m, v, start, stop, sign, decay,
                                     decoupled, wd, keep, small, w1, w1c, beta2, value2,
                                     bc2, eps, neg_step)
    for i in range(start, stop):
        g = sign * grad[i]
        p = param[i]
        if decay:
            if decoupled:
                p = p * keep
            else:
                g = g + wd * p
        mi = m[i]
        if small:
            mi = mi + w1 * (g - mi)
        else:
            mi = g - (g - mi) * w1c
        m[i] = mi
        vi = v[i] * beta2 + (value2 * g) * g
        v[i] = vi
        if amsgrad:
            d = vmax[i]
            d = vi if (vi > d or vi != vi) else d
            vmax[i] = d
            vi = d
        if real is float:
            d = sqrtf(vi)
        else:
            d = sqrt(vi)
        d = d / bc2 + eps
        param[i] = p + (neg_step * mi) / d


cdef void _adam_range(const AdamOptions* opt, real* param, const real* grad, real* m,
                      real* v, real* vmax, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """One Adam step for elements [start, stop); `vmax` is unused without amsgrad."""
    cdef real w1 = <real>(1.0 - opt.beta1)
    cdef bint small = (w1 if w1 >= 0 else -w1) < 0.5
    cdef bint decay = opt.weight_decay != 0
    if opt.amsgrad:
        _adam_loop(opt, param, grad, m, v, vmax, start, stop, decay, opt.decoupled, small,
                   True)
    elif not decay:
        if small:
            _adam_loop(opt, param, grad, m, v, vmax, start, stop, False, False, True, False)
        else:
            _adam_loop(opt, param, grad, m, v, vmax, start, stop, False, False, False, False)
    elif opt.decoupled:
        if small:
            _adam_loop(opt, param, grad, m, v, vmax, start, stop, True, True, True, False)
        else:
            _adam_loop(opt, param, grad, m, v, vmax, start, stop, True, True, False, False)
    elif small:
        _adam_loop(opt, param, grad, m, v, vmax, start, stop, True, False, True, False)
    else:
        _adam_loop(opt, param, grad, m, v, vmax, start, stop, True, False, False, False)


cdef void _adam(const AdamOptions* opt, real* param, const real* grad, real* m, real* v,
                real* vmax, Py_ssize_t n, int nthreads) noexcept nogil:
    cdef Py_ssize_t block, start, step
    if nthreads <= 1:
        _adam_range(opt, param, grad, m, v, vmax, 0, n)
        return
    step = kernel_block_size(n, nthreads)
    for block in prange(nthreads, schedule="static", num_threads=nthreads):
        start = block * step
        _adam_range(opt, param, grad, m, v, vmax, start, min(start + step, n))


cdef int _check_adam_arrays(object param, object grad, object exp_avg, object exp_avg_sq,
                            object max_exp_avg_sq, bint amsgrad) except -1:
    cdef str func = "adam_update_"
    cdef int typenum = _check_output(func, "param", param)
    _check_input(func, "grad", grad)
    _check_same(func, "param", param, "grad", grad)
    _check_not_shifted(func, "param", param, "grad", grad)
    states = [("exp_avg", exp_avg), ("exp_avg_sq", exp_avg_sq)]
    if amsgrad:
        if max_exp_avg_sq is None:
            raise ValueError(
                "adam_update_: max_exp_avg_sq is None but amsgrad is set; pass an array of "
                "param's shape and dtype (zeros on the first step)"
            )
        states.append(("max_exp_avg_sq", max_exp_avg_sq))
    for name, a in states:
        _check_output(func, name, a)
        _check_same(func, "param", param, name, a)
        _check_disjoint(func, "param", param, name, a)
        _check_not_shifted(func, name, a, "grad", grad)
    for k in range(len(states)):
        for j in range(k + 1, len(states)):
            _check_disjoint(func, states[k][0], states[k][1], states[j][0], states[j][1])
    return typenum


def adam_update_(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, lr, beta1, beta2,
                 eps, weight_decay, step, amsgrad=False, maximize=False, decoupled=False):
    """One step of ``torch.optim.Adam`` (``AdamW`` if `decoupled`) on one parameter, fused
    into one pass, in place.

    Computes (Note [Adam follows torch's _single_tensor_adam])::

        g = -grad if maximize else grad
        if weight_decay != 0:
            param *= 1 - lr * weight_decay     if decoupled, else  g = g + weight_decay * param
        exp_avg = lerp(exp_avg, g, 1 - beta1)
        exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * g * g
        if amsgrad: max_exp_avg_sq = maximum(max_exp_avg_sq, exp_avg_sq)
        denom = sqrt(max_exp_avg_sq if amsgrad else exp_avg_sq) / sqrt(1 - beta2**step) + eps
        param += -lr / (1 - beta1**step) * exp_avg / denom

    Parameters
    ----------
    param : ndarray
        The parameter, updated in place: float32 or float64, C-contiguous, writable.
    grad : ndarray
        Its gradient: same shape and dtype, C-contiguous; it may be `param` itself but
        must not partially overlap it or the state arrays.
    exp_avg, exp_avg_sq : ndarray
        The moment estimates, updated in place (param's shape and dtype, C-contiguous,
        writable, sharing no memory with `param` or each other); zeros before the first
        step.
    max_exp_avg_sq : ndarray or None
        The running maximum of `exp_avg_sq` when `amsgrad` (as the moments), else ignored.
    lr, beta1, beta2, eps, weight_decay : float
        As in ``torch.optim.Adam``.
    step : float
        The step count *after* this step's increment (1 on the first step), as torch's
        ``state["step"]`` holds it.
    amsgrad, maximize : bool, optional
        As in ``torch.optim.Adam``.
    decoupled : bool, optional
        AdamW's decoupled weight decay (``decoupled_weight_decay=True``).

    Raises
    ------
    TypeError
        If an array argument is not an ndarray, its dtype is not float32/float64, the
        dtypes differ, or a scalar is not a real number.
    ValueError
        If the shapes differ, an array is not C-contiguous, an updated array is read-only,
        arrays overlap, or `max_exp_avg_sq` is None with `amsgrad`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import adam_update_
    >>> p, g, m, v = np.array([1.0, -2.0]), np.array([2.0, -4.0]), np.zeros(2), np.zeros(2)
    >>> adam_update_(p, g, m, v, None, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8,
    ...              weight_decay=0.0, step=1.0)
    >>> p.round(6)
    array([ 0.9, -1.9])
    >>> m
    array([ 0.2, -0.4])
    """
    cdef str func = "adam_update_"
    cdef AdamOptions opt
    opt.lr = _as_float(func, "lr", lr)
    opt.beta1 = _as_float(func, "beta1", beta1)
    opt.beta2 = _as_float(func, "beta2", beta2)
    opt.eps = _as_float(func, "eps", eps)
    opt.weight_decay = _as_float(func, "weight_decay", weight_decay)
    cdef double t = _as_float(func, "step", step)
    opt.amsgrad = amsgrad
    opt.maximize = maximize
    opt.decoupled = decoupled
    # as torch's Python scalars: lr / (1 - beta1**step), (1 - beta2**step) ** 0.5
    opt.step_size = opt.lr / (1.0 - pow(opt.beta1, t))
    opt.bc2_sqrt = pow(1.0 - pow(opt.beta2, t), 0.5)
    cdef int typenum = _check_adam_arrays(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                          opt.amsgrad)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>param)
    cdef Py_ssize_t threshold = kernel_parallel_threshold()
    cdef int nthreads = kernel_threads(n, threshold)
    cdef void* pp = cnp.PyArray_DATA(<cnp.ndarray>param)
    cdef void* gp = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void* mp = cnp.PyArray_DATA(<cnp.ndarray>exp_avg)
    cdef void* vp = cnp.PyArray_DATA(<cnp.ndarray>exp_avg_sq)
    cdef void* xp = cnp.PyArray_DATA(<cnp.ndarray>max_exp_avg_sq) if opt.amsgrad else NULL
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            _adam(&opt, <float*>pp, <const float*>gp, <float*>mp, <float*>vp, <float*>xp, n,
                  nthreads)
        else:
            _adam(&opt, <double*>pp, <const double*>gp, <double*>mp, <double*>vp,
                  <double*>xp, n, nthreads)
    return None
