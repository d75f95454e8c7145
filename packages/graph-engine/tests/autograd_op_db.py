"""The op database of graph-engine's tests: sample inputs for every differentiable op.

Each :class:`GradOp` names an op of ``gradstack_tensor.OPS`` that has a derivative-table
entry and gives a few small float64 samples.  A :class:`GradSample` holds the
*differentiable* inputs as numpy arrays and a function ``fn(L, *tensors)`` that calls the
op; ``L`` is the library namespace (``gradstack_tensor`` or ``torch``), so the same call
runs on both sides: gradstack's API has torch's shape.  Non-differentiable tensor
arguments (indices, masks, conditions) are built inside ``fn`` with ``L.from_numpy``.

Why not reuse tensor-core's ``op_db.py``: its samples exercise kernels (empty tensors,
70x70 arrays, every dtype, values at kinks and ties), while gradient checks need small
float64 inputs drawn away from non-differentiable points (``abs`` at 0, ``clamp`` at its
bounds, ties of ``max``, jumps of ``remainder``), and a record of how torch spells each
call.  The two databases share one test: every op of the registry has to be covered
(``test_derivatives.py``).

Domains: ``log``-like ops draw positive inputs; ``asin``/``acos`` stay inside (-1, 1);
``sqrt``/``rsqrt`` stay away from 0; ``reciprocal``/``div`` denominators away from 0.

Examples
--------
>>> import numpy as np
>>> s = GRAD_OPS["sin"].samples(np.random.default_rng(0))[0]
>>> s.inputs[0].shape
()
"""

from __future__ import annotations

import math

import numpy as np
from gradstack_autograd_tests_autograd_op_db_base import (
    _S,
    GradOp,
    GradSample,
    arr,
    distinct,
    to_gs,
    to_torch,
)

__all__ = ["GRAD_OPS", "GradOp", "GradSample", "arr", "to_gs", "to_torch"]


GRAD_OPS: dict[str, GradOp] = {}


def _add(op: GradOp) -> None:
    if op.name in GRAD_OPS:
        raise ValueError(f"duplicate entry {op.name!r}")
    GRAD_OPS[op.name] = op


def _extend_with(name):
    """Add the entries of the helper module ``name`` (Note [Test helpers import by name] in
    the workspace's conftest.py) to this database."""
    import importlib
    import sys

    importlib.import_module(f"gradstack_autograd_tests_{name}").extend(sys.modules[__name__])


# ---------------------------------------------------------------------------------------
# elementwise unary

_UNARY = {
    # name: (lo, hi, points to stay away from)
    "i0": (-3, 3, ()),
    "exp": (-2, 2, ()),
    "exp2": (-2, 2, ()),
    "expm1": (-2, 2, ()),
    "log": (0.2, 3, ()),
    "log2": (0.2, 3, ()),
    "log10": (0.2, 3, ()),
    "log1p": (-0.7, 3, ()),
    "sqrt": (0.2, 3, ()),
    "rsqrt": (0.2, 3, ()),
    "reciprocal": (-2, 2, (0,)),
    "sin": (-3, 3, ()),
    "cos": (-3, 3, ()),
    "tan": (-1.2, 1.2, ()),
    "asin": (-0.9, 0.9, ()),
    "acos": (-0.9, 0.9, ()),
    "atan": (-3, 3, ()),
    "sinh": (-2, 2, ()),
    "asinh": (-2, 2, ()),
    "acosh": (1.2, 3, ()),
    "atanh": (-0.8, 0.8, ()),
    "cosh": (-2, 2, ()),
    "tanh": (-2, 2, ()),
    "sigmoid": (-4, 4, ()),
    "neg": (-2, 2, ()),
    "abs": (-2, 2, (0,)),
    "relu": (-2, 2, (0,)),
    "sign": (-2, 2, (0,)),
    "sgn": (-2, 2, (0,)),
    "floor": (-2, 2, (-2, -1, 0, 1, 2)),
    "ceil": (-2, 2, (-2, -1, 0, 1, 2)),
    "trunc": (-2, 2, (-2, -1, 0, 1, 2)),
    "round": (-2, 2, (-1.5, -0.5, 0.5, 1.5)),
}


def _inplace_method(name):
    """``t.clone().<name>()``: an in-place op on a non-leaf copy of the input."""
    return lambda L, t: getattr(t.clone(), name)()


def _function(name):
    """``L.<name>(t)``: the function form."""
    return lambda L, t: getattr(L, name)(t)


