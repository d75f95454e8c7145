"""The layers of ``gradstack_nn`` (``gradstack.nn``), one family per module, as torch's
``torch/nn/modules/`` (each family lists its layers in its ``__all__``)."""

from . import (
    activation,
    adaptive,
    attention,
    batchnorm,
    channelshuffle,
    container,
    conv,
    data_parallel,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    linear_cross_entropy,
    linear_cross_entropy_options,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    sync_batchnorm,
    transformer,
    upsampling,
)
from .activation import *  # noqa: F403
from .adaptive import *  # noqa: F403
from .attention import *  # noqa: F403
from .batchnorm import *  # noqa: F403
from .channelshuffle import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .data_parallel import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .instancenorm import *  # noqa: F403
from .lazy import *  # noqa: F403
from .linear import *  # noqa: F403
from .linear_cross_entropy import *  # noqa: F403
from .linear_cross_entropy_options import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .sync_batchnorm import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

# (``__all__ +=`` of each family's list, a form type checkers follow through star imports)
__all__: list[str] = []
__all__ += module.__all__
__all__ += container.__all__
__all__ += lazy.__all__
__all__ += linear.__all__
__all__ += conv.__all__
__all__ += pooling.__all__
__all__ += padding.__all__
__all__ += fold.__all__
__all__ += pixelshuffle.__all__
__all__ += channelshuffle.__all__
__all__ += upsampling.__all__
__all__ += flatten.__all__
__all__ += activation.__all__
__all__ += adaptive.__all__
__all__ += dropout.__all__
__all__ += normalization.__all__
__all__ += batchnorm.__all__
__all__ += sync_batchnorm.__all__
__all__ += instancenorm.__all__
__all__ += sparse.__all__
__all__ += distance.__all__
__all__ += loss.__all__
__all__ += linear_cross_entropy.__all__
__all__ += linear_cross_entropy_options.__all__
__all__ += rnn.__all__
__all__ += attention.__all__
__all__ += transformer.__all__
__all__ += data_parallel.__all__
