# Forward-mode AD's hooks: what the recording layer cimports from _forward_ad_hooks.pyx.
from gradstack_tensor.extension cimport Op


cdef void _forward_ad_hook(Op op, tuple args, object out) except *
cdef object _forward_ad_inplace_hook()
