"""``torch.nn.attention.flex_attention``: attention with a score modification and a block
mask, computed densely with gradstack ops (differentiable to any order).

Note [flex_attention as a dense reference]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
torch compiles ``flex_attention`` into a fused kernel that visits only the blocks a
:class:`BlockMask` keeps; without ``torch.compile`` it runs its unfused reference, which
materialises the ``(B, H, L, S)`` scores.  gradstack computes that reference: the scores
``q @ k^T * scale``, ``score_mod`` called once on all of them with index tensors that
broadcast (``b`` of shape ``(B, 1, 1, 1)``, ``h`` ``(1, H, 1, 1)``, ``q_idx``
``(1, 1, L, 1)``, ``kv_idx`` ``(1, 1, 1, S)``: an elementwise ``score_mod`` or
``mask_mod`` written for torch's scalars gives the same values), the mask of the block
mask (its blocks, and its ``mask_mod`` inside the blocks that are not full), then a
softmax in which a row with no kept score gives 0 (and a log-sum-exp of ``-inf``), as
torch's.  The memory is ``O(B H L S)``; long sequences want torch's compiled kernel.
Gradients are those of the ops (torch has no CPU backward for ``flex_attention``).
``create_block_mask`` evaluates ``mask_mod`` the same way over the sequence lengths
rounded up to whole blocks (positions past the lengths masked), and finds torch's block
lists: a block with any kept position is listed, in ``full_*`` when every position is.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import gradstack_autograd as ag
import gradstack_tensor as gt
from gradstack_tensor import Tensor

__all__ = [
    "flex_attention",
    "create_block_mask",
    "create_mask",
    "BlockMask",
    "and_masks",
    "or_masks",
    "noop_mask",
    "AuxRequest",
    "AuxOutput",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention(..., return_aux=)`` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """The auxiliary outputs: the log-sum-exp and the maximum of each row's scores."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


def noop_mask(batch, head, token_q, token_kv) -> Tensor:
    """The mask_mod that keeps every score.

    >>> import gradstack_tensor as gt
    >>> noop_mask(*[gt.tensor(0)] * 4).item()
    True
    """
    return gt.ones((), dtype=gt.bool)


