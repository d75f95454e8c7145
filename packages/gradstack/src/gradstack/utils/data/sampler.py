"""``gradstack.utils.data.sampler``: torch's module path (``from torch.utils.data.sampler import
...``) for gradstack-nn-mini's ``gradstack_nn.utils.data.sampler``."""

from gradstack_nn.utils.data.sampler import *  # noqa: F403
from gradstack_nn.utils.data.sampler import __all__  # noqa: F401