def _unary_samples(name, lo, hi, away, inplace):
    def gen(rng):
        out = []
        for shape, tr in (((), False), ((4,), False), ((2, 3), True)):
            x = arr(rng, shape, lo, hi, away=away, transposed=tr)
            fn = _inplace_method(name) if inplace else _function(name)
            out.append(_S((x,), fn, f"{name} {list(shape)}{' T' if tr else ''}"))
        if not inplace:
            x = arr(rng, (3,), lo, hi, away=away)
            out.append(_S((x,), lambda L, t, _n=name: getattr(t, _n)(), f"{name} method"))
        return out

    return gen


for _n, (_lo, _hi, _away) in _UNARY.items():
    _add(GradOp(_n, _unary_samples(_n, _lo, _hi, _away, False)))
    if _n not in ("asinh", "acosh", "atanh"):  # (their in-place backward raises, as torch's)
        _add(GradOp(_n + "_", _unary_samples(_n + "_", _lo, _hi, _away, True)))

# special functions without an in-place twin
_add(GradOp("erf", _unary_samples("erf", -2, 2, (), False)))
_add(GradOp("erfc", _unary_samples("erfc", -2, 2, (), False)))
_add(GradOp("erfinv", _unary_samples("erfinv", -0.9, 0.9, (), False)))
_add(GradOp("lgamma", _unary_samples("lgamma", 0.3, 4, (), False)))
_add(GradOp("digamma", _unary_samples("digamma", 0.3, 4, (), False)))
_add(
    GradOp(
        "polygamma",
        lambda rng: [
            _S((arr(rng, (4,), 0.3, 4),), lambda L, t: L.polygamma(1, t), "trigamma"),
            _S((arr(rng, (2, 3), 0.5, 4, transposed=True),), lambda L, t: t.polygamma(2), "n=2"),
            _S((arr(rng, (3,), -2.7, -2.3),), lambda L, t: L.polygamma(3, t), "n=3, negative"),
        ],
    )
)

# torch.special's functions with kernels of their own (derivatives.special_functions):
# the gradients of i0e, i1, i1e, erfcx, and of igamma, igammac and zeta in their second
# argument (their first argument's gradient raises, as torch's: a constant here)
for _n, _call, _lo, _hi in (
    ("special_i0e", lambda L, t: L.special.i0e(t), -4, 4),
    ("special_i1", lambda L, t: L.special.i1(t), -4, 4),
    ("special_i1e", lambda L, t: L.special.i1e(t), -4, 4),
    ("special_erfcx", lambda L, t: L.special.erfcx(t), -2, 3),
):

    def _special_gen(rng, _n=_n, _call=_call, _lo=_lo, _hi=_hi):
        return [
            _S((arr(rng, (4,), _lo, _hi, away=(0,)),), _call, f"{_n} [4]"),
            _S((arr(rng, (2, 3), _lo, _hi, away=(0,), transposed=True),), _call, f"{_n} T"),
        ]

    _add(GradOp(_n, _special_gen))


def _second_argument_samples(name, call, lo, hi, rlo, rhi):
    def gen(rng):
        out = []
        for sa, sb in (((2, 3), (2, 3)), ((3,), (2, 3)), ((2, 3), ())):
            if name.endswith("_") and np.broadcast_shapes(sa, sb) != sa:
                continue  # (an in-place op keeps its input's shape)
            a = rng.uniform(lo, hi, size=sa)
            b = arr(rng, sb, rlo, rhi, transposed=len(sb) == 2)
            out.append(
                _S(
                    (b,),
                    lambda L, y, _a=a: call(L, L.from_numpy(np.array(_a)), y),
                    f"{name} {list(sa)}, {list(sb)}",
                )
            )
        return out

    return gen


_add(
    GradOp(
        "igamma", _second_argument_samples("igamma", lambda L, a, y: L.igamma(a, y), 0.5, 4, 0.3, 5)
    )
)
_add(
    GradOp(
        "igammac",
        _second_argument_samples("igammac", lambda L, a, y: L.igammac(a, y), 0.5, 4, 0.3, 5),
    )
)
_add(
    GradOp(
        "igamma_",
        _second_argument_samples("igamma_", lambda L, a, y: a.clone().igamma_(y), 0.5, 4, 0.3, 5),
    )
)
_add(
    GradOp(
        "igammac_",
        _second_argument_samples("igammac_", lambda L, a, y: a.clone().igammac_(y), 0.5, 4, 0.3, 5),
    )
)
_add(
    GradOp(
        "special_zeta",
        _second_argument_samples(
            "special_zeta", lambda L, x, q: L.special.zeta(x, q), 1.5, 4, 0.5, 3
        ),
    )
)

