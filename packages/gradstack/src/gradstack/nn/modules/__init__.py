"""``gradstack.nn.modules``: torch's module paths for the layers.

Programs import layers from where torch defines them (``from torch.nn.modules.linear
import Linear``, ``torch.nn.modules.rnn.LSTM``, ``torch.nn.modules.loss._Loss`` to write a
loss).  gradstack-nn-mini arranges its modules by its own concepts (``MultiheadAttention``
lives in its ``attention`` module, not in ``activation``), so each submodule here is made
from the table below: the names torch's module of that name defines, taken from
``gradstack.nn``; any other name is looked up in nn-mini's module of the same name, where
there is one (``loss._Loss``).

>>> from gradstack.nn.modules.linear import Linear
>>> from gradstack.nn.modules.activation import MultiheadAttention
>>> import gradstack.nn.modules.rnn
>>> gradstack.nn.modules.rnn.LSTM is gradstack.nn.LSTM
True
"""

# Note [The facade only re-exports]: every class here is nn-mini's.
import importlib as _importlib
import sys as _sys
import types as _types

import gradstack_nn.modules as _layers
from gradstack_nn.modules import *  # noqa: F403
from gradstack_nn.modules import __all__  # noqa: F401

# torch 2.13's ``torch.nn.modules.<name>.__all__``, the names gradstack has
_PATHS = {
    "adaptive": ["AdaptiveLogSoftmaxWithLoss"],
    "activation": [
        "Threshold",
        "ReLU",
        "RReLU",
        "Hardtanh",
        "ReLU6",
        "Sigmoid",
        "Hardsigmoid",
        "Tanh",
        "SiLU",
        "Mish",
        "Hardswish",
        "ELU",
        "CELU",
        "SELU",
        "GLU",
        "GELU",
        "Hardshrink",
        "LeakyReLU",
        "LogSigmoid",
        "Softplus",
        "Softshrink",
        "MultiheadAttention",
        "PReLU",
        "Softsign",
        "Tanhshrink",
        "Softmin",
        "Softmax",
        "Softmax2d",
        "LogSoftmax",
    ],
    "batchnorm": [
        "BatchNorm1d",
        "LazyBatchNorm1d",
        "BatchNorm2d",
        "LazyBatchNorm2d",
        "BatchNorm3d",
        "LazyBatchNorm3d",
        "SyncBatchNorm",
    ],
    "channelshuffle": ["ChannelShuffle"],
    "container": [
        "Container",
        "Sequential",
        "ModuleList",
        "ModuleDict",
        "ParameterList",
        "ParameterDict",
    ],
    "conv": [
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "LazyConv1d",
        "LazyConv2d",
        "LazyConv3d",
        "LazyConvTranspose1d",
        "LazyConvTranspose2d",
        "LazyConvTranspose3d",
    ],
    "distance": ["PairwiseDistance", "CosineSimilarity"],
    "dropout": [
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
        "FeatureAlphaDropout",
    ],
    "flatten": ["Flatten", "Unflatten"],
    "fold": ["Fold", "Unfold"],
    "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"],
    "lazy": ["LazyModuleMixin"],
    "linear": ["Bilinear", "Identity", "LazyLinear", "Linear"],
    "linear_cross_entropy_options": ["LinearCrossEntropyOptions"],
    "loss": [
        "L1Loss",
        "NLLLoss",
        "CTCLoss",
        "PoissonNLLLoss",
        "GaussianNLLLoss",
        "KLDivLoss",
        "MSELoss",
        "BCELoss",
        "BCEWithLogitsLoss",
        "HingeEmbeddingLoss",
        "MultiLabelMarginLoss",
        "SmoothL1Loss",
        "HuberLoss",
        "SoftMarginLoss",
        "CrossEntropyLoss",
        "LinearCrossEntropyLoss",
        "MultiLabelSoftMarginLoss",
        "CosineEmbeddingLoss",
        "MarginRankingLoss",
        "MultiMarginLoss",
        "TripletMarginLoss",
        "TripletMarginWithDistanceLoss",
    ],
    "module": ["Module"],
    "normalization": [
        "LocalResponseNorm",
        "CrossMapLRN2d",
        "LayerNorm",
        "GroupNorm",
        "RMSNorm",
    ],
    "padding": [
        "CircularPad1d",
        "CircularPad2d",
        "CircularPad3d",
        "ConstantPad1d",
        "ConstantPad2d",
        "ConstantPad3d",
        "ReflectionPad1d",
        "ReflectionPad2d",
        "ReflectionPad3d",
        "ReplicationPad1d",
        "ReplicationPad2d",
        "ReplicationPad3d",
        "ZeroPad1d",
        "ZeroPad2d",
        "ZeroPad3d",
    ],
    "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
    "pooling": [
        "MaxPool1d",
        "MaxPool2d",
        "MaxPool3d",
        "AvgPool1d",
        "AvgPool2d",
        "AvgPool3d",
        "LPPool1d",
        "LPPool2d",
        "FractionalMaxPool2d",
        "FractionalMaxPool3d",
        "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d",
        "AdaptiveMaxPool3d",
        "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d",
        "AdaptiveAvgPool3d",
    ],
    "rnn": ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "transformer": [
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
    ],
    "upsampling": ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"],
}


def _submodule(name: str, names: list[str]) -> _types.ModuleType:
    module = _types.ModuleType(f"{__name__}.{name}", f"torch.nn.modules.{name}'s layers.")
    for n in names:
        setattr(module, n, getattr(_layers, n))
    module.__all__ = list(names)  # type: ignore[attr-defined]
    try:
        own = _importlib.import_module(f"gradstack_nn.modules.{name}")
    except ImportError:
        own = None
    if own is not None:

        def __getattr__(attr: str, _own=own):
            try:
                return getattr(_own, attr)
            except AttributeError:
                raise AttributeError(
                    f"module {module.__name__!r} has no attribute {attr!r}"
                ) from None

        setattr(module, "__getattr__", __getattr__)  # noqa: B010 - a module's own hook
    return module


for _name, _names in _PATHS.items():
    _module = _submodule(_name, _names)
    _sys.modules[_module.__name__] = _module
    globals()[_name] = _module
del _name, _names, _module
