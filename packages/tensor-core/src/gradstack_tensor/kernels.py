"""Fused array kernels (Cython, OpenMP) for the layers built on tensor-core.

In-place accumulation of gradients (``accumulate_``, ``add_scaled_``), the SGD update
(``sgd_update_``) and broadcast reduction (``sum_to_shape``) work on numpy arrays
(float32/float64, C-contiguous; :func:`fusable` says whether arrays qualify); the indexing
kernels (``take_rows``, ``embedding_backward``, ``scatter_add_``) take index arrays too.
All check their arguments before touching memory.  ``get_num_threads``/``set_num_threads`` control
their OpenMP threads.  Public and versioned with tensor-core; each function's docstring
has its contract and an example.  (The fused backward formulas, ``sin_backward``,
``mul_backward`` ..., are graph-engine's: ``gradstack_autograd._backward_kernels``.)
In-place accumulation of gradients (``accumulate_``, ``add_scaled_``), the SGD and Adam
updates (``sgd_update_``, ``adam_update_``), broadcast reduction (``sum_to_shape``) and the
row kernels of softmax and layer norm (``softmax``, ``layer_norm`` and their backward)
work on numpy arrays (float32/float64, C-contiguous; :func:`fusable` says whether arrays
qualify) and check their arguments before touching memory.
``get_num_threads``/``set_num_threads`` control their OpenMP threads.  Public and
versioned with tensor-core; each function's docstring has its contract and an example.
(The fused backward formulas, ``sin_backward``, ``mul_backward`` ..., are graph-engine's:
``gradstack_autograd._backward_kernels``.)

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor import kernels
>>> g = np.ones(3, np.float32)
>>> kernels.accumulate_(g, np.full(3, 2., np.float32)); g
array([3., 3., 3.], dtype=float32)
"""

# one module per family of kernels (_kernels.pyx's docstring lists them)
from ._activation_kernels import *  # noqa: F403
from ._activation_kernels import __all__ as _activation_all
from ._adam_update import *  # noqa: F403
from ._adam_update import __all__ as _adam_update_all
from ._batch_norm_kernels import *  # noqa: F403
from ._batch_norm_kernels import __all__ as _batch_norm_kernels_all
from ._conv_arrays import *  # noqa: F403
from ._conv_arrays import __all__ as _conv_arrays_all
from ._division_kernels import *  # noqa: F403
from ._division_kernels import __all__ as _division_kernels_all
from ._dropout_kernels import *  # noqa: F403
from ._dropout_kernels import __all__ as _dropout_kernels_all
from ._embedding_bag_kernels import *  # noqa: F403
from ._embedding_bag_kernels import __all__ as _embedding_bag_kernels_all
from ._erfc_kernels import *  # noqa: F403
from ._erfc_kernels import __all__ as _erfc_kernels_all
from ._exp_kernels import *  # noqa: F403
from ._exp_kernels import __all__ as _exp_kernels_all
from ._float32_transcendentals import *  # noqa: F403
from ._float32_transcendentals import __all__ as _transcendentals_all
from ._index_kernels import *  # noqa: F403
from ._index_kernels import __all__ as _index_kernels_all
from ._kernels import *  # noqa: F403
from ._kernels import __all__ as _kernels_all
from ._log_sigmoid_kernels import *  # noqa: F403
from ._log_sigmoid_kernels import __all__ as _log_sigmoid_kernels_all
from ._loss_kernels import *  # noqa: F403
from ._loss_kernels import __all__ as _loss_kernels_all
from ._masked_fill_kernels import *  # noqa: F403
from ._masked_fill_kernels import __all__ as _masked_fill_kernels_all
from ._nextafter_kernels import *  # noqa: F403
from ._nextafter_kernels import __all__ as _nextafter_kernels_all
from ._nll_kernels import *  # noqa: F403
from ._nll_kernels import __all__ as _nll_kernels_all
from ._norm_kernels import *  # noqa: F403
from ._norm_kernels import __all__ as _norm_kernels_all
from ._order_kernels import *  # noqa: F403
from ._order_kernels import __all__ as _order_kernels_all
from ._outer_kernels import *  # noqa: F403
from ._outer_kernels import __all__ as _outer_kernels_all
from ._pointwise_kernels import *  # noqa: F403
from ._pointwise_kernels import __all__ as _pointwise_kernels_all
from ._recurrent_gemm import *  # noqa: F403
from ._recurrent_gemm import __all__ as _recurrent_gemm_all
from ._recurrent_layers import *  # noqa: F403
from ._recurrent_layers import __all__ as _recurrent_layers_all
from ._rnn_kernels import *  # noqa: F403
from ._rnn_kernels import __all__ as _rnn_kernels_all
from ._scan_kernels import *  # noqa: F403
from ._scan_kernels import __all__ as _scan_kernels_all
from ._scatter_reduce_kernels import *  # noqa: F403
from ._scatter_reduce_kernels import __all__ as _scatter_reduce_kernels_all
from ._sgd_update import *  # noqa: F403
from ._sgd_update import __all__ as _sgd_update_all
from ._special_kernels import *  # noqa: F403
from ._special_kernels import __all__ as _special_kernels_all
from ._sum_kernels import *  # noqa: F403
from ._sum_kernels import __all__ as _sum_kernels_all
from ._sum_to_shape import *  # noqa: F403
from ._sum_to_shape import __all__ as _sum_to_shape_all
from ._triangle_kernels import *  # noqa: F403
from ._triangle_kernels import __all__ as _triangle_kernels_all
from ._triangular_arrays import *  # noqa: F403
from ._triangular_arrays import __all__ as _triangular_arrays_all
from ._vector_norm_kernels import *  # noqa: F403
from ._vector_norm_kernels import __all__ as _vector_norm_kernels_all
from ._window_kernels import *  # noqa: F403
from ._window_kernels import __all__ as _window_kernels_all
from ._winograd import *  # noqa: F403
from ._winograd import __all__ as _winograd_all

__all__ = sorted(
    [
        *_activation_all,
        *_adam_update_all,
        *_batch_norm_kernels_all,
        *_division_kernels_all,
        *_conv_arrays_all,
        *_transcendentals_all,
        *_index_kernels_all,
        *_scatter_reduce_kernels_all,
        *_recurrent_gemm_all,
        *_pointwise_kernels_all,
        *_kernels_all,
        *_log_sigmoid_kernels_all,
        *_loss_kernels_all,
        *_dropout_kernels_all,
        *_embedding_bag_kernels_all,
        *_erfc_kernels_all,
        *_exp_kernels_all,
        *_masked_fill_kernels_all,
        *_nll_kernels_all,
        *_nextafter_kernels_all,
        *_norm_kernels_all,
        *_order_kernels_all,
        *_outer_kernels_all,
        *_rnn_kernels_all,
        *_recurrent_layers_all,
        *_scan_kernels_all,
        *_sgd_update_all,
        *_special_kernels_all,
        *_sum_kernels_all,
        *_sum_to_shape_all,
        *_triangle_kernels_all,
        *_triangular_arrays_all,
        *_vector_norm_kernels_all,
        *_window_kernels_all,
        *_winograd_all,
    ]
)
