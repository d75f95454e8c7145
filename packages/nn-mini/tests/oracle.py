"""The comparisons with torch that nn-mini's family tests share (``test_activation_torch``,
``test_pooling_torch`` ...): each family lists its programs, layers and errors in tables,
and these run them on gradstack (as ``GS``) and on torch and compare.

- :func:`values_and_gradients` and :func:`assert_program_matches_torch`: a program
  ``fn(L, F, *tensors)`` written once for ``L`` = torch or ``GS`` (``F`` its
  ``nn.functional``) on float64 inputs: its value, the gradients of ``sum(out * w)`` and
  their second-order gradients;
- :func:`assert_first_order_matches_torch`: a gradstack and a torch function on the same
  float64 inputs: values and first-order gradients;
- :func:`assert_module_matches_torch`: a layer built by name with the same arguments and
  seed: repr, state dict (names and values), output;
- :func:`assert_layer_matches_torch`: a layer's initial weights, and in float64 its output,
  gradients (to order 2) and buffers;
- :func:`assert_state_equal`: an optimiser's state; :func:`step_both_optimizers`: the same
  parameters and gradients stepped by a gradstack and a torch optimiser;
- :func:`error_of` and :func:`assert_same_error`: the exception type and words;
- :func:`seeded_run`, :func:`assert_seeded_run_matches_torch`: a random layer after the
  same seed, bit for bit.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from gradstack_nn_tests_torch_like import GS as gs

__all__ = [
    "array",
    "values_and_gradients",
    "assert_program_matches_torch",
    "assert_first_order_matches_torch",
    "assert_module_matches_torch",
    "assert_layer_matches_torch",
    "assert_state_equal",
    "step_both_optimizers",
    "error_of",
    "assert_same_error",
    "seeded_run",
    "assert_seeded_run_matches_torch",
]


def _torch():
    return pytest.importorskip("torch")


def array(t) -> np.ndarray:
    """``t`` as a numpy array (torch may return its ZeroTensor, which only clone()
    materializes)."""
    return t.detach().clone().numpy()


def values_and_gradients(lib, fn, arrays, order: int = 2):
    """``fn(lib, lib.nn.functional, *xs)`` on float64 tensors ``xs`` of ``arrays`` (that
    require grad): its value, the gradients of ``sum(out * w)`` (``w`` a fixed random
    weight; zeros for an unused input) and, with ``order=2``, the gradients of the sum of
    their squares (zeros where a first-order gradient does not depend on the inputs)."""
    xs = [lib.tensor(a.copy(), dtype=lib.float64, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (warnings are tested where they are the point)
        out = fn(lib, lib.nn.functional, *xs)
    w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    grad = lib.autograd.grad
    first = grad((out * w).sum(), xs, create_graph=order > 1, allow_unused=True)
    first = [g if g is not None else lib.zeros_like(x) for g, x in zip(first, xs)]
    second = [None] * len(xs)
    if order > 1:
        total = sum((g * g).sum() for g in first)
        if total.requires_grad:
            second = grad(total, xs, allow_unused=True)
    second = [np.zeros(a.shape) if g is None else array(g) for g, a in zip(second, arrays)]
    return array(out), [array(g) for g in first], second


def assert_program_matches_torch(
    fn, arrays, *, order=2, value=(1e-10, 1e-12), first=(1e-9, 1e-10), second=(1e-9, 1e-10)
):
    """:func:`values_and_gradients` of gradstack and of torch agree: shapes, and values
    to ``(rtol, atol)`` of ``value``, ``first`` and ``second`` order."""
    (a, ga, sa) = values_and_gradients(gs, fn, arrays, order)
    (b, gb, sb) = values_and_gradients(_torch(), fn, arrays, order)
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=value[0], atol=value[1])
    for (p, q), (rtol, atol) in zip(
        list(zip(ga, gb)) + list(zip(sa, sb)), [first] * len(ga) + [second] * len(sa)
    ):
        assert p.shape == q.shape
        np.testing.assert_allclose(p, q, rtol=rtol, atol=atol)


def assert_first_order_matches_torch(fg, ft, inputs, rtol=1e-10, atol=1e-12):
    """The values of ``fg`` (gradstack) and ``ft`` (torch) on float64 tensors of the arrays
    ``inputs``, and the inputs' gradients for a fixed random upstream gradient, agree."""
    torch = _torch()
    pairs = [
        (gs.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)) for a in inputs
    ]
    outg = fg(*[g for g, _ in pairs])
    outt = ft(*[t for _, t in pairs])
    np.testing.assert_allclose(outg.detach().numpy(), outt.detach().numpy(), rtol=rtol, atol=atol)
    upstream = np.random.default_rng(3).standard_normal(tuple(outt.shape))
    outg.backward(gs.tensor(upstream, dtype=outg.dtype))
    outt.backward(torch.tensor(upstream, dtype=outt.dtype))
    for g, t in pairs:
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)


