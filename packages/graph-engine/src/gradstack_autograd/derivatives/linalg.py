"""Linear algebra: matmul, mm, bmm, dot, outer, mv, addmm, trace, tril/triu, diag."""

from __future__ import annotations

import math

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS, Tensor, kernels
from gradstack_tensor.extension import data_of as _data
from gradstack_tensor.extension import dispatch, wrap
from gradstack_tensor.extension import matmul_folds as _folds

from .. import _grad_mode as _modes
from ._formulas import (
    _batch_gather,
    _batch_scatter,
    _first_order_arrays,
    _grad_mode,
    _is_tensor,
    _lead,
    refuse_undifferentiable_result,
)
from ._layout import layout_of
from ._table import jvp, register
from ._tangents import _matmul_tangent, _pad, _put, _take, _tangent_sum
from ._wirtinger import holomorphic
from .batching import _arg, _rank, front, last_two, pad, per_sample

__all__: list[str] = []


def _matmul_name(args):
    # torch's matmul is a composite: its node is the one its last step records (a batched
    # product ends in an _unsafe_view); a few broadcast cases end in a clone instead
    a, b = args[0], args[1]
    nd = (a.dim() if _is_tensor(a) else 0, b.dim() if _is_tensor(b) else 0)
    if nd[0] == 2 and nd[1] >= 3 and a.requires_grad:
        # folded by transposing (Note [matmul saves its folded operand]): torch returns
        # ``mm(b.mT folded, a.t()).mT.contiguous()``, a copy unless a side has one element
        m, p = a.shape[0], b.shape[-1]
        return "TransposeBackward0" if m == 1 or p == 1 or b.numel() == 0 else "CloneBackward0"
    return {
        (1, 1): "DotBackward0",
        (2, 2): "MmBackward0",
        (2, 1): "MvBackward0",
        (1, 2): "SqueezeBackward4",
    }.get(nd, "UnsafeViewBackward0")


def _matmul_folded_copy(a, b):
    """The copy of ``a`` that torch's matmul saves for ``b``'s gradient, or None.

    Note [matmul saves its folded operand]
    torch's matmul of a batched ``a`` (3 or more dims) runs mm on ``a.reshape(-1, n)``
    (folded, when ``b`` has at most 2 dims and requires grad) or bmm on ``a`` expanded to
    the broadcast batch and reshaped to 3 dims, and that mm/bmm saves the reshaped ``a``.
    When the reshape cannot view ``a`` (a transposed ``a``), it is a copy: a later in-place
    write into ``a`` does not touch it and backward works (fuzz seed 1 #49746), where
    saving ``a`` itself raised "modified by an inplace operation".  The copy is made with
    the graph (a clone), so that double backward still reaches ``a``.  The mirror case, a
    1-d or 2-d ``a`` that requires grad times a batched ``b``, folds ``b.mT`` (torch's
    ``should_fold(tensor2, tensor1)``), a copy for a contiguous ``b`` (fuzz seed 3 #17680):
    :func:`_matmul_folded_other`.
    """
    return a.clone() if _copies_self(a, b) else None


def _copies_self(a, b):
    """Whether torch's matmul saves a copy of ``a`` (:func:`_matmul_folded_copy`)."""
    if not (_is_tensor(a) and _is_tensor(b)) or a.dim() < 3 or not b.requires_grad:
        return False
    x = layout_of(a)  # (Note [Meta tensors fold as contiguous ones])
    if b.dim() == x.ndim and _same_batch(x, b):  # Note [Folding checked on the strides]
        return not _batch_folds(x)
    shape: tuple[int, ...]
    if b.dim() <= 2:  # (sizes given in full: -1 is ambiguous for an empty tensor)
        shape = (math.prod(x.shape[:-1]), x.shape[-1])
    else:
        batch = np.broadcast_shapes(x.shape[:-2], _data(b).shape[:-2])
        x = np.broadcast_to(x, batch + x.shape[-2:])
        shape = (math.prod(batch),) + x.shape[-2:]
    return _reshape_copies(x, shape)  # numpy refuses a view exactly when a copy is needed


