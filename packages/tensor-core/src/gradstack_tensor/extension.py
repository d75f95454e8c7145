"""The interface of tensor-core for the layers built on it (autograd, nn, profiler ...).

tensor-core's public API (``gradstack_tensor``) is for users; this module is for the
packages of the stack above it, and for anyone writing a layer or kernels of their own.
It is public and versioned with tensor-core: what is here stays, what is in the private
modules (``_tensor``, ``_dispatch`` ...) may move.  Cython code cimports the same
interface from ``gradstack_tensor/extension.pxd`` (C-level ``Tensor`` fields, ``wrap``,
``data_of``, ``Op``, ``DispatchLayer``, ``call_next``).

Storage
    :func:`data_of` gives the numpy array behind a tensor (no copy); :func:`wrap` makes a
    new leaf tensor over an array, :func:`wrap_view` a view of a tensor's storage.
Layers
    :class:`DispatchLayer`, :func:`register_layer` and :class:`Op` (also in
    ``gradstack_tensor``) put a layer on the dispatch point; :func:`set_autograd_extension`
    installs the object behind ``Tensor.backward``, ``register_hook`` ...
Random numbers
    :func:`set_draw_observer` installs a callback told of every random draw (vmap's
    ``randomness`` checks); :func:`set_factory_batcher` installs the object that batches
    factory calls under vmap (``randn(3)``, ``zeros_like(x)``: Note [Factories under vmap]
    in ``random.py``).
Indexing
    :func:`index_key` turns a torch index (tensors, lists, slices ...) into the key numpy
    takes, and says whether it is basic indexing (a view), as ``t[index]`` does.
Arguments
    :func:`checked_arguments` decorates a function with torch's checks of its argument
    types, from a signature in torch's words (``"Tensor input, int upscale_factor"``):
    torch's TypeError naming the argument (Note [Argument checks from torch's signatures]
    in ``_signatures.py``).
Kernels chosen
    :func:`matmul_folds` says whether ``a @ b`` runs torch's folded mm/mv or its bmm
    (what autograd saves depends on it).  :func:`take_byproduct` gives what a kernel
    computed on the side for the op's backward formula (the cos(x) of a float32
    ``sin``: Note [A kernel's by-product] in ``_elementwise.pyx``).

Writes
    :func:`add_out_write_observer` installs a callback told of every ``out=`` write
    before it happens (which is not an op on the dispatch point: Note [Observers of out=
    writes] in ``_out.py``); :func:`remove_out_write_observer` removes it.

Fused kernels are in :mod:`gradstack_tensor.kernels`.

Examples
--------
>>> import numpy as np
>>> import gradstack_tensor as gt
>>> from gradstack_tensor import extension
>>> t = gt.tensor([1., 2.])
>>> extension.data_of(t)
array([1., 2.], dtype=float32)
>>> u = extension.wrap(np.arange(3.))
>>> u.tolist(), u.is_leaf
([0.0, 1.0, 2.0], True)
"""

from __future__ import annotations

# Note [The interface binds the compiled functions]
# The names below are the compiled functions themselves, not Python wrappers around them:
# the kernels written in Python call data_of() and wrap() several times per op, and a
# wrapper would add a Python frame to each call.
from ._dispatch import DispatchLayer, Op, dispatch, register_layer, unregister_layer
from ._elementwise import take_byproduct
from ._impl_indexing import index_key
from ._impl_linalg import matmul_folds
from ._out import add_out_write_observer, remove_out_write_observer
from ._signatures import checked as checked_arguments
from ._tensor import _data as data_of
from ._tensor import _wrap as wrap
from ._tensor import _wrap_detached as wrap_detached
from ._tensor import _wrap_view as wrap_view
from ._tensor_base import VersionCounter, caller_location, library_dirs, set_autograd_extension
from .random import set_draw_observer, set_factory_batcher

__all__ = [
    "DispatchLayer",
    "Op",
    "VersionCounter",
    "add_out_write_observer",
    "caller_location",
    "checked_arguments",
    "library_dirs",
    "data_of",
    "dispatch",
    "index_key",
    "matmul_folds",
    "register_layer",
    "remove_out_write_observer",
    "set_autograd_extension",
    "set_draw_observer",
    "set_factory_batcher",
    "take_byproduct",
    "unregister_layer",
    "wrap",
    "wrap_detached",
    "wrap_view",
]
