"""The fused Cython kernels, each next to the numpy expression it replaces, on one and on two
threads (same workloads as the standalone script ``benchmarks/kernels_vs_numpy.py``):
tensor-core's (``gradstack_tensor.kernels``: accumulation, the SGD update, sum_to_shape)
and graph-engine's fused backward formulas (``gradstack_autograd._backward_kernels``; in
tensor-core's module before they moved, which older commits measure there).

The kernels are what the backward formulas and the optimiser call, so this module measures
them directly; commits before the kernels existed skip it.  No ``setup``: see
Note [Micro-benchmarks have no setup] in _common.py.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ._common import optional, require, rng

rounds = 1  # see Note [One round] in _common.py

K = optional("gradstack_tensor.kernels") or optional("gradstack_tensor._kernels")
# the float32 loops: a module of their own since the kernels were split by family
T = optional("gradstack_tensor._float32_transcendentals") or optional("gradstack_tensor._kernels")
# the fused backward formulas: graph-engine's since they moved, tensor-core's before
B = optional("gradstack_autograd._backward_kernels") or optional("gradstack_tensor._kernels")

KERNELS = [
    "sin_backward",
    "cos_backward",
    "relu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "mul_backward",
    "div_backward",
    "sum_to_shape_rows",
    "sum_to_shape_cols",
    "sum_to_shape_scalar",
    "accumulate_",
    "add_scaled_",
    "sgd_update_",
    "sin_forward",
    "cos_forward",
    "tanh_forward",
    "sincos_forward",
    "tanh_backward_broadcast",
]

# the kernels that appeared later, with what they need (a commit without it skips them)
_NEEDS = {
    "sin_forward": (T, "_transcendental_f32"),
    "cos_forward": (T, "_transcendental_f32"),
    "tanh_forward": (T, "_transcendental_f32"),
    "sincos_forward": (T, "_sincos_f32"),
    "tanh_backward_broadcast": (B, "is_broadcast_grad"),
}


# the inputs each kernel's case reads (Note [Each case draws only its own inputs])
INPUTS = {
    "sin_backward": {"g", "x"},
    "cos_backward": {"g", "x"},
    "relu_backward": {"g", "out"},
    "sigmoid_backward": {"g", "s"},
    "tanh_backward": {"g", "t"},
    "mul_backward": {"g", "a", "b"},
    "div_backward": {"g", "a", "b"},
    "sum_to_shape_rows": {"rows"},
    "sum_to_shape_cols": {"rows"},
    "sum_to_shape_scalar": {"g"},
    "accumulate_": {"dst", "src"},
    "add_scaled_": {"dst", "src"},
    "sgd_update_": {"param", "grad", "buf"},
    "sin_forward": {"x"},
    "cos_forward": {"x"},
    "tanh_forward": {"x"},
    "sincos_forward": {"x"},
    "tanh_backward_broadcast": {"t"},
}


def _cases(n, needed=None, dtype=np.float32):
    """name -> (kernel call, numpy call) on arrays of n elements; only the cases whose
    inputs are all ``needed`` (default: every input) can be called.

    Note [Each case draws only its own inputs]
    Every benchmark process times one kernel, but drawing every case's inputs (13 random
    arrays, 52 MB at n = 2**20) cost more than the timed calls of a --quick run.  An input
    the case does not read is skipped by advancing the generator past its draws (one 64-bit
    output per float64 that ``uniform`` draws), so every input keeps the values it had when
    all were drawn in this order.
    """
    r = rng()

    def uniform(name, low=-3.0, high=3.0, shape=(n,)):
        if needed is not None and name not in needed:
            r.bit_generator.advance(int(np.prod(shape)))
            return None
        return r.uniform(low, high, size=shape).astype(dtype)

    g, x = uniform("g"), uniform("x")
    s, t, out = uniform("s", 0.0, 1.0), uniform("t", -1.0, 1.0), uniform("out")
    out = None if out is None else np.maximum(out, 0)
    a, b = uniform("a"), uniform("b", 0.5, 3.0)
    cols = 3 if n < 64 else 64
    rows = uniform("rows", shape=(max(1, n // cols), cols))
    param, grad, buf = uniform("param"), uniform("grad"), uniform("buf")
    np_param = None if param is None else param.copy()
    np_buf = None if buf is None else buf.copy()
    dst, src = uniform("dst"), uniform("src")
    one = np.broadcast_to(np.asarray(2.0, dtype), (n,))
    lr, momentum, wd = 1e-3, 0.9, 1e-4

    def numpy_sgd():
        d = grad + wd * np_param
        np_buf.__imul__(momentum)
        np_buf.__iadd__(d)
        np_param.__isub__(lr * np_buf)

    return {
        "sin_backward": (lambda: B.sin_backward(g, x), lambda: g * np.cos(x)),
        "cos_backward": (lambda: B.cos_backward(g, x), lambda: -g * np.sin(x)),
        "relu_backward": (lambda: B.relu_backward(g, out), lambda: g * (out > 0)),
        "sigmoid_backward": (lambda: B.sigmoid_backward(g, s), lambda: g * s * (1 - s)),
        "tanh_backward": (lambda: B.tanh_backward(g, t), lambda: g * (1 - t * t)),
        "mul_backward": (lambda: B.mul_backward(g, a, b), lambda: (g * b, g * a)),
        "div_backward": (lambda: B.div_backward(g, a, b), lambda: (g / b, -g * a / (b * b))),
        "sum_to_shape_rows": (
            lambda: K.sum_to_shape(rows, (cols,)),
            lambda: rows.sum(axis=0, keepdims=True).reshape(cols),
        ),
        "sum_to_shape_cols": (
            lambda: K.sum_to_shape(rows, (rows.shape[0], 1)),
            lambda: rows.sum(axis=1, keepdims=True),
        ),
        "sum_to_shape_scalar": (lambda: K.sum_to_shape(g, ()), lambda: g.sum()),
        "accumulate_": (lambda: K.accumulate_(dst, src), lambda: dst.__iadd__(src)),
        "add_scaled_": (lambda: K.add_scaled_(dst, src, -0.5), lambda: dst.__iadd__(-0.5 * src)),
        "sgd_update_": (
            lambda: K.sgd_update_(param, grad, buf, lr, momentum=momentum, weight_decay=wd),
            numpy_sgd,
        ),
        # tensor-core's float32 loops (Note [float32 sin and cos], Note [float32 tanh])
        "sin_forward": (lambda: T._transcendental_f32("sin", x), lambda: np.sin(x)),
        "cos_forward": (lambda: T._transcendental_f32("cos", x), lambda: np.cos(x)),
        "tanh_forward": (lambda: T._transcendental_f32("tanh", x), lambda: np.tanh(x)),
        "sincos_forward": (lambda: T._sincos_f32(x), lambda: (np.sin(x), np.cos(x))),
        # sum's gradient, one number broadcast (Note [A broadcast gradient is one number])
        "tanh_backward_broadcast": (
            lambda: B.tanh_backward(one, t),
            lambda: one * (1 - t * t),
        ),
    }


@cache
def _case(kernel, n, threads):
    require(K)
    if kernel in _NEEDS:
        require(attrs=(_NEEDS[kernel],))
    K.set_num_threads(threads)  # each asv benchmark runs in its own process
    return _cases(n, INPUTS[kernel])[kernel]


class FusedKernels:
    """A fused kernel on one thread against the numpy expression it replaces."""

    params = [KERNELS, [1_024, 1_048_576]]
    param_names = ["kernel", "n"]

    def time_kernel(self, kernel, n):
        _case(kernel, n, 1)[0]()

    def time_numpy(self, kernel, n):
        _case(kernel, n, 1)[1]()


class FusedKernelsTwoThreads:
    """The same kernels on two threads (OpenMP above the kernels' size thresholds)."""

    params = FusedKernels.params
    param_names = FusedKernels.param_names

    def time_kernel(self, kernel, n):
        _case(kernel, n, 2)[0]()
