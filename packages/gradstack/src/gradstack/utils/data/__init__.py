"""``gradstack.utils.data``: ``Dataset``, ``TensorDataset``, ``DataLoader``, samplers,
``random_split`` ... from gradstack-nn-mini (``gradstack_nn.utils.data``)."""

from gradstack_nn.utils.data import *  # noqa: F403
from gradstack_nn.utils.data import __all__  # noqa: F401

from . import dataloader, dataset, sampler  # noqa: F401 - torch's module paths
from .distributed import DistributedSampler  # noqa: F401 - from gradstack-distributed
