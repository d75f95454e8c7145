"""The differentiation transforms of ``torch.func``: grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian.

Each transform opens a level (``_levels``), runs the function on differentiable aliases
of its inputs and differentiates with graph-engine's reverse mode (``autograd.grad``) or
forward mode (``forward_ad``).  They compose with ``vmap`` and with each other
(``vmap(grad(f))``, ``jacrev(jacrev(f))``, ``jacfwd(jacrev(f))``).

Note [Transforms on physical tensors]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
vmap's layer sits above autograd (Note [Layer above autograd]): a batched tensor is never
part of a graph, its *physical* value is.  So a transform unwraps every input to its
physical value, makes a differentiable alias of that (a fresh leaf, or a view when an
outer level differentiates the input too), re-wraps it at the same vmap levels and calls
the function.  The function's batched output is unwrapped again and the engine
differentiates physical tensor against physical tensor; the gradients are wrapped at the
inputs' levels.  Samples of a batch never mix in a batching rule, so the gradient of the
sum of per-sample outputs is the batch of per-sample gradients.  An input that an open
vmap does not batch (``in_dims=None``: the parameters in per-sample gradients) is first
broadcast to every open vmap level (a view), so its gradient is per sample too.

A cotangent or tangent may be batched at a vmap level its primal is not (``vmap(vjp_fn)``
in ``jacrev``, ``vmap(jvp)`` in ``jacfwd``).  For ``vjp`` those extra levels become the
leading dim of one ``is_grads_batched`` backward pass; for ``jvp`` the primal is
broadcast to the tangent's levels before ``make_dual``.

Note [When a transform keeps the graph]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A transform builds a differentiable result (``create_graph=True``) only when something
outside can differentiate it: an enclosing ``grad``/``vjp``/``jvp`` level is open, or an
input (or cotangent) requires grad, with grad mode on.  Otherwise results are detached:
they do not require grad, as torch.func's do not.  Unlike torch, a tensor that ``f``
*captures* (a closure) and that requires grad is not differentiable through the result
unless one of those conditions holds (the result then does not require grad, so a
backward through it raises rather than returning wrong numbers).

Examples
--------
>>> import gradstack_tensor as gt
>>> x = gt.tensor([1.0, 2.0, 3.0])
>>> grad(lambda x: (x ** 2).sum())(x).tolist()
[2.0, 4.0, 6.0]
>>> jacrev(lambda x: x.sin())(gt.zeros(2)).tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import functools
import math

import gradstack_autograd as autograd
import gradstack_tensor as gt
from gradstack_autograd import enable_grad, forward_ad, is_grad_enabled
from gradstack_tensor import Tensor

from . import _levels, batching_layer
from ._physical import expand_levels, layout_of, to_layout
from .batched_tensor import flatten_levels, nest
from .pytree import tree_flatten, tree_unflatten, treespec_pprint
from .vmap import _check_randomness, vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

# -------------------------------------------------------------------------------------
# argnums (torch's checks and messages)


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int) or isinstance(argnum, bool):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _check_argnums(argnums, num_args: int):
    """``argnums`` wrapped to non-negative ints (an int or a tuple of them)."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return _wrap_argnum(argnums, num_args)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(a, num_args) for a in argnums)
    if len(wrapped) == 0:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def _slice_argnums(args, argnums):
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def _replace_args(args, argnums, new):
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    by_pos = dict(zip(argnums, new))
    return tuple(by_pos.get(i, a) for i, a in enumerate(args))


# -------------------------------------------------------------------------------------
# physical helpers (Note [Transforms on physical tensors])


def _open_vmap_levels() -> list:
    return [(lv.number, lv.batch_size) for lv in _levels.vmap_levels()]


def _outer_wants_graph(tensors) -> bool:
    """Note [When a transform keeps the graph]."""
    if not is_grad_enabled():
        return False
    if _levels.any_open("grad") or _levels.any_open("jvp"):
        return True
    return any(flatten_levels(t)[0].requires_grad for t in tensors)


