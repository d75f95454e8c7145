"""``gradstack.save`` / ``gradstack.load`` and ``gradstack.serialization`` (torch's
``torch.serialization``): the format of ``gradstack_nn.serialization`` (a ZIP of a JSON
manifest and ``.npy`` arrays; other objects pickled, loaded by the weights-only unpickler
with ``add_safe_globals``/``safe_globals``, or with ``weights_only=False``)."""

from gradstack_nn.serialization import (
    SerializationError,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    load,
    safe_globals,
    save,
)

__all__ = [
    "save",
    "load",
    "SerializationError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
]