def _matmul_folded_other(a, b):
    """The copy of ``b`` that torch's matmul saves for ``a``'s gradient when it folds
    ``b.mT``, or when it runs bmm on ``b`` expanded and reshaped to 3 dims and that reshape
    copies (Note [matmul saves its folded operand]), or None."""
    return b.clone() if _copies_other(a, b) else None


def _copies_other(a, b):
    """Whether torch's matmul saves a copy of ``b`` (:func:`_matmul_folded_other`)."""
    if not (_is_tensor(a) and _is_tensor(b)) or b.dim() < 3 or not a.requires_grad:
        return False
    if a.dim() <= 2:  # b.mT folded
        x = np.swapaxes(layout_of(b), -1, -2)
        return _reshape_copies(x, (math.prod(x.shape[:-1]), x.shape[-1]))
    # Note [matmul saves the copies, not the operands]: both batched, bmm's operand
    y = layout_of(b)  # (Note [Meta tensors fold as contiguous ones])
    if a.dim() == y.ndim and _same_batch(y, a):  # Note [Folding checked on the strides]
        return not _batch_folds(y)
    batch = np.broadcast_shapes(layout_of(a).shape[:-2], y.shape[:-2])
    y = np.broadcast_to(y, batch + y.shape[-2:])
    return _reshape_copies(y, (math.prod(batch),) + y.shape[-2:])


# Note [matmul saves the copies, not the operands]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Where torch's matmul saves a copy of an operand (Note [matmul saves its folded operand]:
# a transposed ``q`` or ``k.transpose(-2, -1)`` of attention, reshaped for bmm), it does
# not keep the operand itself.  matmul's entry saved both, and the operand, a view of the
# attention's qkv projection, kept that whole projection alive until the backward: 0.5
# MiB a block of the character GPT (2 MiB of its 37.8 MiB peak, above torch's 35.7), as
# much of minGPT's.  The operands are saved only where no copy is (``save_if``), and the
# copy of ``b`` is made for the bmm path too (a transposed ``v`` of ``att @ v``, ``k.mT``
# of ``q @ k.mT``), as torch's ``tensor2.expand(...).reshape(...)``: the projection is then
# freed after the forward, as torch's.  The price is the copies (numpy's matmul reads the
# strided operands without one): minGPT's step took ~2% more CPU time (177.6 vs 174.3 ms,
# median of 3 runs, load ~8), the character GPT's no measurable change.


def _saves_self(args):
    return not _copies_self(args[0], args[1])


def _saves_other(args):
    return not _copies_other(args[0], args[1])


_ITSELF, _VIEW, _COPY = 0, 1, 2


# Note [Folding checked on the strides]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Whether torch's bmm path copies an operand was asked of numpy (a reshape tried with
# ``copy=False``, after ``broadcast_shapes`` and ``broadcast_to``): ~8 us an operand, asked
# twice per matmul (``save_if`` and ``extra``), ~1% of the character GPT's step.  In the
# common case, both operands with the same batch dims (an attention's ``q @ k.mT``,
# ``att @ v``), nothing is broadcast, and folding the batch dims into one is a view exactly
# when numpy's no-copy reshape finds them nested: with the dims of size 1 left out, each
# batch dim's stride is the next one's stride times its size (numpy's
# ``_attempt_nocopy_reshape``, for C order).  An empty operand takes the general path.


def _same_batch(x, other):
    """Whether the array ``x`` and the tensor ``other`` (of ``x``'s rank) have the same
    batch dims, all non-empty."""
    batch = x.shape[:-2]
    return batch == tuple(other.shape[:-2]) and 0 not in x.shape


def _batch_folds(x):
    """Whether ``x``'s batch dims fold into one without a copy (Note [Folding checked on
    the strides])."""
    shape, strides = x.shape, x.strides
    prev = -1
    for i in range(x.ndim - 2):
        if shape[i] == 1:
            continue
        if prev >= 0 and strides[prev] != shape[i] * strides[i]:
            return False
        prev = i
    return True


def _reshape_copies(x, shape):
    """Whether reshaping the array ``x`` to ``shape`` copies (numpy refuses a view exactly
    then, as torch's reshape)."""
    try:
        np.reshape(x, shape, copy=False)
    except ValueError:
        return True
    return False


