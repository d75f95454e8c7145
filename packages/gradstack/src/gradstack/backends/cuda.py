"""``gradstack.backends.cuda``: CUDA's flags, for scripts that set them; no CUDA here."""

from __future__ import annotations

__all__ = ["is_built", "matmul"]


class _MatmulFlags:
    """``torch.backends.cuda.matmul``: the precision flags of CUDA matrix products."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    def __repr__(self) -> str:
        return f"<gradstack.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


def is_built() -> bool:
    """False: gradstack is not built with CUDA."""
    return False
