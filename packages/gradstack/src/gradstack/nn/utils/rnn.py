"""``gradstack.nn.utils.rnn``: packed sequences (``gradstack_nn.utils.rnn``)."""

from gradstack_nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)

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
