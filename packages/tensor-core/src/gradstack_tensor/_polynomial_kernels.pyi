"""Type stub for ``gradstack_tensor._polynomial_kernels`` (see its .pyx)."""

__all__ = ["POLYNOMIALS"]

POLYNOMIALS: tuple[str, ...]