def _differentiable_alias(phys: Tensor, create: bool) -> Tensor:
    """A tensor equal to ``phys`` that the engine can differentiate against, keeping the
    outer levels' dependence (reverse mode: a view; forward mode: the tangent)."""
    if create and phys.requires_grad:
        return phys.view_as(phys)
    dual_levels = _levels.dual_levels()
    if not dual_levels:
        return phys.detach().requires_grad_(True)
    # a fresh leaf carrying the tangent of every open jvp level, outermost first (each
    # inner tangent keeps its own outer tangents: Note [Nested levels] in forward_ad)
    tangents = [(k, forward_ad.unpack_dual(phys, level=k).tangent) for k in dual_levels]
    alias = phys.detach().requires_grad_(True)
    for k, tangent in tangents:
        if tangent is None:
            continue
        if tangent.dim() > alias.dim():  # jacfwd's batch of tangents
            alias = forward_ad.make_batched_dual(alias, tangent, level=k)
        else:
            alias = forward_ad.make_dual(alias, tangent, level=k)
    return alias


def _enter(flat_inputs, api: str, create: bool):
    """Differentiable physical aliases of ``flat_inputs`` and their batched views."""
    levels = _open_vmap_levels()
    inners, dims_list, wrapped = [], [], []
    for x in flat_inputs:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        if not (x.is_floating_point() or x.is_complex()):
            raise RuntimeError(
                f"{api}: only Tensors of floating point dtype can be differentiated, got an "
                f"input of dtype {x.dtype}"
            )
        phys, dims = flatten_levels(x)
        phys, dims = expand_levels(phys, dims, levels)
        inner = _differentiable_alias(phys, create)
        inners.append(inner)
        dims_list.append(dims)
        wrapped.append(nest(inner, dims))
    return inners, dims_list, wrapped


def _zeros_for(inner: Tensor, lead: tuple = ()) -> Tensor:
    return gt.zeros(lead + tuple(inner.shape), dtype=inner.dtype)


def _engine_grad(outs, cots, inners, create: bool, batched: bool, lead: tuple = ()):
    """``autograd.grad`` of physical ``outs`` (cotangents ``cots``) against ``inners``;
    zeros for inputs the outputs do not depend on (torch.func's convention)."""
    pairs = [(o, c) for o, c in zip(outs, cots) if o.requires_grad]
    if not pairs:
        return [_zeros_for(i, lead) for i in inners]
    grads = autograd.grad(
        [o for o, _ in pairs],
        inners,
        [c for _, c in pairs],
        retain_graph=True,
        create_graph=create,
        allow_unused=True,
        is_grads_batched=batched,
    )
    return [_zeros_for(i, lead) if g is None else g for g, i in zip(grads, inners)]


def _detach(x):
    if not isinstance(x, Tensor):
        return x
    phys, dims = flatten_levels(x)
    return nest(phys.detach(), dims)


def _detach_tree(tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_detach(x) for x in leaves], spec)


def _check_aux(aux) -> None:
    """torch.func returns only tensors as aux (its unwrapping refuses anything else)."""
    for x in tree_flatten(aux)[0]:
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")


class _open_level:
    def __init__(self, kind: str):
        self.kind = kind

    def __enter__(self):
        self.level = _levels.push(_levels.Level(self.kind))
        return self.level

    def __exit__(self, *exc):
        _levels.pop(self.level)


