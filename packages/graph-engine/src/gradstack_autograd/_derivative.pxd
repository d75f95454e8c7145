# The derivative table's row type: what the layer, the nodes, views and the engine cimport
# from _derivative.pyx.

cdef class Derivative:
    cdef readonly str op_name
    cdef readonly tuple signature       # the names of the op's positional arguments
    cdef readonly tuple inputs          # arg positions of the differentiable inputs
    cdef readonly bint list_input       # args[inputs[0]] is a sequence of tensors (cat, stack)
    cdef readonly tuple save            # arg positions whose values the formula needs
    cdef readonly tuple pack_order      # indices into ``save`` in torch's packing order
    # None, or one entry per ``save`` position: None (always saved) or the indices (into
    # ``inputs``) of the inputs whose gradient reads it (Note [Save what a gradient needs])
    cdef readonly tuple save_for
    cdef readonly tuple save_if         # per save position: None, or fn(args) -> save it?
    cdef readonly object output_if      # None, or fn(args) -> save the output?
    cdef readonly bint save_output      # the formula needs the op's output(s)
    # None, or indices (into ``inputs``): the output is saved only when one of these
    # arguments is a tensor (torch's overloads: pow(Tensor, Scalar) saves no result,
    # pow(Tensor, Tensor) saves it whether or not the exponent requires grad)
    cdef readonly tuple output_for
    cdef readonly dict slots            # saved name -> index into node.saved ("result" last)
    cdef readonly tuple sizes           # (name, input index): torch's ``_saved_<name>_sym_sizes``
    cdef readonly object backward       # fn(ctx, *grads) -> tuple with one grad per input
    cdef public object jvp              # forward-mode formula, or None
    cdef public object batch_rule       # vmap's rule(args, batch_dims), or None
    cdef public bint batchable          # keeps a leading batch dim (Note [Batched backward])
    cdef readonly bint differentiable   # False: outputs never require grad (comparisons ...)
    cdef readonly object extra          # fn(args, out) -> anything else the formula needs
    cdef readonly object node_name      # str, or fn(args) -> str for ops with variants
    cdef readonly str fused             # the kernel that may replace the formula, or None
    # takes its kernel's by-product (Note [A kernel's by-product])
    cdef public bint byproduct
    # which inputs an efficient zero passes to (Note [Efficient zeros])
    cdef public object keeps_zero
    # its NativeFormula code (Note [Native first-order formulas])
    cdef readonly int native
    # None, or fn(values) -> values: the saved values as torch shows them (Note [Saved
    # values by name]); ``shown_names`` are the names it may add
    cdef public object shown
    cdef public tuple shown_names
    # the node classes made for this entry (by _op_node.pyx's node_class_of), by name
    cdef dict _classes
    cdef object _fixed_class            # the node class when node_name is a plain str

    cpdef Py_ssize_t slot(self, str name) except -2
