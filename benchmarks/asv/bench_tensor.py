"""tensor-core: element-wise ops, reductions, matmul and tiny-tensor overhead, each next to
the numpy expression it stands for (no autograd: no input requires grad).

No ``setup`` here: see Note [Micro-benchmarks have no setup] in _common.py.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ._common import one_thread, optional, require, rng, tensor

rounds = 1  # see Note [One round] in _common.py

gt = optional("gradstack_tensor")

SIZES = [16, 65_536, 1_048_576]

# name -> (gradstack call, numpy call); both take (a, b), unary ops ignore b
ELEMENTWISE = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    "div": (lambda a, b: a / b, lambda a, b: a / b),
    "sin": (lambda a, b: a.sin(), lambda a, b: np.sin(a)),
    "exp": (lambda a, b: a.exp(), lambda a, b: np.exp(a)),
    "tanh": (lambda a, b: a.tanh(), lambda a, b: np.tanh(a)),
    "relu": (lambda a, b: a.relu(), lambda a, b: np.maximum(a, 0)),
    "sigmoid": (lambda a, b: a.sigmoid(), lambda a, b: 1 / (1 + np.exp(-a))),
    "pow3": (lambda a, b: a**3, lambda a, b: a**3),
}


@cache
def _elementwise(op, n):
    require(gt)
    one_thread()
    r = rng()
    a_np = r.standard_normal(n).astype(np.float32)
    b_np = r.uniform(0.5, 2.0, n).astype(np.float32)
    a, b = tensor(a_np), tensor(b_np)
    fn_gs, fn_np = ELEMENTWISE[op]
    return (lambda: fn_gs(a, b)), (lambda: fn_np(a_np, b_np))


class Elementwise:
    """One element-wise op on float32 vectors of n elements."""

    params = [list(ELEMENTWISE), SIZES]
    param_names = ["op", "n"]

    def time_gradstack(self, op, n):
        _elementwise(op, n)[0]()

    def time_numpy(self, op, n):
        _elementwise(op, n)[1]()


REDUCTIONS = {
    "sum": (lambda a: a.sum(), lambda a: a.sum()),
    "mean": (lambda a: a.mean(), lambda a: a.mean()),
    "max": (lambda a: a.max(), lambda a: a.max()),
    "sum_dim0": (lambda a: a.sum(dim=0), lambda a: a.sum(axis=0)),
    "sum_dim1_keepdim": (
        lambda a: a.sum(dim=1, keepdim=True),
        lambda a: a.sum(axis=1, keepdims=True),
    ),
    "logsumexp_dim1": (
        lambda a: a.logsumexp(dim=1),
        lambda a: np.log(np.exp(a - a.max(1, keepdims=True)).sum(1)) + a.max(1),
    ),
}


@cache
def _reduction(op, side):
    require(gt)
    one_thread()
    a_np = rng().standard_normal((side, side)).astype(np.float32)
    a = tensor(a_np)
    if op == "logsumexp_dim1":
        require(attrs=((a, "logsumexp"),))
    fn_gs, fn_np = REDUCTIONS[op]
    return (lambda: fn_gs(a)), (lambda: fn_np(a_np))


class Reductions:
    """A reduction over a float32 (side, side) matrix."""

    params = [list(REDUCTIONS), [4, 256, 1024]]
    param_names = ["op", "side"]

    def time_gradstack(self, op, side):
        _reduction(op, side)[0]()

    def time_numpy(self, op, side):
        _reduction(op, side)[1]()


@cache
def _square_pair(n, batch=None):
    require(gt)
    one_thread()
    shape = (n, n) if batch is None else (batch, n, n)
    r = rng()
    a_np = r.standard_normal(shape).astype(np.float32)
    b_np = r.standard_normal(shape).astype(np.float32)
    v_np = r.standard_normal(n).astype(np.float32)
    return tensor(a_np), tensor(b_np), tensor(v_np), a_np, b_np, v_np


class Matmul:
    """(n, n) @ (n, n) in float32; BLAS underneath, so the gap is the per-call overhead."""

    params = [[8, 64, 256, 512]]
    param_names = ["n"]

    def time_gradstack(self, n):
        a, b, _, _, _, _ = _square_pair(n)
        a @ b

    def time_numpy(self, n):
        _, _, _, a, b, _ = _square_pair(n)
        a @ b

    def time_mv(self, n):
        a, _, v, _, _, _ = _square_pair(n)
        gt.mv(a, v)

    def time_mv_numpy(self, n):
        _, _, _, a, _, v = _square_pair(n)
        a @ v


@cache
def _linear_operands(batch, k, n):
    require(gt)
    one_thread()
    r = rng()
    x_np = r.standard_normal((batch, k)).astype(np.float32)
    w_np = r.standard_normal((n, k)).astype(np.float32)
    return tensor(x_np), tensor(w_np), x_np, w_np


class LinearProduct:
    """``x @ w.T`` of a linear layer (Note [The faster orientation of a small-batch
    product]): a small batch by a transposed weight, against numpy's ``x @ w.T``."""

    params = [[(16, 1000, 100), (8, 512, 512), (256, 784, 512)]]
    param_names = ["batch_k_n"]

    def time_gradstack(self, batch_k_n):
        x, w, _, _ = _linear_operands(*batch_k_n)
        x @ w.t()

    def time_numpy(self, batch_k_n):
        _, _, x, w = _linear_operands(*batch_k_n)
        x @ w.T


class BatchedMatmul:
    """bmm of two (16, n, n) batches."""

    params = [[8, 64]]
    param_names = ["n"]

    def time_bmm(self, n):
        a, b, _, _, _, _ = _square_pair(n, 16)
        gt.bmm(a, b)

    def time_bmm_numpy(self, n):
        _, _, _, a, b, _ = _square_pair(n, 16)
        np.matmul(a, b)


@cache
def _tiny():
    require(gt)
    a = tensor(np.ones((2, 3), np.float32))
    b = tensor(np.full((2, 3), 2.0, np.float32))
    return a, b, np.ones((2, 3), np.float32), np.full((2, 3), 2.0, np.float32)


class TinyOverhead:
    """Per-call cost on (2, 3) tensors, 100 calls per timed call: the Python/Cython overhead
    that dominates small workloads (dispatch, result object, view bookkeeping)."""

    def time_mul_x100(self):
        a, b, _, _ = _tiny()
        for _ in range(100):
            a * b

    def time_mul_numpy_x100(self):
        _, _, a, b = _tiny()
        for _ in range(100):
            a * b

    def time_add_scalar_x100(self):
        a, _, _, _ = _tiny()
        for _ in range(100):
            a + 1.0

    def time_view_ops_x100(self):
        a, _, _, _ = _tiny()
        for _ in range(100):
            a.t().reshape(6)[1:]

    def time_view_ops_numpy_x100(self):
        _, _, a, _ = _tiny()
        for _ in range(100):
            a.T.reshape(6)[1:]

    def time_inplace_mul_x100(self):
        a, _, _, _ = _tiny()
        for _ in range(100):
            a.mul_(1.0)

    def time_tensor_from_list_x100(self):
        require(gt)
        for _ in range(100):
            gt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def time_zeros_x100(self):
        require(gt)
        for _ in range(100):
            gt.zeros(2, 3)