# frexp's mantissa (values away from the powers of 2, where it jumps)
_add(
    GradOp(
        "frexp",
        lambda rng: [
            _S(
                (rng.uniform(0.55, 0.95, (4,)) * np.array([1.0, -4.0, 0.25, 1024.0]),),
                lambda L, t: L.frexp(t)[0],
                "frexp mantissa",
            ),
            _S(
                (arr(rng, (2, 3), 1.1, 1.9, transposed=True),),
                lambda L, t: t.frexp().mantissa,
                "frexp method",
            ),
        ],
    )
)

# ---------------------------------------------------------------------------------------
# elementwise binary

_BIN_SHAPES = (((2, 3), (2, 3)), ((2, 3), (3,)), ((3, 1), (1, 2)), ((), (2,)))


def _binary_samples(
    name,
    call,
    *,
    lo=-2.0,
    hi=2.0,
    rlo=None,
    rhi=None,
    away_r=(),
    scalars=(),
    inplace=False,
    make=None,
):
    rlo = lo if rlo is None else rlo
    rhi = hi if rhi is None else rhi

    def gen(rng):
        out = []
        for sa, sb in _BIN_SHAPES:
            if inplace and np.broadcast_shapes(sa, sb) != sa:
                continue
            if make is not None:
                a, b = make(rng, sa, sb)
            else:
                a = arr(rng, sa, lo, hi, transposed=len(sa) == 2)
                b = arr(rng, sb, rlo, rhi, away=away_r)
            fn = (lambda L, x, y: call(L, x.clone(), y)) if inplace else call
            out.append(_S((a, b), fn, f"{name} {list(sa)}, {list(sb)}"))
        for s in scalars:
            a = arr(rng, (2, 3), lo, hi) if make is None else make(rng, (2, 3), ())[0]
            fn = (
                (lambda L, x, _s=s: call(L, x.clone(), _s))
                if inplace
                else (lambda L, x, _s=s: call(L, x, _s))
            )
            out.append(_S((a,), fn, f"{name} tensor, scalar {s}"))
        return out

    return gen


def _remainder_pair(rng, sa, sb):
    """a = b * (k + f) with f in [0.2, 0.8]: far from the jumps of ``a mod b``."""
    full = np.broadcast_shapes(sa, sb)
    if tuple(sa) == full:
        b = rng.uniform(0.5, 2.0, size=sb) * np.where(rng.random(sb) < 0.5, -1, 1)
        bb = np.broadcast_to(b, full)
    else:  # a is broadcast against several b: give them all one value
        b = np.full(sb, -1.25)
        bb = np.full(sa, -1.25)
    k = rng.integers(-2, 3, size=sa)
    f = rng.uniform(0.2, 0.8, size=sa)
    return np.asarray(bb * (k + f), dtype=np.float64), np.asarray(b, dtype=np.float64)


def _maxmin_pair(rng, sa, sb):
    a = arr(rng, sa, -2, 2)
    b = arr(rng, sb, -2, 2)
    # keep |a - b| >= 0.1 so that no tie is near
    full = np.broadcast_shapes(sa, sb)
    bb = np.broadcast_to(b, full)
    aa = np.broadcast_to(a, full)
    if tuple(sa) == full:
        d = aa - bb
        a = np.where(np.abs(d) < 0.1, bb + np.where(d >= 0, 0.1, -0.1), a)
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


