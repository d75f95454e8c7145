"""gradstack_nn.distributions' transforms, constraints and constraint registry against
torch.distributions 2.13: forward, inverse, log-Jacobians, shapes, signs, caching,
equality, reprs, float64 gradchecks; constraint checks; biject_to / transform_to."""

from __future__ import annotations

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

torch = pytest.importorskip("torch")

R = np.random.default_rng(11)

X_REAL = R.standard_normal((4, 3))
X_POS = R.uniform(0.2, 3.0, (4, 3))
X_UNIT = R.uniform(0.05, 0.95, (4, 3))
X_SQUARE = R.standard_normal((2, 3, 3))


def _simplex(*shape):
    return R.dirichlet(np.ones(shape[-1]), size=shape[:-1])


def _lower_cholesky():
    a = np.tril(R.standard_normal((2, 3, 3)), -1)
    return a + np.eye(3) * R.uniform(0.5, 2, (2, 3))[..., None]


def _corr_cholesky():
    a = _lower_cholesky()
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def _pd():
    a = _lower_cholesky()
    return a @ np.swapaxes(a, -1, -2)


# name -> (build(T, L) -> transform, x in the domain (numpy), y in the codomain (numpy))
TRANSFORMS = {
    "Exp": (lambda T, L: T.ExpTransform(), X_REAL, X_POS),
    "Exp_inv": (lambda T, L: T.ExpTransform().inv, X_POS, X_REAL),
    "Affine": (
        lambda T, L: T.AffineTransform(L.tensor([0.5, -1.0, 2.0]), L.tensor([2.0, -0.5, 3.0])),
        X_REAL,
        X_REAL,
    ),
    "Affine_scalar_event": (lambda T, L: T.AffineTransform(1.0, -2.0, event_dim=1), X_REAL, X_REAL),
    "Sigmoid": (lambda T, L: T.SigmoidTransform(), X_REAL, X_UNIT),
    "Tanh": (lambda T, L: T.TanhTransform(), X_REAL, X_UNIT * 2 - 1),
    "Softplus": (lambda T, L: T.SoftplusTransform(), X_REAL, X_POS),
    "Power": (lambda T, L: T.PowerTransform(L.tensor([0.5, 2.0, -1.5])), X_POS, X_POS),
    "Abs": (lambda T, L: T.AbsTransform(), X_REAL, X_POS),
    "Softmax": (lambda T, L: T.SoftmaxTransform(), X_REAL, _simplex(4, 3)),
    "StickBreaking": (lambda T, L: T.StickBreakingTransform(), X_REAL, _simplex(4, 4)),
    "LowerCholesky": (lambda T, L: T.LowerCholeskyTransform(), X_SQUARE, _lower_cholesky()),
    "PositiveDefinite": (lambda T, L: T.PositiveDefiniteTransform(), X_SQUARE, _pd()),
    "CorrCholesky": (lambda T, L: T.CorrCholeskyTransform(), X_REAL, _corr_cholesky()),
    "Compose": (
        lambda T, L: T.ComposeTransform([T.AffineTransform(0.3, 2.0), T.SigmoidTransform()]),
        X_REAL,
        X_UNIT,
    ),
    "Compose_events": (
        lambda T, L: T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()]),
        X_REAL,
        _simplex(4, 4),
    ),
    "identity": (lambda T, L: T.identity_transform, X_REAL, X_REAL),
    "Independent": (lambda T, L: T.IndependentTransform(T.ExpTransform(), 1), X_REAL, X_POS),
    "Reshape": (lambda T, L: T.ReshapeTransform((3,), (3, 1)), X_REAL, X_REAL[..., None]),
    "Cat": (
        lambda T, L: T.CatTransform(
            [T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=-1, lengths=[1, 2]
        ),
        X_REAL,
        X_POS,
    ),
    "Stack": (
        lambda T, L: T.StackTransform(
            [T.ExpTransform(), T.SigmoidTransform(), T.AffineTransform(0.0, 2.0)], dim=-1
        ),
        X_REAL,
        X_UNIT,
    ),
    "CumulativeDistribution": (
        lambda T, L: T.CumulativeDistributionTransform(
            L.distributions.Normal(L.tensor([0.0, 1.0, 2.0]), L.tensor([1.0, 2.0, 0.5]))
        ),
        X_REAL,
        X_UNIT,
    ),
}


