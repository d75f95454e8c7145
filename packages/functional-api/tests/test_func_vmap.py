"""``gradstack_functional.func.vmap`` against ``torch.func.vmap``.

Per-sample functions are written once for a library namespace ``L`` (gradstack_tensor or
torch) and mapped with the same ``in_dims``/``out_dims`` by both; values are compared in
float64.  Errors are compared with torch's (type and words).
"""

from __future__ import annotations

import warnings

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_functional import batching_layer
from gradstack_functional.func import vmap

torch = pytest.importorskip("torch")
import gradstack_functional_tests_func_compare as _cmp  # noqa: E402
import torch.func as tf  # noqa: E402

both = _cmp.both

# torch.func scripts helpers with the deprecated torch.jit.script
pytestmark = pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")

RNG = np.random.default_rng(1234)


def close(ours, theirs, atol=1e-10):
    _cmp.close(ours, theirs, atol, strict=True)


# (name, fn(L, a, b)) on samples a: (3, 4), b: (4,)
FUNCS = [
    ("matvec", lambda L, a, b: a @ b),
    ("softmax_mul", lambda L, a, b: a.softmax(-1) * b),
    ("reduce", lambda L, a, b: (a.sin() + b).sum(0)),
    ("mean_keep", lambda L, a, b: a.mean(1, keepdim=True) - b),
    ("transpose", lambda L, a, b: a.t() @ a + b),
    ("reshape", lambda L, a, b: a.reshape(2, 6).sum(-1) * b.sum()),
    ("cat", lambda L, a, b: L.cat([a, b.unsqueeze(0)], 0).tanh()),
    ("stack", lambda L, a, b: L.stack([a[0], b, a[1]], 1)),
    ("index", lambda L, a, b: a[1:, ::2] * b[1:3]),
    ("where", lambda L, a, b: L.where(a > 0, a, b)),
    ("norm", lambda L, a, b: a.norm(dim=1) + b.abs().max()),
    ("logsumexp", lambda L, a, b: a.logsumexp(1) + b.var()),
    ("expand", lambda L, a, b: b.expand(3, 4) * a),
    ("outer", lambda L, a, b: L.outer(b, a[0])),
]


@pytest.mark.parametrize("name,fn", FUNCS, ids=[f[0] for f in FUNCS])
@pytest.mark.parametrize("in_dims", [(0, 0), (1, None), (-1, 0), (None, 0)])
def test_values_against_torch(name, fn, in_dims):
    B = 5
    shape_a = [3, 4]
    shape_b = [4]
    if in_dims[0] is not None:
        shape_a.insert(in_dims[0] % 3, B)
    if in_dims[1] is not None:
        shape_b.insert(in_dims[1] % 2, B)
    ga, ta = both(RNG.standard_normal(shape_a))
    gb, tb = both(RNG.standard_normal(shape_b))
    ours = vmap(lambda a, b: fn(gt, a, b), in_dims=in_dims)(ga, gb)
    theirs = tf.vmap(lambda a, b: fn(torch, a, b), in_dims=in_dims)(ta, tb)
    close(ours, theirs)


@pytest.mark.parametrize("out_dims", [0, 1, -1, (1, 0), (-1, 0), (None, 0)])
def test_out_dims(out_dims):
    ga, ta = both(RNG.standard_normal((4, 2, 3)))
    cg, ct = both(RNG.standard_normal((2,)))

    def f(L, c):
        if out_dims == (None, 0):  # the first output is the same for every sample
            return lambda a: (c + 1.0, a.sum(0))
        return lambda a: (a * 2.0, a.sum(0))

    close(vmap(f(gt, cg), out_dims=out_dims)(ga), tf.vmap(f(torch, ct), out_dims=out_dims)(ta))


def test_unbatched_output_is_broadcast():
    ga, ta = both(RNG.standard_normal((4, 3)))
    cg, ct = both(RNG.standard_normal((2,)))
    close(vmap(lambda a: cg * 2)(ga), tf.vmap(lambda a: ct * 2)(ta))


