# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""Gradient arithmetic in C: the native first-order formulas (add, sub, mul, div) and the
reduction of a broadcast gradient to its input's shape (``sum_to``).

Declared for the layer and the engine in ``_native.pxd``.
"""
cimport numpy as cnp
from gradstack_tensor.extension cimport (
    B_DIV, B_MUL, Tensor, data_of, dispatch_layer_count, enter_op, exit_op, shape_of,
    small_binary, wrap,
)

from gradstack_autograd._grad_mode cimport (
    forward_ad_active, gs_get_grad_enabled, gs_get_grads_batch, gs_get_inference_mode,
)
from gradstack_autograd._backward_kernels cimport div_backward_c, mul_backward_c
from gradstack_autograd._inline cimport kernel_operand
from gradstack_autograd._node cimport Node, SavedTensor

import numpy as np

cnp.import_array()

# Note [Native first-order formulas]
# An op's entry in the derivative table is the one definition of its backward formula,
# written with gradstack ops so that create_graph can differentiate it again.  An entry
# may also name, in its ``fused`` field, a kernel that computes the same first-order
# numbers in one pass (``mul_backward``, ``relu_backward`` ...): the Python formula calls it
# through ``ctx.fused(...)``, and for the kernels listed below (the tutorial's loop and most
# model code: add, sub, mul, div) this module runs it with no Python frame at all: a
# backward node of a tiny op costs about 0.5 us instead of 1.3 us.  Which ops take this
# path is decided by their entries' ``fused`` field alone, never by a list of ops here.
# It runs only when nothing can be lost or reported differently:
#   - grad mode is off (no create_graph), forward-mode AD is off, the pass is not batched;
#   - the saved inputs are intact (not freed, not hooked, at their saved version);
#   - both inputs need a gradient and every array is a kernel operand of the gradient's
#     shape and dtype (no broadcasting to undo, no promotion); or the second operand is a
#     Python number, and the formula's one op (``grad * b``, ``grad / b``) is called
#     directly.
# Anything else returns None and the Python formula runs, so every error is raised in one
# place.  The tests run each op both ways and compare the results bit for bit
# (tests/test_native_formulas.py).

# the fused kernels this module runs natively, by the name an entry's ``fused`` gives
# (add's and sub's "kernels" pass the gradient through: no array kernel is needed)
cdef dict _NATIVE_FORMULAS = {"add_backward": NATIVE_ADD, "sub_backward": NATIVE_SUB,
                              "mul_backward": NATIVE_MUL, "div_backward": NATIVE_DIV}

# (the kernels are called in C: _backward_kernels.pxd)


cdef int native_code(str fused) except -1:
    """The NativeFormula code of an entry's ``fused`` kernel name (NATIVE_NONE if none)."""
    if fused is None:
        return NATIVE_NONE
    return _NATIVE_FORMULAS.get(fused, NATIVE_NONE)


cdef bint _native_enabled = True


def set_native_formulas_enabled(bint enabled):
    """Turn the native formulas on or off (for tests and debugging); returns the old state.

    Off, every node runs its Python formula from the derivative table.
    """
    global _native_enabled
    old = _native_enabled
    _native_enabled = enabled
    return old


cdef inline object _intact_saved_input(tuple saved, Py_ssize_t i):
    """``saved[i]``'s tensor when it is a saved input that unpacks as is, else None."""
    cdef object v = saved[i]
    cdef SavedTensor s
    if type(v) is not SavedTensor:
        return None
    s = <SavedTensor>v
    if s.freed or s.hooked or s.is_output or s.vc.value != s.version:
        return None
    return s.tensor


