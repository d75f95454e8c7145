"""``gradstack.save`` / ``gradstack.load`` and ``gradstack.serialization`` (torch's
``torch.serialization``): the format of ``gradstack_nn.serialization`` (a ZIP of a JSON
manifest and ``.npy`` arrays; other objects pickled, loaded by the weights-only unpickler
with ``add_safe_globals``/``safe_globals``, or with ``weights_only=False``)."""

# the implementation's public names, as it lists them (one list to keep)
from gradstack_nn.serialization import *  # noqa: F403
from gradstack_nn.serialization import __all__  # noqa: F401
