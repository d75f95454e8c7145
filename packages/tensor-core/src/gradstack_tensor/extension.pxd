# The C-level interface of tensor-core for Cython code of the layers above (graph-engine's
# core cimports it).  Public and versioned with tensor-core, as gradstack_tensor.extension
# is for Python code; the private .pxd files it re-exports may change.
#
#   Tensor          gradstack_tensor.Tensor, with the C fields of TensorBase: _data (the
#                   numpy storage), _requires_grad, _grad, _grad_fn, _output_nr,
#                   _autograd_meta, _fw_grad, _is_inference, _view_base, _vc, and the
#                   C methods version_counter(), bump_version(op_name)
#   VersionCounter  value, last_writer, track_writes
#   wrap(array)     a new leaf Tensor over an ndarray;  wrap_view(array, base): a view of base
#   data_of(t)      the ndarray of a tensor (inline)
#   shape_of(array) an ndarray's shape tuple, built in C (inline; Note [Shapes are built in C])
#   Op, DispatchLayer, call_next(op, args, index), dispatch(op, args): the dispatch point;
#                   dispatch_layer_count(): how many layers are on it
#   small_binary(code, x, y): the small-array C loop of add/sub/mul/div (B_ADD, B_SUB,
#                   B_MUL, B_DIV) on float32/float64 operands, as the dispatched op runs it,
#                   or None where it does not apply (Note [Small float arrays take C loops])
#   enter_op(), exit_op(): count an allocation gradstack makes outside a kernel (a fused
#                   backward kernel's result, a new .grad) as inside an op, so the block
#                   cache keeps it (Note [Inside a gradstack op], _dispatch.pyx)
#   kernel_threads(n, threshold), kernel_parallel_threshold(), kernel_block_size(n, k),
#   kernel_avx2(), check_kernel_input(func, name, array), check_kernel_same(func, ...):
#                   the thread settings, AVX2 switch and argument checks of
#                   gradstack_tensor.kernels, for kernels compiled by the layers above
#                   (Note [Kernels of the layers above], _kernels.pyx)
#   set_byproduct_wanted(flag): around a kernel's call, whether the recording layer will take
#                   the by-product it may leave (Note [A kernel's by-product])
#   trig_f32_range(want_sin, sign, g, g_step, x, out, start, stop): the float32 sin/cos
#                   loop, out = sign * g * cos(x) or sin(x) (Note [float32 sin and cos])

from gradstack_tensor._dispatch cimport (
    DispatchLayer, Op, call_next, dispatch, enter_op, exit_op,
    layer_count as dispatch_layer_count,
)
from gradstack_tensor._loops cimport B_ADD, B_DIV, B_MUL, B_SUB, small_binary
from gradstack_tensor._elementwise cimport set_byproduct_wanted
from gradstack_tensor._tensor cimport Tensor, wrap, wrap_view
from gradstack_tensor._tensor_base cimport TensorBase, VersionCounter, data_of, shape_of
from gradstack_tensor._kernels cimport (
    _check_input as check_kernel_input,
    _check_same as check_kernel_same,
    kernel_avx2,
    kernel_block_size,
    kernel_parallel_threshold,
    kernel_threads,
)
from gradstack_tensor._float32_transcendentals cimport trig_f32_range
