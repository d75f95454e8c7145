# The node recorded from a row of the derivative table: what the layer, the view nodes and
# the engine cimport from _op_node.pyx.
cimport cython

from gradstack_autograd._derivative cimport Derivative
from gradstack_autograd._node cimport Node


@cython.no_gc  # Note [no_gc is declared in the .pxd], _node.pxd
cdef class OpNode(Node):
    cdef dict _shown(self, Derivative d)
    cdef list _saved_names(self)
    cdef object _saved_attribute(self, str name)


cdef object make_node_class(Derivative d, tuple args)


cdef inline object node_class_of(Derivative d, tuple args):
    """The node class (an OpNode subclass) of ``d`` for a call with ``args``: an entry with
    one node name keeps its class after the first call (no call on the recording path)."""
    if d._fixed_class is not None:
        return d._fixed_class
    return make_node_class(d, args)