def assert_module_matches_torch(name, args, make_input=None, *, eval=False):
    """``nn.<name>(*args)`` of gradstack and of torch, built after ``manual_seed(0)``
    (``eval``: in evaluation mode): the same repr, state dict (names in order, values bit
    for bit), dropout kind, and output on ``make_input(L)`` (a tensor, or a tuple of the
    layer's arguments) to float32's tolerance."""
    torch = _torch()
    gs.manual_seed(0)
    ours = getattr(gs.nn, name)(*args)
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args)
    if eval:
        ours.eval()
        theirs.eval()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[k].numpy(), v.numpy())
    assert isinstance(ours, gs.nn.Dropout) == isinstance(theirs, torch.nn.Dropout)
    if make_input is None:
        return
    x, y = make_input(gs), make_input(torch)
    a = ours(*x) if isinstance(x, tuple) else ours(x)
    b = theirs(*y) if isinstance(y, tuple) else theirs(y)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def _layer_run(lib, build, x, keywords, order):
    lib.manual_seed(0)  # the same initial weights (gradstack draws as torch)
    layer = build(lib)
    initial = {k: v.detach().numpy().copy() for k, v in layer.state_dict().items()}
    layer = layer.double()
    xt = lib.tensor(x, requires_grad=True)
    y = layer(xt, **keywords)
    inputs = [xt] + list(layer.parameters())
    first = lib.autograd.grad((y * y).sum(), inputs, create_graph=order > 1)
    grads = [g.detach().numpy() for g in first]
    if order > 1:
        grads += [g.numpy() for g in lib.autograd.grad(sum((g * g).sum() for g in first), inputs)]
    buffers = [b.numpy().copy() for b in layer.buffers()]
    return repr(layer), initial, [y.detach().numpy()] + grads + buffers


def assert_layer_matches_torch(
    build, x, keywords=None, *, order=1, value=(1e-10, 1e-10), grads=(1e-10, 1e-10)
):
    """The layer ``build(L)`` of gradstack and of torch, built after ``manual_seed(0)``:
    the same repr and initial state (bit for bit), and in float64 on the array ``x`` (and
    ``keywords`` for ``forward``) the same output (to ``value``'s ``(rtol, atol)``), and
    gradients of ``sum(out ** 2)`` with respect to the input and every parameter (and,
    with ``order=2``, of the sum of their squares) and buffers after the step (to
    ``grads``')."""
    keywords = keywords or {}
    r1, i1, a = _layer_run(gs, build, x, keywords, order)
    r2, i2, b = _layer_run(_torch(), build, x, keywords, order)
    assert r1 == r2
    assert list(i1) == list(i2)
    for k in i2:
        assert i1[k].shape == i2[k].shape and i1[k].dtype == i2[k].dtype, k
        np.testing.assert_array_equal(i1[k], i2[k])
    assert len(a) == len(b)
    for i, (p, q) in enumerate(zip(a, b)):
        assert p.shape == q.shape
        rtol, atol = value if i == 0 else grads
        np.testing.assert_allclose(p, q, rtol=rtol, atol=atol)


