"""torch's refusals for its barebones unsigned dtypes (uint16, uint32, uint64).

Note [The barebones unsigned dtypes] (``dtypes.py``): torch 2.13 has no CPU loop for
most arithmetic on these dtypes (``add``, ``neg``, the order comparisons, ``max`` ...)
and raises ``NotImplementedError: "add_stub" not implemented for 'UInt16'``; numpy has
one for everything, so gradstack would compute what torch refuses.  A dispatch layer
refuses those ops, with torch's words, when one of their tensors has such a dtype and
none of their operands makes the computation floating-point (``a + 2.5`` is a float32
sum, which torch computes).  The layer is registered when one of these dtypes is first
asked for (``dtypes._on_barebones``), so a program that never uses them pays nothing per
op, as bfloat16's switch (Note [bfloat16 is stored by ml_dtypes and computed in float32]).

Examples
--------
>>> import gradstack_tensor as gt
>>> a = gt.tensor([1, 2], dtype=gt.uint16)
>>> (a * 3).tolist()
[3, 6]
>>> a + a
Traceback (most recent call last):
...
NotImplementedError: "add_stub" not implemented for 'UInt16'
"""

from __future__ import annotations

from . import dtypes as _dt
from ._dispatch import DispatchLayer, register_layer
from ._tensor import Tensor

__all__: list[str] = []

# gradstack's op (its in-place form too) -> torch's kernel that has no unsigned loop
_REFUSED = {
    "add": "add_stub",
    "sub": "add_stub",
    "rsub": "add_stub",
    "neg": "neg_cpu",
    "abs": "abs_cpu",
    "sign": "sign_cpu",
    "sgn": "sign_cpu",
    "lt": "lt_cpu",
    "gt": "gt_cpu",
    "le": "le_cpu",
    "ge": "ge_cpu",
    "max": "max_all",
    "min": "min_all",
    "amax": "max_values_cpu",
    "amin": "min_values_cpu",
    "argmax": "argmax_cpu",
    "argmin": "argmin_cpu",
    "maximum": "maximum_cpu",
    "minimum": "minimum_cpu",
    "clamp": "clamp_scalar_cpu",
    "floor_divide": "div_floor_cpu",
    "remainder": "remainder_cpu",
    "fmod": "fmod_cpu",
    "pow": "pow",
    "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu",
    "mm": "addmm_impl_cpu_",
    "addmm": "addmm_impl_cpu_",
    "matmul": None,  # (by the operands' dims: _matmul_kernel)
    "dot": "dot",
    "mv": "addmv_impl_cpu",
    "bmm": "bmm",
    "topk": "topk_cpu",
    "relu": "clamp_min_scalar_cpu",
    "logical_not": "logical_not_cpu",
    "bitwise_not": "bitwise_not_cpu",
    "count_nonzero": "nonzero_count_cpu",
    "tril": "tril",
    "triu": "triu",
    "trace": "trace",
}


def _matmul_kernel(args) -> str:
    """torch's kernel behind ``matmul`` for these operands' dims."""
    a, b = args[0], args[1]
    if a.dim() == 1 and b.dim() == 1:
        return "dot"
    if a.dim() == 2 and b.dim() == 1:
        return "addmv_impl_cpu"
    if a.dim() <= 2 and b.dim() <= 2:
        return "addmm_impl_cpu_"
    return "bmm"


class _BarebonesLayer(DispatchLayer):
    """Refuses torch's missing kernels for the barebones unsigned dtypes (inside autograd:
    the kernels' view of each op)."""

    def handle(self, op, args, next_index):
        name = op.name.rstrip("_")
        if name in _REFUSED:
            # refused when the tensors share one barebones dtype and no float operand makes
            # the computation floating-point (mixed dtypes: the promotion's own error)
            barebones = None
            for a in args:
                if isinstance(a, Tensor):
                    dt = a.dtype
                    if dt not in _dt.BAREBONES or (barebones is not None and dt is not barebones):
                        barebones = None
                        break
                    barebones = dt
                elif isinstance(a, (float, complex)):
                    barebones = None
                    break
            if barebones is not None:
                kernel = _REFUSED[name] or _matmul_kernel(args)
                raise NotImplementedError(
                    f"\"{kernel}\" not implemented for '{_dt.SCALAR_TYPE_NAMES[barebones.name]}'"
                )
        return self.call_next(op, args, next_index)


_LAYER = _BarebonesLayer(50)
_registered = []


def _register() -> None:
    if not _registered:
        _registered.append(True)
        register_layer(_LAYER)


_dt._on_barebones = _register
