# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The derivative table's row type: ``Derivative``, one op's entry.

``derivatives.register`` builds the rows (``derivatives/_table.py``); the recording layer
(``_layer.pyx``), the nodes it makes (``_op_node.pyx``), the engine, forward mode and vmap
read them.  Its fields are declared in ``_derivative.pxd`` for the modules that cimport it.
"""
cimport cython

from gradstack_autograd._native cimport NATIVE_NONE, native_code


@cython.binding(False)
cdef class Derivative:
    """One op's entry in the derivative table: everything about differentiating it.

    Built by ``derivatives.register`` from names (read that module for the table itself);
    the engine, the native fast path (``fused``), forward mode (``jvp``) and vmap
    (``batch_rule``) all read this one object.  Names are resolved to argument positions
    once, here, so that recording a node costs no lookup by name (Note [Entries by name]).

    Its fields are declared in ``_derivative.pxd`` (the engine reads ``batchable``).
    """

    def __init__(self, str op_name, node_name, backward, tuple inputs=(0,), tuple save=(),
                 bint save_output=False, bint list_input=False, bint differentiable=True,
                 extra=None, jvp=None, bint batchable=True, tuple save_for=None,
                 tuple output_for=None, tuple signature=(), str fused=None,
                 tuple sizes=(), batch_rule=None, tuple save_if=None, output_if=None):
        cdef Py_ssize_t i
        if save_for is not None and len(save_for) != len(save):
            raise ValueError(f"{op_name}: save_for needs one entry per save position")
        self.op_name = op_name
        self.signature = signature
        self.save_for = save_for
        if save_if is not None and len(save_if) != len(save):
            raise ValueError(f"{op_name}: save_if needs one entry per save position")
        self.save_if = save_if
        self.output_if = output_if
        self.output_for = output_for
        self.node_name = node_name
        self.backward = backward
        self.inputs = inputs
        self.save = save
        self.save_output = save_output
        self.list_input = list_input
        self.differentiable = differentiable
        self.extra = extra
        self.jvp = jvp
        self.batch_rule = batch_rule
        self.batchable = batchable
        self.fused = fused
        self.native = native_code(fused)
        self.sizes = sizes
        self.shown = None
        self.shown_names = ()
        self.byproduct = False
        self.keeps_zero = None
        self.slots = {}
        for i in range(len(save)):
            pos = <Py_ssize_t>save[i]
            self.slots[signature[pos] if pos < len(signature) else f"arg{pos}"] = i
        if save_output:
            self.slots["result"] = len(save)
        # Note [Torch's packing order]: torch's generated nodes save their inputs in the
        # alphabetical order of the argument names (``a * b`` packs ``other`` before
        # ``self``, ``mm`` ``mat2`` before ``self``), then the outputs; saved-tensor pack
        # hooks see that order, so the recording layer saves ours in it too.
        names = [signature[p] if p < len(signature) else f"arg{p}" for p in save]
        self.pack_order = tuple(sorted(range(len(save)), key=names.__getitem__))
        self._classes = {}

    cpdef Py_ssize_t slot(self, str name) except -2:
        """The index in ``node.saved`` of the saved value ``name`` (KeyError if not saved)."""
        cdef object i = self.slots.get(name)
        if i is None:
            raise KeyError(
                f"{self.op_name}'s entry saves no value named {name!r} "
                f"(it saves {', '.join(self.slots) or 'nothing'})"
            )
        return <Py_ssize_t>i

    def __repr__(self):
        return f"<Derivative of {self.op_name}>"


def native_formula_of(str op_name):
    """The native first-order formula code of ``op_name``'s entry (0 when it has none).

    Read from the entry's ``fused`` field (Note [Native first-order formulas], _native.pyx).
    """
    from gradstack_tensor import OPS
    op = OPS.get(op_name)
    if op is None or not isinstance(op.derivative, Derivative):
        return NATIVE_NONE
    return (<Derivative>op.derivative).native