def and_masks(*mask_mods: Callable) -> Callable:
    """The mask_mod keeping a score where every one of ``mask_mods`` keeps it.

    >>> import gradstack_tensor as gt
    >>> i = gt.arange(3)
    >>> both = and_masks(lambda b, h, q, k: q >= k, lambda b, h, q, k: q - k < 2)
    >>> both(0, 0, i[:, None], i).int().tolist()
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    """
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = gt.ones((), dtype=gt.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result

    return and_mask


def or_masks(*mask_mods: Callable) -> Callable:
    """The mask_mod keeping a score where any one of ``mask_mods`` keeps it.

    >>> import gradstack_tensor as gt
    >>> i = gt.arange(3)
    >>> either = or_masks(lambda b, h, q, k: q == k, lambda b, h, q, k: k == 0)
    >>> either(0, 0, i[:, None], i).int().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 0, 1]]
    """
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = gt.zeros((), dtype=gt.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result

    return or_mask


def _indices(B: int, H: int, L: int, S: int):
    """The broadcasting index tensors (Note [flex_attention as a dense reference])."""
    return (
        gt.arange(B).view(B, 1, 1, 1),
        gt.arange(H).view(1, H, 1, 1),
        gt.arange(L).view(1, 1, L, 1),
        gt.arange(S).view(1, 1, 1, S),
    )


def _as_mask(value, shape) -> Tensor:
    m = value if isinstance(value, Tensor) else gt.tensor(value)
    if m.dtype is not gt.bool:
        m = m.bool()
    return m.expand(*shape)


def create_mask(mod_fn: Callable, B, H, Q_LEN: int, KV_LEN: int, device="cpu") -> Tensor:  # noqa: N803 - torch's names
    """The dense bool mask ``(B, H, Q_LEN, KV_LEN)`` of a mask_mod (``B``/``H`` None: 1).

    >>> create_mask(lambda b, h, q, k: q >= k, None, None, 2, 2).int().tolist()
    [[[[1, 0], [1, 1]]]]
    """
    B, H = B or 1, H or 1
    with ag.no_grad():
        return _as_mask(mod_fn(*_indices(B, H, Q_LEN, KV_LEN)), (B, H, Q_LEN, KV_LEN)).clone()


def _block_lists(dense: Tensor):
    """``(num_blocks, indices)`` of a ``(B, H, rows, cols)`` 0/1 block matrix, torch's
    layout: each row's listed blocks first, ascending, then the others."""
    num = dense.sum(-1).to(gt.int32)
    cols = dense.shape[-1]
    key = (1 - dense.long()) * cols + gt.arange(cols)  # (distinct keys: any sort is stable)
    return num, key.argsort(dim=-1).to(gt.int32)


class BlockMask:
    """Which ``(BLOCK_SIZE)`` blocks of the scores ``flex_attention`` computes, the ones
    among them that are full (every score kept) and the ``mask_mod`` applied inside the
    others; made by :func:`create_block_mask` or :meth:`from_kv_blocks`.

    >>> bm = create_block_mask(lambda b, h, q, k: q >= k, None, None, 256, 256)
    >>> bm.kv_num_blocks.tolist(), bm.full_kv_num_blocks.tolist(), bm.to_dense().tolist()
    ([[[1, 1]]], [[[0, 1]]], [[[[1, 0], [1, 1]]]])
    """

    def __init__(
        self,
        seq_lengths,
        kv_num_blocks,
        kv_indices,
        full_kv_num_blocks,
        full_kv_indices,
        q_num_blocks,
        q_indices,
        full_q_num_blocks,
        full_q_indices,
        BLOCK_SIZE,  # noqa: N803 - torch's name
        mask_mod,
    ):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod if mask_mod is not None else noop_mask

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks: Tensor,
        kv_indices: Tensor,
        full_kv_num_blocks: Tensor | None = None,
        full_kv_indices: Tensor | None = None,
        BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,  # noqa: N803
        mask_mod: Callable | None = None,
        seq_lengths: tuple[int, int] | None = None,
    ) -> BlockMask:
        """A block mask from its kv-side lists (the q-side ones are derived)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise RuntimeError("full_kv_num_blocks and full_kv_indices must be both provided")
        size = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
        partial = _dense_of(kv_num_blocks, kv_indices)
        q_num, q_idx = _block_lists(partial.transpose(-2, -1))
        full_q_num = full_q_idx = None
        if full_kv_num_blocks is not None:
            full = _dense_of(full_kv_num_blocks, full_kv_indices)
            full_q_num, full_q_idx = _block_lists(full.transpose(-2, -1))
        if seq_lengths is None:
            seq_lengths = (kv_num_blocks.shape[-1] * size[0], kv_indices.shape[-1] * size[1])
        return cls(
            seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
            q_num, q_idx, full_q_num, full_q_idx, size, mask_mod,
        )  # fmt: skip

    @property
    def shape(self) -> tuple[int, ...]:
        """``(B, H, Q_LEN, KV_LEN)``."""
        return tuple(self.kv_indices.shape[:-2]) + self.seq_lengths

    def as_tuple(self, flatten: bool = True):
        """The mask's fields as a tuple (torch's order)."""
        size = self.BLOCK_SIZE if flatten else (self.BLOCK_SIZE,)
        return (
            *self.seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
            self.full_kv_indices, self.q_num_blocks, self.q_indices, self.full_q_num_blocks,
            self.full_q_indices, *size, self.mask_mod,
        )  # fmt: skip

    def numel(self) -> int:
        """How many scores the mask covers: ``B * H * Q_LEN * KV_LEN``."""
        return math.prod(self.shape)

    def to_dense(self) -> Tensor:
        """The ``(B, H, q blocks, kv blocks)`` int32 matrix of the computed blocks."""
        dense = _dense_of(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _dense_of(self.full_kv_num_blocks, self.full_kv_indices)
        return dense.to(gt.int32)

    def sparsity(self) -> float:
        """The percentage of the scores the computed blocks leave out (torch's measure:
        negative when the blocks overhang short sequences)."""
        computed = self.to_dense().sum().item() * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed / self.numel())

    def to(self, device) -> BlockMask:
        """``self``: gradstack's tensors are on the CPU."""
        return self

    def __getitem__(self, index) -> BlockMask:
        """The mask of some batches/heads; an int keeps its dim (torch's)."""
        parts = index if isinstance(index, tuple) else (index,)
        index = tuple(
            slice(i, (i + 1) or None) if isinstance(i, int) and not isinstance(i, bool) else i
            for i in parts
        )

        def pick(t):
            return None if t is None else t[index]

        kv_num, kv_idx = self.kv_num_blocks[index], self.kv_indices[index]
        return BlockMask.from_kv_blocks(
            kv_num, kv_idx, pick(self.full_kv_num_blocks), pick(self.full_kv_indices),
            self.BLOCK_SIZE, self.mask_mod, self.seq_lengths,
        )  # fmt: skip

    def __repr__(self) -> str:
        def shape(t):
            return None if t is None else f"torch.Size({list(t.shape)})"

        fields = [
            ("kv_num_blocks", shape(self.kv_num_blocks)),
            ("kv_indices", shape(self.kv_indices)),
            ("full_kv_num_blocks", shape(self.full_kv_num_blocks)),
            ("full_kv_indices", shape(self.full_kv_indices)),
            ("q_num_blocks", shape(self.q_num_blocks)),
            ("q_indices", shape(self.q_indices)),
            ("full_q_num_blocks", shape(self.full_q_num_blocks)),
            ("full_q_indices", shape(self.full_q_indices)),
            ("BLOCK_SIZE", self.BLOCK_SIZE),
            ("shape", self.shape),
            ("sparsity", f"{self.sparsity():.2f}%"),
            ("mask_mod", getattr(self.mask_mod, "__name__", self.mask_mod)),
        ]
        body = "".join(f"    {k}={v},\n" for k, v in fields)
        return "BlockMask(\n" + body[:-2] + "\n)"

    def _dense_mask(self, B: int, H: int, L: int, S: int) -> Tensor:
        """The ``(B, H, L, S)`` bool mask of the scores kept (Note [flex_attention as a
        dense reference])."""
        if self.seq_lengths != (L, S):
            raise ValueError(
                f"block_mask was created for block_mask.shape={self.shape} but got "
                f"q_len={L} and kv_len={S}. Create the block mask for the lengths of query "
                "and key."
            )
        qb, kb = self.BLOCK_SIZE
        q_block = gt.arange(L) // qb
        k_block = gt.arange(S) // kb

        def at_positions(blocks):
            # (B', H', q blocks, kv blocks) -> (B', H', L, S)
            return blocks.index_select(-2, q_block).index_select(-1, k_block).bool()

        partial = at_positions(_dense_of(self.kv_num_blocks, self.kv_indices))
        mod = _as_mask(self.mask_mod(*_indices(B, H, L, S)), (B, H, L, S))
        mask = partial.expand(B, H, L, S) & mod
        if self.full_kv_num_blocks is not None:
            full = at_positions(_dense_of(self.full_kv_num_blocks, self.full_kv_indices))
            mask = mask | full.expand(B, H, L, S)
        return mask


