"""``gradstack.backends.mps``: Apple's Metal backend; gradstack has none."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: gradstack has no MPS backend."""
    return False


def is_built() -> bool:
    """False: gradstack is not built with MPS."""
    return False