_BINARY = {
    "add": dict(call=lambda L, x, y: L.add(x, y), scalars=(2.0,)),
    "sub": dict(call=lambda L, x, y: L.sub(x, y), scalars=(1.5,)),
    "mul": dict(call=lambda L, x, y: L.mul(x, y), scalars=(3.0,)),
    "div": dict(call=lambda L, x, y: L.div(x, y), away_r=(0,), scalars=(2.0,)),
    "pow": dict(
        call=lambda L, x, y: L.pow(x, y),
        lo=0.5,
        hi=2.0,
        rlo=-1.5,
        rhi=2.0,
        scalars=(2, 2.5, 0.5, -1.0),
    ),
    "maximum": dict(call=lambda L, x, y: L.maximum(x, y), make=_maxmin_pair),
    "minimum": dict(call=lambda L, x, y: L.minimum(x, y), make=_maxmin_pair),
    "remainder": dict(call=lambda L, x, y: L.remainder(x, y), make=_remainder_pair, scalars=()),
    # a / b = k + f, f in [0.2, 0.8]: far from the jumps (a number divisor: the gradient
    # is 1 but at the jumps, which a sample meets with probability ~1e-6)
    "fmod": dict(call=lambda L, x, y: L.fmod(x, y), make=_remainder_pair, scalars=(-1.25,)),
    "atan2": dict(call=lambda L, x, y: L.atan2(x, y), away_r=(0,)),
    # quotients far from integers (the jumps), as remainder's
    "nextafter": dict(call=lambda L, x, y: L.nextafter(x, y), away_r=(0,)),
    "div_rounding": dict(
        call=lambda L, x, y: L.div(x, y, rounding_mode="floor"),
        make=_remainder_pair,
        scalars=(),
    ),
}
_INPLACE_METHOD = {
    "add": lambda L, x, y: x.add_(y),
    "sub": lambda L, x, y: x.sub_(y),
    "mul": lambda L, x, y: x.mul_(y),
    "div": lambda L, x, y: x.div_(y),
    "pow": lambda L, x, y: x.pow_(y),
    "remainder": lambda L, x, y: x.remainder_(y),
    "fmod": lambda L, x, y: x.fmod_(y),
    "atan2": lambda L, x, y: x.atan2_(y),
    "nextafter": lambda L, x, y: x.nextafter_(y),
}

for _n, _kw in _BINARY.items():
    _add(GradOp(_n, _binary_samples(_n, **_kw)))
    if _n in _INPLACE_METHOD:
        _kw2 = dict(_kw, call=_INPLACE_METHOD[_n])
        _add(GradOp(_n + "_", _binary_samples(_n + "_", inplace=True, **_kw2)))


def _alpha_samples(rng):
    a, b = arr(rng, (2, 3)), arr(rng, (3,))
    return [
        _S((a, b), lambda L, x, y: L.add(x, y, alpha=2.5), "add alpha=2.5"),
        _S((a, b), lambda L, x, y: L.sub(x, y, alpha=-0.5), "sub alpha=-0.5"),
        _S((a, b), lambda L, x, y: x - y, "operator -"),
        _S((a, b), lambda L, x, y: x / y.abs().add(0.5), "operator / of a graph"),
    ]


def _rsub_samples(rng):
    a, b = arr(rng, (2, 3)), arr(rng, (3,))
    return [
        _S((a,), lambda L, x: 2 - x, "scalar - tensor"),
        _S((a, b), lambda L, x, y: L.rsub(x, y), "rsub(tensor, tensor)"),
        _S((a, b), lambda L, x, y: L.rsub(x, y, alpha=3), "rsub alpha=3"),
    ]


def _pow_extra_samples(rng):
    e = arr(rng, (3,), -1.0, 2.0)
    return [
        _S((e,), lambda L, y: L.pow(2.0, y), "scalar ** tensor"),
        _S((e,), lambda L, y: 1.5**y, "operator scalar ** tensor"),
        _S((arr(rng, (3,), 0.5, 2),), lambda L, x: x**3, "operator tensor ** 3"),
    ]


GRAD_OPS["add"].samples = (lambda base: lambda rng: base(rng) + _alpha_samples(rng))(
    GRAD_OPS["add"].samples
)
_add(GradOp("rsub", _rsub_samples))
GRAD_OPS["pow"].samples = (lambda base: lambda rng: base(rng) + _pow_extra_samples(rng))(
    GRAD_OPS["pow"].samples
)


def _clamp_samples(inplace):
    def gen(rng):
        x = arr(rng, (2, 4), -3, 3, away=(-1, 2))
        lo = arr(rng, (4,), -1.5, -0.5)
        hi = arr(rng, (2, 1), 0.5, 1.5)
        # keep x away from the tensor bounds too
        xt = np.where(np.abs(x - lo) < 0.1, x + 0.2, x)
        xt = np.where(np.abs(xt - hi) < 0.1, xt + 0.25, xt)
        if inplace:
            return [
                _S((x,), lambda L, t: t.clone().clamp_(-1, 2), "clamp_(-1, 2)"),
                _S((x,), lambda L, t: t.clone().clamp_(min=-1), "clamp_(min=-1)"),
            ]
        return [
            _S((x,), lambda L, t: L.clamp(t, -1, 2), "clamp(-1, 2)"),
            _S((x,), lambda L, t: L.clamp(t, min=-1), "clamp(min=-1)"),
            _S((x,), lambda L, t: t.clamp(max=2), "clamp(max=2)"),
            _S((xt, lo, hi), lambda L, t, a, b: L.clamp(t, a, b), "clamp(tensor bounds)"),
        ]

    return gen


