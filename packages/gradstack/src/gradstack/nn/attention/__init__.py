"""``gradstack.nn.attention``: ``SDPBackend``, ``sdpa_kernel`` and ``flex_attention``
(``gradstack_nn.attention``)."""

from gradstack_nn.attention import WARN_FOR_UNFUSED_KERNELS, SDPBackend, sdpa_kernel

from . import flex_attention

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS", "flex_attention"]
