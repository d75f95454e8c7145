"""``gradstack_nn.functional`` (``gradstack.nn.functional``): the layers as functions.

Each function does what ``torch.nn.functional``'s does in Python (argument checks, torch's
warnings, broadcasting, the composite cases) and then calls one op of the registry, so the
graph records torch's nodes: ``cross_entropy`` gives ``NllLossBackward0`` over
``LogSoftmaxBackward0``, ``layer_norm`` ``NativeLayerNormBackward0``, ``mse_loss``
``MseLossBackward0``.  The ops' formulas are written with gradstack ops, so every function
differentiates to any order (``create_graph=True``).

The functions live in one module per family and are all names of this package, as they
are of ``torch.nn.functional`` (one module in torch; the family modules are nn-mini's
layout, not an API):

=======================  ======================================================================
``activation``           relu ... softmax, elu ... softshrink (composed), rrelu, gumbel_softmax
``linear_layers``        linear, bilinear
``conv``                 conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold
``pooling``              max, average, adaptive and power-average pooling, 1-d to 3-d
``unpooling``            max unpooling (the partial inverse of max pooling), 1-d to 3-d
``sampling``             interpolate (upsample), affine_grid, grid_sample, pixel and channel
                         shuffles
``padding``              pad
``normalization``        batch_norm, layer_norm, group_norm, rms_norm, instance_norm,
                         local_response_norm, normalize
``dropouts``             dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
``embeddings``           embedding, embedding_bag, one_hot
``distance``             cosine_similarity, pairwise_distance, cdist, pdist
``attention``            scaled_dot_product_attention
``losses``               the regression, classification and likelihood losses, kl_div
``linear_losses``        linear_cross_entropy (a linear layer's logits and their cross
                         entropy, by reference or chunked over the batch)
``margin_losses``        the margin, embedding and triplet losses
``ctc``                  the CTC loss
``_utils``               torch's type names, argument checks, int pairs and triples
=======================  ======================================================================

(``linear_layers``, ``dropouts`` and ``embeddings`` are not named ``linear``, ``dropout``
and ``embedding``: a submodule of that name would stand for the function of that name in
``import gradstack_nn.functional.dropout as m``.)

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_nn.functional as F
>>> logits = gt.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]], requires_grad=True)
>>> target = gt.tensor([0, 2])
>>> loss = F.cross_entropy(logits, target)
>>> round(loss.item(), 4), loss.grad_fn.name()
(0.1755, 'NllLossBackward0')
>>> F.mse_loss(gt.tensor([1., 2.]), gt.tensor([1., 4.])).item()
2.0
>>> F.one_hot(gt.tensor([0, 2]), 3).tolist()
[[1, 0, 0], [0, 0, 1]]
"""

from . import (
    activation,
    attention,
    conv,
    ctc,
    distance,
    dropouts,
    embeddings,
    linear_layers,
    linear_losses,
    losses,
    margin_losses,
    normalization,
    padding,
    pooling,
    sampling,
    unpooling,
)
from .activation import *  # noqa: F403
from .attention import *  # noqa: F403
from .conv import *  # noqa: F403
from .ctc import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropouts import *  # noqa: F403
from .embeddings import *  # noqa: F403
from .linear_layers import *  # noqa: F403
from .linear_losses import *  # noqa: F403
from .losses import *  # noqa: F403
from .margin_losses import *  # noqa: F403
from .normalization import *  # noqa: F403
from .padding import *  # noqa: F403
from .pooling import *  # noqa: F403
from .sampling import *  # noqa: F403
from .unpooling import *  # noqa: F403

# (``__all__ +=`` of each family's list, a form type checkers follow through star imports)
__all__: list[str] = []
__all__ += linear_layers.__all__
__all__ += conv.__all__
__all__ += pooling.__all__
__all__ += unpooling.__all__
__all__ += sampling.__all__
__all__ += padding.__all__
__all__ += activation.__all__
__all__ += dropouts.__all__
__all__ += normalization.__all__
__all__ += embeddings.__all__
__all__ += distance.__all__
__all__ += attention.__all__
__all__ += losses.__all__
__all__ += linear_losses.__all__
__all__ += margin_losses.__all__
__all__ += ctc.__all__