_add(GradOp("clamp", _clamp_samples(False)))
_add(GradOp("clamp_", _clamp_samples(True)))


def _where_samples(rng):
    cond = rng.random((2, 3)) < 0.5
    x, y = arr(rng, (2, 3)), arr(rng, (3,))
    return [
        _S((x, y), lambda L, a, b: L.where(L.from_numpy(cond.copy()), a, b), "where"),
        _S((x,), lambda L, a: L.where(L.from_numpy(cond.copy()), a, 2.0), "where scalar"),
    ]


_add(GradOp("where", _where_samples))


def _masked_fill_samples(inplace):
    def gen(rng):
        mask = rng.random((2, 3)) < 0.5
        x, v = arr(rng, (2, 3)), arr(rng, ())

        def m(L):
            return L.from_numpy(mask.copy())

        if inplace:
            return [
                _S((x,), lambda L, a: a.clone().masked_fill_(m(L), 1.5), "masked_fill_ scalar"),
                _S((x, v), lambda L, a, b: a.clone().masked_fill_(m(L), b), "masked_fill_ 0-d"),
            ]
        return [
            _S((x,), lambda L, a: a.masked_fill(m(L), 1.5), "masked_fill scalar"),
            _S((x, v), lambda L, a, b: a.masked_fill(m(L), b), "masked_fill 0-d tensor"),
        ]

    return gen


_add(GradOp("masked_fill", _masked_fill_samples(False)))
_add(GradOp("masked_fill_", _masked_fill_samples(True)))


def _with_product(y, a):
    """``(y, y * a)``: the in-place result itself (its node is compared with torch's) and a
    product that gives the overwritten input a nonzero second derivative."""
    return y, y * a


def _fill_samples(rng):
    x, v = arr(rng, (2, 3)), arr(rng, ())
    return [
        _S((x,), lambda L, a: _with_product(a.clone().fill_(2.0), a), "fill_ scalar"),
        _S((x, v), lambda L, a, b: _with_product(a.clone().fill_(b), a), "fill_ 0-d tensor"),
    ]


def _zero_samples(rng):
    x = arr(rng, (2, 3))
    return [_S((x,), lambda L, a: _with_product(a.clone().zero_(), a), "zero_")]


def _copy_samples(rng):
    x, s = arr(rng, (2, 3)), arr(rng, (3,))
    return [
        _S((x, s), lambda L, a, b: (a * 2).copy_(b), "copy_ broadcast"),
        _S((x, s[:1]), lambda L, a, b: _with_product(a.clone().copy_(b), a), "copy_ (1,)"),
    ]


def _setitem_samples(rng):
    x, v = arr(rng, (3, 4)), arr(rng, (4,))

    def set_row(L, a, b):
        y = a * 1.5
        y[1] = b
        return y

    def set_slice(L, a):
        y = a.clone()
        y[:, 1:3] = 0.5
        return _with_product(y, a)

    def set_mask(L, a, b):
        y = a.clone()
        y[L.from_numpy(np.array([0, 2]))] = b
        return y

    return [
        _S((x, v), set_row, "y[1] = tensor"),
        _S((x,), set_slice, "y[:, 1:3] = scalar"),
        _S((x, v), set_mask, "y[[0, 2]] = tensor"),
    ]


def _random_samples(name):
    def gen(rng):
        x = arr(rng, (2, 3))

        def fn(L, a):
            L.manual_seed(0)
            y = a * 2
            getattr(y, name)(0.0, 1.0)
            return y * a

        return [_S((x,), fn, f"{name} then * x")]

    return gen


_add(GradOp("fill_", _fill_samples))
_add(GradOp("zero_", _zero_samples))
_add(GradOp("copy_", _copy_samples))
_add(GradOp("setitem_", _setitem_samples))
# the draws are torch's after the same seed (gradstack_tensor.random), so the gradients
# (zeros through the draw, the drawn values through y * a) are compared with torch too
_add(GradOp("uniform_", _random_samples("uniform_")))
_add(GradOp("normal_", _random_samples("normal_")))