def _dense_of(num_blocks: Tensor, indices: Tensor) -> Tensor:
    """The bool ``(..., rows, cols)`` block matrix listed by ``num_blocks``/``indices``."""
    cols = indices.shape[-1]
    listed = gt.arange(cols).view(*([1] * num_blocks.dim()), cols) < num_blocks.unsqueeze(-1)
    dense = gt.zeros(*indices.shape, dtype=gt.int32)
    dense = dense.scatter(-1, indices.long(), listed.to(gt.int32))
    return dense.bool()


def create_block_mask(
    mask_mod: Callable,
    B: int | None,  # noqa: N803 - torch's names
    H: int | None,  # noqa: N803
    Q_LEN: int,  # noqa: N803
    KV_LEN: int,  # noqa: N803
    device: Any = "cuda",
    BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,  # noqa: N803
    _compile: bool = False,
) -> BlockMask:
    """The :class:`BlockMask` of ``mask_mod(b, h, q_idx, kv_idx)`` (``B``/``H`` None: one
    mask for every batch/head); ``device`` is accepted and ignored (the CPU).

    >>> bm = create_block_mask(lambda b, h, q, k: q >= k, None, None, 300, 260, device="cpu")
    >>> bm.shape, bm.kv_num_blocks.tolist(), bm.full_kv_num_blocks.tolist()
    ((1, 1, 300, 260), [[[1, 1, 3]]], [[[0, 1, 0]]])
    """
    B, H = B or 1, H or 1
    qb, kb = BLOCK_SIZE if isinstance(BLOCK_SIZE, tuple) else (BLOCK_SIZE, BLOCK_SIZE)
    nq, nk = -(-Q_LEN // qb), -(-KV_LEN // kb)
    with ag.no_grad():
        b, h, q, k = _indices(B, H, nq * qb, nk * kb)
        mask = _as_mask(mask_mod(b, h, q, k), (B, H, nq * qb, nk * kb))
        mask = mask & (q < Q_LEN) & (k < KV_LEN)  # past the lengths: masked
        blocks = mask.reshape(B, H, nq, qb, nk, kb).to(gt.int32)
        kept = blocks.sum((3, 5))
        full = kept == qb * kb
        partial = (kept > 0) & full.logical_not()
        kv_num, kv_idx = _block_lists(partial)
        full_num, full_idx = _block_lists(full)
    return BlockMask.from_kv_blocks(
        kv_num, kv_idx, full_num, full_idx, (qb, kb), mask_mod, (Q_LEN, KV_LEN)
    )


def _check(query, key, value, enable_gqa):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"flex_attention(): argument '{name}' must be Tensor, not {type(t).__name__}"
            )
        if t.dim() != 4:
            raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not query.is_floating_point():
        raise ValueError(f"flex_attention takes floating-point tensors, got {query.dtype}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"Expect query and key to have the same embedding dimension but got "
            f"E={query.shape[-1]} and E={key.shape[-1]}."
        )
    if key.shape[1] != value.shape[1]:
        raise ValueError(
            f"Expect key and value to have the same number of heads but got "
            f"Hkv={key.shape[1]} and Hkv={value.shape[1]}."
        )
    hq, hkv = query.shape[1], key.shape[1]
    if enable_gqa:
        if hq % hkv != 0:
            raise ValueError(
                f"Expect number of query heads to be a multiple of kv heads for GQA but got "
                f"Hq={hq} and Hkv={hkv}."
            )
    elif hq != hkv:
        raise ValueError(
            f"Expect query and key/value to have the same number of heads but got Hq={hq} "
            f"and Hkv={hkv}. Try setting enable_gqa=True for GQA."
        )


