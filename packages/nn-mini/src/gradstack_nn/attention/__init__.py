"""``torch.nn.attention``: ``SDPBackend``, ``sdpa_kernel`` and the ``flex_attention``
submodule.

gradstack has one implementation of ``scaled_dot_product_attention`` (torch's "math"
reference), so ``sdpa_kernel`` checks its argument as torch's and selects nothing.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn.functional import scaled_dot_product_attention
>>> q = gt.ones(1, 2, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     scaled_dot_product_attention(q, q, q).shape
gradstack.Size([1, 2, 4])
"""

from __future__ import annotations

import contextlib
import enum

from . import flex_attention

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "flex_attention"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch's scaled-dot-product attention backends (gradstack computes ``MATH``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """A block in which ``scaled_dot_product_attention`` may use ``backends`` (one
    :class:`SDPBackend` or a list): gradstack's one implementation runs whatever they are."""
    listed = backends if isinstance(backends, (list, tuple)) else [backends]
    for b in listed:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    yield
