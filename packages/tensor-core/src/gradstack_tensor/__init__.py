"""gradstack_tensor: a numpy-backed Tensor with Cython kernels and an op dispatch point.

The bottom layer of gradstack.  It works alone (no autograd): tensors, dtypes with torch's
promotion rules, views sharing storage and a version counter, in-place ops, and every op
routed through one dispatch point on which upper layers register (``register_layer``).

Examples
--------
>>> import gradstack_tensor as gt
>>> a = gt.tensor([[1., 2.], [3., 4.]])
>>> (a @ a.t()).tolist()
[[5.0, 11.0], [11.0, 25.0]]
>>> v = a[0]; _ = v.add_(10); a.tolist()
[[11.0, 12.0], [3.0, 4.0]]
>>> a._version
1
"""

# Note [Import order of the core]
# The Tensor's method groups import the op table (which declares the built-in ops) before
# they look ops up, and _elementwise, which cimports _tensor and so imports the whole core
# first, binds the C kernels of the declared ops; the _impl_* modules bind the Python ones.
from . import (  # noqa: F401 - bind kernels
    _above,
    _allocator,
    _barebones,
    _bfloat16,
    _composite_args,
    _elementwise,
    _impl_complex,
    _impl_decompositions,
    _impl_elementwise,
    _impl_factorizations,
    _impl_fft,
    _impl_indexing,
    _impl_linalg,
    _impl_nn,
    _impl_random,
    _impl_reduce,
    _impl_rnn,
    _impl_scatter,
    _impl_scatter_reduce,
    _impl_shape,
    _impl_special,
    _impl_windows,
    _op_table,
    _signatures,
    activations,
    arrangements,
    complex_ops,
    composites,
    contractions,
    counting,
    covariance,
    creation,
    elementwise_composites,
    fft,
    finite_differences,
    hashing,
    histograms,
    indexed_writes,
    legacy,
    linalg,
    matrix_builders,
    matrix_factorizations,
    matrix_functions,
    memory_factories,
    meta,
    order_statistics,
    random_samplers,
    return_types,
    scans,
    searching,
    short_time_fourier,
    special,
)
from . import autocast_mode as amp  # noqa: E402 - torch.amp
from . import dtypes as _dtypes
from . import functions as _functions
from .__about__ import __version__
from ._dispatch import (
    OPS,
    DispatchLayer,
    Op,
    dispatch,
    get_op,
    register_layer,
    register_op,
    registered_layers,
    unregister_layer,
)
from ._format import get_printoptions, printoptions, set_printoptions
from ._shapes import Size
from ._tensor import Tensor
from ._tensor_base import VersionCounter
from .activations import *  # noqa: F403
from .activations import __all__ as _activations_all
from .arrangements import *  # noqa: F403
from .arrangements import __all__ as _arrangements_all
from .autocast_mode import (
    autocast,
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .combinatorics import *  # noqa: F403
from .combinatorics import __all__ as _combinatorics_all
from .complex_ops import *  # noqa: F403
from .complex_ops import __all__ as _complex_ops_all
from .composites import *  # noqa: F403
from .composites import __all__ as _composites_all
from .constants import *  # noqa: F403
from .constants import __all__ as _constants_all
from .contractions import *  # noqa: F403
from .contractions import __all__ as _contractions_all
from .counting import *  # noqa: F403
from .counting import __all__ as _counting_all
from .covariance import *  # noqa: F403
from .covariance import __all__ as _covariance_all
from .creation import *  # noqa: F403
from .creation import __all__ as _creation_all
from .device import device, get_default_device, set_default_device
from .dtypes import (
    bfloat16,
    bool_,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .dtypes import float as float  # noqa: PLC0414 - torch's alias names shadow builtins here
from .dtypes import int as int  # noqa: PLC0414
from .elementwise_composites import *  # noqa: F403
from .elementwise_composites import __all__ as _elementwise_composites_all
from .finite_differences import *  # noqa: F403
from .finite_differences import __all__ as _finite_differences_all
from .functions import *  # noqa: F403
from .hashing import *  # noqa: F403
from .hashing import __all__ as _hashing_all
from .histograms import *  # noqa: F403
from .histograms import __all__ as _histograms_all
from .index_arithmetic import *  # noqa: F403
from .index_arithmetic import __all__ as _index_arithmetic_all
from .indexed_writes import *  # noqa: F403
from .indexed_writes import __all__ as _indexed_writes_all
from .integration import *  # noqa: F403
from .integration import __all__ as _integration_all
from .layouts import *  # noqa: F403
from .layouts import __all__ as _layouts_all
from .legacy import *  # noqa: F403
from .legacy import __all__ as _legacy_all
from .lowrank import *  # noqa: F403
from .lowrank import __all__ as _lowrank_all
from .matrix_builders import *  # noqa: F403
from .matrix_builders import __all__ as _matrix_builders_all
from .matrix_factorizations import *  # noqa: F403
from .matrix_factorizations import __all__ as _matrix_factorizations_all
from .matrix_functions import *  # noqa: F403
from .matrix_functions import __all__ as _matrix_functions_all
from .memory_factories import *  # noqa: F403
from .memory_factories import __all__ as _memory_factories_all
from .numeric_info import finfo, iinfo
from .order_statistics import *  # noqa: F403
from .order_statistics import __all__ as _order_statistics_all
from .random import Generator, default_generator, initial_seed, manual_seed, seed
from .scans import *  # noqa: F403
from .scans import __all__ as _scans_all
from .searching import *  # noqa: F403
from .searching import __all__ as _searching_all
from .short_time_fourier import *  # noqa: F403
from .short_time_fourier import __all__ as _short_time_fourier_all
from .windows import *  # noqa: F403
from .windows import __all__ as _windows_all

# Note [Methods bound from above] (_above.py): the functions that the Tensor's methods
# call, from the modules written on top of the Tensor.
for _module in (
    activations, arrangements, complex_ops, composites, contractions, counting, covariance,
    creation, elementwise_composites, histograms, indexed_writes, legacy, matrix_builders,
    matrix_factorizations, matrix_functions, memory_factories, order_statistics, scans,
    searching,
):  # fmt: skip
    _above.bind(_module)
_above.bind(_functions, "allclose", "isclose", "mvlgamma")
_above.bind_namespace("linalg", linalg)
_above.bind(arrangements, "fill_diagonal_")
_above.bind(elementwise_composites, "heaviside_", "hypot_")
_above.bind(short_time_fourier)
_above.bind(hashing)
_above.bind(indexed_writes, "masked_scatter_")
_above.bind(meta, "meta_array", "meta_tensor", "no_data_error")
_above.bind(_composite_args, "_name", "_write_inplace")
_above.bind(_signatures, "checker")
del _module

_signatures.install(OPS)  # Note [Argument checks from torch's signatures]

bool = bool_  # noqa: A001 - torch.bool

__all__ = sorted(
    set(_creation_all)
    | set(_legacy_all)
    | set(_composites_all)
    | set(_arrangements_all)
    | set(_contractions_all)
    | set(_elementwise_composites_all)
    | set(_searching_all)
    | set(_windows_all)
    | set(_activations_all)
    | set(_memory_factories_all)
    | set(_order_statistics_all)
    | set(_matrix_builders_all)
    | set(_combinatorics_all)
    | set(_complex_ops_all)
    | set(_layouts_all)
    | set(_index_arithmetic_all)
    | set(_constants_all)
    | set(_covariance_all)
    | set(_integration_all)
    | set(_finite_differences_all)
    | set(_short_time_fourier_all)
    | set(_hashing_all)
    | set(_counting_all)
    | set(_scans_all)
    | set(_indexed_writes_all)
    | set(_matrix_functions_all)
    | set(_matrix_factorizations_all)
    | set(_lowrank_all)
    | set(_histograms_all)
    | set(_functions.__all__)
    | {
        "linalg",
        "fft",
        "amp",
        "autocast",
        "autocast_decrement_nesting",
        "autocast_increment_nesting",
        "clear_autocast_cache",
        "get_autocast_cpu_dtype",
        "get_autocast_dtype",
        "is_autocast_cache_enabled",
        "is_autocast_cpu_enabled",
        "is_autocast_enabled",
        "set_autocast_cache_enabled",
        "set_autocast_cpu_dtype",
        "set_autocast_cpu_enabled",
        "set_autocast_dtype",
        "set_autocast_enabled",
        "finfo",
        "iinfo",
        "special",
        "Tensor",
        "Size",
        "dtype",
        "device",
        "get_default_device",
        "set_default_device",
        "DispatchLayer",
        "Op",
        "OPS",
        "VersionCounter",
        "dispatch",
        "get_op",
        "register_layer",
        "register_op",
        "registered_layers",
        "unregister_layer",
        "get_default_dtype",
        "set_default_dtype",
        "promote_types",
        "manual_seed",
        "seed",
        "initial_seed",
        "Generator",
        "default_generator",
        "set_printoptions",
        "get_printoptions",
        "printoptions",
        "return_types",
        "__version__",
    }
    # the dtypes by torch's names (``bool``, not ``bool_``)
    | {n.removesuffix("_") for n in _dtypes.__all__ if isinstance(getattr(_dtypes, n), dtype)}
)


def _install_allocator() -> None:
    """numpy's data allocator keeps the large blocks gradstack's ops freed (Note [Large blocks
    are reused, not returned to the kernel] in _allocator.pyx; the user's own arrays get
    numpy's default allocator, Note [Only gradstack's own blocks are cached]);
    ``GRADSTACK_ALLOCATOR_CACHE_MB`` sets the limit in MiB (256), 0 opts out."""
    import builtins  # (this module's ``int`` is the dtype alias)
    import os
    import warnings

    text = os.environ.get("GRADSTACK_ALLOCATOR_CACHE_MB", "256")
    try:
        megabytes = builtins.int(text)
        if megabytes < 0:
            raise ValueError
    except ValueError:
        warnings.warn(
            f"GRADSTACK_ALLOCATOR_CACHE_MB={text!r} is not a whole number of "
            "megabytes >= 0; using 256",
            RuntimeWarning,
            stacklevel=2,
        )
        megabytes = 256
    if megabytes:
        _allocator.install(megabytes << 20)


_install_allocator()
