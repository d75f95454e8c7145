"""``vmap``: map a function over a dim of its inputs, pushing the loop into the ops.

``vmap(f, in_dims, out_dims, randomness, chunk_size=)(*args, **kwargs)`` opens a vmap
level, wraps each input mapped by ``in_dims`` in a batched tensor of that level (one
sample, as ``f`` sees it), runs ``f`` once, and turns every output back into a plain
tensor with the batch dim at its ``out_dims`` position.  The ops ``f`` calls run on the
whole batch through their batching rules (``batching_layer``; the rules are in the ops'
entries of graph-engine's derivative table, ``gradstack_autograd.derivatives``).
Arguments, ``in_dims`` and ``out_dims`` follow torch's pytree rules (``pytree``);
keyword arguments are passed through unbatched.  The checks and error messages are
torch's (``torch/_functorch/vmap.py``).

Examples
--------
>>> import gradstack_tensor as gt
>>> x, y = gt.ones(3, 4), gt.ones(4)
>>> vmap(gt.dot, in_dims=(0, None))(x, y).tolist()
[4.0, 4.0, 4.0]
>>> vmap(lambda a: a.sum(), out_dims=0)(gt.ones(2, 5)).tolist()
[5.0, 5.0]
"""

from __future__ import annotations

import functools

import gradstack_tensor as gt
from gradstack_tensor import Tensor

from . import _levels
from .batched_tensor import BatchedTensor, check_alive, make_batched
from .batching_layer import active
from .pytree import broadcast_to_and_flatten, tree_flatten, tree_map, tree_unflatten

__all__ = ["vmap"]


def _get_name(func) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def _check_randomness(randomness) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )


def _check_out_dims(out_dims, func) -> None:
    def check(x):
        if x is None or (isinstance(x, int) and not isinstance(x, bool)):
            return x
        raise ValueError(
            f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
            "None or a python collection of ints representing where in the outputs the "
            "vmapped dimension should appear."
        )

    if isinstance(out_dims, int) and not isinstance(out_dims, bool):
        return
    tree_map(check, out_dims)


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int "
            "or a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if len(args) == 0:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is "
            "unsupported."
        )
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure "
            f"{tree_flatten(in_dims)[1]} but inputs has structure {spec}."
        )
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if in_dim is not None and (not isinstance(in_dim, int) or isinstance(in_dim, bool)):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                "input but in_dim must be either an integer dimension or None."
            )
        if isinstance(in_dim, int) and not isinstance(arg, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an "
                f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        if in_dim is not None and not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for "
                f"some input, but that input is a Tensor of dimensionality {arg.dim()} so "
                f"expected in_dim to satisfy -{arg.dim()} <= in_dim < {arg.dim()}."
            )
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    return sizes[0], flat_in_dims, flat_args, spec


def _unwrap_output(name, out, level, size, out_dim):
    if out_dim is None:
        if isinstance(out, Tensor) and type(out) is BatchedTensor and out._gs_level == level:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return out
    if not isinstance(out, Tensor):
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(out)}. "
            "Did you mean to set out_dims= to None for output?"
        )
    check_alive(out)
    if type(out) is BatchedTensor and out._gs_level == level:
        value, bdim = out._gs_value, out._gs_bdim
    else:  # the same for every sample: a broadcast view, as torch returns
        value = out.unsqueeze(0).expand((size,) + tuple(out.shape))
        bdim = 0
    n = value.dim()
    if not -n <= out_dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
            f"{out_dim})"
        )
    out_dim %= n
    if out_dim == bdim:
        return value
    order = [i for i in range(n) if i != bdim]
    order.insert(out_dim, bdim)
    return value.permute(tuple(order))


def _unwrap_outputs(outputs, out_dims, level, size, func):
    name = _get_name(func)
    flat, spec = tree_flatten(outputs)

    def incompatible():
        return ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
            f"with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}."
        )

    flat_dims: list | None
    if isinstance(outputs, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            raise incompatible()
    else:
        flat_dims = broadcast_to_and_flatten(out_dims, spec)
        if flat_dims is None:
            raise incompatible()
    return tree_unflatten(
        [_unwrap_output(name, o, level, size, d) for o, d in zip(flat, flat_dims)], spec
    )


def _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs):
    level = _levels.push(_levels.Level("vmap", size, randomness))
    try:
        with active():
            batched = [
                a if d is None else make_batched(a, d, level.number)
                for a, d in zip(flat_args, flat_in_dims)
            ]
            outputs = func(*tree_unflatten(batched, spec), **kwargs)
            return _unwrap_outputs(outputs, out_dims, level.number, size, func)
    finally:
        _levels.pop(level)


def _chunks(size, chunk_size):
    sizes = [chunk_size] * (size // chunk_size)
    if size % chunk_size:
        sizes.append(size % chunk_size)
    return sizes


def _chunked_vmap(
    func, size, flat_in_dims, flat_args, spec, out_dims, randomness, chunk_size, kwargs
):
    state = gt.get_rng_state() if randomness == "same" else None
    results = []
    start = 0
    for n in _chunks(size, chunk_size):
        chunk_args = [
            a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_in_dims)
        ]
        start += n
        if state is not None:
            gt.set_rng_state(state)
        results.append(
            _flat_vmap(func, n, flat_in_dims, chunk_args, spec, out_dims, randomness, kwargs)
        )
    flat_results = [tree_flatten(r) for r in results]
    out_spec = flat_results[0][1]
    flat_dims: list | None = (
        broadcast_to_and_flatten(out_dims, out_spec)
        if not isinstance(results[0], Tensor)
        else [out_dims if not isinstance(out_dims, tuple) else out_dims[0]]
    )
    if flat_dims is None:  # each chunk's outputs were already checked against out_dims
        raise AssertionError("vmap: out_dims do not match the outputs' structure")
    cat = []
    for k, d in enumerate(flat_dims):
        parts = [fr[0][k] for fr in flat_results]
        cat.append(parts[0] if d is None else gt.cat(parts, d))
    return tree_unflatten(cat, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dim of its inputs (torch.func.vmap).

    Parameters
    ----------
    func : callable
        Takes tensors (and other values) and returns tensors, or nests of them.
    in_dims : int, None or nested tuple
        The dim of each input to map over (None: not mapped), a prefix of the inputs'
        structure; default 0.
    out_dims : int, None or nested tuple
        Where the mapped dim goes in each output (None: the output must not depend on the
        batch); default 0.
    randomness : {"error", "different", "same"}
        What random ops inside ``func`` do: raise, draw per sample, or draw once.
    chunk_size : int, optional
        Map this many samples at a time (bounds memory; 1 is a plain loop).

    Returns
    -------
    callable
        Takes the same arguments as ``func``, each mapped input with the extra dim.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> batched_dot = vmap(gt.dot)           # [N, D], [N, D] -> [N]
    >>> batched_dot(gt.ones(2, 5), gt.ones(2, 5)).tolist()
    [5.0, 5.0]
    >>> vmap(vmap(gt.dot))(gt.ones(2, 3, 5), gt.ones(2, 3, 5)).shape
    gradstack.Size([2, 3])
    """
    _check_randomness(randomness)
    if not (chunk_size is None or (isinstance(chunk_size, int) and chunk_size > 0)):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        size, flat_in_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is not None and chunk_size < size:
            return _chunked_vmap(
                func, size, flat_in_dims, flat_args, spec, out_dims, randomness, chunk_size, kwargs
            )
        return _flat_vmap(func, size, flat_in_dims, flat_args, spec, out_dims, randomness, kwargs)

    return wrapped