def assert_state_equal(gstate, tstate, rtol, atol):
    """An optimiser's state (a dict of tensors, lists and numbers) as torch's: the same
    keys in order, tensors of the same dtype and shape to ``(rtol, atol)``, numbers of the
    same type."""
    assert list(gstate) == list(tstate)
    for key, b in tstate.items():
        a = gstate[key]
        if isinstance(b, _torch().Tensor):
            assert a.dtype.name == str(b.dtype).removeprefix("torch."), key
            assert tuple(a.shape) == tuple(b.shape), key
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol, err_msg=key)
        elif isinstance(b, list):
            assert len(a) == len(b), key
            for x, y in zip(a, b):
                assert_state_equal({key: x}, {key: y}, rtol, atol)
        else:
            assert type(a) is type(b), key
            assert a == pytest.approx(b, rel=rtol, abs=atol), key


def step_both_optimizers(init, grads, layout, make_gs, make_torch):
    """Parameters of the arrays ``init`` in gradstack (with ``layout="transposed"`` each
    matrix a transposed view, its gradients too: not C-contiguous, the tensor-op path)
    and in torch, the optimisers ``make_gs(params)``/``make_torch(params)`` over them,
    stepped once per entry of ``grads`` (a list of arrays a step); returns ``(gs params,
    torch params, gs optimiser, torch optimiser)``."""
    torch = _torch()
    gp = []
    for a in init:
        if layout == "transposed" and a.ndim == 2:
            gp.append(gs.nn.Parameter(gs.tensor(np.ascontiguousarray(a.T)).t()))
        else:
            gp.append(gs.nn.Parameter(gs.tensor(a)))
    tp = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    gopt, topt = make_gs(gp), make_torch(tp)
    for step in grads:
        for p, g in zip(gp, step):
            p.grad = (
                gs.tensor(g)
                if p.dim() < 2 or layout == "contiguous"
                else gs.tensor(np.ascontiguousarray(g.T)).t()
            )
        for p, g in zip(tp, step):
            p.grad = torch.tensor(g)
        gopt.step()
        topt.step()
    return gp, tp, gopt, topt


def error_of(fn):
    """The type and the first line of the words of what ``fn()`` raises (the library's
    name in them replaced by ``LIB``), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the type and words are compared
        message = str(e).split("\n")[0]
        return type(e).__name__, re.sub(r"torch|gradstack", "LIB", message)
    return None


def assert_same_error(program, *, words=True):
    """``program(L)`` raises in torch, and the same exception type (and, with ``words``,
    the same words) in gradstack."""
    theirs = error_of(lambda: program(_torch()))
    ours = error_of(lambda: program(gs))
    assert theirs is not None
    assert ours is not None, f"gradstack raised nothing where torch raised {theirs}"
    assert ours[0] == theirs[0]
    if words:
        assert ours[1] == theirs[1]


def assert_seeded_run_matches_torch(fn, x, dtype):
    """:func:`seeded_run` of gradstack and of torch agree bit for bit (Note [Random layers
    draw torch's numbers]: the same draws, so the same masks or slopes, and roundings)."""
    a, ga = seeded_run(gs, fn, x, dtype)
    b, gb = seeded_run(_torch(), fn, x, dtype)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ga, gb)


def seeded_run(lib, fn, x, dtype, seed=11):
    """``fn(lib, lib.nn.functional, t)`` after ``manual_seed(seed)``, ``t`` the array ``x``
    in ``dtype`` (a name) requiring grad: the output and the gradient of the sum of its
    squares, as float64 arrays."""
    lib.manual_seed(seed)
    t = lib.tensor(x.copy(), dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, lib.nn.functional, t)
    (out * out).sum().backward()
    return out.detach().numpy().astype(np.float64), t.grad.numpy().astype(np.float64)
