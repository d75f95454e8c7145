"""``gradstack.utils.checkpoint``: activation checkpointing (``checkpoint``,
``checkpoint_sequential``, ``CheckpointError``, ``CheckpointFunction``,
``check_backward_validity``, ``detach_variable``, ``noop_context_fn``,
``set_checkpoint_debug_enabled``, ``set_checkpoint_early_stop``) from
gradstack-graph-engine's ``gradstack_autograd.checkpoint``."""

from gradstack_autograd.checkpoint import *  # noqa: F403
from gradstack_autograd.checkpoint import __all__  # noqa: F401 - the same names
