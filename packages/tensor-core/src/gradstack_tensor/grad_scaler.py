"""``torch.amp.GradScaler``: loss scaling for mixed-precision training, on the CPU.

Note [GradScaler on a machine without CUDA]
torch's ``GradScaler("cpu")`` scales and unscales on the CPU; a ``GradScaler()`` for CUDA
(its default device, and ``torch.cuda.amp.GradScaler``) warns that CUDA is not available
and disables itself, so that ``scale`` returns its argument, ``step`` is the optimizer's
step and ``update`` does nothing.  nanoGPT makes ``torch.cuda.amp.GradScaler(enabled=
(dtype == 'float16'))`` on every machine.  The optimizer is only read
(``param_groups``, ``step``), so this module needs nothing above tensor-core.

Examples
--------
>>> import gradstack_tensor as gt
>>> scaler = gt.amp.GradScaler("cpu", init_scale=8.0)
>>> scaler.scale(gt.tensor(2.0)).item()
16.0
>>> scaler.get_scale()
8.0
"""

from __future__ import annotations

import math
import warnings
from enum import Enum
from typing import Any

import numpy as np

from ._tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in a scaler's iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """Scales a loss before ``backward`` and unscales the gradients before the step,
    skipping steps whose gradients hold inf or NaN and adapting the scale
    (Note [GradScaler on a machine without CUDA])."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if self._enabled and device == "cuda":
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = init_scale
        self._scale: float | None = None
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: dict[int, dict[str, Any]] = {}

    # -- scaling ---------------------------------------------------------------------
    def scale(self, outputs):
        """``outputs`` (a tensor, or lists/tuples of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = float(np.float32(self._init_scale))
            self._growth_tracker = self._init_growth_tracker
        if isinstance(outputs, Tensor):
            return outputs * _scale_tensor(self._scale)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _check(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(
                f"Attempted {funcname} but _scale is None.  This may indicate your script "
                "did not use scaler.scale(loss or outputs) earlier in the iteration."
            )

    def _state(self, optimizer) -> dict[str, Any]:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": 0.0}
        )

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting inf/NaN."""
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        inv_scale = np.float32(np.float64(np.float32(self._scale)) ** -1)
        found_inf = 0.0
        for group in optimizer.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if str(grad.dtype).endswith("float16") and not str(grad.dtype).endswith("bfloat16"):
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grad.mul_(float(inv_scale))
                if not bool(grad.isfinite().all()):
                    found_inf = 1.0
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` after unscaling, skipped when a gradient is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Back off the scale after a step with inf/NaN, grow it after ``growth_interval``
        clean steps (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor.")
                self._scale = float(new_scale.item())
            else:
                self._scale = float(np.float32(new_scale))
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            assert self._scale is not None and self._growth_tracker is not None
            if sum(found):
                self._scale = float(np.float32(self._scale) * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    grown = float(np.float32(self._scale) * np.float32(self._growth_factor))
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = {}

    # -- queries and state -------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return float(self._init_scale) if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """torch's keys (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._init_growth_tracker
            if self._growth_tracker is None
            else self._growth_tracker,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = float(np.float32(state_dict["scale"]))
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]


def _scale_tensor(scale: float) -> Tensor:
    from .creation import tensor

    return tensor(scale)
