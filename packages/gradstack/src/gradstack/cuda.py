"""``gradstack.cuda``: gradstack computes on the CPU, so CUDA is never available.

The functions that code written for torch calls to *probe* for a GPU answer as torch does
on a machine without one (``is_available()`` is False, ``device_count()`` is 0, seeding
is a no-op); the functions that need a GPU raise a clear ``RuntimeError``.

>>> import gradstack as torch
>>> torch.cuda.is_available(), torch.cuda.device_count()
(False, 0)
"""

from __future__ import annotations

__all__ = [
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


def _cuda_grad_scaler(*args, **kwargs):
    """``torch.cuda.amp.GradScaler``: deprecated by torch for ``torch.amp.GradScaler("cuda",
    ...)``, which disables itself without CUDA (Note [GradScaler on a machine without
    CUDA] in tensor-core's ``grad_scaler.py``)."""
    import warnings

    from gradstack_tensor.grad_scaler import GradScaler

    warnings.warn(
        "`torch.cuda.amp.GradScaler(args...)` is deprecated. "
        "Please use `torch.amp.GradScaler('cuda', args...)` instead.",
        FutureWarning,
        stacklevel=2,
    )
    return GradScaler("cuda", *args, **kwargs)


def _make_amp_module():
    """``gradstack.cuda.amp`` (``import torch.cuda.amp``, ``torch.cuda.amp.GradScaler``)."""
    import sys
    import types

    module = types.ModuleType(f"{__name__}.amp", "torch.cuda.amp: the deprecated CUDA spellings.")
    module.GradScaler = _cuda_grad_scaler  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return module


amp = _make_amp_module()