cdef object native_apply(Node node, int formula, tuple grads):
    """The node's input gradients computed in C, or None to take the Python formula."""
    cdef object g, a, b, alpha
    cdef cnp.ndarray gd, ad, bd
    cdef int typenum
    cdef tuple r
    if (not _native_enabled or gs_get_grad_enabled() or forward_ad_active()
            or gs_get_grads_batch() >= 0 or len(grads) != 1 or node.saved is None):
        return None
    g = grads[0]
    if not isinstance(g, Tensor):
        return None
    if formula == NATIVE_ADD or formula == NATIVE_SUB:
        alpha = node.saved[0]
        if type(alpha) is not int or <object>alpha != 1:
            return None
        if formula == NATIVE_ADD:
            return (g, g)               # the Python formula returns the same object twice
        if (<tuple>node.next_edges[1])[0] is None:
            return (g, None)            # x - scalar: only the first input's gradient
        return None
    if len(node.saved) != 2:
        return None
    b = node.saved[1]
    if type(b) is float or type(b) is int:
        # tensor * scalar, tensor / scalar: the Python formula's own op, without its frame
        if (<tuple>node.next_edges[0])[0] is None:
            return None
        if node.saved[0] is not None and _intact_saved_input(node.saved, 0) is None:
            return None     # (saved only if an older table saves it: its check must raise)
        r = _by_number_directly(<Tensor>g, b, formula)
        if r is not None:
            return r
        return (g * b, None) if formula == NATIVE_MUL else (g / b, None)
    # mul and div of two tensors: both needing a gradient, one shape and dtype
    if (<tuple>node.next_edges[0])[0] is None or (<tuple>node.next_edges[1])[0] is None:
        return None
    a = _intact_saved_input(node.saved, 0)
    b = _intact_saved_input(node.saved, 1)
    if a is None or b is None:
        return None
    gd = data_of(<Tensor>g)
    typenum = cnp.PyArray_TYPE(gd)
    if typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE:
        return None
    ad = data_of(<Tensor>a)
    bd = data_of(<Tensor>b)
    if not (kernel_operand(gd, typenum, gd) and kernel_operand(ad, typenum, gd)
            and kernel_operand(bd, typenum, gd)):
        return None
    if formula != NATIVE_MUL and formula != NATIVE_DIV:
        return None
    # (kernel_operand checked all three as the Python kernels would: the C entry points
    # below do not check again)
    enter_op()  # the results are gradstack's: the block cache may keep them
    try:
        if formula == NATIVE_MUL:
            r = mul_backward_c(gd, ad, bd)
        else:
            r = div_backward_c(gd, ad, bd)
    finally:
        exit_op()
    return (wrap(<cnp.ndarray>r[0]), wrap(<cnp.ndarray>r[1]))


# Note [A gradient times a number skips the dispatch]
# The gradient of ``x * 2`` or ``x / 2`` is the gradient times (over) that number: one
# dispatched op, whose autograd layer has nothing to record (grad mode is off) and whose
# kernel, for a small float32/float64 tensor and a Python number, is tensor-core's C loop
# (``small_binary``).  When the autograd layer is alone on the dispatch point (no profiler
# recording the op, no other layer) and no inference mode would mark the result, that
# loop is called here directly: the same operands, hence the same bits, without the
# dispatch: a 20,000-op chain went from ~11,270 to ~10,370 instructions per op (callgrind;
# half its ops are multiplies, so ~1,800 per multiply's node).  A
# large or non-contiguous gradient, a subclass, an int beyond 2**53 (whose conversion the
# kernel reports in its own words) and anything else take the dispatched op.

cdef tuple _by_number_directly(Tensor g, object b, int formula):
    """``(g * b, None)`` (``g / b``) from tensor-core's small C loop, or None."""
    cdef object r
    if (type(g) is not Tensor or dispatch_layer_count() != 1 or gs_get_inference_mode()
            or (type(b) is int and not -(1 << 53) <= b <= (1 << 53))):
        return None
    enter_op()  # the result is gradstack's: the block cache may keep it
    try:
        r = small_binary(B_MUL if formula == NATIVE_MUL else B_DIV, data_of(g), b)
    finally:
        exit_op()
    return None if r is None else (wrap(<cnp.ndarray>r), None)


# ----------------------------------------------------------------------------------------
# Reducing a broadcast gradient to its input's shape (the engine's validation, CopySlices,
# the derivative table's formulas through sum_to_py)

# Note [sum_to adds as sum does]
# A broadcast input's gradient is ``grad.sum(dims, keepdim=True)`` (torch's sum_to calls
# sum), so it has the same bits as that sum written by hand: makemore's backprop notebook
# checks ``torch.all(dlogit_maxes == logit_maxes.grad)``.  The no-graph path therefore
# reduces with numpy's add, as the forward ``sum`` and the create_graph path below do, not
# with tensor-core's float64-accumulating ``sum_to_shape`` (other bits for float32).
ctypedef fused real:
    float
    double


cdef void _add_rows(real* out, const real* g, Py_ssize_t rows, Py_ssize_t width) noexcept nogil:
    """out = g[0] + g[1] + ... + g[rows - 1], row by row (numpy's order for these axes)."""
    cdef Py_ssize_t i, j
    for j in range(width):
        out[j] = g[j]
    for i in range(1, rows):
        for j in range(width):
            out[j] = out[j] + g[i * width + j]


