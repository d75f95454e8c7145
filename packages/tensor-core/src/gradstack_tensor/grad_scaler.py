"""``torch.amp.GradScaler``: loss scaling for float16 training, as torch's (``torch.cuda.amp.
GradScaler`` is the same class for ``"cuda"``).

Note [GradScaler on a CPU-only stack]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Programs build a scaler whatever their device (nanoGPT's ``train.py``:
``GradScaler(enabled=(dtype == 'float16'))``, then ``scaler.scale(loss).backward()``,
``unscale_``, ``step``, ``update``).  As torch on a machine without CUDA, a ``"cuda"`` scaler
asked to be enabled warns and disables itself, and a disabled scaler is the identity:
``scale`` returns its argument, ``step`` is ``optimizer.step()``, the rest do nothing.  A
``"cpu"`` scaler computes as torch's: the outputs times a float32 scale, the gradients times
its reciprocal (computed in double, then rounded to float32) with a non-finite check, a step
skipped when a gradient was inf or NaN, and the scale backed off or grown every
``growth_interval`` clean steps.  The optimizer is used through ``param_groups`` and
``step()`` only, so this layer needs no optimizer module.

Examples
--------
>>> import gradstack_tensor as gt
>>> scaler = gt.amp.GradScaler("cpu", init_scale=4.0)
>>> loss = (gt.tensor([1.0, 2.0], requires_grad=True) * 3).sum()
>>> scaler.scale(loss).item(), scaler.get_scale()
(36.0, 4.0)
>>> gt.amp.GradScaler("cpu", enabled=False).scale(loss) is loss
True
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from . import dtypes as _dt
from ._tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch's ``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)`` (Note [GradScaler on a
    CPU-only stack])."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = str(device)
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            warnings.warn(
                "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                UserWarning,
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = (
            "This may indicate your script did not use scaler.scale(loss or outputs) earlier "
            "in the iteration."
        )
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, (
            f"Attempted {funcname} but _growth_tracker is None.  " + fix
        )
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        from . import creation

        self._scale = creation.full((), self._init_scale, dtype=_dt.float32)
        self._growth_tracker = creation.full((), self._init_growth_tracker, dtype=_dt.int32)

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker()
            assert self._scale is not None
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer, inv_scale: Tensor, found_inf: Tensor, allow_fp16):
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if (not allow_fp16) and param.grad.dtype == _dt.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grad = param.grad
                # torch's _amp_foreach_non_finite_check_and_unscale_: flag, then multiply
                if not bool(grad.isfinite().all()):
                    found_inf.fill_(1.0)
                grad.mul_(inv_scale.to(grad.dtype) if grad.dtype != _dt.float32 else inv_scale)
        return {"cpu": found_inf}

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, noting infs and NaNs."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from . import creation

        assert self._scale is not None
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = creation.full((), 0.0, dtype=_dt.float32)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False
        )
        optimizer_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient was inf or NaN (unscaling first)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        assert len(optimizer_state["found_inf_per_device"]) > 0, (
            "No inf checks were recorded for this optimizer."
        )
        retval = None
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """The next scale: ``new_scale``, or backed off after an inf, grown after
        ``growth_interval`` clean steps (torch's ``_amp_update_scale_``)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                _scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                    "torch.FloatTensor with requires_grad=False."
                )
                assert isinstance(new_scale, Tensor), reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                _scale.copy_(new_scale)
        else:
            found_infs = [
                found_inf
                for state in self._per_optimizer_states.values()
                for found_inf in state["found_inf_per_device"].values()
            ]
            assert len(found_infs) > 0, "No inf checks were recorded prior to update."
            found_inf = sum(float(f.item()) for f in found_infs)
            if found_inf:
                _scale.mul_(self._backoff_factor)
                _growth_tracker.fill_(0)
            else:
                successful = int(_growth_tracker.item()) + 1
                if successful == self._growth_interval:
                    grown = _scale * self._growth_factor
                    if bool(grown.isfinite()):
                        _scale.copy_(grown)
                    _growth_tracker.fill_(0)
                else:
                    _growth_tracker.fill_(successful)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

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

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved from a "
                "disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
