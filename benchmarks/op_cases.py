"""How to call each op of the op sweep at a given size, the same code for both libraries.

``benchmarks/op_sweep.py`` enumerates the ops to sweep from gradstack's registries (every
op of ``gradstack_tensor.OPS`` whose derivative-table entry is differentiable) and adds
the ``nn.functional`` calls the models make (:data:`FUNCTIONAL`).  This module says how to
call each at about ``n`` elements (``n`` = 100, 10**4, 10**6): :func:`case` returns a
:class:`Case` (float32 numpy inputs, which of them require grad, and a builder of the
call for a library), found by name in :data:`RECIPES`, or derived from the op's kind
(elementwise unary and binary ops) and, for an in-place op ``name_``, from ``name``'s
case applied to a clone (``x.clone().name_(...)``: the clone is timed on both sides).
An op with neither is reported by the sweep as "no case", so a new op shows up.

Examples
--------
>>> import numpy as np
>>> import gradstack as torch
>>> c = case("mm", 10_000, np.random.default_rng(0))
>>> call = c.build(torch)
>>> out = call(*[torch.from_numpy(a) for a in c.arrays])
>>> tuple(out.shape)
(100, 100)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Case", "FUNCTIONAL", "RECIPES", "UNARY_DOMAIN", "case", "NO_TORCH_TWIN"]


@dataclass
class Case:
    """One call of an op: ``build(L)(*tensors)`` returns one tensor."""

    arrays: tuple
    build: Callable  # build(L) -> call(*tensors)
    grad: tuple = ()  # which arrays require grad (default: the floating ones)
    params: Callable | None = None  # params(call) -> extra leaves (a module's weights)
    shape: str = ""  # the main input's shape, for the table

    def __post_init__(self):
        if not self.grad:
            self.grad = tuple(a.dtype.kind == "f" for a in self.arrays)
        if not self.shape and self.arrays:
            self.shape = "x".join(map(str, self.arrays[0].shape)) or "scalar"


# ------------------------------------------------------------------------------ shapes


def sq(n):
    """A square matrix of about n elements."""
    s = max(2, round(math.sqrt(n)))
    return (s, s)


def bat(n):
    """A batch of matrices of about n elements."""
    return {100: (4, 5, 5), 10_000: (16, 25, 25)}.get(n, (64, 125, 125))


def img(n):
    """An NCHW image batch of about n elements."""
    return {100: (1, 1, 10, 10), 10_000: (4, 4, 25, 25)}.get(n, (10, 10, 100, 100))


def f32(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def distinct(rng, shape):
    """float32 values without ties (sort, topk, max: a tie routes the gradient to either
    element, and the libraries may pick different ones)."""
    n = math.prod(shape)
    return (rng.permutation(n).reshape(shape) * (4.0 / n) - 2.0).astype(np.float32)


def aten(L, name):
    """The op ``name`` called below the Python API: ``torch.ops.aten.name`` or gradstack's
    registry (``gradstack_tensor.get_op``), for ops without a public function."""
    if L.__name__ == "torch":
        return getattr(L.ops.aten, name)
    import gradstack_tensor

    return gradstack_tensor.get_op(name)


def call(fn):
    """A builder for a plain call ``fn(L, *tensors)``."""
    return lambda L: lambda *t: fn(L, *t)


# ------------------------------------------------------------------------------ elementwise

# unary ops by domain (lo, hi); the rest draw from (-2, 2)
UNARY_DOMAIN = {
    **dict.fromkeys(("log", "log2", "log10", "sqrt", "rsqrt", "lgamma", "digamma"), (0.2, 3.0)),
    "log1p": (-0.7, 3.0),
    **dict.fromkeys(("asin", "acos", "atanh", "erfinv"), (-0.9, 0.9)),
    "acosh": (1.2, 3.0),
    "tan": (-1.2, 1.2),
    "reciprocal": (0.5, 2.0),
}

# binary ops: (lo, hi) of the first operand, (lo, hi) of the second
BINARY_DOMAIN = {
    "pow": ((0.5, 2.0), (-1.5, 2.0)),
    "div": ((-2.0, 2.0), (0.5, 2.0)),
    "remainder": ((-2.0, 2.0), (0.5, 2.0)),
    "atan2": ((-2.0, 2.0), (0.5, 2.0)),
    "floor_divide": ((-2.0, 2.0), (0.5, 2.0)),
}


def _unary(name, n, rng):
    lo, hi = UNARY_DOMAIN.get(name, (-2.0, 2.0))
    return Case((f32(rng, sq(n), lo, hi),), call(lambda L, x: getattr(L, name)(x)))


def _binary(name, n, rng):
    (a0, a1), (b0, b1) = BINARY_DOMAIN.get(name, ((-2.0, 2.0), (-2.0, 2.0)))
    arrays = (f32(rng, sq(n), a0, a1), f32(rng, sq(n), b0, b1))
    return Case(arrays, call(lambda L, x, y: getattr(L, name)(x, y)))


def _inplace(base: Case, name: str) -> Case:
    """``name_`` on a clone of the first input (a leaf cannot be written in place)."""

    def build(L):
        def run(x, *rest):
            return getattr(x.clone(), name)(*rest)

        return run

    return Case(base.arrays, build, base.grad, shape=base.shape)


# ------------------------------------------------------------------------------ the recipes
# name -> recipe(n, rng) -> Case.  Written for the op table's ops that are not plain
# unary/binary elementwise ops, and for the nn.functional calls of the models.

RECIPES: dict[str, Callable[[int, np.random.Generator], Case]] = {}


def recipe(*names):
    def register(fn):
        for name in names:
            RECIPES[name] = fn
        return fn

    return register


def _idx(rng, high, size):
    return rng.integers(0, high, size=size).astype(np.int64)


def _vec(n):
    return sq(n)[0]


R = RECIPES  # short alias for one-line recipes below

R["rsub"] = lambda n, r: Case((f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: L.rsub(x, y)))
R["mul_scalar"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x * 2.5))
R["div_scalar"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x / 2.5))
R["div_rounding"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n), 0.5, 2.0)),
    call(lambda L, x, y: L.div(x, y, rounding_mode="floor")),
)
R["round_decimals"] = lambda n, r: Case(
    (f32(r, sq(n), -50.0, 50.0),), call(lambda L, x: L.round(x, decimals=2))
)
R["clamp"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.clamp(x, -1.0, 1.0)))
R["clamp_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().clamp_(-1.0, 1.0)))
for _n in ("digamma", "erfinv", "lgamma"):  # unary functions outside the elementwise kinds
    R[_n] = lambda n, r, _n=_n: _unary(_n, n, r)
R["polygamma"] = lambda n, r: Case((f32(r, sq(n), 0.3, 4),), call(lambda L, x: L.polygamma(1, x)))
R["where"] = lambda n, r: Case(
    (r.random(sq(n)) < 0.5, f32(r, sq(n)), f32(r, sq(n))),
    call(lambda L, c, x, y: L.where(c, x, y)),
)
R["masked_fill"] = lambda n, r: Case(
    (f32(r, sq(n)), r.random(sq(n)) < 0.5), call(lambda L, x, m: x.masked_fill(m, -1e9))
)
R["masked_fill_"] = lambda n, r: Case(
    (f32(r, sq(n)), r.random(sq(n)) < 0.5), call(lambda L, x, m: x.clone().masked_fill_(m, -1e9))
)
R["clone"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone()))
R["alias"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: aten(L, "alias")(x)))
R["contiguous"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.t().contiguous()))
R["copy_"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: x.clone().copy_(y))
)
R["fill_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().fill_(0.5)))
R["zero_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().zero_()))
R["to_dtype"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.to(L.float64)))
R["gelu"] = lambda n, r: Case((f32(r, sq(n), -3, 3),), call(lambda L, x: L.nn.functional.gelu(x)))


def _gelu_backward(L, g, x):
    if L.__name__ == "torch":
        return L.ops.aten.gelu_backward(g, x, approximate="none")
    return aten(L, "gelu_backward")(g, x, "none")  # the registry takes canonical positions


R["gelu_backward"] = lambda n, r: Case((f32(r, sq(n)), f32(r, sq(n), -3, 3)), call(_gelu_backward))
R["silu"] = lambda n, r: Case((f32(r, sq(n), -4, 4),), call(lambda L, x: L.nn.functional.silu(x)))
R["silu_"] = lambda n, r: Case(
    (f32(r, sq(n), -4, 4),), call(lambda L, x: L.nn.functional.silu(x.clone(), inplace=True))
)
R["leaky_relu"] = lambda n, r: Case(
    (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.leaky_relu(x, 0.1))
)
R["leaky_relu_"] = lambda n, r: Case(
    (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.leaky_relu(x.clone(), 0.1, inplace=True))
)
R["log_sigmoid"] = lambda n, r: Case(
    (f32(r, sq(n), -4, 4),), call(lambda L, x: L.nn.functional.logsigmoid(x))
)
R["erf"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.erf(x)))

R["erfc"] = lambda n, r: _unary("erfc", n, r)
R["softplus"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.nn.functional.softplus(x)))
R["angle"] = lambda n, r: _complex_case(lambda L, z: L.angle(z))(n, r)  # the op: complex
R["frexp"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.frexp(x).mantissa))
R["_neg_view"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: aten(L, "_neg_view")(x)))


def _gamma_pair(name):
    """igamma / igammac (a, x): torch differentiates x only (the derivative in a is not
    implemented in either library)."""
    return lambda n, r: Case(
        (f32(r, sq(n), 0.5, 3.0), f32(r, sq(n), 0.2, 4.0)),
        call(lambda L, a, x: getattr(L, name)(a, x)),
        grad=(False, True),
    )


for _n in ("igamma", "igammac"):
    R[_n] = _gamma_pair(_n)


def _special(name, lo=-2.0, hi=2.0):
    """``torch.special.<name>`` of one float32 matrix (the op table's ``special_<name>``)."""
    return lambda n, r: Case(
        (f32(r, sq(n), lo, hi),), call(lambda L, x: getattr(L.special, name)(x))
    )


for _n in ("erfcx", "i0e", "i1", "i1e"):
    R["special_" + _n] = _special(_n)
R["special_zeta"] = lambda n, r: Case(  # torch differentiates q only
    (f32(r, sq(n), 1.5, 4.0), f32(r, sq(n), 0.5, 3.0)),
    call(lambda L, x, q: L.special.zeta(x, q)),
    grad=(False, True),
)


# ---- complex numbers: complex64 inputs and outputs (the check compares real and
# imaginary parts; the leaves' gradients are complex as in torch)
def c64(rng, shape):
    return (f32(rng, shape) + 1j * f32(rng, shape)).astype(np.complex64)


def _complex_case(fn, shape=sq):
    return lambda n, r: Case((c64(r, shape(n)),), call(fn), grad=(True,))


R["conj"] = _complex_case(lambda L, z: L.conj(z))
R["conj_physical"] = _complex_case(lambda L, z: L.conj_physical(z))
R["view_as_real"] = _complex_case(lambda L, z: L.view_as_real(z))
R["view_as_complex"] = lambda n, r: Case(
    (f32(r, (*sq(n)[:1], sq(n)[1] // 2 or 1, 2)),), call(lambda L, x: L.view_as_complex(x))
)
R["complex"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: L.complex(x, y))
)
R["polar"] = lambda n, r: Case(
    (f32(r, sq(n), 0.1, 2.0), f32(r, sq(n), -3.0, 3.0)), call(lambda L, a, t: L.polar(a, t))
)
R["fft_c2c"] = _complex_case(lambda L, z: L.fft.fft(z))
R["fft_r2c"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.fft.rfft(x)))
R["fft_c2r"] = _complex_case(lambda L, z: L.fft.irfft(z))

# ---- reductions (over the last dim of a square matrix, or over everything)
R["sum"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.sum()))
R["mean"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.mean(-1)))
R["prod"] = lambda n, r: Case((f32(r, sq(n), 0.9, 1.1),), call(lambda L, x: x.prod(-1)))
R["amax"] = lambda n, r: Case((distinct(r, sq(n)),), call(lambda L, x: L.amax(x, -1)))
R["amin"] = lambda n, r: Case((distinct(r, sq(n)),), call(lambda L, x: L.amin(x, -1)))
R["max"] = lambda n, r: Case((distinct(r, sq(n)),), call(lambda L, x: L.max(x, -1)[0]))
R["min"] = lambda n, r: Case((distinct(r, sq(n)),), call(lambda L, x: L.min(x, -1)[0]))
R["std"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.std(-1)))
R["var"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.var(-1)))
R["norm"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.norm()))
R["logsumexp"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.logsumexp(x, -1)))
R["cumsum"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.cumsum(-1)))
R["softmax"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.softmax(-1)))
R["log_softmax"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.log_softmax(-1)))
R["sort"] = lambda n, r: Case((distinct(r, sq(n)),), call(lambda L, x: L.sort(x, -1)[0]))
R["topk"] = lambda n, r: Case(
    (distinct(r, sq(n)),), call(lambda L, x: L.topk(x, max(1, x.shape[-1] // 10), -1)[0])
)

# ---- linear algebra (square operands of about n elements each)
R["mm"] = lambda n, r: Case((f32(r, sq(n)), f32(r, sq(n))), call(lambda L, a, b: L.mm(a, b)))
R["matmul"] = lambda n, r: Case(
    (f32(r, bat(n)), f32(r, bat(n))), call(lambda L, a, b: L.matmul(a, b))
)
R["bmm"] = lambda n, r: Case((f32(r, bat(n)), f32(r, bat(n))), call(lambda L, a, b: L.bmm(a, b)))
R["addmm"] = lambda n, r: Case(
    (f32(r, sq(n)[1:]), f32(r, sq(n)), f32(r, sq(n))), call(lambda L, c, a, b: L.addmm(c, a, b))
)
R["mv"] = lambda n, r: Case((f32(r, sq(n)), f32(r, sq(n)[1:])), call(lambda L, a, v: L.mv(a, v)))
R["dot"] = lambda n, r: Case((f32(r, (n,)), f32(r, (n,))), call(lambda L, a, b: L.dot(a, b)))
R["vdot"] = lambda n, r: Case((f32(r, (n,)), f32(r, (n,))), call(lambda L, a, b: L.vdot(a, b)))
R["outer"] = lambda n, r: Case(
    (f32(r, (_vec(n),)), f32(r, (_vec(n),))), call(lambda L, a, b: L.outer(a, b))
)
R["trace"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.trace(x)))
R["diag"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.diag(x)))
R["diagonal"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.diagonal(x)))
R["tril"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.tril(x)))
R["triu"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.triu(x)))


