"""``gradstack.accelerator``: gradstack computes on the CPU, so no accelerator exists.

As ``torch.accelerator`` on a machine without a GPU: the probes answer (``is_available()``
is False, ``current_accelerator()`` None, ``device_count()`` 0) and the calls that need a
device raise torch's ``RuntimeError``.

>>> import gradstack as torch
>>> torch.accelerator.is_available(), torch.accelerator.current_accelerator()
(False, None)
>>> device = torch.accelerator.current_accelerator() or torch.device("cpu")
>>> device
device(type='cpu')
"""

from __future__ import annotations

__all__ = [
    "is_available",
    "current_accelerator",
    "device_count",
    "current_device_index",
    "set_device_index",
    "synchronize",
]

_NONE_AVAILABLE = (
    "Cannot access accelerator device when none is available. (gradstack computes on the "
    "CPU only; check gradstack.accelerator.is_available() first)"
)


def is_available() -> bool:
    """False: gradstack has no accelerator backend."""
    return False


def current_accelerator(check_available: bool = False):
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0: there are no accelerator devices."""
    return 0


def current_device_index() -> int:
    """Raises ``RuntimeError``, as torch does with no accelerator."""
    raise RuntimeError(_NONE_AVAILABLE)


def set_device_index(device) -> None:
    """Raises ``RuntimeError``, as torch does with no accelerator."""
    raise RuntimeError(_NONE_AVAILABLE)


def synchronize(device=None) -> None:
    """Raises ``RuntimeError``, as torch does with no accelerator."""
    raise RuntimeError(_NONE_AVAILABLE)