# -------------------------------------------------------------------------------------
# grad, grad_and_value


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a function returning a scalar (torch.func.grad_and_value).

    Parameters
    ----------
    func : callable
        Returns a 0-d tensor (and an auxiliary pytree when ``has_aux``).
    argnums : int or tuple of ints
        Which positional arguments to differentiate (each a pytree of floating tensors).
    has_aux : bool
        ``func`` returns ``(output, aux)``; aux is returned as it is (detached).

    Returns
    -------
    callable
        Returns ``(grad, value)`` or ``((grad, value), aux)`` when ``has_aux``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> g, v = grad_and_value(lambda x: (x * x).sum())(gt.tensor([3.0]))
    >>> g.tolist(), v.item()
    ([6.0], 9.0)
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        diff_args = _slice_argnums(args, nums)
        flat, spec = tree_flatten(diff_args)
        create = _outer_wants_graph([t for t in flat if isinstance(t, Tensor)])
        with _open_level("grad"), enable_grad():
            inners, dims_list, wrapped = _enter(flat, "grad_and_value(f)(*args)", create)
            new_args = _replace_args(args, nums, tree_unflatten(wrapped, spec))
            output = func(*new_args, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True"
                    )
                output, aux = output
                _check_aux(aux)
            if not isinstance(output, Tensor):
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got "
                    f"{type(output)}"
                )
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, "
                    f"got tensor with {output.dim()} dims. Maybe you wanted to use the vjp or "
                    "jacrev APIs instead?"
                )
            out_phys, _ = flatten_levels(output)
            grads = _engine_grad(
                [out_phys], [gt.ones_like(out_phys)], inners, create, batched=False
            )
        grads = tree_unflatten([nest(g, d) for g, d in zip(grads, dims_list)], spec)
        if not create:
            output, aux = _detach(output), _detach_tree(aux)
        if has_aux:
            return (grads, (output, aux))
        return grads, output

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a function returning a scalar (torch.func.grad).

    Same arguments as :func:`grad_and_value`; returns the gradient (and aux when
    ``has_aux``: ``(grad, aux)``).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> grad(grad(lambda x: x.sin()))(gt.tensor(0.0)).item()
    -0.0
    """

    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        results = inner(*args, **kwargs)
        if has_aux:
            g, (_, aux) = results
            return g, aux
        return results[0]

    return wrapper


# -------------------------------------------------------------------------------------
# vjp


def _check_outputs(flat_out, api: str):
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)``: ``vjp_fn(cotangents)`` gives the vector-Jacobian
    products, one per primal (torch.func.vjp).

    ``vjp_fn`` may be called many times and under ``vmap`` (a batch of cotangents: one
    batched backward pass).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> out, vjp_fn = vjp(lambda x: x * 3, gt.ones(2))
    >>> vjp_fn(gt.tensor([1.0, 2.0]))[0].tolist()
    [3.0, 6.0]
    """
    out_value, vjp_fn, aux, _ = _vjp(func, primals, has_aux)
    if has_aux:
        return out_value, vjp_fn, aux
    return out_value, vjp_fn


