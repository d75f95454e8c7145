"""``swap_in_optimizer_params_and_state``: run an optimiser on other parameters and state
for the length of a ``with`` block (torch 2.13's ``torch.optim``'s, from its
``_stateless.py``): its checks, its words and its restoring on exit.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Parameter
>>> from gradstack_nn.optim import SGD
>>> w = Parameter(gt.tensor([1.0]))
>>> opt = SGD([w], lr=0.5, momentum=0.9)
>>> w.grad = gt.tensor([1.0]); opt.step()
>>> other = Parameter(gt.tensor([10.0])); other.grad = gt.tensor([2.0])
>>> with swap_in_optimizer_params_and_state(opt, {"w": other}, opt.state_dict()):
...     opt.step()
>>> other.item(), w.item()   # other stepped with w's momentum; w untouched
(8.550000190734863, 0.5)
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from typing import Any, NamedTuple

from gradstack_tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


class _GroupSwapinInfo(NamedTuple):
    live_group: dict[str, Any]
    swapin_group: dict[str, Any]
    swapin_params: list[Tensor]


def _validate_state_field(state: Any) -> dict[Any, Any]:
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to "
            "be a dict mapping packed parameter ids to per-param state dicts, "
            f"got {type(state).__name__}."
        )
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids."
        )
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_NAME} requires per-parameter optimizer state entries to be dictionaries."
        )
    return state


def _validate_param_groups_field(optimizer, param_groups: Any) -> list[dict[str, Any]]:
    if not isinstance(param_groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] "
            f"to be a list of param-group dicts, got {type(param_groups).__name__}."
        )
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError(
            "swapin_optim_state has a different number of parameter groups than the live optimizer."
        )
    return param_groups


def _validate_group_against_live(idx: int, group: dict, swapin_group: Any) -> list[int]:
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    swapin_param_ids = swapin_group.get("params")
    if not isinstance(swapin_param_ids, list) or not all(
        isinstance(pid, int) for pid in swapin_param_ids
    ):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style "
            "param_groups[*]['params'] entries keyed by packed parameter ids."
        )
    if len(group["params"]) != len(swapin_param_ids):
        raise RuntimeError(
            f"swapin_optim_state param group {idx} has a different number of "
            "params than the live optimizer param group."
        )
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style "
            "param group keys to exactly match the live optimizer group keys for "
            f"group {idx}. "
            f"Keys only in swap-in: {swapin_only}. Keys only in live: {live_only}."
        )
    return swapin_param_ids


def _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state):
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    swapin_state = _validate_state_field(swapin_optim_state.get("state"))
    swapin_param_groups = _validate_param_groups_field(
        optimizer, swapin_optim_state.get("param_groups")
    )
    # the explicit tensors are aligned with optimizer.param_groups by order
    flat_parameters = list(swapin_parameters.values())
    offset = 0
    seen_param_ids: set[int] = set()
    infos = []
    for idx, (group, swapin_group) in enumerate(
        zip(optimizer.param_groups, swapin_param_groups, strict=True)
    ):
        ids = _validate_group_against_live(idx, group, swapin_group)
        seen_param_ids.update(ids)
        next_offset = offset + len(ids)
        if next_offset > len(flat_parameters):
            raise RuntimeError(
                f"{_NAME} requires the explicit parameter state to "
                "match optimizer.param_groups ordering."
            )
        infos.append(_GroupSwapinInfo(group, swapin_group, flat_parameters[offset:next_offset]))
        offset = next_offset
    extra_keys = [k for k in swapin_state if k not in seen_param_ids]
    if extra_keys:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to "
            "be keyed only by packed parameter ids from "
            f"param_groups[*]['params']; got extra keys {extra_keys!r}."
        )
    return swapin_state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Replace ``optimizer``'s parameters and state with ``swapin_parameters`` and
    ``swapin_optim_state`` inside the block, and restore them on exit.

    Parameters
    ----------
    optimizer : Optimizer
        Its state must be initialised (a step taken).
    swapin_parameters : dict of str to Tensor
        The parameters to step in the block, in the order of the optimiser's parameters.
    swapin_optim_state : dict
        ``optimizer.state_dict()``-shaped: ``"state"`` keyed by packed parameter ids,
        ``"param_groups"`` matching the optimiser's groups key for key.  In-place edits of
        its tensors (momentum buffers ...) are the block's only effect on it.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> from gradstack_nn.optim import Adam
    >>> w = Parameter(gt.ones(2)); opt = Adam([w]); w.grad = gt.ones(2); opt.step()
    >>> with swap_in_optimizer_params_and_state(opt, {"w": Parameter(gt.ones(2))}, {}):
    ...     pass
    Traceback (most recent call last):
    ...
    RuntimeError: swap_in_optimizer_params_and_state requires swapin_optim_state['state'] to be a dict mapping packed parameter ids to per-param state dicts, got NoneType.
    """  # noqa: E501
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    original_group_snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapin_state: defaultdict = defaultdict(dict)
        for info in infos:
            info.live_group["params"] = info.swapin_params
            for key, value in info.swapin_group.items():
                if key != "params":
                    info.live_group[key] = value
            for swapin_param, param_id in zip(
                info.swapin_params, info.swapin_group["params"], strict=True
            ):
                # a shallow copy: in-place tensor updates reach the caller's state dict,
                # structural changes stay local
                swapin_state[swapin_param] = dict(state.get(param_id, {}))
        optimizer.state = swapin_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, original_group_snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