def _run(fn):
    try:
        out = fn()
    except (NotImplementedError, ValueError, RuntimeError, AssertionError) as e:
        return "raises", type(e)
    if hasattr(out, "detach"):
        return "tensor", out.detach().numpy()
    return "value", out


def _assert_same(a, b, what):
    assert a[0] == b[0], f"{what}: {a} vs {b}"
    if a[0] == "tensor":
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-14, err_msg=what)
    elif a[0] == "raises":
        assert a[1] is b[1], what
    else:
        assert a[1] == b[1], what


def _both(name):
    build = TRANSFORMS[name][0]
    return build(gs.distributions.transforms, gs), build(torch.distributions.transforms, torch)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_matches_torch(name):
    _, x, y = TRANSFORMS[name]
    ours, theirs = _both(name)
    xs, ys = (gs.tensor(x), gs.tensor(y)), (torch.tensor(x), torch.tensor(y))
    for what, fn in [
        ("forward", lambda t, x, y: t(x)),
        ("inverse", lambda t, x, y: t.inv(y)),
        ("log_abs_det_jacobian", lambda t, x, y: t.log_abs_det_jacobian(x, t(x))),
        ("forward_shape", lambda t, x, y: tuple(t.forward_shape(x.shape))),
        ("inverse_shape", lambda t, x, y: tuple(t.inverse_shape(y.shape))),
        ("bijective", lambda t, x, y: t.bijective),
        ("event_dim", lambda t, x, y: t.event_dim),
        ("domain", lambda t, x, y: (repr(t.domain), t.domain.event_dim)),
        ("codomain", lambda t, x, y: (repr(t.codomain), t.codomain.event_dim)),
        ("repr", lambda t, x, y: repr(t)),
        ("inv.inv", lambda t, x, y: t.inv.inv is t),
    ]:
        _assert_same(_run(lambda fn=fn: fn(ours, *xs)), _run(lambda fn=fn: fn(theirs, *ys)), what)
    # the sign of monotone scalar transforms (a tensor for Affine and Power)
    a, b = _run(lambda: ours.sign), _run(lambda: theirs.sign)
    assert a[0] == b[0]
    if a[0] != "raises":
        np.testing.assert_array_equal(np.asarray(a[1]), np.asarray(b[1]))
    # equality: to a fresh copy (by value, as torch) and to another transform
    copy_gs, copy_t = _both(name)
    assert (ours == copy_gs) == (theirs == copy_t)
    assert (ours == gs.distributions.transforms.ExpTransform()) == (
        theirs == torch.distributions.transforms.ExpTransform()
    )


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_caching(name):
    """With cache_size=1 the last pair is kept: ``t(x) is t(x)``, ``t.inv(t(x)) is x``."""
    build, x, _ = TRANSFORMS[name]
    for lib in (gs, torch):
        t = build(lib.distributions.transforms, lib)
        cached = t.with_cache(1)
        xt = lib.tensor(x)
        y = cached(xt)
        assert cached(xt) is y
        assert cached.inv(y) is xt
        assert t.with_cache(0) is t or t.with_cache(0) == t


@pytest.mark.parametrize(
    "name",
    ["Exp", "Affine", "Sigmoid", "Tanh", "Softplus", "Power", "StickBreaking", "Compose",
     "Compose_events", "Independent", "CorrCholesky", "LowerCholesky", "PositiveDefinite",
     "Cat", "Stack", "CumulativeDistribution", "Softmax"],
)  # fmt: skip
def test_transform_gradcheck(name):
    build, x, _ = TRANSFORMS[name]
    t = build(gs.distributions.transforms, gs)
    xt = gs.tensor(x, requires_grad=True)
    assert gs.autograd.gradcheck(lambda a: t(a), (xt,), atol=1e-6, rtol=1e-4)
    try:
        t.log_abs_det_jacobian(xt, t(xt))
    except NotImplementedError:
        return
    assert gs.autograd.gradcheck(
        lambda a: t.log_abs_det_jacobian(a, t(a)), (xt,), atol=1e-6, rtol=1e-4
    )