def _draw_samples(name):
    """A draw overwriting ``a * 2`` (torch: zero gradient through it), times ``a``."""

    def gen(rng):
        x, p = arr(rng, (2, 3)), arr(rng, (2, 3), 0.1, 0.9)

        def inplace(L, a, *args):
            L.manual_seed(0)
            y = a * 2
            getattr(y, name)(*args)
            return y * a

        if name == "bernoulli_":
            return [
                _S((x,), lambda L, a: inplace(L, a, 0.5), "bernoulli_(0.5) then * x"),
                _S((x, p), inplace, "bernoulli_(p tensor) then * x"),
            ]
        if name == "random_":
            return [_S((x,), lambda L, a: inplace(L, a, 0, 5), "random_(0, 5) then * x")]
        return [_S((x,), inplace, f"{name}() then * x")]

    return gen


def _bernoulli_samples(rng):
    p = arr(rng, (2, 3), 0.1, 0.9)

    def fn(L, q):
        L.manual_seed(0)
        return L.bernoulli(q) * q

    return [_S((p,), fn, "bernoulli(p) * p")]


def _normal_samples(rng):
    m, s = arr(rng, (2, 1)), arr(rng, (3,), 0.5, 2.0)

    def fn(L, mean, std):
        # torch's NormalBackward3 gives zeros although y moves with mean and std, so the
        # numerical check sees y - y.detach() (zero both ways); test_random_autograd.py
        # compares y's node and gradients with torch's
        L.manual_seed(0)
        y = L.normal(mean, std)
        return (y - y.detach()) * mean

    return [_S((m, s), fn, "normal(mean (2, 1), std (3,))")]


_add(GradOp("bernoulli", _bernoulli_samples))
_add(GradOp("bernoulli_", _draw_samples("bernoulli_")))
_add(GradOp("exponential_", _draw_samples("exponential_")))
for _name in ("cauchy_", "log_normal_"):
    _add(GradOp(_name, _draw_samples(_name)))
_add(
    GradOp(
        "geometric_",
        lambda rng: [
            _S(
                (arr(rng, (2, 3)),),
                lambda L, a: (L.manual_seed(0), (a * 2).geometric_(0.3) * a)[1],
                "geometric_(0.3) then * x",
            )
        ],
    )
)


def _poisson_samples(rng):
    def fn(L, q):
        L.manual_seed(0)
        return L.poisson(q) * q

    return [_S((arr(rng, (2, 3), 0.5, 6.0),), fn, "poisson(rates) * rates")]


_add(GradOp("poisson", _poisson_samples))
_add(GradOp("random_", _draw_samples("random_")))
_add(GradOp("normal", _normal_samples))

# ---------------------------------------------------------------------------------------
# reductions


def _reduce_samples(name, method_kwargs, *, lo=-2.0, hi=2.0, distinct_values=False):
    def gen(rng):
        out = []
        for shape, kwargs in method_kwargs:
            x = distinct(rng, shape, lo, hi) if distinct_values else arr(rng, shape, lo, hi)
            out.append(
                _S(
                    (x,),
                    lambda L, t, _kw=kwargs: getattr(t, name)(**_kw),
                    f"{name} {list(shape)} {kwargs}",
                )
            )
        return out

    return gen


_RED = (
    ((), {}),
    ((2, 3), {}),
    ((2, 3), {"dim": 1}),
    ((2, 3), {"dim": 0, "keepdim": True}),
    ((2, 3, 2), {"dim": (0, 2)}),
)
_add(GradOp("sum", _reduce_samples("sum", _RED)))
_add(GradOp("mean", _reduce_samples("mean", _RED)))
_add(
    GradOp(
        "prod",
        (
            lambda base: (
                lambda rng: (
                    base(rng)
                    + [
                        _S(
                            (np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 0.7]]),),
                            lambda L, t: t.prod(),
                            "prod one zero",
                        ),
                        _S(
                            (np.array([[1.5, 0.0, 2.0], [0.0, -1.0, 0.7]]),),
                            lambda L, t: t.prod(dim=1),
                            "prod dim=1 with zeros",
                        ),
                        _S(
                            (np.array([[1.5, 0.0, 0.0], [0.5, -1.0, 0.7]]),),
                            lambda L, t: t.prod(dim=1),
                            "prod dim=1 two zeros",
                        ),
                    ]
                )
            )
        )(_reduce_samples("prod", _RED[:4], lo=0.5, hi=1.5)),
    )
)
_EXT = (
    ((2, 3), {}),
    ((2, 3), {"dim": 1}),
    ((2, 3), {"dim": 0, "keepdim": True}),
    ((4,), {"dim": 0}),
)
_add(GradOp("max", _reduce_samples("max", _EXT, distinct_values=True)))
_add(GradOp("min", _reduce_samples("min", _EXT, distinct_values=True)))
_AM = (((2, 3), {}), ((2, 3), {"dim": 1}), ((2, 3, 2), {"dim": (0, 2), "keepdim": True}))
_add(GradOp("amax", _reduce_samples("amax", _AM, distinct_values=True)))
_add(GradOp("amin", _reduce_samples("amin", _AM, distinct_values=True)))
_VAR = (
    ((2, 3), {}),
    ((2, 3), {"dim": 1}),
    ((2, 3), {"dim": 0, "keepdim": True}),
    ((2, 3), {"dim": 1, "correction": 0}),
    ((3, 4), {"dim": (0, 1)}),
)
_add(GradOp("var", _reduce_samples("var", _VAR)))
_add(GradOp("std", _reduce_samples("std", _VAR)))