def _spd(n, r):
    a = r.standard_normal(sq(n)).astype(np.float32)
    return (a @ a.T / a.shape[0] + np.eye(a.shape[0], dtype=np.float32)).astype(np.float32)


R["linalg_inv"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.inv(a)))
R["linalg_det"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.det(a)))
R["linalg_logabsdet"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.slogdet(a)[1]))
R["linalg_solve"] = lambda n, r: Case(
    (_spd(n, r), f32(r, sq(n))), call(lambda L, a, b: L.linalg.solve(a, b))
)
R["linalg_cholesky"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.cholesky(a)))
R["linalg_eig"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.eigvals(a).real))
R["linalg_eigh"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.eigvalsh(a)))
R["linalg_qr"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, a: L.linalg.qr(a).R))
R["linalg_lstsq"] = lambda n, r: Case(
    (_spd(n, r), f32(r, sq(n))), call(lambda L, a, b: L.linalg.lstsq(a, b).solution)
)
R["linalg_solve_triangular"] = lambda n, r: Case(
    (_spd(n, r), f32(r, sq(n))),
    call(lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True)),
)
R["linalg_lu"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.lu(a).U))
R["linalg_pinv"] = lambda n, r: Case((_spd(n, r),), call(lambda L, a: L.linalg.pinv(a)))
R["linalg_svd"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, a: L.linalg.svdvals(a)))