def _bmm_operand(x, batch, rows, cols):
    """What torch's bmm path saves of a batched-side operand ``x``: ``x`` expanded to
    ``batch + (rows, cols)`` and reshaped to 3 dims, a view unless the reshape copies."""
    if x.ndim < 3:
        return _VIEW  # a broadcast 1-d or 2-d operand folds its stride-0 batch in a view
    full = np.broadcast_to(x, batch + (rows, cols))
    return _COPY if _reshape_copies(full, (math.prod(batch), rows, cols)) else _VIEW


def _matmul_saved_kinds(a, b):
    """What torch's matmul saves of ``a`` and of ``b``: the operand itself, a view of it,
    or a copy (``_ITSELF``, ``_VIEW``, ``_COPY``); see Note [What matmul saves of an operand
    that gains requires_grad later]."""
    da, db = a.dim(), b.dim()
    if (da, db) in ((1, 1), (2, 2), (2, 1)):
        return _ITSELF, _ITSELF
    if (da, db) == (1, 2):
        return _VIEW, _ITSELF  # unsqueeze(a).mm(b)
    x, y = layout_of(a), layout_of(b)  # (Note [Meta tensors fold as contiguous ones])
    if _folds(a, b):
        if da >= db:  # mm/mv of a.reshape(-1, m) and b
            return (_COPY if _reshape_copies(x, (-1, x.shape[-1])) else _VIEW), _ITSELF
        yt = np.swapaxes(y, -1, -2)  # mm/mv of b.mT.reshape(-1, k) and a (a.t() if 2-d)
        folded = _COPY if _reshape_copies(yt, (-1, yt.shape[-1])) else _VIEW
        return (_ITSELF if da == 1 else _VIEW), folded
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    a_rows = x.shape[-2] if da > 1 else 1
    b_cols = y.shape[-1] if db > 1 else 1
    return (
        _bmm_operand(x, batch, a_rows, x.shape[-1]),
        _bmm_operand(y, batch, y.shape[-2] if db > 1 else y.shape[0], b_cols),
    )


def _late_operand(x, kind):
    """The saved operand ``x`` as torch's double backward reads it, when ``x`` did not
    require grad at the forward (``kind`` as :func:`_matmul_saved_kinds`)."""
    if kind == _COPY or not x.requires_grad:
        return x.detach()
    # a view made before ``x.requires_grad_()`` requires grad through its base, yet has no
    # history: torch's graph then ends at the view, as at a leaf of its own
    return x.detach().requires_grad_()


def _matmul_cuts(a, b):
    """How backward must read ``a`` and ``b`` when one did not require grad at the forward:
    None to read it as saved, else its kind (see :func:`_late_operand`).

    Note [What matmul saves of an operand that gains requires_grad later]
    Double backward reads the saved operands with their graphs.  When ``x.requires_grad_()``
    comes after ``x @ w``, torch's saved value is ``x`` itself only where the mm, mv or dot
    it ran takes ``x`` as given (``x`` 1-d or 2-d, ``w`` at most 2-d, or ``x`` the small
    side of a folded product); elsewhere it saved a view or a copy made while ``x`` did not
    require grad.  A copy never requires grad; the view does, through its base, but as a
    leaf of its own: the double-backward graph stops there and ``x`` gets no gradient
    (fuzz seed 6 #781: ``vec @ batch`` run as bmm).
    """
    if a.requires_grad and b.requires_grad:
        return None, None
    ka, kb = _matmul_saved_kinds(a, b)
    return (
        None if a.requires_grad or ka == _ITSELF else ka,
        None if b.requires_grad or kb == _ITSELF else kb,
    )


def _matmul_extra(args, out):
    # an empty product through bmm has the second operand's dtype (Note [An empty batched
    # product checks no dtype]): an integer one cannot carry a gradient
    refuse_undifferentiable_result(out)
    a, b = args[0], args[1]
    cut_a, cut_b = _matmul_cuts(a, b)
    return (
        a.dim(),
        b.dim(),
        _matmul_folded_copy(a, b),
        _matmul_folded_other(a, b),
        cut_a,
        cut_b,
    )


