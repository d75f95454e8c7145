"""``out=`` on the function forms (``gradstack.add(a, b, out=c)`` ...), compared with torch
2.13: values, dtype, shape, identity of the returned tensor, the resize warning, the
dtype errors of each kind of op, the autograd error under grad mode and its absence under
no_grad, the version bump, and the forms that take no ``out=``."""

from __future__ import annotations

import warnings

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1123)
XF = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
XI = RNG.permutation(12).reshape(3, 4) + 1  # no ties: topk/sort order is torch's
VF = RNG.uniform(0.1, 0.9, 4).astype(np.float32)
MF = RNG.uniform(0.1, 0.9, (4, 2)).astype(np.float32)


def _t(L, a):
    return L.tensor(a)


# name -> (callable(L, x) -> args, kwargs); x is the input array (float or int)
CASES = {
    # unary, cast kind and same-dtype kind
    **{
        n: (lambda n: lambda L, x: ((_t(L, x),), {}))(n)
        for n in [
            "neg",
            "abs",
            "sign",
            "floor",
            "ceil",
            "round",
            "trunc",
            "exp",
            "exp2",
            "expm1",
            "log",
            "log2",
            "log10",
            "log1p",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "sin",
            "cos",
            "tan",
            "asin",
            "acos",
            "atan",
            "sinh",
            "cosh",
            "tanh",
            "sigmoid",
            "logical_not",
            "square",
            "erf",
            "erfinv",
        ]
    },
    # binary
    **{
        n: (lambda n: lambda L, x: ((_t(L, x), _t(L, x[::-1].copy())), {}))(n)
        for n in [
            "add",
            "sub",
            "subtract",
            "mul",
            "multiply",
            "div",
            "divide",
            "true_divide",
            "pow",
            "maximum",
            "minimum",
            "remainder",
            "floor_divide",
            "atan2",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "logical_and",
            "logical_or",
            "logical_xor",
        ]
    },
    "add_scalar_alpha": (lambda L, x: ((_t(L, x), 2), {"alpha": 3}), "add"),
    "div_floor": (lambda L, x: ((_t(L, x), 3), {"rounding_mode": "floor"}), "div"),
    "clamp": (lambda L, x: ((_t(L, x),), {"min": 0.3, "max": 4}), "clamp"),
    "clamp_min": (lambda L, x: ((_t(L, x), 0.5), {}), "clamp_min"),
    "clamp_max": (lambda L, x: ((_t(L, x), 0.5), {}), "clamp_max"),
    "where": (lambda L, x: ((_t(L, x) > 0.5, _t(L, x), _t(L, x) * 2), {}), "where"),
    "sum_dim": (lambda L, x: ((_t(L, x), 1), {}), "sum"),
    "sum_dim_keepdim": (lambda L, x: ((_t(L, x),), {"dim": 0, "keepdim": True}), "sum"),
    "prod_dim": (lambda L, x: ((_t(L, x), 1), {}), "prod"),
    "mean": (lambda L, x: ((_t(L, x),), {}), "mean"),
    "mean_dim": (lambda L, x: ((_t(L, x), 0), {}), "mean"),
    "cumsum": (lambda L, x: ((_t(L, x), 1), {}), "cumsum"),
    "max_all": (lambda L, x: ((_t(L, x),), {}), "max"),
    "amax": (lambda L, x: ((_t(L, x), 1), {}), "amax"),
    "amin": (lambda L, x: ((_t(L, x), 0), {}), "amin"),
    "argmax": (lambda L, x: ((_t(L, x), 1), {}), "argmax"),
    "argmin": (lambda L, x: ((_t(L, x),), {}), "argmin"),
    "var": (lambda L, x: ((_t(L, x), 1), {}), "var"),
    "std": (lambda L, x: ((_t(L, x),), {}), "std"),
    "logsumexp": (lambda L, x: ((_t(L, x), 1), {}), "logsumexp"),
    "softmax": (lambda L, x: ((_t(L, x), 1), {}), "softmax"),
    "log_softmax": (lambda L, x: ((_t(L, x), 1), {}), "log_softmax"),
    "matmul_mm": (lambda L, x: ((_t(L, x), _t(L, x).t()), {}), "matmul"),
    "matmul_dot": (lambda L, x: ((_t(L, x)[0], _t(L, x)[1]), {}), "matmul"),
    "matmul_mv": (lambda L, x: ((_t(L, x), _t(L, x)[0]), {}), "matmul"),
    "mm": (lambda L, x: ((_t(L, x), _t(L, x).t()), {}), "mm"),
    "bmm": (lambda L, x: ((_t(L, x)[None], _t(L, x).t()[None]), {}), "bmm"),
    "addmm": (lambda L, x: ((_t(L, x)[:, :3], _t(L, x), _t(L, x).t()), {"beta": 2}), "addmm"),
    "dot": (lambda L, x: ((_t(L, x)[0], _t(L, x)[1]), {}), "dot"),
    "mv": (lambda L, x: ((_t(L, x), _t(L, x)[0]), {}), "mv"),
    "outer": (lambda L, x: ((_t(L, x)[0], _t(L, x)[1]), {}), "outer"),
    "cat": (lambda L, x: (([_t(L, x), _t(L, x)],), {"dim": 1}), "cat"),
    "concat": (lambda L, x: (([_t(L, x), _t(L, x)],), {}), "concat"),
    "stack": (lambda L, x: (([_t(L, x), _t(L, x)],), {}), "stack"),
    "all_dim": (lambda L, x: ((_t(L, x) > 0.5, 1), {}), "all"),
    "any": (lambda L, x: ((_t(L, x) > 0.5,), {}), "any"),
    "tril": (lambda L, x: ((_t(L, x),), {}), "tril"),
    "triu": (lambda L, x: ((_t(L, x), 1), {}), "triu"),
    "index_select": (lambda L, x: ((_t(L, x), 1, L.tensor([2, 0])), {}), "index_select"),
    "gather": (lambda L, x: ((_t(L, x), 1, L.tensor([[0, 1], [2, 0], [1, 1]])), {}), "gather"),
    "diag": (lambda L, x: ((_t(L, x),), {}), "diag"),
    "lerp": (lambda L, x: ((_t(L, x), _t(L, x) * 2, 0.25), {}), "lerp"),
    "addcmul": (lambda L, x: ((_t(L, x), _t(L, x), _t(L, x)), {"value": 2}), "addcmul"),
    "addcdiv": (lambda L, x: ((_t(L, x), _t(L, x), _t(L, x) + 1), {}), "addcdiv"),
    "masked_select": (lambda L, x: ((_t(L, x), _t(L, x) > 0.5), {}), "masked_select"),
    "histc": (lambda L, x: ((_t(L, x),), {"bins": 4}), "histc"),
}
TUPLE_CASES = {
    "max_dim": (lambda L, x: ((_t(L, x), 1), {}), "max"),
    "min_dim_keepdim": (lambda L, x: ((_t(L, x), 0, True), {}), "min"),
    "sort": (lambda L, x: ((_t(L, x),), {"descending": True}), "sort"),
    "topk": (lambda L, x: ((_t(L, x), 2), {}), "topk"),
}