# ---- views, copies, indexing
R["cat"] = lambda n, r: Case((f32(r, sq(n)), f32(r, sq(n))), call(lambda L, a, b: L.cat([a, b], 0)))
R["stack"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, a, b: L.stack([a, b], 0))
)
R["chunk"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.chunk(x, 2, 0)[1]))
R["split"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.split(x, 1, 0)[1]))
R["unbind"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.unbind(x, 0)[1]))
R["expand"] = lambda n, r: Case(
    (f32(r, (1, sq(n)[1])),), call(lambda L, x: x.expand(x.shape[1], x.shape[1]))
)
R["expand_as"] = lambda n, r: Case(
    (f32(r, (1, sq(n)[1])), f32(r, sq(n))), call(lambda L, x, y: x.expand_as(y)), grad=(True, False)
)
R["flatten"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.flatten()))
R["flip"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.flip(x, [0])))
R["gather"] = lambda n, r: Case(
    (f32(r, sq(n)), _idx(r, sq(n)[1], sq(n))), call(lambda L, x, i: L.gather(x, 1, i))
)
R["getitem"] = lambda n, r: Case(
    (f32(r, sq(n)), _idx(r, sq(n)[0], sq(n)[0])), call(lambda L, x, i: x[i])
)
R["index_select"] = lambda n, r: Case(
    (f32(r, sq(n)), _idx(r, sq(n)[0], sq(n)[0])), call(lambda L, x, i: L.index_select(x, 0, i))
)
R["narrow"] = lambda n, r: Case(
    (f32(r, sq(n)),), call(lambda L, x: L.narrow(x, 0, 1, x.shape[0] - 1))
)
R["permute"] = lambda n, r: Case((f32(r, bat(n)),), call(lambda L, x: x.permute(2, 0, 1)))
R["repeat"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.repeat(2, 1)))
R["reshape"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.t().reshape(-1)))
R["view"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.view(-1)))
R["select"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.select(0, 1)))
R["squeeze"] = lambda n, r: Case((f32(r, (1, *sq(n))),), call(lambda L, x: x.squeeze(0)))
R["unsqueeze"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.unsqueeze(0)))
R["t"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.t()))
R["transpose"] = lambda n, r: Case((f32(r, bat(n)),), call(lambda L, x: x.transpose(1, 2)))
R["unfold"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.unfold(1, 2, 2)))