def test_pytree_inputs_and_outputs():
    xg, xt = both(RNG.standard_normal((3, 4)))
    yg, yt = both(RNG.standard_normal((4, 3)))
    zg, zt = both(RNG.standard_normal((2,)))

    def f(L):
        def g(d, pair):
            u, v = pair
            return {"s": d["x"] * v, "t": [u.sum() + d["x"].sum(), d["x"]]}

        return g

    in_dims = ({"x": 0}, (None, 1))
    out_dims = {"s": 1, "t": [0, -1]}
    ours = vmap(f(gt), in_dims=in_dims, out_dims=out_dims)({"x": xg}, (zg, yg))
    theirs = tf.vmap(f(torch), in_dims=in_dims, out_dims=out_dims)({"x": xt}, (zt, yt))
    close(ours, theirs)


def test_nested_vmap():
    ag, at = both(RNG.standard_normal((2, 3, 4, 5)))
    bg, bt = both(RNG.standard_normal((5, 2)))

    def f(L):
        return lambda a, b: (a @ b).exp().sum(-1)

    ours = vmap(vmap(f(gt), in_dims=(1, None)), in_dims=(0, 1))(ag, bg)
    theirs = tf.vmap(tf.vmap(f(torch), in_dims=(1, None)), in_dims=(0, 1))(at, bt)
    close(ours, theirs)
    # three levels, mapped dims in different places
    ours = vmap(vmap(vmap(lambda x: x.sum()), in_dims=2), in_dims=1)(ag)
    theirs = tf.vmap(tf.vmap(tf.vmap(lambda x: x.sum()), in_dims=2), in_dims=1)(at)
    close(ours, theirs)


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 100])
def test_chunk_size(chunk_size):
    ag, at = both(RNG.standard_normal((7, 3)))
    bg, bt = both(RNG.standard_normal((3,)))
    ours = vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, None), chunk_size=chunk_size)(ag, bg)
    theirs = tf.vmap(lambda a, b: (a * b, a.sum()), in_dims=(0, None), chunk_size=chunk_size)(
        at, bt
    )
    close(ours, theirs)


def test_chunk_size_must_be_positive():
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(lambda x: x, chunk_size=0)


