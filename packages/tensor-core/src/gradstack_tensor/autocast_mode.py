"""Automatic mixed precision on the CPU: ``torch.autocast`` / ``torch.amp.autocast``.

Note [Autocast is a dispatch layer]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Inside ``with autocast("cpu"):`` (bfloat16 unless ``dtype=`` says float16) some ops run in
the lower precision and some in float32, by torch 2.13's CPU lists (``autocast_mode.cpp``,
``AutocastCPU``): the products (``mm``, ``bmm``, ``addmm``, ``matmul``, ``linear``, the
convolutions, ``baddbmm``, ``addbmm``, ``prelu``, ``scaled_dot_product_attention`` ...)
cast their floating-point tensors (not float64) to the lower dtype; the losses, ``prod``,
the linear algebra and the FFTs cast theirs to float32; ``cat``/``stack``/``index_copy``
cast to the widest floating dtype among them; every other op runs on what it is given.

The casts are ops (``Tensor.to``), so autograd records them (``ToCopyBackward0``) and
gradients come back in each leaf's own dtype, as in torch.  The layer sits above autograd
(priority :data:`PRIORITY`), as torch's Autocast dispatch key above Autograd, and is
registered only while autocast is on in some thread: with it off an op pays nothing.  The
inner ops of a listed op are not cast again (torch excludes its key while it redispatches):
``matmul`` of two float32 tensors is one cast of each and a bfloat16 product.  The casts of
float32 leaves that require grad (a model's weights) are cached until the outermost
autocast block exits (``cache_enabled``), so a weight used twice is cast once.

gradstack composes some of the listed ops in Python (``F.linear``, ``F.cross_entropy``,
``F.l1_loss`` ...): those wear :func:`autocast_function` with torch's op name, which applies
the same policy to their tensor arguments.

Examples
--------
>>> import gradstack_tensor as gt
>>> a, b = gt.ones(2, 3), gt.ones(3, 2)
>>> with gt.autocast("cpu"):
...     c = a @ b
...     d = c + 1.0
>>> c.dtype, d.dtype, (a @ b).dtype
(gradstack.bfloat16, gradstack.bfloat16, gradstack.float32)
"""

from __future__ import annotations

import collections.abc
import functools
import threading
import warnings
import weakref

import numpy as np

from . import dtypes as _dt
from ._dispatch import DispatchLayer, register_layer, unregister_layer
from ._tensor import Tensor
from ._tensor import _data as data_of
from .grad_scaler import GradScaler  # torch.amp.GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "autocast_function",
    "is_autocast_available",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "clear_autocast_cache",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "custom_fwd",
    "custom_bwd",
    "LOWER_PRECISION_FP",
    "FP32",
    "PROMOTE",
    "GradScaler",
]

PRIORITY = 500  # above autograd (100), below the profiler (1000) and vmap (2000)

