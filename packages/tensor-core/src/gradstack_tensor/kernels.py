"""Fused array kernels (Cython, OpenMP) for the layers built on tensor-core.

In-place accumulation of gradients (``accumulate_``, ``add_scaled_``), the SGD update
(``sgd_update_``) and broadcast reduction (``sum_to_shape``) work on numpy arrays
(float32/float64, C-contiguous; :func:`fusable` says whether arrays qualify) and check
their arguments before touching memory.  ``get_num_threads``/``set_num_threads`` control
their OpenMP threads.  Public and versioned with tensor-core; each function's docstring
has its contract and an example.  (The fused backward formulas, ``sin_backward``,
``mul_backward`` ..., are graph-engine's: ``gradstack_autograd._backward_kernels``.)

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor import kernels
>>> g = np.ones(3, np.float32)
>>> kernels.accumulate_(g, np.full(3, 2., np.float32)); g
array([3., 3., 3.], dtype=float32)
"""

from ._kernels import *  # noqa: F403
from ._kernels import __all__ as _all

__all__ = list(_all)
