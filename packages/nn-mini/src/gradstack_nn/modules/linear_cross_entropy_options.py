"""``LinearCrossEntropyOptions``: how :func:`~gradstack_nn.functional.linear_cross_entropy`
chunks the batch (torch 2.13's ``nn.LinearCrossEntropyOptions``: its fields, defaults,
checks and the resolution of its ``"auto"`` values at call time, ``_adjust``).

Examples
--------
>>> opts = LinearCrossEntropyOptions(batch_chunk_size=64, chunking_method=None)
>>> opts.batch_chunk_size, opts.acc_policy
(64, 'auto')
>>> LinearCrossEntropyOptions()._adjust(4096, 64, 32000, gt.float32).batch_chunk_size
8
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import gradstack_tensor as gt

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's picks for ``"auto"`` by (device type, input dtype); other pairs fall back.
_AUTO_DEFAULTS = {
    ("cpu", gt.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", gt.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """The chunking of :func:`linear_cross_entropy` over the batch (torch's fields).

    Parameters
    ----------
    allow_retain_graph : bool
        Keep the precomputed gradients for a second backward (``"mean"``/``"sum"``).
    batch_chunk_size : int or None
        Rows per chunk (``None``: one chunk, or what ``chunking_method`` gives).
    chunking_method : str or None
        ``"auto"``, ``"aspect_ratio"``, ``"aspect_ratio:N"`` or ``None``.
    acc_policy : str
        ``"auto"``, ``"accurate"``, ``"balanced"`` or ``"compact"`` (precision and memory
        of torch's kernels; gradstack computes every policy in ``acc_dtype``).
    acc_dtype : dtype or None
        The dtype of the accumulations (float32 for float16/bfloat16 inputs under
        ``"auto"``).

    Examples
    --------
    >>> LinearCrossEntropyOptions(chunking_method="aspect_ratio:3").chunking_method
    'aspect_ratio:3'
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"  # "accurate", "balanced", "compact" or "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (
            self.batch_chunk_size is None
            or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)
        ):
            raise ValueError(
                f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}"
            )
        supported = (gt.float16, gt.bfloat16, gt.float32, gt.float64)
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically."
            )

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        if device is None or dtype not in (gt.float16, gt.bfloat16):
            return None
        return gt.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            inc_factor = self._ceil_div(num_classes, in_features)
            target = self._ceil_div(num_batches, inc_factor)
            chunk_size = 1 << (target - 1).bit_length()
            return min(chunk_size // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options resolved for one call (torch's ``_adjust``): ``"auto"`` values and
        ``None`` defaults made concrete."""
        acc_policy: str = self.acc_policy
        chunking_method = self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            if device is not None:
                ap, cm = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
            else:
                ap, cm = _AUTO_FALLBACK
            if acc_policy == "auto":
                acc_policy = ap
            if chunking_method == "auto":
                chunking_method = cm
        if self.batch_chunk_size is None:
            batch_chunk_size = num_batches
        else:
            batch_chunk_size = min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(
                num_batches, in_features, num_classes, chunking_method
            )
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and "
                    f"chunking_method ('{chunking_method}') give different "
                    f"chunk sizes ({self.batch_chunk_size} vs {batch_chunk_size}); "
                    f"pass only one."
                )
        if self.acc_dtype is None:
            auto_acc = (
                self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            )
            acc_dtype = auto_acc if auto_acc is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(
            self,
            acc_policy=acc_policy,
            chunking_method=chunking_method,
            batch_chunk_size=max(1, batch_chunk_size),
            acc_dtype=acc_dtype,
        )