def _matmul_batched(a, ab, b, bb):
    """``a @ b`` of two samples (torch's matmul rules, 1-d operands included), batch
    first.  Batched operands get their logical batch dims padded to a common rank so
    that the sample's batch dim never meets an unbatched operand's leading dims."""
    ra, rb = _rank(a, ab), _rank(b, bb)
    if ra == 0 or rb == 0:
        return NotImplemented  # matmul refuses 0-d operands, per sample
    if ab is not None:
        a = front(a, ab)
    if bb is not None:
        b = front(b, bb)
    squeeze_row = squeeze_col = False
    if ra == 1:  # a row vector
        a = a.unsqueeze(1 if ab is not None else 0)
        ra, squeeze_row = 2, True
    if rb == 1:  # a column vector
        b = b.unsqueeze(-1)
        rb, squeeze_col = 2, True
    k = max(ra, rb) - 2
    if ab is not None:
        a = pad(a, ra, k + 2)
    if bb is not None:
        b = pad(b, rb, k + 2)
    out = dispatch(OPS["matmul"], (a, b))
    if squeeze_col:
        out = out.squeeze(-1)
    if squeeze_row:
        out = out.squeeze(-2 if not squeeze_col else -1)
    return out, 0


def _matmul_rule(args, bdims):
    return _matmul_batched(args[0], bdims[0], args[1], bdims[1])


@register(
    "matmul(self, other)",
    _matmul_name,
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": "self"},  # as the mm/bmm/dot it runs
    save_if={"self": _saves_self, "other": _saves_other},  # Note [matmul saves the copies, ...]
    extra=_matmul_extra,
    batch=_matmul_rule,
)
@holomorphic
def _matmul(ctx, grad):
    a_dim, b_dim, folded, folded_other, cut_a, cut_b = ctx.extra
    a = folded if folded is not None else ctx.saved_value("self")
    b = folded_other if folded_other is not None else ctx.saved_value("other")
    # Note [What matmul saves of an operand that gains requires_grad later]
    if cut_a is not None:
        a = _late_operand(a, cut_a)
    if cut_b is not None:
        b = _late_operand(b, cut_b)
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if a_dim == 1 and b_dim == 1:
        g = grad.unsqueeze(-1) if _lead(grad) else grad
        return (g * b if need_a else None), (g * a if need_b else None)
    if a_dim == 1:
        if need_a:
            ga = (grad.unsqueeze(-2) @ b.mT).squeeze(-2)
        if need_b:
            gb = a.unsqueeze(-1) @ grad.unsqueeze(-2)
        return ga, gb
    if b_dim == 1:
        if need_a:
            ga = grad.unsqueeze(-1) @ b.unsqueeze(-2)
        if need_b:
            gb = (a.mT @ grad.unsqueeze(-1)).squeeze(-1)
        return ga, gb
    if need_a:
        ga = grad @ b.mT
    if need_b:
        gb = a.mT @ grad
    return ga, gb


@register(
    "mm(self, mat2)",
    "MmBackward0",
    inputs="self, mat2",
    save="self, mat2",
    save_for={"self": "mat2", "mat2": "self"},
    sizes="self, mat2",
    batch=_matmul_rule,
)
@holomorphic
def _mm(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("mat2")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad @ b.t() if need_a else None), (a.t() @ grad if need_b else None)
    return (grad.mm(b.t()) if need_a else None), (a.t().mm(grad) if need_b else None)


@register(
    "bmm(self, mat2)",
    "BmmBackward0",
    inputs="self, mat2",
    save="self, mat2",
    save_for={"self": "mat2", "mat2": "self"},
    extra=lambda args, out: refuse_undifferentiable_result(out),  # as _matmul_extra
    batch=_matmul_rule,
)
@holomorphic
def _bmm(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("mat2")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad @ b.transpose(1, 2) if need_a else None), (
            a.transpose(1, 2) @ grad if need_b else None
        )
    return (grad.bmm(b.transpose(1, 2)) if need_a else None), (
        a.transpose(1, 2).bmm(grad) if need_b else None
    )


@jvp("matmul", "mm", "bmm")
def _matmul_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = _matmul_tangent(ta, a, b, lead, True) if ta is not None else None
    return _tangent_sum(r, _matmul_tangent(tb, a, b, lead, False) if tb is not None else None)


