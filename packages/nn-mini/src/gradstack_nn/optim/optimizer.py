"""``Optimizer``: the base class of the optimisers (parameter groups, state, zero_grad and
state dicts), with torch's interface; and what the optimisers' modules share: the checks
of their arguments (``check_nonnegative``, ``check_betas``, ``check_flags``), and the loop
over a group's parameters that have a gradient, with their state created at the first step
(``params_with_state``; ``param_updates`` also counts ``step`` and negates the gradient
under ``maximize``) and weight decay (``with_weight_decay``)."""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

from ..zeroed_grads import has_grad, zero_grads

__all__ = [
    "Optimizer",
    "required",
    "check_flags",
    "check_nonnegative",
    "check_lr_eps_wd",
    "check_betas",
    "scalar",
    "lr_betas_eps",
    "has_grad",
    "params_with_state",
    "zeros_state",
    "param_updates",
    "with_weight_decay",
]


class _Required:
    """Marks a hyper-parameter without a default (it must be given per group)."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()


def scalar(value) -> float:
    """A hyper-parameter as a Python float (a 1-element tensor learning rate included)."""
    if isinstance(value, Tensor):
        return value.item()
    return value


def lr_betas_eps(group) -> tuple:
    """An Adam-style group's ``(lr, beta1, beta2, eps)``, a tensor ``lr`` or beta read as a
    Python number (:func:`scalar`)."""
    beta1, beta2 = (scalar(b) for b in group["betas"])
    return scalar(group["lr"]), beta1, beta2, group["eps"]


def check_flags(name: str, *, capturable: bool = False, differentiable: bool = False) -> None:
    """Refuse the options that need machinery gradstack's optimisers do not have."""
    if capturable:
        raise ValueError(
            f"{name}(capturable=True) is for CUDA graphs; gradstack runs on the CPU: leave "
            "capturable=False"
        )
    if differentiable:
        raise ValueError(
            f"{name}(differentiable=True) is not supported by gradstack (the step runs "
            "under no_grad)"
        )


_WHAT = {"lr": "learning rate", "eps": "epsilon value"}


def check_nonnegative(**values) -> None:
    """torch's check (ValueError, torch's words) that each hyper-parameter given is
    ``>= 0``, in the order given: ``Invalid learning rate: ...`` for ``lr`` (which may be a
    1-element tensor), ``Invalid epsilon value: ...`` for ``eps``, ``Invalid <name> value:
    ...`` for the others.

    >>> check_nonnegative(lr=0.1, momentum=-1)
    Traceback (most recent call last):
    ...
    ValueError: Invalid momentum value: -1
    """
    for name, value in values.items():
        if name == "lr" and isinstance(value, Tensor) and value.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_WHAT.get(name, name + ' value')}: {value}")


def check_lr_eps_wd(lr, eps, weight_decay) -> None:
    """torch's checks (ValueError, torch's words) of a learning rate (a number or a
    1-element tensor), an epsilon and a weight decay, in torch's order."""
    check_nonnegative(lr=lr, eps=eps, weight_decay=weight_decay)


