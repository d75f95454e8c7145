"""``gradstack.nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm``,
``orthogonal`` (``gradstack_nn.utils.parametrizations``)."""

from gradstack_nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]