def _setitem(L, x, y):
    z = x.clone()
    z[1:] = y
    return z


R["setitem_"] = lambda n, r: Case((f32(r, sq(n)), f32(r, (sq(n)[0] - 1, sq(n)[1]))), call(_setitem))


def _indexed(name, inplace=False):
    """index_add / index_copy / index_fill over dim 0, with distinct indices."""

    def make(n, r):
        s = sq(n)
        index = r.permutation(s[0])[: s[0] // 2].astype(np.int64)
        src = f32(r, (len(index), s[1]))
        method = name + ("_" if inplace else "")
        if name == "index_fill":
            return Case(
                (f32(r, s), index),
                call(lambda L, x, i: getattr(x.clone() if inplace else x, method)(0, i, -1.0)),
            )
        return Case(
            (f32(r, s), index, src),
            call(lambda L, x, i, v: getattr(x.clone() if inplace else x, method)(0, i, v)),
        )

    return make


def _scatter(name, inplace=False):
    def make(n, r):
        s = sq(n)
        index = np.argsort(r.random(s), axis=1)[:, : max(1, s[1] // 2)].astype(np.int64)
        src = f32(r, index.shape)
        method = name + ("_" if inplace else "")
        return Case(
            (f32(r, s), index, src),
            call(lambda L, x, i, v: getattr(x.clone() if inplace else x, method)(1, i, v)),
        )

    return make


for _n in ("index_add", "index_copy", "index_fill"):
    R[_n] = _indexed(_n)
    R[_n + "_"] = _indexed(_n, inplace=True)
for _n in ("scatter", "scatter_add"):
    R[_n] = _scatter(_n)
    R[_n + "_"] = _scatter(_n, inplace=True)


def _reducing(name, inplace=False):
    """scatter_reduce / index_reduce with ``amax`` (repeated positions: each combines)."""

    def make(n, r):
        s = sq(n)
        method = name + ("_" if inplace else "")
        if name == "scatter_reduce":
            index = r.integers(0, s[1], s).astype(np.int64)
            dim = 1
        else:
            index = r.integers(0, s[0], s[0]).astype(np.int64)
            dim = 0
        return Case(
            (f32(r, s), index, f32(r, s)),
            call(
                lambda L, x, i, v: getattr(x.clone() if inplace else x, method)(dim, i, v, "amax")
            ),
        )

    return make


for _n in ("scatter_reduce", "index_reduce"):
    R[_n] = _reducing(_n)
    R[_n + "_"] = _reducing(_n, inplace=True)

# ---- random ops (the same draws on both sides after manual_seed)
R["bernoulli"] = lambda n, r: Case((f32(r, sq(n), 0, 1),), call(lambda L, p: L.bernoulli(p)))
R["bernoulli_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().bernoulli_(0.3)))
R["normal"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, m: L.normal(m, 1.0)))
R["normal_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().normal_()))
R["uniform_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().uniform_()))
R["exponential_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().exponential_()))
R["cauchy_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().cauchy_()))
R["log_normal_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().log_normal_()))
R["geometric_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().geometric_(0.3)))
R["poisson"] = lambda n, r: Case((f32(r, sq(n), 0, 5),), call(lambda L, x: L.poisson(x)))
R["random_"] = lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: x.clone().random_(0, 100)))

# ---- nn ops of the op table
R["batch_norm"] = lambda n, r: Case(
    (f32(r, img(n)), f32(r, img(n)[1:2], 0.5, 1.5), f32(r, img(n)[1:2])),
    call(lambda L, x, w, b: L.nn.functional.batch_norm(x, None, None, w, b, training=True)),
)
R["layer_norm"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n)[1:], 0.5, 1.5), f32(r, sq(n)[1:])),
    call(lambda L, x, w, b: L.nn.functional.layer_norm(x, x.shape[-1:], w, b)),
)
R["embedding"] = (
    lambda n, r: Case(  # as many lookups as the table has rows
        (f32(r, sq(n)), _idx(r, sq(n)[0], sq(n)[:1])),
        call(lambda L, w, i: L.nn.functional.embedding(i, w)),
    )
)
R["binary_cross_entropy"] = lambda n, r: Case(
    (f32(r, sq(n), 0.05, 0.95), f32(r, sq(n), 0, 1)),
    call(lambda L, p, y: L.nn.functional.binary_cross_entropy(p, y)),
    grad=(True, False),
)
R["binary_cross_entropy_with_logits"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n), 0, 1)),
    call(lambda L, x, y: L.nn.functional.binary_cross_entropy_with_logits(x, y)),
    grad=(True, False),
)
R["mse_loss"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: L.nn.functional.mse_loss(x, y))
)
R["huber_loss"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: L.nn.functional.huber_loss(x, y))
)
R["smooth_l1_loss"] = lambda n, r: Case(
    (f32(r, sq(n)), f32(r, sq(n))), call(lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y))
)
R["nll_loss"] = lambda n, r: Case(
    (f32(r, sq(n)), _idx(r, sq(n)[1], sq(n)[0])),
    call(lambda L, x, y: L.nn.functional.nll_loss(x, y)),
)
R["nll_loss2d"] = lambda n, r: Case(
    (f32(r, img(n)), _idx(r, img(n)[1], (img(n)[0], *img(n)[2:]))),
    call(lambda L, x, y: L.nn.functional.nll_loss(x, y)),
)
R["im2col"] = lambda n, r: Case(
    (f32(r, img(n)),), call(lambda L, x: L.nn.functional.unfold(x, 3, padding=1))
)