def _norm_samples(rng):
    x = arr(rng, (2, 3), away=(0,))
    d = distinct(rng, (2, 3), -2, 2)
    d = np.where(np.abs(d) < 0.1, d + 0.3, d)
    d = d * np.array([[1.0, -1.1, 1.2], [-1.3, 1.4, -1.5]])  # distinct absolute values
    return [
        _S((x,), lambda L, t: t.norm(), "norm"),
        _S((x,), lambda L, t: t.norm(dim=1), "norm dim=1"),
        _S((x,), lambda L, t: t.norm(p=2, dim=0, keepdim=True), "norm p=2 keepdim"),
        _S((x,), lambda L, t: t.norm(p=1, dim=1), "norm p=1"),
        _S((x,), lambda L, t: t.norm(p=3, dim=1), "norm p=3"),
        _S((d,), lambda L, t: t.norm(p=math.inf, dim=1), "norm p=inf"),
    ]


_add(GradOp("norm", _norm_samples))
_add(
    GradOp(
        "logsumexp",
        _reduce_samples(
            "logsumexp",
            (
                ((2, 3), {"dim": 1}),
                ((2, 3), {"dim": 0, "keepdim": True}),
                ((2, 3, 2), {"dim": (0, 2)}),
            ),
        ),
    )
)
_SM = (((4,), {"dim": 0}), ((2, 3), {"dim": 1}), ((2, 3), {"dim": 0}), ((2, 3, 2), {"dim": -1}))
_add(GradOp("softmax", _reduce_samples("softmax", _SM)))
_add(GradOp("log_softmax", _reduce_samples("log_softmax", _SM)))
_add(GradOp("cumsum", _reduce_samples("cumsum", _SM)))


def _sort_samples(rng):
    x = distinct(rng, (2, 4))
    return [
        _S((x,), lambda L, t: t.sort(dim=1)[0], "sort dim=1 values"),
        _S((x,), lambda L, t: t.sort(dim=0, descending=True), "sort dim=0 descending"),
        _S((x[0],), lambda L, t: L.sort(t), "sort 1-d"),
    ]


def _topk_samples(rng):
    x = distinct(rng, (2, 5))
    return [
        _S((x,), lambda L, t: t.topk(2, dim=1)[0], "topk 2"),
        _S((x,), lambda L, t: L.topk(t, 1, dim=0, largest=False), "topk smallest"),
    ]


_add(GradOp("sort", _sort_samples))
_add(GradOp("topk", _topk_samples))

# the linear algebra (autograd_op_db_linalg.py), views, shape ops and indexing
# (autograd_op_db_shape.py)
_extend_with("autograd_op_db_linalg")
_extend_with("autograd_op_db_shape")


# the nn ops of derivatives/nn.py (losses, normalisation, activations): autograd_op_db_nn.py


_extend_with("autograd_op_db_nn")
_extend_with("autograd_op_db_rnn")


def _scalar_overload_samples(name, aten, number):
    """torch's mul.Scalar/div.Scalar (Note [Scalar overloads]): a tensor by a number."""

    def gen(rng):
        return [
            _S(
                (arr(rng, shape, transposed=tr),),
                lambda L, t: L.OPS[name](t, number),
                f"OPS[{name!r}] {list(shape)}",
                torch_fn=lambda L, t: getattr(L.ops.aten, aten).Scalar(t, number),
            )
            for shape, tr in (((), False), ((4,), False), ((2, 3), True))
        ]

    return gen


_add(GradOp("mul_scalar", _scalar_overload_samples("mul_scalar", "mul", 0.75)))
_add(GradOp("div_scalar", _scalar_overload_samples("div_scalar", "div", 3)))


