"""Embeddings as functions: ``embedding`` (one op of the registry, EmbeddingBackward0),
``embedding_bag`` (bags of its rows: Note [A bag is a padded row]) and ``one_hot``.

Examples
--------
>>> import gradstack_tensor as gt
>>> table = gt.arange(10.0).reshape(5, 2)
>>> embedding(gt.tensor([4, 0]), table).tolist()
[[8.0, 9.0], [0.0, 1.0]]
>>> embedding_bag(gt.tensor([0, 1, 4, 2]), table, gt.tensor([0, 3]), mode="sum").tolist()
[[10.0, 13.0], [4.0, 5.0]]
>>> one_hot(gt.tensor([0, 2]), 3).tolist()
[[1, 0, 0], [0, 0, 1]]
"""

from __future__ import annotations

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_autograd import Function
from gradstack_tensor import Tensor, kernels
from gradstack_tensor.extension import data_of, wrap

from ..parameter import Parameter

__all__ = ["embedding", "embedding_bag", "one_hot"]

_OP = gt.get_op


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of ``weight`` picked by the indices ``input`` (EmbeddingBackward0).

    ``padding_idx``'s row gets no gradient; ``max_norm`` first rescales (in place, without
    recording) the picked rows whose ``norm_type``-norm exceeds it; ``scale_grad_by_freq``
    divides each row's gradient by its number of occurrences in ``input``.
    """
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        if not input.is_contiguous():
            input = input.contiguous()
        with ag.no_grad():
            _OP("embedding_renorm_")(weight, input, max_norm, norm_type)
    return _OP("embedding")(weight, input, padding_idx, bool(scale_grad_by_freq), bool(sparse))


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of embeddings, as
    ``torch.nn.functional.embedding_bag``.

    Note [A bag is a padded row]
    (``mode='max'``, and offsets that go back; sums and means of bags in order follow
    Note [A bag is a run of rows].)  The bags (the rows of a 2-d ``input``, or the runs of
    a 1-d ``input`` that start at ``offsets``) are laid out as the rows of a
    ``(B, longest bag)`` index matrix; a mask marks the real entries (and drops
    ``padding_idx``'s).  The embeddings of that matrix (one ``embedding``) are summed
    under the mask (times ``per_sample_weights``), divided by each bag's count (``mean``)
    or maximised with ``-inf`` in the holes (``max``);
    an empty bag gives zeros, as torch's.

    Parameters
    ----------
    input : Tensor
        ``(B, L)`` bags of equal size, or ``(M,)`` indices cut at ``offsets``.
    weight : Tensor
        The ``(num_embeddings, embedding_dim)`` table.
    offsets : Tensor, optional
        ``(B,)`` starts of each bag (1-d ``input`` only; ``include_last_offset``: ``B + 1``
        offsets, the last the end).
    mode : {'sum', 'mean', 'max'}
    per_sample_weights : Tensor, optional
        One weight per index (``mode='sum'`` only).
    padding_idx : int, optional
        An index that is left out of its bag.
    max_norm, norm_type, scale_grad_by_freq, sparse
        As :func:`embedding` (``scale_grad_by_freq`` and ``sparse`` are not supported with
        ``mode='max'``, as torch).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> table = gt.arange(10.0).reshape(5, 2)
    >>> embedding_bag(gt.tensor([0, 1, 4, 2]), table, gt.tensor([0, 3]), mode="sum").tolist()
    [[10.0, 13.0], [4.0, 5.0]]
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode!r}")
    if not isinstance(weight, Tensor) or weight.dim() != 2:
        raise ValueError(
            "weight has to be a 2D Tensor, but got Tensor of dimension "
            f"{getattr(weight, 'dim', lambda: '?')()}"
        )
    if input.dtype not in (gt.int64, gt.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.dtype} instead (while checking arguments for "
            "embedding_bag)"
        )
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({tuple(per_sample_weights.shape)}) is not "
            f"None, then it must have the same shape as the input ({tuple(input.shape)})"
        )
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "the Pytorch GitHub."
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num:
                raise AssertionError("padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx = num + padding_idx
    idx = input.detach().numpy().astype(np.int64)  # a copy: the backward reads it
    fused = not sparse and _fused(weight, per_sample_weights)  # Note [A bag in one pass]
    if input.dim() == 2:
        if offsets is not None:
            type_str = "<unknown>"
            if isinstance(offsets, Tensor):
                type_str = str(offsets.dtype)
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type_str}"
            )
        bags, length = idx.shape
        starts = np.arange(bags, dtype=np.int64) * length
        ends = starts + length
        if not fused:
            bag_of = np.repeat(np.arange(bags, dtype=np.int64), length)
            rows = idx
            mask = np.ones(idx.shape, dtype=bool)
            flat_pos = np.arange(idx.size).reshape(idx.shape)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets.detach().numpy().astype(np.int64)
        total = idx.shape[0]
        if include_last_offset:
            if starts.shape[0] < 1:
                raise RuntimeError("include_last_offset: number of offset should be at least 1")
            # (torch's kernel ends the last bag at the input's end, whatever offsets[-1])
            starts = starts[:-1]
        ends = np.append(starts[1:], total)
        if starts.shape[0] and starts[0] != 0:
            raise RuntimeError(
                f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                f"start from position 0. However, got {starts[0]}"
            )
        if starts.shape[0] and starts[-1] > total:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length ({total}), but got "
                f"offsets[-1] of {starts[-1]}"
            )
        bags = starts.shape[0]
        counts = np.maximum(ends - starts, 0)
        length = int(counts.max()) if bags else 0
        bag_of = None  # offsets that go back make bags overlap: the padded layout then
        if not fused and mode != "max" and (bags < 2 or bool((starts[1:] >= starts[:-1]).all())):
            bag_of = np.searchsorted(starts, np.arange(total), side="right") - 1
        if not fused and bag_of is None:
            flat_pos = starts[:, None] + np.arange(length)[None, :]
            mask = np.arange(length)[None, :] < counts[:, None]
            flat_pos = np.where(mask, flat_pos, 0)
            rows = idx[flat_pos] if idx.size else np.zeros(flat_pos.shape, dtype=np.int64)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= num):
        bad = idx[(idx < 0) | (idx >= num)][0]
        raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {num}")
    dim = weight.shape[1]
    if bags == 0 or length == 0:
        return weight.new_zeros((bags, dim))
    if max_norm is not None:  # the rows of the bags, renormalised in place (unrecorded)
        with ag.no_grad():
            gt.get_op("embedding_renorm_")(weight, gt.tensor(idx.reshape(-1)), max_norm, norm_type)
    if fused:
        return _EmbeddingBag.apply(
            weight,
            per_sample_weights.reshape(-1) if per_sample_weights is not None else None,
            idx.reshape(-1),
            np.ascontiguousarray(starts, dtype=np.int64),
            np.ascontiguousarray(ends, dtype=np.int64),
            mode,
            -1 if padding_idx is None else padding_idx,
            bool(scale_grad_by_freq),
        )
    if bag_of is not None and mode != "max":  # Note [A bag is a run of rows]
        return _bag_sums(
            idx.reshape(-1),
            bag_of,
            weight,
            bags,
            mode,
            padding_idx,
            per_sample_weights,
            scale_grad_by_freq,
            sparse,
        )
    if padding_idx is not None:
        mask = mask & (rows != padding_idx)
    rows = np.where(mask, rows, 0)
    gathered = embedding(gt.tensor(rows), weight, sparse=sparse)  # (B, longest, dim)
    if scale_grad_by_freq and gathered.requires_grad:
        # each index's gradient divided by its number of occurrences in ``input`` (the
        # holes of the padded layout must not count, so not embedding's own option)
        values, counts = np.unique(idx, return_counts=True)
        freq = np.ones(rows.shape, dtype=np.float64)
        freq[mask] = counts[np.searchsorted(values, rows[mask])]
        scale = gt.tensor(1.0 / freq, dtype=weight.dtype).unsqueeze(-1)
        gathered.register_hook(lambda grad: grad * scale)
    keep = gt.tensor(mask)
    present = keep.unsqueeze(-1)
    if mode == "max":
        filled = gt.where(present, gathered, float("-inf"))
        out = filled.max(1)[0]
        empty = gt.tensor(~mask.any(1)).unsqueeze(-1)
        return gt.where(empty, 0.0, out)
    terms = gt.where(present, gathered, 0.0)
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)[gt.tensor(flat_pos.reshape(-1))]
        terms = terms * psw.reshape(bags, length, 1)
    out = terms.sum(1)
    if mode == "mean":
        count = np.maximum(mask.sum(1), 1).astype(np.float64)
        out = out / gt.tensor(count, dtype=out.dtype).unsqueeze(-1)
    return out


_FUSED_DTYPES = (gt.float32, gt.float64)
_PLAIN = (Tensor, Parameter)


def _fused(weight: Tensor, psw: Tensor | None) -> bool:
    """Whether :class:`_EmbeddingBag` (the fused kernels) computes the bags: float32/float64
    tables that are plain tensors (not vmap's batched ones, whose storage is not their
    values) without a forward-mode tangent (the Function has no ``jvp``), the per-sample
    weights likewise and of the table's dtype.  Otherwise the bags are composed of
    gradstack ops (Notes [A bag is a run of rows] and [A bag is a padded row])."""
    if type(weight) not in _PLAIN or weight.dtype not in _FUSED_DTYPES:
        return False
    if psw is not None and (type(psw) not in _PLAIN or psw.dtype != weight.dtype):
        return False
    unpack = ag.forward_ad.unpack_dual
    return unpack(weight).tangent is None and (psw is None or unpack(psw).tangent is None)


class _EmbeddingBag(Function):
    """``embedding_bag`` by the kernels of tensor-core's ``_embedding_bag_kernels``
    (Note [A bag in one pass]): bag ``b`` is ``idx[starts[b]:ends[b]]``.

    The first-order backward is one kernel call per input; under ``create_graph`` the
    same gradients are written in gradstack ops (:meth:`_composed_grads`), so that they
    differentiate again.
    """

    @staticmethod
    def forward(ctx, weight, psw, idx, starts, ends, mode, pad, scale_grad_by_freq):
        w = data_of(weight)
        p = data_of(psw) if psw is not None else None
        out, max_rows = kernels.embedding_bag_forward(w, idx, starts, ends, mode, p, pad)
        ctx.save_for_backward(weight, psw)
        ctx.bags = (idx, starts, ends, mode, pad, scale_grad_by_freq, max_rows)
        return wrap(out)

    @staticmethod
    def backward(ctx, grad):
        weight, psw = ctx.saved_tensors
        idx, starts, ends, mode, pad, freq, max_rows = ctx.bags
        need_w, need_p = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if ag.is_grad_enabled() or grad.dtype != weight.dtype:
            gw, gp = _EmbeddingBag._composed_grads(ctx, grad, weight, psw, need_w, need_p)
            return gw, gp, None, None, None, None, None, None
        g = data_of(grad)
        p = data_of(psw) if psw is not None else None
        gw = gp = None
        if need_w:
            gw = wrap(
                kernels.embedding_bag_backward(
                    g, idx, starts, ends, weight.shape[0], mode, p, pad, freq, max_rows
                )
            )
        if need_p:
            gp = wrap(
                kernels.embedding_bag_per_sample_weights_backward(
                    g, data_of(weight), idx, starts, ends, pad
                )
            )
        return gw, gp, None, None, None, None, None, None

    @staticmethod
    def _composed_grads(ctx, grad, weight, psw, need_w, need_p):
        """The gradients of the table and the weights in gradstack ops (create_graph)."""
        idx, starts, ends, mode, pad, freq, max_rows = ctx.bags
        num, dim = weight.shape
        counts = np.bincount(idx, minlength=num) if freq else None
        if mode == "max":
            if not need_w:
                return None, None
            flat = max_rows.reshape(-1)
            present = np.flatnonzero(flat >= 0)
            rows = flat[present]
            dest = rows * dim + present % dim
            g = grad.reshape(-1)[gt.tensor(present)]
            if counts is not None:
                g = g * gt.tensor(1.0 / counts[rows], dtype=grad.dtype)
            gw = grad.new_zeros((num * dim,)).index_add(0, gt.tensor(dest), g).reshape(num, dim)
            return gw, None
        lengths = np.maximum(ends - starts, 0)
        bag_of = np.repeat(np.arange(starts.shape[0], dtype=np.int64), lengths)
        first = np.cumsum(lengths) - lengths
        pos = np.arange(bag_of.shape[0], dtype=np.int64) - first[bag_of] + starts[bag_of]
        kept = idx[pos] != pad
        pos, bag_of = pos[kept], bag_of[kept]
        rows = idx[pos]
        g = grad.index_select(0, gt.tensor(bag_of))  # (kept, dim): each entry's bag's row
        gw = gp = None
        if need_w:
            scale = np.ones(pos.shape[0])
            if counts is not None:
                scale = scale / counts[rows]
            if mode == "mean":
                scale = scale / np.bincount(bag_of, minlength=starts.shape[0])[bag_of]
            terms = g * gt.tensor(scale[:, None], dtype=grad.dtype)
            if psw is not None:
                terms = terms * psw[gt.tensor(pos)].unsqueeze(-1)
            gw = grad.new_zeros((num, dim)).index_add(0, gt.tensor(rows), terms)
        if need_p:
            dots = (g * weight.index_select(0, gt.tensor(rows))).sum(-1)
            gp = grad.new_zeros((idx.shape[0],)).index_add(0, gt.tensor(pos), dots)
        return gw, gp


def _bag_sums(idx, bag_of, weight, bags, mode, padding_idx, psw, scale_grad_by_freq, sparse):
    """``mode='sum'``/``'mean'`` of :func:`embedding_bag`, bag ``bag_of[i]`` holding index
    ``i`` (bags in order, each a run of ``idx``).

    Note [A bag is a run of rows]
    Sums and means need no padded layout: the rows of ``idx`` (one ``embedding``, its
    first-order backward one scatter-add of rows), times ``per_sample_weights``, are added
    into the ``(bags, dim)`` zeros at their bags by one ``index_add`` (one C pass, in index
    order as torch's bag loop; its backward reads the gradient back with ``index_select``),
    then divided by each bag's count for ``mean`` (torch's ``output /= max(bag_size, 1)``).
    ``padding_idx``'s entries are dropped first, so they neither add nor count.
    """
    keep = None
    if padding_idx is not None:
        keep = idx != padding_idx
        if keep.all():
            keep = None
        else:
            idx, bag_of = idx[keep], bag_of[keep]
    rows = embedding(
        gt.tensor(idx), weight, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse
    )  # (kept, dim)
    if psw is not None:
        w = psw.reshape(-1)
        if keep is not None:
            w = w[gt.tensor(np.flatnonzero(keep))]
        rows = rows * w.unsqueeze(-1)
    out = weight.new_zeros((bags, weight.shape[1])).index_add(0, gt.tensor(bag_of), rows)
    if mode == "mean":
        count = np.maximum(np.bincount(bag_of, minlength=bags), 1).astype(np.float64)
        out = out / gt.tensor(count, dtype=out.dtype).unsqueeze(-1)
    return out


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor of shape ``tensor.shape + (num_classes,)`` with a 1 at each index
    (``num_classes=-1``: one more than the largest index)."""
    if tensor.dtype != gt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif num_classes < -1:
        raise RuntimeError("num_classes should be positive")
    if tensor.numel() > 0:
        if int(tensor.min().item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max().item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == gt.arange(num_classes)).long()
