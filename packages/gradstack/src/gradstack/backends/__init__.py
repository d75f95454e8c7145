"""``gradstack.backends``: the flags scripts written for torch set, with CPU answers.

Training scripts often set ``torch.backends.cudnn.deterministic = True`` or
``torch.backends.cudnn.benchmark = False``, or ask ``torch.backends.mps.is_available()``
to pick a device.  Each submodule here holds those flags (plain module attributes a script
may read and assign) and answers the probes truthfully for gradstack: no cuDNN, CUDA or MPS
backend, and no MKL, MKL-DNN or OpenMP of gradstack's own (numpy's BLAS does the matrix
products).  Assigning a flag changes nothing in gradstack's results: on the CPU its
kernels are deterministic already.

>>> import gradstack as torch
>>> before = torch.backends.cudnn.deterministic
>>> torch.backends.cudnn.deterministic = True
>>> torch.backends.mps.is_available(), torch.backends.cuda.matmul.allow_tf32
(False, False)
>>> torch.backends.cudnn.deterministic = before  # the process's flag, as it was
"""

from __future__ import annotations

from . import cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
