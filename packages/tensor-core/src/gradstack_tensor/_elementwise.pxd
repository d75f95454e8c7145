# The C-level interface of the elementwise kernels for other modules (through
# gradstack_tensor.extension for the layers above).

# Note [A kernel's by-product] (_elementwise.pyx): the layer that records an op says, around
# the kernel's call, that it will take a by-product (this thread only).
cdef void set_byproduct_wanted(bint wanted) noexcept nogil
