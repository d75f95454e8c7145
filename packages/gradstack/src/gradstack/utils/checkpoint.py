"""``gradstack.utils.checkpoint``: activation checkpointing (``checkpoint``,
``checkpoint_sequential``, ``CheckpointError``, ``CheckpointFunction``,
``check_backward_validity``, ``detach_variable``, ``noop_context_fn``,
``set_checkpoint_debug_enabled``, ``set_checkpoint_early_stop``, ``GraphExecGroup``) from
gradstack-graph-engine's ``gradstack_autograd.checkpoint``, and selective checkpointing
(``CheckpointPolicy``, ``SelectiveCheckpointContext``,
``create_selective_checkpoint_contexts``, ``SAC_IGNORED_OPS``) from its
``gradstack_autograd.selective_checkpoint``."""

from gradstack_autograd.checkpoint import (
    CheckpointError,
    CheckpointFunction,
    GraphExecGroup,
    check_backward_validity,
    checkpoint,
    checkpoint_sequential,
    detach_variable,
    noop_context_fn,
    set_checkpoint_debug_enabled,
    set_checkpoint_early_stop,
)
from gradstack_autograd.selective_checkpoint import (
    SAC_IGNORED_OPS,
    CheckpointPolicy,
    SelectiveCheckpointContext,
    create_selective_checkpoint_contexts,
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
    "GraphExecGroup",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "create_selective_checkpoint_contexts",
    "SAC_IGNORED_OPS",
]
