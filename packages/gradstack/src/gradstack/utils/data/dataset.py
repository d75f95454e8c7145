"""``gradstack.utils.data.dataset``: torch's module path (``from torch.utils.data.dataset import
...``) for gradstack-nn-mini's ``gradstack_nn.utils.data.dataset``."""

from gradstack_nn.utils.data.dataset import *  # noqa: F403
from gradstack_nn.utils.data.dataset import __all__  # noqa: F401
