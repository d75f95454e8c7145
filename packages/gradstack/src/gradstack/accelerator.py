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
    "device_index",
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


class device_index:  # noqa: N801 - torch's name
    """The context manager that makes ``device`` the current accelerator index: with None
    it does nothing; with an index it raises torch's ``RuntimeError`` on entering, as torch
    does with no accelerator.

    >>> import gradstack as torch
    >>> with torch.accelerator.device_index(None):
    ...     pass
    """

    def __init__(self, device, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            raise RuntimeError(_NONE_AVAILABLE)

    def __exit__(self, *exc_info: object) -> None:
        return None