# torch 2.13's AutocastCPU lists, by torch's op name (aten::<name>)
LOWER_PRECISION_FP = frozenset(
    {
        "conv1d",
        "conv2d",
        "conv3d",
        "bmm",
        "mm",
        "linalg_vecdot",
        "baddbmm",
        "addmm",
        "_addmm_activation",
        "addbmm",
        "linear",
        "_convolution",
        "matmul",
        "conv_tbc",
        "mkldnn_rnn_layer",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "prelu",
        "scaled_dot_product_attention",
        "_native_multi_head_attention",
    }
)
FP32 = frozenset(
    {
        "avg_pool3d",
        "binary_cross_entropy",
        "grid_sampler",
        "polar",
        "prod",
        "quantile",
        "nanquantile",
        "stft",
        "cdist",
        "grid_sampler_2d",
        "_grid_sampler_2d_cpu_fallback",
        "grid_sampler_3d",
        "trace",
        "view_as_complex",
        "cholesky",
        "cholesky_inverse",
        "cholesky_solve",
        "inverse",
        "lu_solve",
        "orgqr",
        "ormqr",
        "pinverse",
        "max_pool3d",
        "max_unpool2d",
        "max_unpool3d",
        "adaptive_avg_pool3d",
        "reflection_pad1d",
        "reflection_pad2d",
        "replication_pad1d",
        "replication_pad2d",
        "replication_pad3d",
        "mse_loss",
        "cosine_embedding_loss",
        "nll_loss",
        "nll_loss2d",
        "hinge_embedding_loss",
        "poisson_nll_loss",
        "smooth_l1_loss",
        "cross_entropy_loss",
        "l1_loss",
        "huber_loss",
        "margin_ranking_loss",
        "soft_margin_loss",
        "triplet_margin_loss",
        "multi_margin_loss",
        "ctc_loss",
        "kl_div",
        "multilabel_margin_loss",
        "binary_cross_entropy_with_logits",
        "fft_fft",
        "fft_ifft",
        "fft_fft2",
        "fft_ifft2",
        "fft_fftn",
        "fft_ifftn",
        "fft_rfft",
        "fft_irfft",
        "fft_rfft2",
        "fft_irfft2",
        "fft_rfftn",
        "fft_irfftn",
        "fft_hfft",
        "fft_ihfft",
        "linalg_cond",
        "linalg_matrix_rank",
        "linalg_solve",
        "linalg_cholesky",
        "linalg_svdvals",
        "linalg_eigvals",
        "linalg_eigvalsh",
        "linalg_inv",
        "linalg_householder_product",
        "linalg_tensorinv",
        "linalg_tensorsolve",
        "fake_quantize_per_tensor_affine",
        "geqrf",
        "_lu_with_info",
        "qr",
        "svd",
        "triangular_solve",
        "fractional_max_pool2d",
        "fractional_max_pool3d",
        "adaptive_max_pool3d",
        "multilabel_margin_loss_forward",
        "linalg_qr",
        "linalg_cholesky_ex",
        "linalg_svd",
        "linalg_eig",
        "linalg_eigh",
        "linalg_lstsq",
        "linalg_inv_ex",
        # gradstack's ops under torch's names that decompose to them: the FFTs' primitives
        "_fft_c2c",
        "_fft_r2c",
        "_fft_c2r",
    }
)
PROMOTE = frozenset({"stack", "cat", "index_copy"})

# gradstack's op names that are not torch's (Op.aten gives torch's where it differs)
_GRADSTACK_NAMES = {"fft_c2c": "_fft_c2c", "fft_r2c": "_fft_r2c", "fft_c2r": "_fft_c2r"}

_DEVICE_TYPES = (
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
)
# the device types torch 2.13 autocasts on, with their default lower dtype
_DEFAULT_DTYPE = {
    "cpu": _dt.bfloat16,
    "cuda": _dt.float16,
    "xpu": _dt.bfloat16,
    "mps": _dt.float16,
    "hpu": _dt.bfloat16,
    "xla": _dt.bfloat16,
    "ipu": _dt.float16,
    "mtia": _dt.float16,
    "maia": _dt.float16,
    "privateuseone": _dt.float16,
}


class _State(threading.local):
    """This thread's autocast state (torch's is thread-local too)."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, _dt.dtype] = dict(_DEFAULT_DTYPE)
        self.cache_enabled = True
        self.nesting = 0
        self.inside = 0  # running a listed op: its inner ops are not cast again
        self.cache: dict[int, tuple] = {}


_state = _State()
_lock = threading.Lock()
_threads_on = 0  # threads with CPU autocast on: the layer is registered while > 0


def _check_device(device_type) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"argument 'device_type' must be str, not {type(device_type).__name__}")
    if device_type.split(":")[0] not in _DEVICE_TYPES:
        raise RuntimeError(
            f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device "
            f"string: {device_type}"
        )
    return device_type.split(":")[0]


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast exists for ``device_type`` (``torch.amp.is_autocast_available``).

    >>> is_autocast_available("cpu"), is_autocast_available("meta")
    (True, False)
    """
    return _check_device(device_type) in _DEFAULT_DTYPE


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: CUDA's, as
    torch's).

    >>> is_autocast_enabled("cpu")
    False
    """
    return _state.enabled.get(_check_device(device_type), False)


def set_autocast_enabled(device_type, enabled=None) -> None:
    """Turn autocast on or off for ``device_type`` in this thread (``set_autocast_enabled(
    enabled)`` alone is CUDA's, as torch's)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    device_type = _check_device(device_type)
    if not isinstance(enabled, bool):
        raise TypeError(
            "set_autocast_enabled(): argument 'enabled' (position 2) must be bool, not "
            f"{type(enabled).__name__}"
        )
    was = _state.enabled.get(device_type, False)
    _state.enabled[device_type] = enabled
    if device_type == "cpu" and was != enabled:
        _count_thread(1 if enabled else -1)