# Note [Summing leading rows in C]
# The commonest broadcast gradient is a bias's: ``(N, C)`` summed over its leading dims.
# numpy reduces leading axes of a C-contiguous array by adding whole rows in order
# (``out = g[0]; out += g[1]; ...``; pairwise summation only runs along a contiguous
# reduced axis, which is why a kept width of 1 stays with numpy), so a C loop doing the
# same gives numpy's bits (tests/test_broadcast_grad_bits.py) without the ~4 us of
# Python around ``np.add.reduce`` and its errstate: TinyModel's step lost ~35 us to them.
cdef object _sum_leading_rows(cnp.ndarray g, tuple axes):
    """``g`` summed over ``axes`` when they are its leading dims and it is a C-contiguous
    float32/float64 array kept at least 2 wide, else None."""
    cdef Py_ssize_t k = len(axes), i, rows = 1, width = 1
    cdef int num = cnp.PyArray_TYPE(g)
    cdef cnp.ndarray out
    if (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or not cnp.PyArray_ISCARRAY_RO(g):
        return None
    for i in range(k):
        if <Py_ssize_t>axes[i] != i:
            return None
    for i in range(k):
        rows *= cnp.PyArray_DIMS(g)[i]
    for i in range(k, g.ndim):
        width *= cnp.PyArray_DIMS(g)[i]
    if rows == 0 or width < 2:
        return None
    enter_op()  # a gradient gradstack makes: the block cache may keep it
    try:
        out = cnp.PyArray_EMPTY(g.ndim - k, cnp.PyArray_DIMS(g) + k, num, 0)
    finally:
        exit_op()
    if num == cnp.NPY_FLOAT:
        _add_rows(<float*>cnp.PyArray_DATA(out), <const float*>cnp.PyArray_DATA(g), rows, width)
    else:
        _add_rows(<double*>cnp.PyArray_DATA(out), <const double*>cnp.PyArray_DATA(g), rows,
                  width)
    return out


cdef object np_sum_to(cnp.ndarray g, tuple shape):
    """Sum a broadcast gradient ``g`` back to ``shape`` (numpy, no graph)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and g.shape[i + lead] != 1)
    if not axes:
        return np.reshape(g, shape)
    r = _sum_leading_rows(g, axes)  # Note [Summing leading rows in C]
    if r is not None:
        return np.reshape(r, shape)
    with np.errstate(all="ignore"):  # inf - inf is nan, silently, as in the forward sum
        r = _add_reduce(g, axes)
    return np.reshape(r[(0,) * lead] if lead else r, shape)


cdef object _add_reduce(cnp.ndarray g, tuple axes):
    """``g`` summed over ``axes`` (kept): numpy's, except that bfloat16 (a numpy user type,
    whose ml_dtypes loop would round at every step) accumulates in float32 and rounds once,
    as torch's sum (Note [bfloat16 is stored by ml_dtypes and computed in float32])."""
    if cnp.PyArray_TYPE(g) >= 256:
        return np.add.reduce(g, axis=axes, keepdims=True, dtype=np.float32).astype(g.dtype)
    return np.add.reduce(g, axis=axes, keepdims=True)


cdef bint broadcastable_to(tuple shape, tuple target) except -1:
    cdef Py_ssize_t i, n = len(shape), m = len(target)
    if n > m:
        return False
    for i in range(n):
        if shape[n - 1 - i] != 1 and shape[n - 1 - i] != target[m - 1 - i]:
            return False
    return True


cdef object sum_to(Tensor g, tuple shape):
    """Reduce ``g`` to ``shape``: differentiably when grad mode is on (create_graph).

    In a batched backward the leading (batch) dim of ``g`` is kept: the result has shape
    ``(batch,) + shape`` (Note [Batched backward]).  With forward-mode AD active the ops
    path is taken too, so that tangents flow through the reduction.
    """
    cdef tuple gshape = shape_of(data_of(g))
    cdef Py_ssize_t lead, nb = 1 if gs_get_grads_batch() >= 0 else 0
    if not gs_get_grad_enabled() and not forward_ad_active():
        if nb == 0:
            return wrap(np.asarray(np_sum_to(data_of(g), shape)))
        return wrap(np.asarray(_np_sum_to_batched(data_of(g), shape)))
    lead = len(gshape) - nb - len(shape)
    dims = tuple(range(nb, nb + lead)) + tuple(i + nb + lead for i, s in enumerate(shape)
                                               if s == 1 and gshape[i + nb + lead] != 1)
    r = g.sum(dims, keepdim=True) if dims else g
    return r.reshape(gshape[:nb] + shape)


cdef object _np_sum_to_batched(cnp.ndarray g, tuple shape):
    """``np_sum_to`` keeping the leading (batch) dim of ``g``."""
    lead = g.ndim - 1 - len(shape)
    axes = tuple(range(1, 1 + lead)) + tuple(i + 1 + lead for i, s in enumerate(shape)
                                             if s == 1 and g.shape[i + 1 + lead] != 1)
    r = _add_reduce(g, axes) if axes else g
    return np.reshape(r, (g.shape[0],) + shape)


def sum_to_py(Tensor g not None, shape):
    """Reduce a broadcast gradient ``g`` to ``shape`` (differentiably under create_graph)."""
    return sum_to(g, tuple(shape))