def _entry(table, case):
    entry = table[case]
    return entry if isinstance(entry, tuple) else (entry, case)


def _outcome(L, make, name, x, out_dtype, out_shape=(0,), tuple_out=False):
    args, kwargs = make(L, x)
    dt = getattr(L, out_dtype)
    if tuple_out:
        out = (L.empty(out_shape, dtype=dt), L.empty(out_shape, dtype=L.int64))
    else:
        out = L.empty(out_shape, dtype=dt)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with L.no_grad():
                result = getattr(L, name)(*args, out=out, **kwargs)
        except Exception as e:  # noqa: BLE001 - compared with torch's
            return ("error", type(e).__name__, str(e).split("\n")[0])
    resized = [
        str(w.message).split(" (Triggered")[0] for w in caught if "resized" in str(w.message)
    ]
    outs = out if tuple_out else (out,)
    results = tuple(result) if tuple_out else (result,)
    assert all(r is o for r, o in zip(results, outs, strict=True))
    return ("ok", [(str(o.dtype), tuple(o.shape), o.tolist()) for o in outs], resized)


def _compare(want, got, name):
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got == want
        return
    assert got[2] == want[2]  # the resize warnings
    for (wd, ws, wv), (gd, gs_, gv) in zip(want[1], got[1], strict=True):
        assert (gd.split(".")[-1], gs_) == (wd.split(".")[-1], ws)
        np.testing.assert_allclose(
            np.asarray(gv, dtype=float), np.asarray(wv, dtype=float), rtol=2e-6, atol=1e-7
        )