@register(
    "dot(self, tensor)",
    "DotBackward0",
    inputs="self, tensor",
    save="self, tensor",
    save_for={"self": "tensor", "tensor": "self"},
    batch=_matmul_rule,
    keeps_zero="self, tensor",
)
@holomorphic
def _dot(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("tensor")
    need_a, need_b = ctx.needs_input_grad
    g = grad.unsqueeze(-1) if _lead(grad) else grad
    return (g * b if need_a else None), (g * a if need_b else None)


@register(
    "vdot(self, other)",
    "VdotBackward0",
    inputs="self, other",
    save="self, other",
    save_for={"self": "other", "other": "self"},
    batch=lambda args, bdims: _matmul_batched(args[0].conj(), bdims[0], args[1], bdims[1]),
    keeps_zero="self, other",
)
def _vdot(ctx, grad):
    """torch's formulas, as written (not holomorphic: ``self`` enters conjugated):
    ``self: grad.conj() * other``, ``other: grad * self``."""
    a, b = ctx.saved_value("self"), ctx.saved_value("other")
    need_a, need_b = ctx.needs_input_grad
    g = grad.unsqueeze(-1) if _lead(grad) else grad
    return (g.conj() * b if need_a else None), (g * a if need_b else None)


@jvp("vdot")
def _vdot_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = (ta.conj() * b).sum(-1) if ta is not None else None
    return _tangent_sum(r, (a.conj() * tb).sum(-1) if tb is not None else None)


@jvp("dot")
def _dot_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = (ta * b).sum(-1) if ta is not None else None
    return _tangent_sum(r, (a * tb).sum(-1) if tb is not None else None)


# torch: a[:, None] * b
def _outer_rule(args, bdims):
    a, ab, b, bb = args[0], bdims[0], args[1], bdims[1]
    if _rank(a, ab) != 1 or _rank(b, bb) != 1:
        return NotImplemented
    a = (front(a, ab) if ab is not None else a).unsqueeze(-1)
    b = (front(b, bb) if bb is not None else b).unsqueeze(-2)
    if ab is None:  # (n, 1) * (B, 1, m): the batch leads anyway
        return a * b, 0
    return a * b, 0


@register(
    "outer(self, vec2)",
    "MulBackward0",
    inputs="self, vec2",
    save="self, vec2",
    save_for={"self": "vec2", "vec2": "self"},
    batch=_outer_rule,
    keeps_zero="self, vec2",  # (torch's outer is a product: MulBackward0)
)
@holomorphic
def _outer(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("vec2")
    need_a, need_b = ctx.needs_input_grad
    # torch's outer is a broadcast mul: an integer factor is promoted (mv wants one dtype)
    a = a if a is None or a.dtype is grad.dtype else a.to(grad.dtype)
    b = b if b is None or b.dtype is grad.dtype else b.to(grad.dtype)
    if _lead(grad):
        return (grad @ b if need_a else None), (grad.mT @ a if need_b else None)
    return (grad.mv(b) if need_a else None), (grad.t().mv(a) if need_b else None)


@jvp("outer")
def _outer_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta.unsqueeze(-1) * b if ta is not None else None
    return _tangent_sum(r, a.unsqueeze(-1) * tb.unsqueeze(-2) if tb is not None else None)


@register(
    "mv(self, vec)",
    "MvBackward0",
    inputs="self, vec",
    save="self, vec",
    save_for={"self": "vec", "vec": "self"},
    batch=_matmul_rule,
    keeps_zero="self",
)
@holomorphic
def _mv(ctx, grad):
    a, b = ctx.saved_value("self"), ctx.saved_value("vec")
    need_a, need_b = ctx.needs_input_grad
    if _lead(grad):
        return (grad.unsqueeze(-1) * b if need_a else None), (grad @ a if need_b else None)
    return (grad.outer(b) if need_a else None), (a.t().mv(grad) if need_b else None)


@jvp("mv")
def _mv_jvp(args, out, tangents, lead):
    a, b = args[0], args[1]
    ta, tb = tangents
    r = ta @ b if ta is not None else None
    if tb is not None:
        r = _tangent_sum(r, tb @ a.t() if lead else a.mv(tb))
    return r


def _column_major(t):
    """Whether the 2-D ``t`` is column-major and not row-major (torch's ``is_contiguous()``
    of ``t.t()`` and not of ``t``: numpy's flags, which ignore size-1 dims as torch does,
    read without the transposed view)."""
    flags = _data(t).flags
    return flags.f_contiguous and not flags.c_contiguous


def _addmm_rule(args, bdims):
    inp, ib = args[0], bdims[0]
    beta, alpha = _arg(args, 3, 1), _arg(args, 4, 1)
    for v in (beta, alpha):
        if isinstance(v, Tensor):
            return NotImplemented
    prod, _ = _matmul_batched(args[1], bdims[1], args[2], bdims[2])
    if prod is NotImplemented:
        return NotImplemented
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod, 0
    if ib is not None:
        inp = pad(front(inp, ib), _rank(inp, ib), 2)
    if beta != 1:
        inp = inp * beta
    return inp + prod, 0


@register(
    "addmm(self, mat1, mat2, beta, alpha)",
    "AddmmBackward0",
    inputs="self, mat1, mat2",
    save="mat1, mat2, beta, alpha",
    # each factor only for the other's gradient (as torch's); the layouts it reads in extra
    save_for={"mat1": "mat2", "mat2": "mat1"},
    sizes="mat1, mat2",
    extra=lambda args, out: (_column_major(args[1]), _column_major(args[2])),
    batch=_addmm_rule,
)
@holomorphic
def _addmm(ctx, grad):
    saved = ctx.saved_value
    m1, m2, beta, alpha = saved("mat1"), saved("mat2"), saved("beta"), saved("alpha")
    m1_columns, m2_columns = ctx.extra
    need_in, need_1, need_2 = ctx.needs_input_grad
    g_in = (grad if beta == 1 else grad * beta) if need_in else None
    g1 = g2 = None
    batched = bool(_lead(grad))
    if not batched and alpha == 1 and _plain_products(grad, m1, m2):
        # Note [A linear layer's gradients as two GEMMs]
        return g_in, *_addmm_products(grad, m1, m2, need_1, need_2, m1_columns, m2_columns)
    if need_1:
        g1 = grad @ m2.t() if batched else _mm_in_layout_of(m1_columns, grad, m2.t())
        g1 = g1 if alpha == 1 else g1 * alpha
    if need_2:
        g2 = m1.t() @ grad if batched else _mm_in_layout_of(m2_columns, m1.t(), grad)
        g2 = g2 if alpha == 1 else g2 * alpha
    return g_in, g1, g2


@jvp("addmm")
def _addmm_jvp(args, out, tangents, lead):
    inp, m1, m2 = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    t_in, t1, t2 = tangents
    r = None
    if t_in is not None:
        t_in = _pad(t_in, inp, out, lead)
        r = t_in if beta == 1 else t_in * beta
    prod = _tangent_sum(t1 @ m2 if t1 is not None else None, m1 @ t2 if t2 is not None else None)
    if prod is not None:
        r = _tangent_sum(r, prod if alpha == 1 else prod * alpha)
    return r


# Note [A linear layer's gradients as two GEMMs]
# Without create_graph or forward AD, addmm's gradients are two plain products of arrays.
# Written with gradstack ops they cost five transposes and two mm dispatches, ~10 us per
# Linear of the TinyModel step; as numpy products of the saved arrays, in the layout of
# Note [Matmul gradients in their input's layout], the same bits (the mm kernel is numpy's
# product, in either orientation: Note [The faster orientation of a small-batch product]).


def _plain_products(grad, m1, m2):
    """Whether addmm's gradients may be computed on the arrays: first order, one float
    dtype, no batch."""
    if _grad_mode() or _modes.forward_ad_enabled():
        return False
    dtype = grad.dtype
    return (
        (dtype is gt.float32 or dtype is gt.float64)
        and (m1 is None or m1.dtype is dtype)
        and (m2 is None or m2.dtype is dtype)
    )


def _addmm_products(grad, m1, m2, need_1, need_2, m1_columns, m2_columns):
    g = _data(grad)
    g1 = g2 = None
    if need_1:
        b = _data(m2)  # grad @ m2.T, column-major when mat1 was
        g1 = wrap(np.matmul(b, g.T).T if m1_columns else np.matmul(g, b.T))
    if need_2:
        a = _data(m1)  # m1.T @ grad, column-major when mat2 was (Linear's weight.t())
        g2 = wrap(np.matmul(g.T, a).T if m2_columns else np.matmul(a.T, g))
    return g1, g2


def _mm_in_layout_of(column_major, a, b):
    """``a.mm(b)``, computed so that the result is column-major when the input was.

    Note [Matmul gradients in their input's layout]
    ``Linear`` multiplies by ``weight.t()``, a column-major view; the gradient for that
    view, ``m1.t() @ grad``, is row-major, so after TBackward0 it is column-major for the
    row-major weight, and accumulating it into ``weight.grad`` is a transposing add (about
    30x slower than a contiguous one for a 512x784 float32 weight).  Computing it as
    ``(b.t() @ a.t()).t()`` for a column-major input gives the same values in the
    input's own layout, as torch's ``mm_mat2_backward`` does.
    """
    if column_major:
        return b.t().mm(a.t()).t()
    return a.mm(b)


def _trace_rule(args, bdims):
    x = front(args[0], bdims[0])
    if x.dim() != 3:
        return NotImplemented
    eye = gt.from_numpy(np.eye(x.shape[1], x.shape[2], dtype=x.dtype.numpy))
    return (x * eye).sum((1, 2)), 0


@register("trace(self)", "TraceBackward0", sizes="self", batch=_trace_rule)
def _trace(ctx, grad):
    n, m = ctx.input_shape(0)
    if _first_order_arrays(grad):  # torch's zeros with the diagonal filled, no mask
        out = kernels.result_zeros((n, m), _data(grad).dtype)
        out.reshape(-1)[:: m + 1][: min(n, m)] = _data(grad)
        return (wrap(out),)
    lead = _lead(grad)
    g = grad.reshape(lead + (1, 1)) if lead else grad
    return (gt.where(gt.eye(n, m, dtype=gt.bool), g, 0.0),)


@jvp("trace")
def _trace_jvp(args, out, tangents, lead):
    x = args[0]
    rows = np.arange(min(x.shape))
    return _take(tangents[0], (rows, rows), tuple(x.shape), lead).sum(-1)  # the diagonal


@register("tril(self, diagonal)", "TrilBackward0", save="diagonal", batch=last_two)
def _tril(ctx, grad):
    return (grad.tril(ctx.saved_value("diagonal")),)


@jvp("tril")
def _tril_jvp(args, out, tangents, lead):
    return tangents[0].tril(args[1] if len(args) > 1 else 0)


@register("triu(self, diagonal)", "TriuBackward0", save="diagonal", batch=last_two)
def _triu(ctx, grad):
    return (grad.triu(ctx.saved_value("diagonal")),)


@jvp("triu")
def _triu_jvp(args, out, tangents, lead):
    return tangents[0].triu(args[1] if len(args) > 1 else 0)


# torch 2.x: diag of a vector is diag_embed, of a matrix a diagonal copy
@register(
    "diag(self, diagonal)",
    lambda a: "DiagEmbedBackward0" if a[0].dim() == 1 else "DiagonalBackward0_copy",
    save="diagonal",
    batch=per_sample(
        "it builds or reads a diagonal whose layout depends on the sample's rank and "
        "offset; rare inside vmap"
    ),
    keeps_zero={"DiagEmbedBackward0": "self"},
)
def _diag(ctx, grad):
    k = ctx.saved_value("diagonal")
    shape = ctx.input_shape(0)
    lead = _lead(grad)
    if len(shape) == 1:
        if not lead:
            return (grad.diag(k),)
        rows = np.arange(shape[0]) + max(0, -k)
        return (_batch_gather(grad, (rows, rows + k), tuple(grad.shape[1:])),)
    # 2-D input: scatter the diagonal's gradient back with the index op (linear in grad)
    n, m = shape
    rows = np.arange(max(0, -k), max(0, -k) + grad.shape[len(lead)])
    cols = rows + k
    return (_batch_scatter(grad, (rows, cols), shape),)


@jvp("diag")
def _diag_jvp(args, out, tangents, lead):
    x, k = args[0], args[1] if len(args) > 1 else 0
    (t,) = tangents
    if x.dim() == 1:
        if not lead:
            return t.diag(k)
        rows = np.arange(x.shape[0]) + max(0, -k)
        return _put(t, (rows, rows + k), tuple(out.shape), lead)
    rows = np.arange(out.shape[0]) + max(0, -k)
    return _take(t, (rows, rows + k), tuple(x.shape), lead)
