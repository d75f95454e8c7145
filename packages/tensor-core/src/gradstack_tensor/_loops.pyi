"""Type stub of ``gradstack_tensor._loops``: the small-array C loops."""

SMALL_SIZE: int
BINARY_CODES: dict[str, int]
UNARY_CODES: dict[str, int]

def _unary_c_limit(name: str, dtype: object) -> int: ...
