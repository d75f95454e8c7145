"""``gradstack.utils.checkpoint``: activation checkpointing (``checkpoint``,
``checkpoint_sequential``, ``CheckpointError``, ``CheckpointFunction``,
``check_backward_validity``, ``detach_variable``, ``noop_context_fn``,
``set_checkpoint_debug_enabled``, ``set_checkpoint_early_stop``, ``GraphExecGroup``) from
gradstack-graph-engine's ``gradstack_autograd.checkpoint``, and selective checkpointing
(``CheckpointPolicy``, ``SelectiveCheckpointContext``,
``create_selective_checkpoint_contexts``, ``SAC_IGNORED_OPS``) from its
``gradstack_autograd.selective_checkpoint``."""

from gradstack_autograd import checkpoint as _checkpoint
from gradstack_autograd import selective_checkpoint as _selective
from gradstack_autograd.checkpoint import *  # noqa: F403
from gradstack_autograd.selective_checkpoint import *  # noqa: F403

__all__ = [*_checkpoint.__all__, *_selective.__all__]