def _fold(n, r):
    b, c, h, w = img(n)
    cols = f32(r, (b, c * 9, h * w))
    return Case(
        (cols,),
        call(lambda L, x: L.nn.functional.fold(x, (h, w), 3, padding=1)),
        shape="x".join(map(str, cols.shape)),
    )


R["col2im"] = _fold
R["max_pool2d_with_indices"] = lambda n, r: Case(
    (f32(r, img(n)),), call(lambda L, x: L.nn.functional.max_pool2d(x, 2))
)
R["avg_pool2d"] = lambda n, r: Case(
    (f32(r, img(n)),), call(lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1))
)


def _avg_pool2d_backward(n, r):
    b, c, h, w = img(n)
    grad, x = f32(r, (b, c, h // 2, w // 2)), f32(r, (b, c, h, w))
    args = ((2, 2), (2, 2), (0, 0), False, True, None)
    return Case(
        (grad, x),
        call(lambda L, g, x: aten(L, "avg_pool2d_backward")(g, x, *args)),
        grad=(True, False),  # the input is read for its shape only
    )


R["avg_pool2d_backward"] = _avg_pool2d_backward

# ---- the nn.functional calls of the models (beyond the op table's ops above)


def _conv(n, r):
    x = f32(r, img(n))
    c = x.shape[1]
    w = f32(r, (c, c, 3, 3), -0.3, 0.3)
    b = f32(r, (c,))
    return Case((x, w, b), call(lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, padding=1)))


R["conv2d"] = _conv


def _linear(n, r):
    x, w = f32(r, sq(n)), f32(r, sq(n))
    return Case((x, w, f32(r, sq(n)[:1])), call(lambda L, x, w, b: L.nn.functional.linear(x, w, b)))


def _cell(kind):
    """An LSTM/GRU cell (torch's nn.LSTMCell / nn.GRUCell) on a batch of about n/4 hidden
    values, weights set from the arrays."""

    def make(n, r):
        batch, hidden = {100: (4, 8), 10_000: (20, 128)}.get(n, (64, 1024))
        gates = 4 if kind == "LSTMCell" else 3
        arrays = (
            f32(r, (batch, hidden)),
            f32(r, (batch, hidden)),
            f32(r, (gates * hidden, hidden), -0.1, 0.1),
            f32(r, (gates * hidden, hidden), -0.1, 0.1),
            f32(r, (gates * hidden,), -0.1, 0.1),
            f32(r, (gates * hidden,), -0.1, 0.1),
        )

        def build(L):
            cell = getattr(L.nn, kind)(hidden, hidden)
            with L.no_grad():
                for p, a in zip(cell.parameters(), arrays[2:], strict=True):
                    p.copy_(L.from_numpy(a))

            def run(x, h, *_weights):
                if kind == "LSTMCell":
                    return cell(x, (h, h))[0]
                return cell(x, h)

            run.cell = cell
            return run

        return Case(
            arrays,
            build,
            grad=(True, True, False, False, False, False),
            params=lambda run: list(run.cell.parameters()),
        )

    return make


def _layer(kind):
    """An LSTM/GRU layer (torch's nn.LSTM / nn.GRU) over a sequence whose output has about
    n elements (steps x batch x hidden), weights set from the arrays."""

    def make(n, r):
        steps, batch, hidden = {100: (5, 2, 10), 10_000: (10, 10, 100)}.get(n, (50, 80, 256))
        gates = 4 if kind == "LSTM" else 3
        arrays = (
            f32(r, (steps, batch, hidden)),
            f32(r, (gates * hidden, hidden), -0.1, 0.1),
            f32(r, (gates * hidden, hidden), -0.1, 0.1),
            f32(r, (gates * hidden,), -0.1, 0.1),
            f32(r, (gates * hidden,), -0.1, 0.1),
        )

        def build(L):
            layer = getattr(L.nn, kind)(hidden, hidden)
            with L.no_grad():
                for p, a in zip(layer.parameters(), arrays[1:], strict=True):
                    p.copy_(L.from_numpy(a))

            def run(x, *_weights):
                return layer(x)[0]

            run.layer = layer
            return run

        return Case(
            arrays,
            build,
            grad=(True, False, False, False, False),
            params=lambda run: list(run.layer.parameters()),
        )

    return make


def _embedding_bag(n, r):
    w = f32(r, sq(n))
    text = _idx(r, w.shape[0], w.shape[0] * 4)
    offsets = np.arange(0, len(text), 8, dtype=np.int64)
    return Case((w, text, offsets), call(lambda L, w, t, o: L.nn.functional.embedding_bag(t, w, o)))


def _cross_entropy(n, r):
    x = f32(r, sq(n))
    return Case(
        (x, _idx(r, x.shape[1], x.shape[0])),
        call(lambda L, x, y: L.nn.functional.cross_entropy(x, y)),
    )


def _attention_mask(n, r):
    x = f32(r, bat(n))
    mask = np.triu(np.ones(x.shape[1:], bool), 1)
    return Case(
        (x, np.broadcast_to(mask, x.shape).copy()),
        call(lambda L, x, m: x.masked_fill(m, float("-inf")).softmax(-1)),
    )


FUNCTIONAL: dict[str, Callable[[int, np.random.Generator], Case]] = {
    "F.gelu": R["gelu"],
    "F.gelu(tanh)": lambda n, r: Case(
        (f32(r, sq(n), -3, 3),), call(lambda L, x: L.nn.functional.gelu(x, approximate="tanh"))
    ),
    "F.silu": R["silu"],
    "F.mish": lambda n, r: Case(
        (f32(r, sq(n), -4, 4),), call(lambda L, x: L.nn.functional.mish(x))
    ),
    "F.softplus": lambda n, r: Case(
        (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.softplus(x))
    ),
    "F.relu": lambda n, r: Case((f32(r, sq(n)),), call(lambda L, x: L.nn.functional.relu(x))),
    "F.layer_norm": R["layer_norm"],
    "F.softmax": lambda n, r: Case(
        (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.softmax(x, dim=-1))
    ),
    "F.log_softmax": lambda n, r: Case(
        (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.log_softmax(x, dim=-1))
    ),
    "F.cross_entropy": _cross_entropy,
    "F.nll_loss": R["nll_loss"],
    "F.binary_cross_entropy": R["binary_cross_entropy"],
    "F.embedding": R["embedding"],
    "F.embedding_bag": _embedding_bag,
    "F.max_pool2d": R["max_pool2d_with_indices"],
    "F.avg_pool2d": lambda n, r: Case(
        (f32(r, img(n)),), call(lambda L, x: L.nn.functional.avg_pool2d(x, 2))
    ),
    "F.adaptive_avg_pool2d": lambda n, r: Case(
        (f32(r, img(n)),), call(lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1))
    ),
    "F.conv2d": _conv,
    "F.linear": _linear,
    "F.batch_norm": R["batch_norm"],
    "F.dropout": lambda n, r: Case(
        (f32(r, sq(n)),), call(lambda L, x: L.nn.functional.dropout(x, 0.1, training=True))
    ),
    "masked_fill + softmax (attention)": _attention_mask,
    "nn.LSTMCell": _cell("LSTMCell"),
    "nn.GRUCell": _cell("GRUCell"),
    "nn.LSTM": _layer("LSTM"),
    "nn.GRU": _layer("GRU"),
}