def check_betas(betas) -> None:
    """torch's checks of Adam's ``betas``: each in ``[0, 1)``."""
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Optimizer:
    """Base class for optimisers.

    Parameters
    ----------
    params : iterable
        Tensors to optimise, ``(name, tensor)`` pairs, or dicts defining parameter
        groups (``{"params": [...], "lr": 0.1}``) whose options override ``defaults``.
    defaults : dict
        The default hyper-parameters of every group.

    Attributes
    ----------
    param_groups : list of dict
        The groups, each with its ``"params"`` list and its hyper-parameters.
    state : defaultdict(dict)
        Per-parameter state (momentum buffers ...), keyed by the parameter tensor.
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters (fine-tuning layers
        with different learning rates ...).  Missing options take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = []
        tensors = []
        for p in params:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                p = p[1]
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            tensors.append(p)
        if names and len(names) != len(tensors):
            raise ValueError(
                "all optimizer params should be with/without names. Some param names are missing"
            )
        group = dict(param_group)
        group["params"] = tensors
        if names:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error",
                stacklevel=3,
            )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """Reset the gradients of every optimised parameter: by default None reading as
        zeros, and skipped by ``step()`` until written again, as torch skips None (Note
        [Zeroed gradients count as None] in ``zeroed_grads.py``); ``set_to_none=False`` is
        a plain in-place zero, ``set_to_none=True`` sets None."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    def step(self, closure=None):
        """One update of every parameter that has a gradient: ``closure()`` (re-evaluating
        the model) under grad mode when given, then each group's update under no_grad
        (``_step_group``, which the built-in optimisers implement); returns the closure's
        loss."""
        loss = None
        if closure is not None:
            with ag.enable_grad():
                loss = closure()
        with ag.no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group) -> None:
        """Update one parameter group (subclasses implement it, or ``step`` itself)."""
        raise NotImplementedError

    # -- state dicts -------------------------------------------------------------------

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``.

        Parameters are replaced by their index in the order of the groups, as torch does,
        so a state dict can be loaded into an optimiser over a freshly built model.
        """
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a :meth:`state_dict` (hyper-parameters and per-parameter state); the
        groups must have the same sizes as this optimiser's."""
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old, p in zip(s["params"], g["params"]):
                id_map[old] = p
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k not in id_map:
                state[k] = copy.deepcopy(v)
                continue
            p = id_map[k]
            state[p] = {name: _cast_state(p, name, value) for name, value in v.items()}
        new_groups = []
        for g, s in zip(groups, saved_groups):
            new = {k: copy.deepcopy(v) for k, v in s.items() if k != "params"}
            new["params"] = g["params"]
            new_groups.append(new)
        self.state = state
        self.param_groups = new_groups

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)


def _cast_state(param: Tensor, name: str, value):
    """A copy of a loaded state value, cast to the parameter's dtype when it is a float
    tensor (``step`` counters stay as they are)."""
    if isinstance(value, Tensor):
        with ag.no_grad():
            if name != "step" and value.is_floating_point() and value.dtype != param.dtype:
                return value.to(param.dtype).contiguous()
            return value.detach().clone().contiguous()
    return copy.deepcopy(value)


def params_with_state(optimizer, group, init_state):
    """``(param, state)`` for each parameter of ``group`` that has a gradient (a None or
    zeroed ``.grad`` is skipped, as torch skips None), ``init_state(param, state)`` filling
    its empty state the first time, as torch creates the state at the first step."""
    for p in group["params"]:
        if not has_grad(p):
            continue
        state = optimizer.state[p]
        if len(state) == 0:
            init_state(p, state)
        yield p, state


def zeros_state(state_names):
    """An ``init_state`` for :func:`params_with_state`: ``step`` a float32 0-d tensor, each
    of ``state_names`` zeros of the parameter's shape (``mu_product`` a 0-d one)."""

    def init_state(p, state):
        state["step"] = gt.tensor(0.0)
        for name in state_names:
            state[name] = gt.tensor(1.0) if name == "mu_product" else gt.zeros_like(p)

    return init_state


def param_updates(optimizer, group, state_names):
    """``(param, state, grad)`` for each parameter of ``group`` that has a gradient: its
    state created the first time (``state_names`` a tuple: ``step`` a float32 0-d tensor,
    the others zeros of its shape, as :func:`zeros_state`; or a function ``(param, state)``
    filling it), ``step`` counted, the gradient negated under ``maximize``."""
    init_state = zeros_state(state_names) if isinstance(state_names, tuple) else state_names
    for p, state in params_with_state(optimizer, group, init_state):
        grad = -p.grad if group["maximize"] else p.grad
        state["step"].add_(1)
        yield p, state, grad


def real_views(*tensors):
    """``tensors`` with each complex one replaced by its ``view_as_real`` (None kept).

    Note [Complex parameters are stepped as real pairs]
    torch's optimizers step a complex parameter as the real tensor of its (real,
    imaginary) pairs: ``view_as_real`` of the parameter, its gradient and its state
    (torch's ``_single_tensor_*``), so that Adam's ``g * g`` is each part squared, not the
    complex square, and the state stays complex in ``state_dict``.  Optimizers whose step
    is not linear in the gradient (all but SGD) do the same through these views.
    """
    return tuple(gt.view_as_real(t) if t is not None and t.is_complex() else t for t in tensors)


def with_weight_decay(p, grad, group, lr):
    """``grad + weight_decay * p``, or with ``decoupled_weight_decay`` ``p`` decayed in
    place (``p *= 1 - lr * weight_decay``) and ``grad`` unchanged, as torch's."""
    weight_decay = group["weight_decay"]
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        p.mul_(1 - lr * weight_decay)
        return grad
    return grad.add(p, alpha=weight_decay)
