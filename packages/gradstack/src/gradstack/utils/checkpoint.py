"""``gradstack.utils.checkpoint``: activation checkpointing (``checkpoint``,
``checkpoint_sequential``, ``CheckpointError``, ``detach_variable``) from
gradstack-graph-engine's ``gradstack_autograd.checkpoint``."""

from gradstack_autograd.checkpoint import (
    CheckpointError,
    checkpoint,
    checkpoint_sequential,
    detach_variable,
)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "detach_variable"]
