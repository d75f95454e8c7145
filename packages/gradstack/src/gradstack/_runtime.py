"""torch's global runtime switches that training scripts set up front, for a CPU numpy
backend: the deterministic-algorithms flag, the float32 matmul precision, ``compile``,
``set_warn_always``, the interop thread count, ``typename``.

Note [Runtime switches are kept, not acted on]
gradstack's kernels are deterministic and its float32 products are numpy's (no TF32), so
``use_deterministic_algorithms`` and ``set_float32_matmul_precision`` only keep their
values for the matching getters, as torch on a CPU without such kernels would behave;
``compile`` returns the model or function unchanged (eager mode is what gradstack runs).

Examples
--------
>>> import gradstack as torch
>>> torch.use_deterministic_algorithms(True)
>>> torch.are_deterministic_algorithms_enabled()
True
>>> torch.use_deterministic_algorithms(False)
>>> torch.compile(lambda x: x + 1)(torch.tensor(1)).item()
2
"""

from __future__ import annotations

import warnings
from typing import Any

from gradstack_tensor import Tensor

__all__ = [
    "use_deterministic_algorithms",
    "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode",
    "get_deterministic_debug_mode",
    "set_float32_matmul_precision",
    "get_float32_matmul_precision",
    "compile",
    "set_warn_always",
    "is_warn_always_enabled",
    "get_num_interop_threads",
    "set_num_interop_threads",
    "typename",
]

_state: dict[str, Any] = {
    "deterministic": False,
    "warn_only": False,
    "precision": "highest",
    "warn_always": False,
    "interop_threads": 2,
}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Keep the flag (gradstack's kernels are deterministic: Note [Runtime switches are
    kept, not acted on])."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' must be bool, not "
                        f"{type(mode).__name__}")  # fmt: skip
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """The flag ``use_deterministic_algorithms`` set."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Its ``warn_only``."""
    return _state["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """``0``/``"default"`` off, ``1``/``"warn"``, ``2``/``"error"``: the deterministic flag."""
    if type(debug_mode) is bool or not isinstance(debug_mode, (str, int)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                "invalid value of debug_mode, expected one of `default`, `warn`, `error`, but "
                f"got {debug_mode}"
            )
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(
            f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}"
        )
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """``0``, ``1`` (warn only) or ``2``, from the flag."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """Keep ``"highest"``, ``"high"`` or ``"medium"`` (numpy's float32 products are full
    precision whatever it says); another value warns and changes nothing, as torch."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision ``set_float32_matmul_precision`` kept (``"highest"`` by default)."""
    return _state["precision"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,  # noqa: A001
            options=None, disable=False):  # fmt: skip
    """``model`` (a module or a function) unchanged, or a decorator that returns its
    argument unchanged: gradstack runs eagerly (Note [Runtime switches are kept, not acted
    on])."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError("Model must be callable")
    return model


def set_warn_always(b: bool) -> None:
    """Keep the flag (gradstack's warnings follow Python's filters)."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


def get_num_interop_threads() -> int:
    """The inter-op thread count set (gradstack runs ops one after the other)."""
    return _state["interop_threads"]


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or num < 1:
        raise RuntimeError("Expected positive number of threads")
    _state["interop_threads"] = num


_TYPE_NAMES = {
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "int8": "CharTensor",
    "int16": "ShortTensor",
    "int32": "IntTensor",
    "int64": "LongTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def typename(obj) -> str:
    """torch's name of ``obj``'s type: ``"torch.FloatTensor"`` for a float32 tensor, the
    qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return "torch." + _TYPE_NAMES.get(obj.dtype.name, "Tensor")
    module = getattr(type(obj), "__module__", "")
    qualname = type(obj).__qualname__
    return qualname if module in ("builtins", "", None) else f"{module}.{qualname}"