# name -> constraint builder (C, L), and values to check
CONSTRAINTS = {
    "real": (lambda C, L: C.real, np.array([0.0, np.inf, np.nan, -3.0])),
    "positive": (lambda C, L: C.positive, np.array([1.0, 0.0, -1.0])),
    "nonnegative": (lambda C, L: C.nonnegative, np.array([1.0, 0.0, -1.0])),
    "greater_than": (lambda C, L: C.greater_than(1.5), np.array([1.0, 1.5, 2.0])),
    "greater_than_eq": (lambda C, L: C.greater_than_eq(1.5), np.array([1.0, 1.5, 2.0])),
    "less_than": (lambda C, L: C.less_than(1.5), np.array([1.0, 1.5, 2.0])),
    "interval": (lambda C, L: C.interval(-1.0, 1.0), np.array([-1.0, 0.0, 1.0, 1.5])),
    "half_open_interval": (
        lambda C, L: C.half_open_interval(-1.0, 1.0),
        np.array([-1.0, 0.0, 1.0, 1.5]),
    ),
    "unit_interval": (lambda C, L: C.unit_interval, np.array([0.0, 0.5, 1.0, 1.5])),
    "boolean": (lambda C, L: C.boolean, np.array([0.0, 1.0, 0.5])),
    "nonnegative_integer": (lambda C, L: C.nonnegative_integer, np.array([0.0, 3.0, -1.0, 1.5])),
    "positive_integer": (lambda C, L: C.positive_integer, np.array([0.0, 3.0, 1.5])),
    "integer_interval": (lambda C, L: C.integer_interval(0, 3), np.array([0.0, 3.0, 4.0, 1.5])),
    "simplex": (lambda C, L: C.simplex, np.array([[0.2, 0.8], [0.5, 0.6], [-0.1, 1.1]])),
    "one_hot": (lambda C, L: C.one_hot, np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.5]])),
    "multinomial": (lambda C, L: C.multinomial(4), np.array([[1.0, 3.0], [3.0, 3.0]])),
    "real_vector": (lambda C, L: C.real_vector, np.array([[0.0, 1.0], [np.nan, 1.0]])),
    "independent": (
        lambda C, L: C.independent(C.positive, 2),
        np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, -2.0], [3.0, 4.0]]]),
    ),
    "lower_triangular": (
        lambda C, L: C.lower_triangular,
        np.array([[[1.0, 0.0], [2.0, -1.0]], [[1.0, 0.1], [2.0, 1.0]]]),
    ),
    "lower_cholesky": (
        lambda C, L: C.lower_cholesky,
        np.array([[[1.0, 0.0], [2.0, 1.0]], [[1.0, 0.0], [2.0, -1.0]]]),
    ),
    "corr_cholesky": (
        lambda C, L: C.corr_cholesky,
        np.stack([_corr_cholesky()[0], _lower_cholesky()[0]]),
    ),
    "square": (lambda C, L: C.square, np.zeros((2, 3, 3))),
    "symmetric": (lambda C, L: C.symmetric, np.stack([_pd()[0], X_SQUARE[0]])),
    "positive_definite": (
        lambda C, L: C.positive_definite,
        np.stack([_pd()[0], -_pd()[1], np.diag([1.0, 0.0, 1.0])]),
    ),
    "positive_semidefinite": (
        lambda C, L: C.positive_semidefinite,
        np.stack([_pd()[0], -_pd()[1], np.diag([1.0, 0.0, 1.0])]),
    ),
    "cat": (
        lambda C, L: C.cat([C.positive, C.real], dim=0, lengths=[2, 1]),
        np.array([1.0, -1.0, -1.0]),
    ),
    "stack": (
        lambda C, L: C.stack([C.positive, C.real], dim=-1),
        np.array([[1.0, -1.0], [-1.0, 2.0]]),
    ),
    "mixture": (
        lambda C, L: C.MixtureSameFamilyConstraint(C.positive),
        np.array([1.0, -1.0]),
    ),
}


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraint_matches_torch(name):
    build, value = CONSTRAINTS[name]
    ours = build(gs.distributions.constraints, gs)
    theirs = build(torch.distributions.constraints, torch)
    assert repr(ours) == repr(theirs)
    assert ours.is_discrete == theirs.is_discrete
    assert ours.event_dim == theirs.event_dim
    got = ours.check(gs.tensor(value))
    expected = theirs.check(torch.tensor(value))
    assert str(got.dtype).endswith("bool")
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_dependent_constraints():
    for lib in (gs, torch):
        C = lib.distributions.constraints
        assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
        with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
            C.dependent.check(lib.zeros(1))
        with pytest.raises(NotImplementedError, match="cannot be determined statically"):
            C.dependent.event_dim  # noqa: B018
        d = C.dependent(is_discrete=True, event_dim=1)
        assert d.is_discrete and d.event_dim == 1
        # a distribution's dependent support reads as a constraint on the class
        support = lib.distributions.Uniform.support
        assert C.is_dependent(support) and support.event_dim == 0 and not support.is_discrete


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registry_matches_torch(name, registry):
    build = CONSTRAINTS[name][0]
    results = []
    for lib in (gs, torch):
        D = lib.distributions
        try:
            t = getattr(D, registry)(build(D.constraints, lib))
        except NotImplementedError as e:
            results.append(("raises", str(e)))
            continue
        results.append(("transform", repr(t).replace("gradstack", "torch")))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    "constraint, shape",
    [("positive", (5,)), ("greater_than", (5,)), ("less_than", (5,)), ("interval", (5,)),
     ("unit_interval", (5,)), ("simplex", (2, 3)), ("real_vector", (4,)),
     ("independent", (2, 2, 2)), ("lower_cholesky", (2, 3, 3)),
     ("positive_definite", (2, 3, 3)), ("corr_cholesky", (3,)), ("cat", (3,)),
     ("stack", (4, 2))],
)  # fmt: skip
def test_transform_to_lands_in_the_constraint(constraint, shape):
    x = R.standard_normal(shape)
    outs = []
    for lib in (gs, torch):
        D = lib.distributions
        c = CONSTRAINTS[constraint][0](D.constraints, lib)
        y = D.transform_to(c)(lib.tensor(x))
        assert bool(c.check(y).all())
        outs.append(y.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-14)