def test_fallback_loop_warns_once_naming_the_op():
    batching_layer.warned_ops.discard("diag")
    ag, at = both(RNG.standard_normal((4, 3)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = vmap(lambda a: a.diag())(ag)
        again = vmap(lambda a: a.diag() * 2)(ag)
    msgs = [str(w.message) for w in caught if "performance drop" in str(w.message)]
    assert len(msgs) == 1 and "batching rule for diag" in msgs[0]
    close(ours, tf.vmap(lambda a: a.diag())(at))
    close(again, tf.vmap(lambda a: a.diag() * 2)(at))


# -- randomness -----------------------------------------------------------------------


def test_randomness_error_is_torchs():
    ag, at = both(RNG.standard_normal((4, 3)))
    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(lambda a: a + torch.rand(3))(at)
    with pytest.raises(RuntimeError) as ours:
        vmap(lambda a: a + gt.rand(3))(ag)
    assert str(ours.value) == str(theirs.value)


def test_randomness_same_draws_once():
    ag = gt.zeros(4, 3, dtype=gt.float64)
    gt.manual_seed(0)
    out = vmap(lambda a: a + gt.rand(3, dtype=gt.float64), randomness="same")(ag)
    rows = np.asarray(out.tolist())
    assert np.all(rows == rows[0]) and np.all(rows[0] > 0) and np.unique(rows[0]).size == 3
    gt.manual_seed(0)
    filled = vmap(lambda a: a.clone().uniform_(), randomness="same")(ag)
    rows = np.asarray(filled.tolist())
    assert np.all(rows == rows[0]) and np.unique(rows[0]).size == 3


def test_randomness_different_draws_per_sample():
    ag = gt.zeros(4, 3, dtype=gt.float64)
    out = vmap(lambda a: a.clone().normal_(), randomness="different")(ag)
    rows = np.asarray(out.tolist())
    assert np.unique(rows).size == 12
    # a factory call draws one sample's values each (test_vmap_factories.py: torch's)
    out = vmap(lambda a: a + gt.rand(3), randomness="different")(ag)
    assert np.unique(np.asarray(out.tolist())).size == 12


def test_randomness_flag_is_checked():
    with pytest.raises(RuntimeError) as theirs:
        tf.vmap(lambda x: x, randomness="sometimes")(torch.ones(2))
    with pytest.raises(RuntimeError) as ours:
        vmap(lambda x: x, randomness="sometimes")(gt.ones(2))
    assert str(ours.value) == str(theirs.value)


# -- errors (torch's words) -----------------------------------------------------------


def _same_error(fn_ours, fn_theirs, exact=True):
    _cmp.same_error(fn_ours, fn_theirs, message="exact" if exact else "prefix")


def test_item_error():
    ag, at = both(RNG.standard_normal((4, 3)))
    _same_error(
        lambda: vmap(lambda a: a.sum().item())(ag), lambda: tf.vmap(lambda a: a.sum().item())(at)
    )


def test_data_dependent_control_flow_error():
    ag, at = both(RNG.standard_normal((4, 3)))

    def f(a):
        return a if a.sum() > 0 else -a

    _same_error(lambda: vmap(f)(ag), lambda: tf.vmap(f)(at))


def test_inplace_on_captured_tensor_error():
    ag, at = both(RNG.standard_normal((4, 3)))
    yg, yt = both(np.zeros(3))
    for write in (
        lambda y, a: y.mul_(a),
        lambda y, a: y.copy_(a),
        lambda y, a: y.__setitem__(0, a[0]),
    ):
        _same_error(
            lambda write=write: vmap(lambda a: write(yg, a))(ag),
            lambda write=write: tf.vmap(lambda a: write(yt, a))(at),
            exact=False,
        )
    assert yg.tolist() == [0.0, 0.0, 0.0]


def test_mismatched_sizes_error():
    ag, at = both(RNG.standard_normal((4, 3)))
    bg, bt = both(RNG.standard_normal((5, 3)))
    _same_error(lambda: vmap(gt.add)(ag, bg), lambda: tf.vmap(torch.add)(at, bt))


def test_in_dims_errors():
    ag, at = both(RNG.standard_normal((4, 3)))
    _same_error(
        lambda: vmap(lambda a: a, in_dims=2)(ag), lambda: tf.vmap(lambda a: a, in_dims=2)(at)
    )
    _same_error(
        lambda: vmap(lambda a, n: a * n, in_dims=(0, 0))(ag, 2.0),
        lambda: tf.vmap(lambda a, n: a * n, in_dims=(0, 0))(at, 2.0),
        exact=False,
    )
    _same_error(
        lambda: vmap(lambda a: a, in_dims=None)(ag), lambda: tf.vmap(lambda a: a, in_dims=None)(at)
    )
    _same_error(
        lambda: vmap(lambda a: a, in_dims=(None,))(ag),
        lambda: tf.vmap(lambda a: a, in_dims=(None,))(at),
    )
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        vmap(lambda a, b: a, in_dims=(0, 0, 0))(ag, ag)


def test_out_dims_none_with_batched_output_error():
    ag, at = both(RNG.standard_normal((4, 3)))
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a * 2, out_dims=None)(ag)
    with pytest.raises(ValueError) as theirs:
        tf.vmap(lambda a: a * 2, out_dims=None)(at)
    assert "can not return a BatchedTensor when out_dim is None" in str(theirs.value)


def test_non_tensor_output_error():
    ag, at = both(RNG.standard_normal((4, 3)))
    _same_error(lambda: vmap(lambda a: 3)(ag), lambda: tf.vmap(lambda a: 3)(at), exact=False)


def test_layer_is_removed_after_vmap():
    ag = gt.ones(2, 3)
    try:
        vmap(lambda a: a.sum().item())(ag)
    except RuntimeError:
        pass
    assert batching_layer._open == 0
    assert (gt.ones(2) * 2).tolist() == [2.0, 2.0]