def _vjp(func, primals, has_aux):
    """vjp's work: ``(output, vjp_fn, aux, pull_identity)``; ``pull_identity`` is jacrev's
    direct batched pass (Note [jacrev without vmap])."""
    flat, spec = tree_flatten(primals)
    create = _outer_wants_graph([t for t in flat if isinstance(t, Tensor)])
    levels = _open_vmap_levels()
    with _open_level("grad"), enable_grad():
        inners, dims_list, wrapped = _enter(flat, "vjp(f, *primals)", create)
        output = func(*tree_unflatten(wrapped, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(
                    "vjp(f, *primals): output of function f should be a tuple: (output, aux) "
                    "if has_aux is True"
                )
            output, aux = output
            _check_aux(aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out, "vjp(f, *primals)")
        for o in flat_out:
            if not (o.is_floating_point() or o.is_complex()):
                raise RuntimeError(
                    "vjp(f, ...): All outputs of f must be floating-point or complex Tensors, "
                    f"got Tensor with dtype {o.dtype}"
                )
        # outputs broadcast to the levels the inputs have (Note [Transforms on physical
        # tensors]): every cotangent level beyond them is a new one
        outs = []
        for o in flat_out:
            ophys, odims = flatten_levels(o)
            outs.append(expand_levels(ophys, odims, levels))
    open_numbers = {n for n, _ in levels}

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        flat_c, c_spec = tree_flatten(cotangents)
        if c_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure "
                f"of outputs to the function. cotangents: {treespec_pprint(c_spec)}, primal "
                f"output: {treespec_pprint(out_spec)}"
            )
        flats = []
        for i, (c, o) in enumerate(zip(flat_c, flat_out)):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"vjp_fn: expected the cotangents to be Tensors, got {type(c)}")
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and "
                    f"output[{i}] has a shape of {o.shape}."
                )
            flats.append(flatten_levels(c))
        extra = []
        sizes = {lv: o.shape[d] for o, odims in outs for lv, d in odims.items()}
        for cphys, cdims in flats:
            for lv, d in cdims.items():
                sizes[lv] = cphys.shape[d]
                if lv not in open_numbers and lv not in extra:
                    extra.append(lv)
        extra.sort()
        lead = tuple(sizes[lv] for lv in extra)
        cots = []
        for (cphys, cdims), (ophys, odims) in zip(flats, outs):
            target = [("L", lv) for lv in extra] + layout_of(ophys, odims)
            cot = to_layout(cphys, cdims, target, sizes)
            if cot.dtype != ophys.dtype:
                cot = cot.to(ophys.dtype)
            if extra:
                cot = cot.reshape((math.prod(lead),) + tuple(ophys.shape))
            cots.append(cot)
        keep = create_graph
        if keep is None:
            keep = create or _outer_wants_graph(flat_c)
        with enable_grad():
            grads = _engine_grad(
                [o for o, _ in outs],
                cots,
                inners,
                bool(keep),
                batched=bool(extra),
                lead=(math.prod(lead),) if extra else (),
            )
        results = []
        for g, inner, dims in zip(grads, inners, dims_list):
            if extra:
                g = g.reshape(lead + tuple(inner.shape))
                dims = {lv: d + len(extra) for lv, d in dims.items()}
                dims.update({lv: k for k, lv in enumerate(extra)})
            if not keep:
                g = g.detach()
            results.append(nest(g, dims))
        return tuple(tree_unflatten(results, spec))

    def pull_identity(blocks):
        """Note [jacrev without vmap]: ``vmap(vjp_fn)(blocks)`` for unbatched cotangent
        blocks ``(N, *out.shape)`` (rows of the identity), as one batched backward pass."""
        n = blocks[0].shape[0]
        cots = []
        for b, (ophys, odims) in zip(blocks, outs):
            if odims:
                for d in sorted(odims.values()):  # the output's vmap dims, behind the lead
                    b = b.unsqueeze(d + 1)
                b = b.expand((n,) + tuple(ophys.shape))
            cots.append(b if b.dtype == ophys.dtype else b.to(ophys.dtype))
        with enable_grad():
            grads = _engine_grad([o for o, _ in outs], cots, inners, create, True, (n,))
        return [
            nest(g if create else g.detach(), {lv: d + 1 for lv, d in dims.items()})
            for g, dims in zip(grads, dims_list)
        ]

    out_value = output if create else _detach_tree(output)
    return out_value, vjp_fn, (aux if create else _detach_tree(aux)), pull_identity