def test_registry_errors_and_registration():
    for lib in (gs, torch):
        D = lib.distributions
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            D.biject_to(D.constraints.boolean)
        with pytest.raises(TypeError, match="Expected constraint to be either"):
            D.constraint_registry.ConstraintRegistry().register(3, lambda c: None)
        registry = D.constraint_registry.ConstraintRegistry()

        @registry.register(D.constraints.positive)
        def _softplus(constraint, D=D):
            return D.transforms.SoftplusTransform()

        assert isinstance(registry(D.constraints.greater_than(0.0)), D.transforms.SoftplusTransform)


def test_transform_errors_match_torch():
    for make in (
        lambda T: T.Transform(cache_size=2),
        lambda T: T.ReshapeTransform((2, 3), (5,)),
        lambda T: T.ReshapeTransform((3,), (3, 1)).forward_shape((4, 2)),
        lambda T: T.CorrCholeskyTransform().forward_shape((4,)),
        lambda T: T.StickBreakingTransform().forward_shape(()),
        lambda T: T.AffineTransform(0.0, 1.0).with_cache(1).event_dim + T.Transform().event_dim,
        lambda T: (
            T.ExpTransform().event_dim
            + T.ComposeTransform([]).domain.event_dim
            + T.TanhTransform().sign
            + T.Transform().sign
        ),
    ):
        errors = []
        for lib in (gs, torch):
            try:
                make(lib.distributions.transforms)
                errors.append(None)
            except Exception as e:  # noqa: BLE001 - the type and message are compared
                errors.append((type(e), str(e).replace("gradstack", "torch")))
        assert errors[0] == errors[1]