def flex_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    score_mod: Callable | None = None,
    block_mask: BlockMask | None = None,
    scale: float | None = None,
    enable_gqa: bool = False,
    return_lse: bool = False,
    kernel_options: dict | None = None,
    *,
    return_aux: AuxRequest | None = None,
):
    """Attention of ``query`` ``(B, Hq, L, E)`` over ``key`` ``(B, Hkv, S, E)`` and
    ``value`` ``(B, Hkv, S, Ev)``: ``softmax(score_mod(q @ k^T * scale, b, h, q_idx,
    kv_idx))`` over the scores ``block_mask`` keeps, times ``value`` (``scale``
    ``1 / sqrt(E)`` by default; ``enable_gqa``: each group of ``Hq / Hkv`` query heads
    shares a key/value head).  A query with no kept score gives zeros.  With
    ``return_lse`` (or ``return_aux=AuxRequest(lse=True)``) also the log-sum-exp of the
    kept scores, ``(B, Hq, L)`` (Note [flex_attention as a dense reference]).

    >>> import gradstack_tensor as gt
    >>> q = gt.ones(1, 1, 3, 2)
    >>> v = gt.arange(3.0).view(1, 1, 3, 1)
    >>> causal = create_block_mask(lambda b, h, i, j: i >= j, None, None, 3, 3)
    >>> flex_attention(q, q, v, block_mask=causal).flatten().tolist()
    [0.0, 0.5, 1.0]
    """
    _check(query, key, value, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. return_lse is deprecated, please "
            "use return_aux=AuxRequest(lse=True) instead."
        )
    if return_lse:
        warnings.warn(
            "return_lse is deprecated and will be removed in v2.10. Please use "
            "return_aux=AuxRequest(lse=True) instead.",
            FutureWarning,
            stacklevel=2,
        )
    B, hq, L, E = query.shape  # noqa: N806
    hkv, S = key.shape[1], key.shape[2]  # noqa: N806
    if hq != hkv:
        key = key.repeat_interleave(hq // hkv, dim=1)
        value = value.repeat_interleave(hq // hkv, dim=1)
    factor = 1.0 / math.sqrt(E) if scale is None else scale
    scores = query @ key.transpose(-2, -1) * factor
    if score_mod is not None:
        scores = score_mod(scores, *_indices(B, hq, L, S))
        if not isinstance(scores, Tensor):
            scores = gt.tensor(scores, dtype=query.dtype)
        scores = scores.expand(B, hq, L, S)
    if block_mask is not None:
        keep = block_mask._dense_mask(B, hq, L, S)
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    # softmax in which a row with no kept score is zeros (its maximum -inf taken as 0)
    top = scores.detach().amax(-1, keepdim=True)
    top = top.masked_fill(top == float("-inf"), 0.0)
    weights = (scores - top).exp()
    total = weights.sum(-1, keepdim=True)
    out = (weights / total.masked_fill(total == 0, 1.0)) @ value
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    lse = (total.log() + top).squeeze(-1) if want_lse else None
    if return_aux is not None:
        max_scores = scores.detach().amax(-1) if return_aux.max_scores else None
        return out, AuxOutput(lse=lse if return_aux.lse else None, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
