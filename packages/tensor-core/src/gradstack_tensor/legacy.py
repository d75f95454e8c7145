"""torch's legacy tensor types: ``FloatTensor``, ``LongTensor``, ... and their constructors.

Old torch code (and much teaching material) builds tensors with ``torch.FloatTensor([1, 2])``
or ``torch.LongTensor(2, 3)``, converts with ``t.type(torch.DoubleTensor)`` and tests
``isinstance(t, torch.FloatTensor)``.  Each name here is a class standing for one CPU
dtype: calling it makes a plain :class:`~gradstack_tensor.Tensor` of that dtype, and
``isinstance`` asks whether a tensor has that dtype (torch's legacy types behave the same
way: ``type(torch.FloatTensor([1.]))`` is ``torch.Tensor``).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.FloatTensor([1, 2])
tensor([1., 2.])
>>> gt.LongTensor(2, 3).shape
gradstack.Size([2, 3])
>>> isinstance(gt.ones(2), gt.FloatTensor), isinstance(gt.ones(2), gt.LongTensor)
(True, False)
>>> gt.ones(2).type(gt.LongTensor)
tensor([1, 1])
"""

from __future__ import annotations

import builtins

from . import dtypes as _dt
from ._shapes import Size
from ._tensor import Tensor
from .creation import empty, tensor
from .device import check_device

__all__ = [
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "BFloat16Tensor",
    "LongTensor",
    "IntTensor",
    "ShortTensor",
    "CharTensor",
    "ByteTensor",
    "BoolTensor",
    "legacy_type",
    "set_default_tensor_type",
]


class _LegacyTensorType(type):
    """The metaclass: ``isinstance(t, FloatTensor)`` is ``t.dtype is float32``."""

    dtype: _dt.dtype

    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'gradstack.{cls.__name__}'>"


class _LegacyTensor(metaclass=_LegacyTensorType):
    """A legacy constructor; see the module docstring.

    ``T()`` is an empty 1-d tensor, ``T(2, 3)`` or ``T(Size([2, 3]))`` an uninitialised
    one of that shape, ``T(data)`` a copy of a sequence (list, tuple, ndarray) converted
    to the type's dtype, and ``T(t)`` of a tensor of the same dtype is ``t`` itself.
    """

    def __new__(cls, *args, device=None):
        check_device(device)
        if not args:
            return empty(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not cls.dtype:
                raise TypeError(
                    f"{cls.__name__}(): expected a tensor of dtype {cls.dtype}, got one of "
                    f"dtype {t.dtype}; convert it with t.to({cls.dtype}) or t.type({cls.__name__})"
                )
            return t
        if all(type(a) is builtins.int for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)
        ):
            return empty(*args, dtype=cls.dtype)
        if len(args) == 1 and not isinstance(args[0], (builtins.int, builtins.float, complex)):
            return tensor(args[0], dtype=cls.dtype)
        raise TypeError(
            f"{cls.__name__}(): expected sizes (ints), a Size, a sequence of data or a "
            f"{cls.__name__[:-6].lower()} tensor, got ({', '.join(type(a).__name__ for a in args)})"
        )


def _legacy(name: str, dt: _dt.dtype) -> type:
    cls = _LegacyTensorType(name, (_LegacyTensor,), {"dtype": dt, "__module__": "gradstack"})
    cls.__doc__ = f"The legacy tensor type of dtype {dt}: ``{name}(data)`` or ``{name}(*sizes)``."
    return cls


FloatTensor = _legacy("FloatTensor", _dt.float32)
DoubleTensor = _legacy("DoubleTensor", _dt.float64)
HalfTensor = _legacy("HalfTensor", _dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", _dt.bfloat16)
LongTensor = _legacy("LongTensor", _dt.int64)
IntTensor = _legacy("IntTensor", _dt.int32)
ShortTensor = _legacy("ShortTensor", _dt.int16)
CharTensor = _legacy("CharTensor", _dt.int8)
ByteTensor = _legacy("ByteTensor", _dt.uint8)
BoolTensor = _legacy("BoolTensor", _dt.bool_)

_BY_NAME = {
    cls.__name__: cls
    for cls in (
        FloatTensor,
        DoubleTensor,
        HalfTensor,
        BFloat16Tensor,
        LongTensor,
        IntTensor,
        ShortTensor,
        CharTensor,
        ByteTensor,
        BoolTensor,
    )
}


def legacy_type(t) -> _dt.dtype:
    """The dtype a legacy type stands for: a class above, or its name as a string
    (``"torch.FloatTensor"``, ``"gradstack.FloatTensor"``).

    >>> legacy_type("torch.LongTensor"), legacy_type(DoubleTensor)
    (gradstack.int64, gradstack.float64)
    """
    if isinstance(t, _LegacyTensorType) or (
        isinstance(t, type) and t.__name__ in _BY_NAME and isinstance(t.dtype, _dt.dtype)
    ):
        return t.dtype
    if isinstance(t, str):
        prefix, _, name = t.rpartition(".")
        if prefix in ("torch", "gradstack") and name in _BY_NAME:
            return _BY_NAME[name].dtype
        if prefix.endswith(".cuda") and name in _BY_NAME:
            raise RuntimeError(
                f"gradstack computes on the CPU only; {t!r} is a CUDA tensor type. "
                f"Use 'torch.{name}'."
            )
        raise ValueError(f"invalid type: {t!r}")
    raise TypeError(f"expected a legacy tensor type such as FloatTensor, got {t!r}")


def set_default_tensor_type(t) -> None:
    """torch's deprecated ``set_default_tensor_type``: sets the default float dtype to the
    dtype of a floating legacy type (``DoubleTensor`` or ``"torch.DoubleTensor"``).

    >>> set_default_tensor_type(DoubleTensor); _dt.get_default_dtype()
    gradstack.float64
    >>> set_default_tensor_type("torch.FloatTensor")
    """
    dt = legacy_type(t)
    if not dt.is_floating_point:
        raise TypeError(
            f"only floating-point types are supported as the default type, got {dt}; "
            "use set_default_dtype for the default float dtype"
        )
    _dt.set_default_dtype(dt)