# ops with no torch twin (gradstack's own internals); the sweep lists them as such
NO_TORCH_TWIN = {
    "_index_scatter": "gradstack's scatter-add behind embedding's backward (timed there)",
    "_lstm_layer": "a direction of gradstack's nn.LSTM in one op (timed as nn.LSTM)",
    "_gru_layer": "a direction of gradstack's nn.GRU in one op (timed as nn.GRU)",
    "_thnn_fused_lstm_cell": "torch's kernel is CUDA-only (the cell is timed as nn.LSTMCell)",
    "_thnn_fused_gru_cell": "torch's kernel is CUDA-only (the cell is timed as nn.GRUCell)",
}


def case(name: str, n: int, rng: np.random.Generator, kind: str = "other") -> Case | None:
    """The case of op (or functional call) ``name`` at about ``n`` elements, or None.

    ``kind`` is ``"unary"`` or ``"binary"`` for the elementwise ops of gradstack's op
    table (their generic cases), else ``"other"``."""
    if name in FUNCTIONAL:
        return FUNCTIONAL[name](n, rng)
    if name in RECIPES:
        return RECIPES[name](n, rng)
    if name.endswith("_") and name[:-1] and name not in NO_TORCH_TWIN:
        base = case(name[:-1], n, rng, kind)
        return None if base is None else _inplace(base, name)
    if kind == "unary":
        return _unary(name, n, rng)
    if kind == "binary":
        return _binary(name, n, rng)
    return None
