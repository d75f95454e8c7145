"""Variable-length sequences for the recurrent layers, as ``torch.nn.utils.rnn``:
``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``,
``pack_sequence``, ``unpad_sequence``, ``unpack_sequence``.

Note [A packed sequence is the steps' rows, longest first]
A ``PackedSequence`` holds the valid elements of a batch of sequences time step by time
step: ``data`` has, for each step ``t``, the rows of the ``batch_sizes[t]`` sequences
still running at ``t``, the sequences sorted by decreasing length (``sorted_indices`` maps
that order back to the batch's, ``unsorted_indices`` the other way).  Packing and
unpacking are ``index_select``/``index_copy`` of rows, so gradients flow through them,
and the recurrent layers run a packed input step by step on the running rows only
(``RNNBase``'s packed path), as torch's do.

Examples
--------
>>> import gradstack_tensor as gt
>>> padded = gt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]).T  # (time, batch)
>>> packed = pack_padded_sequence(padded, [3, 2])
>>> packed.data.tolist(), packed.batch_sizes.tolist()
([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
>>> out, lengths = pad_packed_sequence(packed, batch_first=True)
>>> out.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]], [3, 2])
"""

from __future__ import annotations

from collections import namedtuple

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "pack_sequence",
    "unpad_sequence",
    "unpack_sequence",
    "invert_permutation",
]


class PackedSequence(
    namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])
):
    """The valid elements of a batch of sequences, step by step (Note [A packed sequence is
    the steps' rows, longest first]).  Build one with :func:`pack_padded_sequence` or
    :func:`pack_sequence`."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise ValueError(
                "PackedSequence needs batch_sizes (build it with pack_padded_sequence)"
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _map_data(self, fn):
        return type(self)(fn(self.data), self.batch_sizes, self.sorted_indices,
                          self.unsorted_indices)  # fmt: skip

    def to(self, *args, **kwargs):
        """The same sequence with ``data.to(*args, **kwargs)``."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._map_data(lambda _: data)

    def cpu(self):
        return self

    def double(self):
        return self._map_data(lambda d: d.double())

    def float(self):
        return self._map_data(lambda d: d.float())

    def half(self):
        return self._map_data(lambda d: d.half())

    def long(self):
        return self._map_data(lambda d: d.long())

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _invert_permutation(permutation):
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(p)
    inverse[p] = np.arange(p.size)
    return gt.tensor(inverse, dtype=gt.int64)


def invert_permutation(permutation):
    """The inverse of a permutation of ``0..n-1`` (int64; None stays None), as torch's
    ``nn.utils.rnn.invert_permutation``.

    >>> import gradstack_tensor as gt
    >>> invert_permutation(gt.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    return _invert_permutation(permutation)


def _lengths_list(lengths) -> list:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.dtype} tensor")  # fmt: skip
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:  # fmt: skip
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    of ``lengths`` (sorted decreasingly unless ``enforce_sorted=False``)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"pack_padded_sequence(): expected a Tensor input, got {type(input).__name__}"
        )
    lens = _lengths_list(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if len(lens) != x.shape[1]:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
            f"(batch_size={x.shape[1]})"
        )
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
        sorted_indices = None
        order = np.arange(len(lens))
    else:
        order = np.argsort(-np.asarray(lens), kind="stable")
        sorted_indices = gt.tensor(order, dtype=gt.int64)
        x = x.index_select(1, sorted_indices)
    lens_sorted = [lens[i] for i in order]
    if lens_sorted and lens_sorted[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    if lens_sorted and lens_sorted[0] > x.shape[0]:
        raise RuntimeError(
            f"Expected sequence length to be at most {x.shape[0]}, but got a sequence of "
            f"length {lens_sorted[0]}"
        )
    steps = lens_sorted[0] if lens_sorted else 0
    batch_sizes = [sum(1 for n in lens_sorted if n > t) for t in range(steps)]
    batch = x.shape[1]
    rows = np.concatenate(
        [t * batch + np.arange(b) for t, b in enumerate(batch_sizes)] or [np.zeros(0, int)]
    )
    flat = x.reshape((x.shape[0] * batch,) + tuple(x.shape[2:]))
    data = flat.index_select(0, gt.tensor(rows, dtype=gt.int64))
    return PackedSequence(data, gt.tensor(batch_sizes, dtype=gt.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length=None):  # fmt: skip
    """``(padded, lengths)``: the packed batch as a padded tensor, in the batch's original
    order, and the sequences' lengths."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    batch = batch_sizes[0] if batch_sizes else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps_out = total_length
    else:
        steps_out = steps
    rows = np.concatenate(
        [t * batch + np.arange(b) for t, b in enumerate(batch_sizes)] or [np.zeros(0, int)]
    )
    flat = gt.full((steps_out * batch,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    flat = flat.index_copy(0, gt.tensor(rows, dtype=gt.int64), data)
    padded = flat.reshape((steps_out, batch) + tuple(data.shape[1:]))
    lengths = np.array([sum(1 for b in batch_sizes if b > i) for i in range(batch)], np.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, gt.tensor(lengths, dtype=gt.int64)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:  # fmt: skip
    """Stack tensors of shapes ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padding with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in seqs)
    rest = tuple(seqs[0].shape[1:])
    pieces = []
    for s in seqs:
        pad = gt.full((longest - s.shape[0],) + rest, padding_value, dtype=s.dtype)
        pieces.append(gt.cat([s, pad] if padding_side == "right" else [pad, s], 0))
    return gt.stack(pieces, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    """``pack_padded_sequence(pad_sequence(sequences), lengths)``."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths, batch_first: bool = False) -> list:
    """The list of sequences of ``lengths`` in a padded batch (``pad_sequence``'s inverse)."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    """The list of sequences in a packed batch (``pack_sequence``'s inverse)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
