"""``functional_call`` and ``stack_module_state``: a module's forward with other tensors.

functional-api sits below nn-mini, so it does not import ``Module``: a module here is
anything with torch's module surface, ``named_parameters``/``named_buffers``
(``remove_duplicate=`` accepted), ``get_submodule`` (or attribute access by dotted path)
and the ``_parameters``/``_buffers`` dicts that torch's own reparametrization swaps
(``torch.nn.utils._named_member_accessor``).  gradstack's ``nn.Module`` and torch's both
qualify.

Note [Swapping module state]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For the call, each given name's entry in its owner's ``_parameters``/``_buffers`` dict is
replaced by the given tensor (a plain tensor may stand where a Parameter was, as in
torch), and restored afterwards even when the forward raises.  ``setattr`` is not used:
``Module.__setattr__`` refuses a plain tensor in a parameter's place.  A name that is
neither is set as a plain attribute for the call.  With ``tie_weights`` (the default),
every name under which the *same* tensor is registered gets the new value.

Examples
--------
>>> import gradstack_tensor as gt
>>> class Scale:                                  # any object with the module surface
...     def __init__(self):
...         self._parameters, self._buffers = {"w": gt.ones(2)}, {}
...     def named_parameters(self, remove_duplicate=True):
...         return iter(self._parameters.items())
...     def named_buffers(self, remove_duplicate=True):
...         return iter(())
...     def __call__(self, x):
...         return x * self._parameters["w"]
>>> functional_call(Scale(), {"w": gt.full((2,), 3.0)}, (gt.ones(2),)).tolist()
[3.0, 3.0]
"""

from __future__ import annotations

from collections import Counter

from gradstack_tensor import Tensor, stack

__all__ = ["functional_call", "stack_module_state"]


def _owner(module, dotted: str):
    """``(submodule, attribute name)`` of a dotted name."""
    prefix, _, attr = dotted.rpartition(".")
    if not prefix:
        return module, attr
    get = getattr(module, "get_submodule", None)
    if get is not None:
        return get(prefix), attr
    mod = module
    for part in prefix.split("."):
        mod = getattr(mod, part)
    return mod, attr


def _named(module, method: str):
    fn = getattr(module, method, None)
    if fn is None:
        return []
    try:
        return list(fn(remove_duplicate=False))
    except TypeError:
        return list(fn())


def _tied_names(module, names) -> dict:
    """Every name of ``module``'s state whose tensor is also registered under a name in
    ``names``: ``{other name: given name}``."""
    groups: dict = {}
    for name, t in _named(module, "named_parameters") + _named(module, "named_buffers"):
        if t is not None:
            groups.setdefault(id(t), []).append(name)
    tied = {}
    for members in groups.values():
        given = [n for n in members if n in names]
        for n in members:
            if n not in names and given:
                tied[n] = given[0]
    return tied


def _check_tied(module, values: dict) -> None:
    groups: dict = {}
    for name, t in _named(module, "named_parameters") + _named(module, "named_buffers"):
        if t is not None:
            groups.setdefault(id(t), []).append(name)
    for members in groups.values():
        given = [n for n in members if n in values]
        for n in given[1:]:
            if values[n] is not values[given[0]]:
                raise ValueError(
                    f"functional_call got multiple values for keys {given}, which are tied. "
                    "Consider using tie_weights=False"
                )


def _swap(module, name: str, value):
    """Put ``value`` under ``name``; return the undo (Note [Swapping module state])."""
    owner, attr = _owner(module, name)
    for store_name in ("_parameters", "_buffers"):
        store = getattr(owner, store_name, None)
        if isinstance(store, dict) and attr in store:
            old = store[attr]
            store[attr] = value

            def undo(store=store, attr=attr, old=old):
                store[attr] = old

            return undo
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)

    def undo_attr():
        if old is missing:
            object.__delattr__(owner, attr)
        else:
            object.__setattr__(owner, attr, old)

    return undo_attr


def functional_call(
    module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False
):
    """Call ``module`` with its parameters and buffers replaced by the given tensors
    (torch.func.functional_call); the module itself is unchanged afterwards.

    Parameters
    ----------
    module : Module
        Anything with torch's module surface (module docstring).
    parameter_and_buffer_dicts : dict or tuple of dicts
        Dotted name -> tensor; several dicts must not repeat a key.
    args : tuple or a single value, optional
        Positional arguments of the call (a non-tuple is one argument).
    kwargs : dict, optional
        Keyword arguments of the call.
    tie_weights : bool
        A tensor registered under several names takes the given value under all of them.
    strict : bool
        The given names must be exactly the module's parameters and buffers.

    Examples
    --------
    See the module docstring; with ``vmap`` over stacked state (``stack_module_state``)
    it runs an ensemble of models at once.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        counts = Counter(k for d in parameter_and_buffer_dicts for k in d)
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(
                f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                "ambiguous"
            )
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but "
            f"got {type(parameter_and_buffer_dicts)}"
        )
    if strict:
        known = [n for n, _ in _named(module, "named_parameters")]
        known += [n for n, _ in _named(module, "named_buffers")]
        missing = [n for n in known if n not in values]
        unexpected = [n for n in values if n not in known]
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError(
                f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(lines)
            )
    if tie_weights:
        _check_tied(module, values)
        for other, given in _tied_names(module, values).items():
            values[other] = values[given]
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = {} if kwargs is None else kwargs
    undos = []
    try:
        for name, value in values.items():
            undos.append(_swap(module, name, value))
        return module(*args, **kwargs)
    finally:
        for undo in reversed(undos):
            undo()


def _stacked_leaf(tensors, name: str) -> Tensor:
    all_rg = all(t.requires_grad for t in tensors)
    none_rg = not any(t.requires_grad for t in tensors)
    if not all_rg and not none_rg:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([t.detach() for t in tensors])
    if all_rg:
        result = result.requires_grad_()
    return result


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each model's parameters and buffers stacked along a new
    dim 0, by name (torch.func.stack_module_state); stacked parameters are new leaves that
    require grad when the models' do.

    Examples
    --------
    ``params, buffers = stack_module_state(models)`` then
    ``vmap(lambda p, b, x: functional_call(model, (p, b), (x,)), in_dims=(0, 0, None))``.
    """
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers
