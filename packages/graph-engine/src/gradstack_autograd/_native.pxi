# Included by _core.pyx: C copies of the hottest first-order backward formulas.
#
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

cdef enum NativeFormula:
    NATIVE_NONE = 0
    NATIVE_ADD = 1
    NATIVE_MUL = 2
    NATIVE_DIV = 3
    NATIVE_SUB = 4

# the fused kernels this module runs natively, by the name an entry's ``fused`` gives
# (add's and sub's "kernels" pass the gradient through: no array kernel is needed)
cdef dict _NATIVE_FORMULAS = {"add_backward": NATIVE_ADD, "sub_backward": NATIVE_SUB,
                              "mul_backward": NATIVE_MUL, "div_backward": NATIVE_DIV}

# (the kernels are looked up on the module at each call, so tests can wrap them)


cdef bint _native_enabled = True


def set_native_formulas_enabled(bint enabled):
    """Turn the native formulas on or off (for tests and debugging); returns the old state.

    Off, every node runs its Python formula from derivatives.py.
    """
    global _native_enabled
    old = _native_enabled
    _native_enabled = enabled
    return old


def native_formula_of(str op_name):
    """The native first-order formula code of ``op_name``'s entry (0 when it has none).

    Read from the entry's ``fused`` field (Note [Native first-order formulas]).
    """
    from gradstack_tensor import OPS
    op = OPS.get(op_name)
    if op is None or not isinstance(op.derivative, Derivative):
        return NATIVE_NONE
    return (<Derivative>op.derivative).native


cdef inline bint _kernel_operand(cnp.ndarray a, int typenum, cnp.ndarray like):
    """``a`` is a C-contiguous, aligned, native-order array of ``like``'s shape and dtype."""
    return (cnp.PyArray_TYPE(a) == typenum and cnp.PyArray_ISCARRAY_RO(a)
            and cnp.PyArray_ISNOTSWAPPED(a) and cnp.PyArray_SAMESHAPE(a, like))


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


cdef object native_apply(OpNode node, int formula, tuple grads):
    """The node's input gradients computed in C, or None to take the Python formula."""
    cdef object g, a, b, alpha
    cdef cnp.ndarray gd, ad, bd
    cdef int typenum
    cdef tuple r
    if (not _native_enabled or gs_get_grad_enabled() or _forward_ad_active
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
        return (g * b, None) if formula == NATIVE_MUL else (g / b, None)
    # mul and div of two tensors: both needing a gradient, one shape and dtype
    if _kernels is None:
        return None
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
    if not (_kernel_operand(gd, typenum, gd) and _kernel_operand(ad, typenum, gd)
            and _kernel_operand(bd, typenum, gd)):
        return None
    if formula == NATIVE_MUL:
        r = <tuple>_kernels.mul_backward(gd, ad, bd)
    elif formula == NATIVE_DIV:
        r = <tuple>_kernels.div_backward(gd, ad, bd)
    else:
        return None
    return (wrap(<cnp.ndarray>r[0]), wrap(<cnp.ndarray>r[1]))
