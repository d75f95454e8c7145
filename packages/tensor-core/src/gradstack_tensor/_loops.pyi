"""Type stub of ``gradstack_tensor._loops``: the small-array C loops."""

import numpy as np

SMALL_SIZE: int
BINARY_CODES: dict[str, int]
UNARY_CODES: dict[str, int]

def _unary_c_limit(name: str, dtype: object) -> int: ...
def batched_outer_product(x: np.ndarray, y: np.ndarray) -> np.ndarray | None: ...
