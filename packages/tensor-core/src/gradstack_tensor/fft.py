"""``gradstack_tensor.fft`` (``gradstack.fft``): torch.fft's discrete Fourier transforms.

Every transform is torch's composition of three ops (``fft_c2c``, ``fft_r2c``,
``fft_c2r``: kernels in ``_impl_fft.py`` on numpy.fft, derivatives in graph-engine's
``derivatives/spectral.py``) with the resizing (``n``/``s``: trailing elements cut or
zeros appended), the promotion (integers to the default float dtype, real to complex where
the transform needs it) and the normalisation torch applies, so values, dtypes, nodes and
gradients are torch's: a float32 input gives a complex64 result (Note [numpy.fft computes
in double precision] in ``_impl_fft.py``).

``norm`` is ``"backward"`` (the default: the forward transforms unscaled, the inverse ones
by ``1/n``), ``"ortho"`` (both by ``1/sqrt(n)``) or ``"forward"`` (the forward by ``1/n``).

Examples
--------
>>> import gradstack_tensor as gt
>>> fft(gt.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
>>> irfft(rfft(gt.tensor([1.0, 2.0, 3.0, 4.0]))).tolist()
[1.0, 2.0, 3.0, 4.0]
>>> fftfreq(4).tolist()
[0.0, 0.25, -0.5, -0.25]
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from ._dispatch import OPS, dispatch
from ._impl_fft import NORM_BY_N, NORM_BY_ROOT_N, NORM_NONE
from ._tensor import Tensor, _wrap

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

# torch's ScalarType names (dtypes.SCALAR_TYPE_NAMES) of the dtypes these messages name
_TYPE_NAMES = {k: v for k, v in _dt.SCALAR_TYPE_NAMES.items() if k != "bfloat16"}


def _input(x, fname: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(
            f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}"
        )
    return x


def _norm(norm, forward: bool) -> int:
    """torch's ``norm_from_string``: the normalisation enum of a direction."""
    if norm is None or norm == "backward":
        return NORM_NONE if forward else NORM_BY_N
    if norm == "forward":
        return NORM_BY_N if forward else NORM_NONE
    if norm == "ortho":
        return NORM_BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool) -> Tensor:
    """torch's ``promote_tensor_fft``: integers to the default float dtype, real to
    complex when the transform needs a complex input."""
    d = x.dtype
    if d is _dt.float16:
        raise RuntimeError("Unsupported dtype Half")
    if not (d.is_floating_point or d.is_complex):
        d = _dt.get_default_dtype()
    if require_complex:
        d = d.to_complex()
    return x if d is x.dtype else x.to(d)


def _wrap_dim(dim, ndim: int) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but "
            f"got {dim})"
        )
    return dim % ndim


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """torch's ``resize_fft_input``: cut each dim to its size, or append zeros."""
    for d, n in zip(dims, sizes, strict=True):
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[d] = n - have
            x = _cat([x, x.new_zeros(shape)], d)
    return x


def _cat(tensors, dim):
    return dispatch(OPS["cat"], (tensors, dim))


def _check_n(n) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


# ----------------------------------------------------------------------------------------
# one dimension


def _c2c(fname, x, n, dim, norm, forward):
    if not x.is_complex():
        raise RuntimeError(
            f"{fname} expects a complex input tensor, but got {_TYPE_NAMES[x.dtype.name]}"
        )
    d = _wrap_dim(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (n,))
    return dispatch(OPS["fft_c2c"], (x, (d,), _norm(norm, forward), forward))


def _r2c(fname, x, n, dim, norm, forward, onesided):
    if x.is_complex():
        raise RuntimeError(
            f"{fname} expects a real input tensor, but got {_TYPE_NAMES[x.dtype.name]}"
        )
    x = _promote(x, False)
    d = _wrap_dim(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (n,))
    r = dispatch(OPS["fft_r2c"], (x, (d,), _norm(norm, forward), onesided))
    # torch's _fft_r2c has no inverse: an inverse transform is the conjugate
    return r if forward else dispatch(OPS["conj"], (r,))


