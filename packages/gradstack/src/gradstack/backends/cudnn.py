"""``gradstack.backends.cudnn``: cuDNN's flags, for scripts that set them; no cuDNN here."""

from __future__ import annotations

__all__ = ["is_available", "version", "enabled", "benchmark", "deterministic", "allow_tf32"]

enabled = True  # torch's defaults, kept so that scripts read back what they set
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: gradstack does not use cuDNN."""
    return False


def version():
    """None: no cuDNN library is loaded (as torch without CUDA)."""
    return None