def _count_thread(change: int) -> None:
    global _threads_on
    with _lock:
        _threads_on += change
        if _threads_on == 1 and change == 1:
            register_layer(_LAYER)
        elif _threads_on == 0:
            unregister_layer(_LAYER)


def get_autocast_dtype(device_type: str) -> _dt.dtype:
    """The lower dtype autocast uses on ``device_type`` (bfloat16 on the CPU by default)."""
    device_type = _check_device(device_type)
    if device_type not in _state.dtype:
        raise RuntimeError("unsupported scalarType")
    return _state.dtype[device_type]


def set_autocast_dtype(device_type: str, dtype) -> None:
    """Set the lower dtype autocast uses on ``device_type`` in this thread."""
    if not isinstance(device_type, str):  # (torch parses its arguments before the device)
        raise TypeError(
            "set_autocast_dtype(): argument 'device_type' (position 1) must be str, not "
            f"{type(device_type).__name__}"
        )
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(
            "set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not "
            f"{type(dtype).__name__}"
        )
    device_type = _check_device(device_type)
    _state.dtype[device_type] = dtype


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"torch.{old} is deprecated. Please use torch.{new} instead.",
        DeprecationWarning,
        stacklevel=3,
    )


def get_autocast_cpu_dtype() -> _dt.dtype:
    """Deprecated: ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def is_autocast_cpu_enabled() -> bool:
    """Deprecated: ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def is_autocast_cache_enabled() -> bool:
    """Whether casts of float32 leaves that require grad are cached inside autocast."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    if not isinstance(enabled, bool):
        raise TypeError(
            "set_autocast_cache_enabled(): argument 'enabled' (position 1) must be bool, not "
            f"{type(enabled).__name__}"
        )
    _state.cache_enabled = enabled


def clear_autocast_cache() -> None:
    """Drop the cached casts (done when the outermost autocast block exits)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


class autocast:  # noqa: N801 - torch's name
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a
    context manager and decorator under which the listed ops run in mixed precision (Note
    [Autocast is a dispatch layer]).

    ``device_type="cuda"`` warns that CUDA is not available and disables itself, as torch
    does on a machine without CUDA; a ``dtype`` the CPU does not autocast to (only bfloat16
    and float16) warns and disables itself too.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> @gt.autocast("cpu")
    ... def product(a, b):
    ...     return a @ b
    >>> product(gt.ones(2, 2), gt.ones(2, 2)).dtype
    gradstack.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'"
            )
        self._cache_enabled = (
            is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        )
        if enabled:
            if device_type == "cuda":
                warnings.warn(
                    "CUDA is not available or torch_xla is imported. Disabling autocast.",
                    stacklevel=2,
                )
                enabled = False
            elif self.fast_dtype not in (_dt.bfloat16, _dt.float16):
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                    "torch.float16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, bool(self._enabled))
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(bool(self._cache_enabled))
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


# ----------------------------------------------------------------------------------------
# The casts


def _eligible(t) -> bool:
    """A floating-point tensor autocast may cast (float64 never is)."""
    if not isinstance(t, Tensor):
        return False
    d = _dt.from_numpy_dtype(data_of(t).dtype)
    return d.is_floating_point and d is not _dt.float64


def _cast_to(t, dtype, cache: bool):
    """``t`` in ``dtype`` (an op autograd records); float32 leaves that require grad
    cast to the lower dtype are cached for the rest of the outermost block."""
    if not _eligible(t) or t.dtype is dtype:
        return t
    if cache and t.dtype is _dt.float32 and t.requires_grad and t.is_leaf:
        hit = _state.cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1].dtype is dtype:
            return hit[1]
        out = t.to(dtype)
        _state.cache[id(t)] = (weakref.ref(t), out)
        return out
    return t.to(dtype)