# -------------------------------------------------------------------------------------
# jvp


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` in one forward pass (torch.func.jvp).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> out, t = jvp(lambda x: x * x, (gt.tensor([3.0]),), (gt.tensor([1.0]),))
    >>> out.tolist(), t.tolist()
    ([9.0], [6.0])
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {p_spec} and tangents with structure {t_spec}"
        )
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(
                f"{api}: Expected primals and tangents to have the same shape, got a primal of "
                f"shape {list(p.shape)} and a tangent of shape {list(t.shape)}"
            )
    # Note [Nested jvp levels]: the outermost jvp opens torch's one public dual level (so a
    # user's dual_level around or inside it raises torch's error); jvp inside jvp (jacfwd
    # of jacfwd) opens nested forward-AD levels, whose tangents the outer ones differentiate
    outer = _levels.any_open("jvp")
    keep = _outer_wants_graph(flat_p + flat_t)  # Note [When a transform keeps the graph]
    with _open_level("jvp") as level:
        dual_ctx = forward_ad.nested_dual_level() if outer else forward_ad.dual_level()
        with dual_ctx as dual_index:
            level.dual_level = dual_index
            result = _jvp_inside(func, flat_p, flat_t, p_spec, dual_index, strict, has_aux)
    return result if keep else _detach_tree(result)


def _jvp_inside(func, flat_p, flat_t, p_spec, dual_index, strict, has_aux):
    """jvp's work inside its open level (forward-AD level ``dual_index``)."""
    api = "jvp(f, primals, tangents)"
    duals = []
    for p, t in zip(flat_p, flat_t):
        pphys, pdims = flatten_levels(p)
        tphys, tdims = flatten_levels(t)
        sizes = {lv: pphys.shape[d] for lv, d in pdims.items()}
        sizes.update({lv: tphys.shape[d] for lv, d in tdims.items()})
        union = sorted(sizes)
        target = [("L", lv) for lv in union] + [("D", i) for i in range(p.dim())]
        pp = to_layout(pphys, pdims, target, sizes)
        tt = to_layout(tphys, tdims, target, sizes)
        dual = forward_ad.make_dual(pp, tt, level=dual_index)
        duals.append(nest(dual, {lv: k for k, lv in enumerate(union)}))
    output = func(*tree_unflatten(duals, p_spec))
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(
                f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
            )
        output, aux = output
        _check_aux(aux)
    flat_out, out_spec = tree_flatten(output)
    _check_outputs(flat_out, api)
    primals_out, tangents_out = [], []
    for o in flat_out:
        ophys, odims = flatten_levels(o)
        primal, tangent = forward_ad.unpack_dual(ophys, level=dual_index)
        if tangent is None:
            if strict:
                raise RuntimeError(
                    "jvp(f, primals, tangents, strict=True): The output of f is independent "
                    "of the inputs. This is not allowed with strict=True."
                )
            tangent = gt.zeros_like(primal)
        primals_out.append(nest(primal, odims))
        tangents_out.append(nest(tangent, odims))
    if has_aux:
        aux_leaves, aux_spec = tree_flatten(aux)
        aux = tree_unflatten([_primal_of(a, dual_index) for a in aux_leaves], aux_spec)
    result = (tree_unflatten(primals_out, out_spec), tree_unflatten(tangents_out, out_spec))
    return result + (aux,) if has_aux else result


def _primal_of(x, dual_index):
    if not isinstance(x, Tensor):
        return x
    phys, dims = flatten_levels(x)
    return nest(forward_ad.unpack_dual(phys, level=dual_index).primal, dims)


# -------------------------------------------------------------------------------------
# linearize


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian of ``func`` at
    ``primals`` applied to ``tangents`` (torch.func.linearize).

    Note [linearize without a graph capture]
    torch traces the tangent computation once (make_fx) and replays the traced graph on
    every call.  gradstack has no graph capture, so ``jvp_fn`` runs :func:`jvp` at the
    stored primals on each call: the same numbers (the tangent is linear in ``tangents``),
    and ``func`` runs once more per call, so a ``func`` with side effects or random draws
    sees them again.  ``jvp_fn`` checks its tangents as torch's does (structure, shape,
    dtype) and works under ``vmap``.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> out, jvp_fn = linearize(lambda x: x.sin(), gt.zeros(3))
    >>> jvp_fn(gt.ones(3)).tolist()
    [1.0, 1.0, 1.0]
    """
    output = func(*primals)
    flat_p, p_spec = tree_flatten(primals)
    for p in flat_p:
        if not isinstance(p, Tensor):
            raise RuntimeError(
                f"linearize: Expected primals to only contain Tensors, got {type(p)}"
            )
    shapes = [p.shape for p in flat_p]
    dtypes = [p.dtype for p in flat_p]

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}"
            )
        for idx, t in enumerate(flat_t):
            if not isinstance(t, Tensor):
                raise RuntimeError(
                    f"linearize: Expected tangents to only contain Tensors, got {type(t)}"
                )
            if tuple(t.shape) != tuple(shapes[idx]):
                raise RuntimeError(
                    f"tangent:{idx} with shape {t.shape} in flattened pytree doesn't match the "
                    f"shape {shapes[idx]} of the corresponding primal."
                )
            if t.dtype != dtypes[idx]:
                raise RuntimeError(
                    f"tangent:{idx} with dtype {t.dtype} in flattened pytree doesn't match "
                    f"the dtype {dtypes[idx]} of the corresponding primal."
                )
        return jvp(func, tuple(primals), tuple(tangents))[1]

    return output, jvp_fn


# -------------------------------------------------------------------------------------
# jacrev, jacfwd, hessian


def _basis(flat, n_total: int):
    """Rows of the identity of size ``n_total`` cut into one block per tensor of ``flat``,
    each reshaped to ``(n_total, *t.shape)``."""
    rows, off = [], 0
    for t in flat:
        n = t.numel()
        eye = gt.eye(n_total, dtype=t.dtype)
        block = eye if n == n_total else eye[:, off : off + n]
        shape = (n_total,) + tuple(t.shape)
        rows.append(block if tuple(block.shape) == shape else block.reshape(shape))
        off += n
    return rows


def _split_last(jo, flat_in, in_spec):
    """A Jacobian block ``(*out, N)`` split along its last dim into one ``(*out, *x.shape)``
    block per input ``x`` (the pytree of the inputs)."""
    lead = tuple(jo.shape[:-1])
    parts, off = [], 0
    for x in flat_in:
        n = x.numel()
        part = jo if n == jo.shape[-1] else jo.narrow(-1, off, n)
        shape = lead + tuple(x.shape)
        parts.append(part if tuple(part.shape) == shape else part.reshape(shape))
        off += n
    return tree_unflatten(parts, in_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` by reverse mode: ``vmap(vjp_fn)`` over the identity
    (torch.func.jacrev).  ``chunk_size`` bounds how many rows one backward pass computes.

    Note [jacrev without vmap]
    ``vmap(vjp_fn)`` over the identity ends in one batched backward pass (the cotangents'
    vmap level becomes the leading dim of ``autograd.grad(is_grads_batched=True)``).
    Without ``chunk_size``, jacrev builds that pass directly (``_vjp``'s ``pull_identity``):
    the same numbers without vmap's wrapping, unwrapping and pytree walks, which cost
    more than the backward itself on small functions.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> jacrev(lambda x, y: x * y, argnums=(0, 1))(gt.ones(2), gt.full((2,), 3.0))[1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        diff = _slice_argnums(args, nums)
        flat_in, in_spec = tree_flatten(diff)

        def flat_func(*flat_primals):
            new = _replace_args(args, nums, tree_unflatten(list(flat_primals), in_spec))
            return func(*new, **kwargs)

        output, vjp_fn, aux, pull_identity = _vjp(flat_func, tuple(flat_in), has_aux)
        flat_out, out_spec = tree_flatten(output)
        _check_outputs(flat_out, "jacrev(f, ...)(*args)")
        n_total = sum(o.numel() for o in flat_out)
        blocks = _basis(flat_out, n_total)
        if chunk_size is None and n_total > 0:  # Note [jacrev without vmap]
            flat_jac = pull_identity(blocks)
        else:
            basis = tree_unflatten(blocks, out_spec)
            flat_jac = vmap(vjp_fn, chunk_size=chunk_size)(basis)  # per input: (N, *in)
        per_out, off = [], 0
        for o in flat_out:
            n = o.numel()
            row = []
            for j, x in zip(flat_jac, flat_in):
                part = j if n == n_total else j.narrow(0, off, n)
                shape = tuple(o.shape) + tuple(x.shape)
                row.append(part if tuple(part.shape) == shape else part.reshape(shape))
            per_out.append(tree_unflatten(row, in_spec))
            off += n
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            return jac, aux
        return jac

    return wrapper


def _first_dim_last(t: Tensor) -> Tensor:
    n = t.dim()
    return t.permute(tuple(range(1, n)) + (0,)) if n > 1 else t


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode (torch.func.jacfwd): one forward pass whose
    inputs carry every row of the identity as a batch of tangents.

    Note [jacfwd by batched tangents]
    torch computes ``vmap(jvp)`` over the identity; its dual tensors keep the primal
    unbatched and only the tangent batched.  gradstack's vmap batches a tensor as a whole,
    so ``vmap(jvp)`` would broadcast the primal to the batch and compute ``func``'s value
    once per direction.  jacfwd instead attaches the identity as *batched tangents*
    (``forward_ad.make_batched_dual``, Note [Batched tangents] in forward_ad): the primal
    is computed once, the tangents carry one extra leading dim.  This is exact because
    nothing inside ``func`` can be batched over the directions but the tangents (the
    directions' vmap level belongs to jacfwd).  A level of kind ``"jacfwd"`` stays open
    for the ``randomness`` flag: random draws inside ``func`` raise under ``"error"`` and
    are shared by all directions under ``"same"``, as under torch's vmap.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> jacfwd(lambda x: x.exp())(gt.zeros(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_randomness(randomness)
        nums = _check_argnums(argnums, len(args))
        diff = _slice_argnums(args, nums)
        flat_in, in_spec = tree_flatten(diff)
        for x in flat_in:
            if not isinstance(x, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        n_total = sum(x.numel() for x in flat_in)
        basis = _basis(flat_in, n_total)

        def flat_func(*flat_primals):
            new = _replace_args(args, nums, tree_unflatten(list(flat_primals), in_spec))
            return func(*new, **kwargs)

        outer = _levels.any_open("jvp")
        keep = _outer_wants_graph(flat_in)  # Note [When a transform keeps the graph]
        random_level = _levels.Level("jacfwd", n_total, randomness)
        _levels.push(random_level)
        try:
            with batching_layer.draws_checked(), _open_level("jvp") as level:
                dual_ctx = forward_ad.nested_dual_level() if outer else forward_ad.dual_level()
                with dual_ctx as dual_index:
                    level.dual_level = dual_index
                    results, aux = _batched_jvp(flat_func, flat_in, basis, dual_index, has_aux)
        finally:
            _levels.pop(random_level)
        if not keep:
            results, aux = _detach_tree(results), _detach_tree(aux)
        flat_out, out_spec = tree_flatten(results)
        per_out = [_split_last(_first_dim_last(jo), flat_in, in_spec) for jo in flat_out]
        jac = tree_unflatten(per_out, out_spec)
        if has_aux:
            return jac, aux
        return jac

    return wrapper


def _batched_jvp(flat_func, flat_in, basis, dual_index, has_aux):
    """``flat_func``'s output tangents for a batch of input tangents (``basis``: one
    ``(N, *x.shape)`` block per input), each ``(N, *out.shape)``; and the aux."""
    api = "jvp(f, primals, tangents)"
    duals = []
    for x, b in zip(flat_in, basis):
        phys, dims = flatten_levels(x)
        t = b
        if dims:
            for d in sorted(dims.values()):  # the primal's vmap dims, behind the lead dim
                t = t.unsqueeze(d + 1)
            t = t.expand((b.shape[0],) + tuple(phys.shape))
        duals.append(nest(forward_ad.make_batched_dual(phys, t, level=dual_index), dims))
    output = flat_func(*duals)
    aux = None
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(
                f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
            )
        output, aux = output
        _check_aux(aux)
        aux_leaves, aux_spec = tree_flatten(aux)
        aux = tree_unflatten([_primal_of(a, dual_index) for a in aux_leaves], aux_spec)
    flat_out, out_spec = tree_flatten(output)
    _check_outputs(flat_out, api)
    n = basis[0].shape[0] if basis else 0
    tangents_out = []
    for o in flat_out:
        ophys, odims = flatten_levels(o)
        tangent = forward_ad.unpack_dual(ophys, level=dual_index).tangent
        if tangent is None:
            tangent = gt.zeros((n,) + tuple(ophys.shape), dtype=ophys.dtype)
        tangents_out.append(nest(tangent, {lv: d + 1 for lv, d in odims.items()}))
    return tree_unflatten(tangents_out, out_spec), aux


def hessian(func, argnums=0):
    """The Hessian of a scalar function: ``jacfwd(jacrev(func))`` (torch.func.hessian).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> hessian(lambda x: (x ** 3).sum())(gt.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(func, argnums), argnums)
