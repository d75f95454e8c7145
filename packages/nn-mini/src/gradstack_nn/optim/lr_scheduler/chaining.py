"""Schedules of schedules: ``SequentialLR`` (one after the other, switching at
milestones) and ``ChainedScheduler`` (all at once, each step)."""

from __future__ import annotations

from bisect import bisect_right

from ..optimizer import Optimizer
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler, _group_values, _set_group_value

__all__ = ["SequentialLR", "ChainedScheduler"]


def _check_schedulers(owner: str, optimizer, schedulers) -> None:
    for scheduler_idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(
                f"{owner} at index {scheduler_idx} should have `optimizer` as its attribute."
            )
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{scheduler_idx} in the given schedulers sequence."
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {scheduler.__class__.__name__} at index {scheduler_idx} has "
                f"{scheduler.optimizer}, which is different from "
                f"{optimizer.__class__.__name__}."
            )


def _nested_state_dict(scheduler) -> dict:
    state = {
        key: value
        for key, value in scheduler.__dict__.items()
        if key not in ("optimizer", "_schedulers")
    }
    state["_schedulers"] = [s.state_dict() for s in scheduler._schedulers]
    return state


def _load_nested_state_dict(scheduler, state_dict: dict) -> None:
    state = dict(state_dict)
    schedulers = state.pop("_schedulers")
    scheduler.__dict__.update(state)
    for idx, s in enumerate(schedulers):
        scheduler._schedulers[idx].load_state_dict(s)


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after the other, switching at each epoch of ``milestones``
    (each scheduler starts from its own epoch 0 there).

    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> from gradstack_nn.optim import SGD
    >>> from gradstack_nn.optim.lr_scheduler import ConstantLR, ExponentialLR
    >>> opt = SGD([Parameter(gt.zeros(1))], lr=1.0)
    >>> warmup = ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer: Optimizer, schedulers, milestones, last_epoch: int = -1) -> None:
        owner = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(owner, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Note [SequentialLR undoes its schedulers' first steps]: each scheduler stepped
        # once when it was built; torch resets lr to initial_lr, steps every scheduler
        # back by one epoch and re-runs the first one's initial step.
        for group in self.optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Step back every (nested) scheduler's ``last_epoch`` by one."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        """Advance one epoch, in the scheduler of the current milestone interval."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict:
        """Every attribute but the optimiser, the schedulers as their state dicts."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict: dict) -> None:
        _load_nested_state_dict(self, state_dict)


class ChainedScheduler(LRScheduler):
    """Step several schedulers together (their changes to lr compose).

    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Parameter
    >>> from gradstack_nn.optim import SGD
    >>> from gradstack_nn.optim.lr_scheduler import ConstantLR, ExponentialLR
    >>> opt = SGD([Parameter(gt.zeros(1))], lr=1.0)
    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.5, total_iters=2),
    ...                           ExponentialLR(opt, gamma=0.9)])
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step()
    ...     sched.step()
    ...     lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.45, 0.81, 0.729]
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        owner = self.__class__.__name__
        if len(schedulers) < 1:
            raise ValueError(
                f"{owner} expects at least one scheduler to be chained, but got no scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(owner, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def state_dict(self) -> dict:
        """Every attribute but the optimiser, the schedulers as their state dicts."""
        return _nested_state_dict(self)

    def load_state_dict(self, state_dict: dict) -> None:
        _load_nested_state_dict(self, state_dict)