def _map(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if type(value) in (list, tuple):
        return type(value)(_map(v, fn) for v in value)
    return value


def _tensors(args):
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif type(a) in (list, tuple):
            yield from (t for t in a if isinstance(t, Tensor))


def _cast_args(policy: str, args: tuple, kwargs: dict | None = None):
    """``args`` (and ``kwargs``) cast by ``policy`` for the CPU."""
    kwargs = kwargs or {}
    if policy == "lower":
        dtype = _state.dtype["cpu"]
        cache = _state.cache_enabled
    elif policy == "fp32":
        dtype, cache = _dt.float32, False
    else:  # promote: the widest floating dtype among the eligible tensors
        found = [t.dtype for t in _tensors((*args, *kwargs.values())) if _eligible(t)]
        if len(set(found)) < 2:
            return args, kwargs
        dtype = found[0]
        for d in found[1:]:
            dtype = _dt.promote_types(dtype, d)
        cache = False

    def cast(t):
        return _cast_to(t, dtype, cache)

    return (
        tuple(_map(a, cast) for a in args),
        {k: _map(v, cast) for k, v in kwargs.items()},
    )


def _policy(name: str) -> str | None:
    name = _GRADSTACK_NAMES.get(name, name)
    if name in LOWER_PRECISION_FP:
        return "lower"
    if name in FP32:
        return "fp32"
    if name in PROMOTE:
        return "promote"
    return None


def _active() -> bool:
    return _state.enabled.get("cpu", False) and not _state.inside


class _AutocastLayer(DispatchLayer):
    """The layer on the dispatch point (Note [Autocast is a dispatch layer])."""

    def handle(self, op, args, next_index):
        if not _active():
            return self.call_next(op, args, next_index)
        policy = _policy(op.aten or op.name)
        if policy is None:
            return self.call_next(op, args, next_index)
        args, _ = _cast_args(policy, args)
        _state.inside += 1
        try:
            return self.call_next(op, args, next_index)
        finally:
            _state.inside -= 1


_LAYER = _AutocastLayer(PRIORITY)


def autocast_function(torch_name: str):
    """Decorate a function that composes torch's op ``torch_name`` of gradstack ops
    (``F.linear``, ``F.cross_entropy`` ...): inside CPU autocast its tensor arguments are
    cast by that op's policy and its inner ops are not cast again, as torch's listed op.

    >>> @autocast_function("linear")
    ... def my_linear(x, w):
    ...     return x @ w.t() + 0
    >>> import gradstack_tensor as gt
    >>> with autocast("cpu"):
    ...     my_linear(gt.ones(2, 3), gt.ones(4, 3)).dtype
    gradstack.bfloat16
    """
    policy = _policy(torch_name)
    if policy is None:
        raise ValueError(f"{torch_name!r} is on none of torch's CPU autocast lists")

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if not _threads_on or not _active():  # (the first test costs a global read)
                return func(*args, **kwargs)
            args, kwargs = _cast_args(policy, args, kwargs)
            _state.inside += 1
            try:
                return func(*args, **kwargs)
            finally:
                _state.inside -= 1

        return wrapper

    return decorate


# ----------------------------------------------------------------------------------------
# Custom autograd functions


def _cast_inputs(value, device_type: str, dtype):
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.dtype is not _dt.float64
        return value.to(dtype) if eligible and device_type == "cpu" else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {
            _cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate a custom ``Function.forward`` for autocast (``torch.amp.custom_fwd``): with
    ``cast_inputs``, inside an autocast block its floating-point tensors are cast to that
    dtype and it runs with autocast off; without, it runs in the current autocast state,
    which :func:`custom_bwd` then restores for the backward."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        on = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(
                *_cast_inputs(args, device_type, cast_inputs),
                **_cast_inputs(kwargs, device_type, cast_inputs),
            )

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate a custom ``Function.backward`` to run in the autocast state its forward
    ran in (``torch.amp.custom_bwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(
            device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype
        ):
            return bwd(*args, **kwargs)

    return decorate_bwd
