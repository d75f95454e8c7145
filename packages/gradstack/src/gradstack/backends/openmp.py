"""``gradstack.backends.openmp``: gradstack's kernels do not use OPENMP (numpy's BLAS does
the matrix products), so ``is_available()`` is False."""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    """False: gradstack does not use OPENMP."""
    return False