# ---------------------------------------------------------------------------------------
# complex numbers and the FFT ops, on float64 pairs: a complex input is
# ``view_as_complex`` of a (..., 2) array, a complex output is returned as
# ``view_as_real`` (the checks here compare float64 tensors; the complex comparisons with
# torch are tests/test_complex_autograd_torch.py and tests/test_fft_torch.py)


def _cplx(L, x):
    return L.view_as_complex(x)


def _pairs(L, z):
    return L.view_as_real(z)


def _complex_samples(rng):
    z = arr(rng, (3, 2), away=(0.0,))
    return [
        _S((z,), lambda L, x: _pairs(L, _cplx(L, x) * (0.5 - 1j)), "view_as_complex, mul"),
        _S(
            (arr(rng, (2, 3, 2)).transpose(1, 0, 2).copy(),),
            lambda L, x: _pairs(L, _cplx(L, x)).sum(-1),
            "view_as_real of a (2, 3)",
        ),
    ]


def _conj_samples(name):
    def gen(rng):
        return [
            _S(
                (arr(rng, (4, 2)),),
                lambda L, x: _pairs(L, getattr(_cplx(L, x), name)() * (1 + 2j)),
                f"{name} of a complex vector",
                torch_fn=lambda L, x: _pairs(
                    L, getattr(_cplx(L, x), name)().resolve_conj() * (1 + 2j)
                ),
            )
        ]

    return gen


def _neg_view_samples(rng):
    # torch's _neg_view (imag of a conj view is one): a lazy negative view
    return [
        _S(
            (arr(rng, (3, 2)),),
            lambda L, x: L.OPS["_neg_view"](x * 2) * 3,
            "_neg_view of a float matrix",
            torch_fn=lambda L, x: L._neg_view(x * 2).resolve_neg() * 3,
        ),
        _S(
            (arr(rng, (4, 2)),),
            lambda L, x: _cplx(L, x).conj().imag * 2,
            "imag of a conj view",
            torch_fn=lambda L, x: _cplx(L, x).conj().imag.resolve_neg() * 2,
        ),
    ]


def _angle_samples(rng):
    return [_S((arr(rng, (5, 2), away=(0.0,)),), lambda L, x: _cplx(L, x).angle(), "angle")]


def _polar_samples(rng):
    return [
        _S(
            (arr(rng, (4,), 0.2, 2.0), arr(rng, (4,), -3.0, 3.0)),
            lambda L, r, t: _pairs(L, L.polar(r, t)),
            "polar",
        )
    ]


def _complex_ctor_samples(rng):
    return [
        _S(
            (arr(rng, (2, 3)), arr(rng, (2, 3))),
            lambda L, a, b: _pairs(L, L.complex(a, b) ** 2),
            "complex, squared",
        )
    ]


def _fft_samples(kind):
    """torch's private ops as torch.fft calls them: (dim, normalization, flag)."""
    cases = {
        "fft_c2c": [((4, 3, 2), (0,), 0, True), ((3, 5, 2), (0, 1), 1, False)],
        "fft_r2c": [((6,), (0,), 0, True), ((3, 5), (1,), 2, True), ((4, 3), (0, 1), 1, False)],
        "fft_c2r": [((4, 2), (0,), 2, 6), ((4, 2), (0,), 0, 7), ((3, 4, 2), (0, 1), 1, 7)],
    }[kind]

    def gen(rng):
        out = []
        for shape, dim, norm, flag in cases:
            complex_in = kind != "fft_r2c"
            complex_out = kind != "fft_c2r"

            def fn(L, x, dim=dim, norm=norm, flag=flag, ci=complex_in, co=complex_out):
                z = _cplx(L, x) if ci else x
                if L.__name__ == "torch":
                    r = getattr(L.ops.aten, "_" + kind)(z, list(dim), norm, flag)
                else:
                    r = L.OPS[kind](z, dim, norm, flag)
                return _pairs(L, r) if co else r

            out.append(_S((arr(rng, shape),), fn, f"{kind} {shape} dim={dim} norm={norm}"))
        return out

    return gen


_add(GradOp("view_as_complex", _complex_samples))
_add(GradOp("view_as_real", _complex_samples))
_add(GradOp("conj", _conj_samples("conj")))
_add(GradOp("conj_physical", _conj_samples("conj_physical")))
_add(GradOp("_neg_view", _neg_view_samples))
_add(GradOp("angle", _angle_samples))
_add(GradOp("polar", _polar_samples))
_add(GradOp("complex", _complex_ctor_samples))
for _kind in ("fft_c2c", "fft_r2c", "fft_c2r"):
    _add(GradOp(_kind, _fft_samples(_kind)))
