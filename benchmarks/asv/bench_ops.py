"""The op sweep's representative ops (issue 34), gradstack alone: forward, and forward and
backward, at 10**4 and 10**6 float32 elements.

The same calls as ``benchmarks/op_sweep.py`` (``benchmarks/op_cases.py``), which compares
every differentiable op with torch; here the ops behind the models' gaps are tracked over
commits: GELU (exact and tanh), erf, SiLU, softplus, softmax, log_softmax, cross_entropy,
layer_norm, batch_norm, embedding, max/avg pooling, conv2d, the LSTM cell, dropout,
masked_fill, and a GEMM, a reduction and an elementwise op for reference.  No ``setup``
(Note [Micro-benchmarks have no setup] in _common.py): the inputs are built once per op
and size, the forward and ``autograd.grad`` consume nothing.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ._common import benchmark_script, one_thread, optional, require

rounds = 1  # see Note [One round] in _common.py

gradstack = optional("gradstack")
OPS = [
    "F.gelu",
    "F.gelu(tanh)",
    "erf",
    "F.silu",
    "F.softplus",
    "F.softmax",
    "F.log_softmax",
    "F.cross_entropy",
    "F.layer_norm",
    "F.batch_norm",
    "F.embedding",
    "F.max_pool2d",
    "F.avg_pool2d",
    "F.conv2d",
    "nn.LSTMCell",
    "F.dropout",
    "masked_fill",
    "mm",
    "sum",
    "mul",
]
SIZES = [10_000, 1_000_000]


@cache
def _built(op, n):
    """(call, tensors, leaves, output gradient) of the op's case at about n elements."""
    require(gradstack, attrs=((gradstack, "nn"), (gradstack, "autograd")))
    one_thread()
    cases = benchmark_script("op_cases")
    kind = "binary" if op == "mul" else "other"
    c = cases.case(op, n, np.random.default_rng(n), kind)
    call = c.build(gradstack)
    tensors = [
        gradstack.from_numpy(np.array(a, copy=True)).requires_grad_(g)
        for a, g in zip(c.arrays, c.grad)
    ]
    leaves = [t for t, g in zip(tensors, c.grad) if g]
    if c.params is not None:
        leaves += c.params(call)
    gradstack.manual_seed(0)
    out = call(*tensors)
    grad = gradstack.from_numpy(
        np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(np.float32)
    )
    return call, tensors, leaves, grad


class Op:
    """Forward (inputs that require grad) and forward + ``autograd.grad``."""

    params = [OPS, SIZES]
    param_names = ["op", "n"]

    def time_forward(self, op, n):
        call, tensors, _, _ = _built(op, n)
        call(*tensors)

    def time_forward_backward(self, op, n):
        call, tensors, leaves, grad = _built(op, n)
        gradstack.autograd.grad(call(*tensors), leaves, grad, allow_unused=True)
