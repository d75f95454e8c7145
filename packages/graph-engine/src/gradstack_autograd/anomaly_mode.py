"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``.

While enabled, every node records the stack of the forward call that created it, and the
engine checks each gradient a node produces for NaN.  A failure raises a RuntimeError that
names the node and the output index and *contains* the forward traceback (torch prints
it as a separate warning that notebooks swallow; pytorch#101069).  Errors raised inside a
node's backward get the same traceback attached as an exception note.

Examples
--------
>>> import gradstack_tensor as gt, gradstack_autograd as ag
>>> x = gt.tensor([0.0], requires_grad=True)
>>> with ag.detect_anomaly():
...     y = x.sqrt() * 0      # d/dx sqrt(x) at 0 is inf; inf * 0 is nan
...     try:
...         y.backward(gt.ones(1))
...     except RuntimeError as e:
...         print(str(e).splitlines()[0])
Function 'SqrtBackward0' returned nan values in its 0th output.
"""

from __future__ import annotations

import warnings

from . import _grad_mode
from .grad_mode import _DecoratorContextManager

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]

is_anomaly_enabled = _grad_mode.is_anomaly_enabled
is_anomaly_check_nan_enabled = _grad_mode.is_anomaly_check_nan_enabled


class detect_anomaly(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Context manager / decorator enabling anomaly detection (slow: for debugging)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[tuple[bool, bool]] = []
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and "
            "should only be enabled for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._prev.append(_grad_mode._set_anomaly_enabled(True, self.check_nan))

    def __exit__(self, *exc) -> None:
        mode, check_nan = self._prev.pop()
        _grad_mode._set_anomaly_enabled(mode, check_nan)

    def clone(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on or off: at once, or for a ``with`` block."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _grad_mode._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _grad_mode._set_anomaly_enabled(*self.prev)