def _c2r(fname, x, n, dim, norm, forward):
    x = _promote(x, True)
    d = _wrap_dim(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (n // 2 + 1,))
    if forward:
        x = dispatch(OPS["conj"], (x,))
    return dispatch(OPS["fft_c2r"], (x, (d,), _norm(norm, forward), size))


def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``
    (``torch.fft.fft``); a real input gives its complex transform.

    >>> import gradstack_tensor as gt
    >>> fft(gt.tensor([1.0, 0.0, 0.0, 0.0])).tolist()
    [(1+0j), (1+0j), (1+0j), (1+0j)]
    """
    x = _input(input, "fft")
    if x.is_complex():
        return _c2c("fft", x, n, dim, norm, True)
    return _r2c("fft", x, n, dim, norm, True, False)


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of :func:`fft` (``torch.fft.ifft``).

    >>> import gradstack_tensor as gt
    >>> ifft(gt.tensor([4.0, 0.0, 0.0, 0.0])).real.tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    x = _input(input, "ifft")
    if x.is_complex():
        return _c2c("ifft", x, n, dim, norm, False)
    return _r2c("ifft", x, n, dim, norm, False, False)


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a real input, its ``n // 2 + 1`` non-redundant bins
    (``torch.fft.rfft``).

    >>> import gradstack_tensor as gt
    >>> rfft(gt.tensor([1.0, 2.0, 3.0, 4.0])).tolist()
    [(10+0j), (-2+2j), (-2+0j)]
    """
    return _r2c("rfft", _input(input, "rfft"), n, dim, norm, True, True)


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default
    ``2 * (input.size(dim) - 1)``) from its non-redundant bins (``torch.fft.irfft``).

    >>> import gradstack_tensor as gt
    >>> irfft(gt.tensor([4.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _c2r("irfft", _input(input, "irfft"), n, dim, norm, False)


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its first half: a real
    result of ``n`` points (``torch.fft.hfft``).

    >>> import gradstack_tensor as gt
    >>> hfft(gt.tensor([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _c2r("hfft", _input(input, "hfft"), n, dim, norm, True)


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The inverse of :func:`hfft`: the first half of a real signal's inverse transform
    (``torch.fft.ihfft``).

    >>> import gradstack_tensor as gt
    >>> ihfft(gt.tensor([1.0, 1.0, 1.0, 1.0])).real.tolist()
    [1.0, 0.0, 0.0]
    """
    return _r2c("ihfft", _input(input, "ihfft"), n, dim, norm, False, True)


# ----------------------------------------------------------------------------------------
# several dimensions


def _ints(v, what):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,)
    try:
        return tuple(int(i) for i in v)
    except TypeError:
        raise TypeError(f"{what} must be a tuple of ints, not {type(v).__name__}") from None


def _shape_and_dims(x: Tensor, s, dim):
    """torch's ``canonicalize_fft_shape_and_dim_args``."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in _ints(dim, "dim")]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = _ints(s, "s")
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for d, n in zip(dims, s, strict=True)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return shape, dims


def _fftn(fname, input, s, dim, norm, forward):
    x = _input(input, fname)
    shape, dims = _shape_and_dims(x, s, dim)
    x = _promote(x, True)
    x = _resize(x, dims, shape)
    return dispatch(OPS["fft_c2c"], (x, tuple(dims), _norm(norm, forward), forward))


def _rfftn(fname, input, s, dim, norm):
    x = _input(input, fname)
    if x.is_complex():
        raise RuntimeError(
            f"{fname} expects a real-valued input tensor, but got {_TYPE_NAMES[x.dtype.name]}"
        )
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _promote(x, False)
    x = _resize(x, dims, shape)
    return dispatch(OPS["fft_r2c"], (x, tuple(dims), _norm(norm, True), True))


def _irfftn(fname, input, s, dim, norm):
    x = _input(input, fname)
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    given = s is not None and _ints(s, "s")[-1] != -1
    last = shape[-1] if given else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    shape[-1] = last // 2 + 1
    x = _promote(x, True)
    x = _resize(x, dims, shape)
    return dispatch(OPS["fft_c2r"], (x, tuple(dims), _norm(norm, False), last))


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The N-dimensional transform over ``dim`` (all dims by default; the last
    ``len(s)`` when only ``s`` is given), ``torch.fft.fftn``.

    >>> import gradstack_tensor as gt
    >>> fftn(gt.ones(2, 2)).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _fftn("fftn", input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of :func:`fftn` (``torch.fft.ifftn``).

    >>> import gradstack_tensor as gt
    >>> ifftn(gt.tensor([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _fftn("ifftn", input, s, dim, norm, False)


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The N-dimensional transform of a real input, the last dim halved as in
    :func:`rfft` (``torch.fft.rfftn``).

    >>> import gradstack_tensor as gt
    >>> rfftn(gt.ones(2, 4)).shape
    gradstack.Size([2, 3])
    """
    return _rfftn("rfftn", input, s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of :func:`rfftn` (``torch.fft.irfftn``): the last transformed dim has
    ``s[-1]`` points, by default ``2 * (input.size(dim[-1]) - 1)``.

    >>> import gradstack_tensor as gt
    >>> irfftn(rfftn(gt.ones(2, 4))).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    return _irfftn("irfftn", input, s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`fftn` over the last two dims (``torch.fft.fft2``).

    >>> import gradstack_tensor as gt
    >>> fft2(gt.ones(2, 2))[0, 0].item()
    (4+0j)
    """
    return _fftn("fft2", input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`ifftn` over the last two dims (``torch.fft.ifft2``).

    >>> import gradstack_tensor as gt
    >>> ifft2(gt.ones(2, 2))[0, 0].item()
    (1+0j)
    """
    return _fftn("ifft2", input, s, dim, norm, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`rfftn` over the last two dims (``torch.fft.rfft2``).

    >>> import gradstack_tensor as gt
    >>> rfft2(gt.ones(2, 4)).shape
    gradstack.Size([2, 3])
    """
    return _rfftn("rfft2", input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`irfftn` over the last two dims (``torch.fft.irfft2``).

    >>> import gradstack_tensor as gt
    >>> irfft2(rfft2(gt.ones(2, 4))).shape
    gradstack.Size([2, 4])
    """
    return _irfftn("irfft2", input, s, dim, norm)


def _hfftn(fname, input, s, dim, norm):
    """torch's ``fft_hfftn``: c2c over all but the last dim, then c2r of the conjugate."""
    x = _input(input, fname)
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    given = s is not None and _ints(s, "s")[-1] != -1
    last = shape[-1] if given else 2 * (x.shape[dims[-1]] - 1)
    _check_n(last)
    shape[-1] = last // 2 + 1
    x = _resize(_promote(x, True), dims, shape)
    n = _norm(norm, True)
    if len(dims) > 1:
        x = dispatch(OPS["fft_c2c"], (x, tuple(dims[:-1]), n, True))
    x = dispatch(OPS["conj"], (x,))
    return dispatch(OPS["fft_c2r"], (x, (dims[-1],), n, last))


def _ihfftn(fname, input, s, dim, norm):
    """torch's ``fft_ihfftn``: r2c (onesided) of the last dim, conjugated, then the
    inverse c2c over the others."""
    x = _input(input, fname)
    if x.is_complex():
        raise RuntimeError(
            f"{fname} expects a real input tensor, but got {_TYPE_NAMES[x.dtype.name]}"
        )
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(_promote(x, False), dims, shape)
    n = _norm(norm, False)
    r = dispatch(OPS["fft_r2c"], (x, (dims[-1],), n, True))
    if len(dims) == 1:
        return dispatch(OPS["conj"], (r,))
    r = dispatch(OPS["conj_physical"], (r,))
    return dispatch(OPS["fft_c2c"], (r, tuple(dims[:-1]), n, False))


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The N-dimensional :func:`hfft`: a real result from the first half of a
    Hermitian-symmetric signal (``torch.fft.hfftn``).

    >>> import gradstack_tensor as gt
    >>> hfftn(gt.ones(2, 3)).shape
    gradstack.Size([2, 4])
    """
    return _hfftn("hfftn", input, s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """The inverse of :func:`hfftn` (``torch.fft.ihfftn``).

    >>> import gradstack_tensor as gt
    >>> ihfftn(gt.ones(2, 4)).shape
    gradstack.Size([2, 3])
    """
    return _ihfftn("ihfftn", input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`hfftn` over the last two dims (``torch.fft.hfft2``).

    >>> import gradstack_tensor as gt
    >>> hfft2(gt.ones(2, 3)).shape
    gradstack.Size([2, 4])
    """
    return _hfftn("hfft2", input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """:func:`ihfftn` over the last two dims (``torch.fft.ihfft2``).

    >>> import gradstack_tensor as gt
    >>> ihfft2(gt.ones(2, 4)).shape
    gradstack.Size([2, 3])
    """
    return _ihfftn("ihfft2", input, s, dim, norm)


# ----------------------------------------------------------------------------------------
# helpers


def _creation_dtype(dtype, fname):
    d = _dt.get_default_dtype() if dtype is None else _dt.as_dtype(dtype, fname)
    if not d.is_floating_point and not d.is_complex:
        raise RuntimeError(
            f"{fname} requires a floating point or complex dtype, got {_TYPE_NAMES[d.name]}"
        )  # (torch's arange then mul_ would fail)
    return d


def _frequencies(values: np.ndarray, n: int, d, dtype, requires_grad) -> Tensor:
    """``values * (1 / (n * d))`` in ``dtype``: torch's ``mul_`` of the integer bins by the
    double scale, in the tensor's own precision."""
    arr = values.astype(dtype.numpy) * dtype.numpy.type(1.0 / (n * d))
    t = _wrap(np.ascontiguousarray(arr, dtype=dtype.numpy))
    if requires_grad:
        t.requires_grad_(True)
    return t


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`fft`'s bins for a signal of ``n`` points spaced
    ``d`` apart (``torch.fft.fftfreq``): ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (n*d)``.

    >>> fftfreq(5, 0.5).tolist()
    [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929, -0.4000000059604645]
    """
    d_type = _creation_dtype(dtype, "fftfreq")
    bins = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _frequencies(bins, n, d, d_type, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The sample frequencies of :func:`rfft`'s bins: ``[0, 1, ..., n//2] / (n*d)``
    (``torch.fft.rfftfreq``).

    >>> rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    d_type = _creation_dtype(dtype, "rfftfreq")
    return _frequencies(np.arange(n // 2 + 1), n, d, d_type, requires_grad)


def _shift(input, dim, fname, inverse):
    from .arrangements import roll

    x = _input(input, fname)
    dims = (
        list(range(x.dim())) if dim is None else [_wrap_dim(d, x.dim()) for d in _ints(dim, "dim")]
    )
    if not dims:
        return roll(x, [], [])
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return roll(x, shifts, dims)


def fftshift(input, dim=None) -> Tensor:
    """Moves the zero-frequency bin to the centre: a roll by ``n // 2`` along each dim
    of ``dim`` (all by default), ``torch.fft.fftshift``.

    >>> fftshift(fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift(input, dim, "fftshift", False)


def ifftshift(input, dim=None) -> Tensor:
    """The inverse of :func:`fftshift`: a roll by ``(n + 1) // 2``
    (``torch.fft.ifftshift``).

    >>> ifftshift(fftshift(fftfreq(5))).tolist() == fftfreq(5).tolist()
    True
    """
    return _shift(input, dim, "ifftshift", True)
