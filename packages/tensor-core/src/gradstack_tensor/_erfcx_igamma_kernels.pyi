"""Type stub for ``gradstack_tensor._erfcx_igamma_kernels`` (see its .pyx)."""

__all__ = ["ERFCX", "IGAMMA"]

ERFCX: tuple[str, ...]
IGAMMA: tuple[str, ...]
