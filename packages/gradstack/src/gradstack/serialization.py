"""``gradstack.save`` / ``gradstack.load``: the safe format of ``gradstack_nn.serialization``
(a ZIP of a JSON manifest and ``.npy`` arrays, never a pickle)."""

from gradstack_nn.serialization import SerializationError, load, save

__all__ = ["save", "load", "SerializationError"]