OUT_DTYPES = ["float32", "float64", "int64", "bool"]


# ops whose refusal of an integer input gradstack words differently from torch with or
# without out= (the op's own message, tensor-core's reductions and softmax kernels): there
# the test checks the error's type, and that out= adds nothing to the op's own error
OWN_WORDING = {"var", "std", "mean", "mean_dim", "softmax", "log_softmax"}


def _plain_error(L, make, name, x):
    args, kwargs = make(L, x)
    try:
        getattr(L, name)(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e).split("\n")[0])
    return None


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("data", ["float", "int"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_out_values_dtypes_and_errors_as_torch(case, data, out_dtype):
    make, name = _entry(CASES, case)
    x = XF if data == "float" else XI
    want = _outcome(torch, make, name, x, out_dtype)
    got = _outcome(gs, make, name, x, out_dtype)
    if case in OWN_WORDING and data == "int" and want == _plain_error(torch, make, name, x):
        assert got[:2] == want[:2] and got == _plain_error(gs, make, name, x)
        return
    _compare(want, got, name)


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("data", ["float", "int"])
@pytest.mark.parametrize("case", sorted(TUPLE_CASES))
def test_tuple_out_as_torch(case, data, out_dtype):
    make, name = _entry(TUPLE_CASES, case)
    x = XF if data == "float" else XI
    want = _outcome(torch, make, name, x, out_dtype, tuple_out=True)
    got = _outcome(gs, make, name, x, out_dtype, tuple_out=True)
    _compare(want, got, name)


@pytest.mark.parametrize("case", ["add", "exp", "matmul_mm", "sum_dim", "cat", "where"])
def test_an_out_with_elements_is_resized_with_torchs_warning(case):
    make, name = _entry(CASES, case)
    want = _outcome(torch, make, name, XF, "float32", out_shape=(5,))
    got = _outcome(gs, make, name, XF, "float32", out_shape=(5,))
    assert want[2] and got[2] == want[2]
    _compare(want, got, name)


def test_an_out_of_the_right_shape_is_written_in_place_and_its_version_moves():
    a, b = gs.ones(2, 3), gs.full((2, 3), 2.0)
    out = gs.zeros(2, 3)
    view = out[0]
    v0 = out._version
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gs.add(a, b, out=out)
    assert r is out and out.tolist() == [[3.0] * 3] * 2 and view.tolist() == [3.0] * 3
    assert out._version > v0
    assert gs.mul(out, 2, out=out) is out and out.tolist() == [[6.0] * 3] * 2


def _grad_outcome(L, f):
    try:
        r = f(L)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, str(e)
    return "ok", r.requires_grad, r.tolist()


GRAD_CASES = {
    "add_input_requires_grad": lambda L: L.add(L.ones(2, requires_grad=True), 1, out=L.empty(0)),
    "mul_other_requires_grad": lambda L: L.mul(
        L.ones(2), L.ones(2, requires_grad=True), out=L.empty(0)
    ),
    "exp": lambda L: L.exp(L.ones(2, requires_grad=True), out=L.empty(0)),
    "mm": lambda L: L.mm(L.ones(2, 2, requires_grad=True), L.ones(2, 2), out=L.empty(0)),
    "sum_dim": lambda L: L.sum(L.ones(2, 2, requires_grad=True), 0, out=L.empty(0)),
    "cat": lambda L: L.cat([L.ones(2, requires_grad=True), L.ones(1)], out=L.empty(0)),
    "max_dim": lambda L: L.max(
        L.ones(2, 2, requires_grad=True), 1, out=(L.empty(0), L.empty(0, dtype=L.int64))
    )[0],
    "out_requires_grad": lambda L: L.add(L.ones(2), 1, out=L.empty(2, requires_grad=True)),
    "argmax_of_grad_input": lambda L: L.argmax(
        L.ones(2, requires_grad=True), out=L.empty(0, dtype=L.int64)
    ),
    "eq_of_grad_input": lambda L: L.eq(
        L.ones(2, requires_grad=True), 1, out=L.empty(0, dtype=L.bool)
    ),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
@pytest.mark.parametrize("mode", ["grad", "no_grad"])
def test_autograd_rule_as_torch(case, mode):
    f = GRAD_CASES[case]
    outcomes = []
    for L in (torch, gs):
        if mode == "no_grad":
            with L.no_grad():
                outcomes.append(_grad_outcome(L, f))
        else:
            outcomes.append(_grad_outcome(L, f))
    want, got = outcomes
    assert got == want
    if mode == "grad" and case not in ("argmax_of_grad_input", "eq_of_grad_input"):
        assert want[0] == "RuntimeError" and "out=... arguments" in want[1]


NO_OUT = {
    "relu": lambda L: L.relu(L.ones(2), out=L.empty(0)),
    "isnan": lambda L: L.isnan(L.ones(2), out=L.empty(0)),
    "flip": lambda L: L.flip(L.ones(2), (0,), out=L.empty(0)),
    "clone": lambda L: L.clone(L.ones(2), out=L.empty(0)),
    "transpose": lambda L: L.transpose(L.ones(2, 2), 0, 1, out=L.empty(0)),
    "sum_without_dim": lambda L: L.sum(L.ones(2), out=L.empty(0)),
    "prod_without_dim": lambda L: L.prod(L.ones(2), out=L.empty(0)),
    "where_scalar_other": lambda L: L.where(L.ones(2) > 0, L.ones(2), 0.0, out=L.empty(0)),
}


@pytest.mark.parametrize("case", sorted(NO_OUT))
def test_forms_without_out_refuse_it_with_a_type_error(case):
    for L in (torch, gs):
        with pytest.raises(TypeError):
            NO_OUT[case](L)


def test_out_must_be_a_tensor():
    for L in (torch, gs):
        with pytest.raises(TypeError, match="argument 'out'"):
            L.add(L.ones(2), 1, out=[1.0, 2.0])


OVERLAP = {
    "add_shifted": lambda L, x: L.add(x[1:], 1, out=x[:-1]),
    "mul_other_shifted": lambda L, x: L.mul(L.ones(4), x[1:], out=x[:-1]),
    "exp_shifted": lambda L, x: L.exp(x[1:], out=x[:-1]),
    "clamp_shifted": lambda L, x: L.clamp(x[1:], 0, 2, out=x[:-1]),
    "where_shifted": lambda L, x: L.where(x[1:] > 1, x[1:], L.zeros(4), out=x[:-1]),
    "add_same_view": lambda L, x: L.add(x, 1, out=x),
    "sin_same_view": lambda L, x: L.sin(x, out=x),
    "addcmul_same_view": lambda L, x: L.addcmul(x, x, x, out=x),
}


@pytest.mark.parametrize("case", sorted(OVERLAP))
def test_out_partly_overlapping_an_input_is_refused_as_torch(case):
    outcomes = []
    for L in (torch, gs):
        x = L.arange(5.0)
        try:
            OVERLAP[case](L, x)
            outcomes.append(("ok", x.tolist()))
        except RuntimeError as e:
            outcomes.append(("error", str(e)))
    want, got = outcomes
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    else:
        assert got == want
