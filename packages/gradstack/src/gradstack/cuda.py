"""``gradstack.cuda``: gradstack computes on the CPU, so CUDA is never available.

The functions that code written for torch calls to *probe* for a GPU answer as torch does
on a machine without one (``is_available()`` is False, ``device_count()`` is 0, seeding
is a no-op); the functions that need a GPU raise a clear ``RuntimeError``.

>>> import gradstack as torch
>>> torch.cuda.is_available(), torch.cuda.device_count()
(False, 0)
"""

from __future__ import annotations

import sys as _sys
import types as _types
import warnings as _warnings

from gradstack_tensor.grad_scaler import GradScaler as _GradScaler

__all__ = [
    "amp",
    "is_available",
    "device_count",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "synchronize",
    "empty_cache",
    "current_device",
    "get_device_name",
    "is_bf16_supported",
]

_NO_CUDA = (
    "gradstack has no CUDA backend (it computes on the CPU); "
    "gradstack.cuda.is_available() is always False"
)


def is_available() -> bool:
    """False: gradstack has no GPU backend."""
    return False


def device_count() -> int:
    """0: there are no CUDA devices."""
    return 0


def is_initialized() -> bool:
    """False: CUDA is never initialised."""
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False."""
    return False


def manual_seed(seed) -> None:
    """A no-op (torch also ignores it when CUDA is unavailable)."""


def manual_seed_all(seed) -> None:
    """A no-op."""


def seed() -> None:
    """A no-op."""


def seed_all() -> None:
    """A no-op."""


def synchronize(device=None) -> None:
    """A no-op: CPU work is synchronous."""


def empty_cache() -> None:
    """A no-op: there is no CUDA caching allocator."""


def current_device() -> int:
    """Raises: there is no CUDA device."""
    raise RuntimeError(_NO_CUDA)


def get_device_name(device=None) -> str:
    """Raises: there is no CUDA device."""
    raise RuntimeError(_NO_CUDA)


class _CudaGradScaler(_GradScaler):
    """``torch.cuda.amp.GradScaler``: the ``"cuda"`` scaler, deprecated as in torch; with no
    CUDA an enabled one warns and disables itself (Note [GradScaler on a CPU-only stack])."""

    def __init__(
        self,
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        _warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cuda', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(
            "cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled
        )


_CudaGradScaler.__name__ = _CudaGradScaler.__qualname__ = "GradScaler"

# ``torch.cuda.amp`` (``import torch.cuda.amp`` too)
amp = _types.ModuleType(f"{__name__}.amp", "torch.cuda.amp: the deprecated GradScaler.")
amp.GradScaler = _CudaGradScaler  # type: ignore[attr-defined]
_sys.modules[amp.__name__] = amp
