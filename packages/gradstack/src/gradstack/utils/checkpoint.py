"""``gradstack.utils.checkpoint``: activation checkpointing (``checkpoint``,
``checkpoint_sequential``, ``CheckpointError``, ``CheckpointFunction``,
``check_backward_validity``, ``detach_variable``, ``noop_context_fn``,
``set_checkpoint_debug_enabled``, ``set_checkpoint_early_stop``) from
gradstack-graph-engine's ``gradstack_autograd.checkpoint``."""

from gradstack_autograd.checkpoint import (
    CheckpointError,
    CheckpointFunction,
    check_backward_validity,
    checkpoint,
    checkpoint_sequential,
    detach_variable,
    noop_context_fn,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)

__all__ = [
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointError",
    "CheckpointFunction",
    "check_backward_validity",
    "detach_variable",
    "noop_context_fn",
    "set_checkpoint_debug_enabled",
    "set_checkpoint_early_stop",
]
