"""What the program generator's modules share (``generate.py`` and the families of
statements in ``generate_ops.py``, ``generate_index.py`` and ``generate_backward.py``):
the dtypes and their weights, the op tables, and the helpers that format literals and test
tensors."""

from __future__ import annotations

import math

import torch

FLOATS = ("float16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
DTYPES = FLOATS + INTS + ("bool",)
_DTYPE_WEIGHTS = {
    "float32": 30,
    "float64": 26,
    "float16": 10,
    "int64": 9,
    "int32": 4,
    "int16": 3,
    "int8": 3,
    "uint8": 4,
    "bool": 6,
}
_INT_RANGE = {
    "uint8": (0, 255),
    "int8": (-128, 127),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
MAX_NUMEL = 96
MAX_LEAF_NUMEL = 4096  # the largest leaf written as a literal (big float16 leaves: 2048)
# probability of keeping a statement torch rejects, as the program's last one
KEEP_ERROR = 0.12

UNARY_FLOAT = (
    "abs acos asin atan ceil cos cosh exp exp2 expm1 floor log log10 log1p log2 neg "
    "reciprocal relu round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc square"
).split()
UNARY_INPLACE = [n for n in UNARY_FLOAT if n != "square"] + ["bitwise_not", "logical_not"]
BINARY = (
    "add sub mul div pow remainder floor_divide atan2 maximum minimum bitwise_and bitwise_or "
    "bitwise_xor logical_and logical_or logical_xor eq ne lt le gt ge rsub"
).split()
SYMBOL = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "pow": "**",
    "remainder": "%",
    "floor_divide": "//",
    "bitwise_and": "&",
    "bitwise_or": "|",
    "bitwise_xor": "^",
    "eq": "==",
    "ne": "!=",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
}
BINARY_INPLACE = (
    "add sub mul div pow remainder floor_divide atan2 bitwise_and bitwise_or bitwise_xor".split()
)
INPLACE_SYMBOL = {"add": "+=", "sub": "-=", "mul": "*=", "div": "/="}


def _prod(shape):
    return math.prod(shape)


def fmt_scalar(v) -> str:
    """Python source for a scalar (``float('nan')`` for NaN)."""
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    return repr(v)


def fmt_nested(values, shape) -> str:
    """Nested-list source of ``values`` (flat, row-major) in ``shape``."""
    if not shape:
        return fmt_scalar(values[0])
    step = _prod(shape[1:])
    parts = [fmt_nested(values[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def _is_tensor(v) -> bool:
    return isinstance(v, torch.Tensor)


def _dt(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _is_float(t) -> bool:
    return t.dtype.is_floating_point


def _broadcasts(a: tuple, b: tuple) -> bool:
    for x, y in zip(reversed(a), reversed(b)):
        if x != y and x != 1 and y != 1:
            return False
    return True


def _unique_along(t, d) -> bool:
    """No two equal (or NaN) values in any slice along ``d``."""
    if t.numel() == 0:
        return True
    s = t.detach().double().sort(d).values
    if torch.isnan(s).any():
        return False
    n = s.shape[d]
    # (equal neighbours, never a difference: inf - inf is NaN, which a "!= 0" test passes)
    return bool((s.narrow(d, 1, n - 1) != s.narrow(d, 0, n - 1)).all()) if n > 1 else True


def _fits(t, target: str) -> bool:
    """Every value of float tensor ``t`` converts to ``target`` without undefined behaviour."""
    if target == "bool" or t.numel() == 0:
        return True
    v = t.detach().double()
    if not bool(torch.isfinite(v).all()):
        return False
    lo, hi = _INT_RANGE[target]
    return bool((v > float(lo) - 1).all() and (v < float(hi) + 1).all())


def _key_kind(key: str) -> str:
    if "torch.tensor(" in key and "bool" in key or ">" in key or key in ("True", "False"):
        return "mask"
    adv = "[" in key or "torch.tensor(" in key
    basic = ":" in key or "None" in key or "..." in key
    if adv and basic:
        return "mixed"
    if adv:
        return "adv"
    return "basic"
