"""Histograms with torch's binning: ``histc``, ``histogram`` and ``histogramdd``.

All three count the elements of a float tensor into bins and return tensors of the
input's dtype; none is differentiable.  They follow torch's CPU kernel
(``HistogramKernel.cpp``) element for element, so an element exactly on an edge lands in
the bin torch puts it in:

- the bins are right-open, except the last one, which includes its right edge;
- elements outside ``[first edge, last edge]`` are ignored, and so are NaNs;
- ``histc`` maps an element to its bin by linear interpolation in the input's dtype;
  ``histogram``/``histogramdd`` with a number of bins interpolate, then correct the
  position against the edges (torch's "linear interpolation with local search"); with
  tensors of edges they search the edges (``upper_bound``);
- equal-width edges are torch's ``linspace`` computed in the input's dtype (Note [torch's
  linspace is fused multiply-adds] in ``_linspace.py``), and a range of zero width is
  widened by 0.5 on each side (as numpy);
- ``density=True`` divides by the total weight and by each bin's width.

Note [Histogram outputs do not require grad]
torch records a ``NotImplemented`` node on a histogram of a tensor that requires grad (its
backward raises); these functions compute on the values and return tensors that do not
require grad: the derivative does not exist either way.

Examples
--------
>>> import gradstack_tensor as gt
>>> h = gt.histogram(gt.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
>>> h.hist.tolist(), h.bin_edges.tolist()
([0.0, 2.0, 1.0, 0.0], [0.0, 0.75, 1.5, 2.25, 3.0])
>>> histc(gt.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
[0.0, 2.0, 1.0, 0.0]
"""

from __future__ import annotations

import builtins

import numpy as np

from . import return_types
from ._linspace import torch_linspace
from ._out import check_out_dtype, write_out
from ._signatures import checked
from ._tensor import Tensor, _data, _wrap

__all__ = ["histc", "histogram", "histogramdd"]

_histogram_result = return_types.histogram
_histogramdd_result = return_types.histogramdd

_CPP_DTYPE = {"float32": "float", "float64": "double", "float16": "c10::Half"}
_KIND = {"float16": "Half", "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char"}


def _tensor_arg(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _not_implemented(kernel: str, dtype: np.dtype) -> NotImplementedError:
    kind = {"b": "Bool", "u": "Byte"}.get(dtype.kind) or _KIND.get(dtype.name, dtype.name)
    return NotImplementedError(f"\"{kernel}\" not implemented for '{kind}'")


def _cpp(value: float) -> str:
    """A double as C++'s ``operator<<`` prints it (six significant digits)."""
    return f"{value:g}"


def _linspace(lo: float, hi: float, steps: int, dtype: np.dtype) -> np.ndarray:
    return torch_linspace(lo, hi, steps, dtype)


def _bin_positions(column: np.ndarray, edges: np.ndarray, search: str) -> np.ndarray:
    """The bin of each element of ``column`` (all inside ``[edges[0], edges[-1]]``)."""
    n_edges = edges.shape[0]
    if search == "binary":
        pos = np.searchsorted(edges, column, side="right") - 1
    else:
        left, right = edges[0], edges[-1]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scaled = (column - left) * column.dtype.type(n_edges - 1) / (right - left)
        pos = scaled.astype(np.int64)
        if search == "local":
            # Note: torch's upper_bound over edges[max(0, pos - 1) : min(pos + 2, n_edges)]
            lo = np.maximum(pos - 1, 0)
            hi = np.minimum(pos + 2, n_edges)
            found = lo.copy()
            for k in range(3):
                idx = lo + k
                inside = idx < hi
                found += inside & (edges[np.minimum(idx, n_edges - 1)] <= column)
            pos = found - 1
    return np.where(pos == n_edges - 1, pos - 1, pos)


def _histogramdd_kernel(points, weight, edges, density: bool, search: str) -> np.ndarray:
    """Counts (or weights) of ``points`` (n x N) in the bins of ``edges`` (N arrays)."""
    dtype = points.dtype
    shape = tuple(e.shape[0] - 1 for e in edges)
    keep = np.ones(points.shape[0], dtype=bool)
    for d, e in enumerate(edges):
        col = points[:, d]
        keep &= (col >= e[0]) & (col <= e[-1])
    flat = np.zeros(points[keep].shape[0], dtype=np.int64)
    for d, e in enumerate(edges):
        flat = flat * shape[d] + _bin_positions(points[keep, d], e, search)
    hist = np.zeros(int(np.prod(shape)), dtype=dtype)
    if weight is None:
        hist += np.bincount(flat, minlength=hist.shape[0]).astype(dtype)
    else:
        np.add.at(hist, flat, weight[keep])  # accumulated in the input's dtype, in order
    hist = hist.reshape(shape)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum(dtype=dtype)
            for d, e in enumerate(edges):
                view = [1] * len(edges)
                view[d] = -1
                hist = hist / np.diff(e).reshape(view)
    return hist.astype(dtype, copy=False)


def _check_bins_count(counts, fname: str) -> None:
    for d, c in enumerate(counts):
        if c <= 0:
            raise RuntimeError(f"{fname}: bins must be > 0, but got {c} for dimension {d}")


def _outer_edges(points: np.ndarray, n_dims: int, range_):
    """(leftmost, rightmost) per dimension: ``range_``, else the data's min and max
    (0 and 1 for empty data); checked finite and ordered; widened when of zero width."""
    if range_ is not None:
        values = [float(v) for v in range_]
        lows, highs = values[0::2], values[1::2]
    elif points.shape[0]:
        lows = [float(v) for v in points.min(axis=0)]
        highs = [float(v) for v in points.max(axis=0)]
    else:
        lows, highs = [0.0] * n_dims, [1.0] * n_dims
    for d in range(n_dims):
        lo, hi = lows[d], highs[d]
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(
                f"torch.histogramdd: dimension {d}'s range [{_cpp(lo)}, {_cpp(hi)}] is not finite"
            )
        if lo > hi:
            raise RuntimeError(
                "torch.histogramdd: min should not exceed max, but got min "
                f"{_cpp(lo)} max {_cpp(hi)} for dimension {d}"
            )
        if lo == hi:
            lows[d], highs[d] = lo - 0.5, hi + 0.5
    return lows, highs


def _check_inputs(points: np.ndarray, edges, weight, input_shape, weight_shape) -> None:
    """torch's ``histogramdd_check_inputs``, in its order."""
    name = _CPP_DTYPE.get(points.dtype.name, points.dtype.name)
    for d, e in enumerate(edges):
        if e.dtype != points.dtype:
            raise RuntimeError(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                f"but got input with dtype {name} and bins for dimension {d} with dtype "
                f"{_CPP_DTYPE.get(e.dtype.name, e.dtype.name)}"
            )
        if e.ndim != 1:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have one dimension, but got "
                f"{e.ndim} dimensions in the bins tensor for dimension {d}"
            )
        if e.size == 0:
            raise RuntimeError(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                f"elements in the bins tensor for dimension {d}"
            )
    if weight is not None:
        if weight.dtype != points.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight "
                f"tensor should have the same dtype, but got input({name}), and "
                f"weight({_CPP_DTYPE.get(weight.dtype.name, weight.dtype.name)})"
            )
        expected = list(input_shape[:-1])
        if expected != (list(weight_shape) or [1]):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape "
                "as the input tensor excluding its innermost dimension, but got input with "
                f"shape {list(input_shape)} and weight with shape {list(weight_shape)}"
            )


def _check_float(x: np.ndarray) -> None:
    if x.dtype.kind != "f" or x.dtype.name == "float16":
        raise _not_implemented("histogramdd", x.dtype)


@checked("histc")
def histc(input, bins=100, min=0, max=0, *, out=None) -> Tensor:  # noqa: A002 - torch's names
    """A histogram of ``input`` with ``bins`` equal bins over ``[min, max]`` (the data's
    range when both are 0); elements outside are ignored; a float tensor of ``input``'s
    dtype, as torch's (integer inputs are refused, as there).

    >>> import gradstack_tensor as gt
    >>> histc(gt.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()
    [0.0, 2.0, 1.0, 0.0]
    """
    _tensor_arg(input, "histc", "input")
    x = _data(input)
    if isinstance(out, Tensor):  # torch checks out's dtype first
        check_out_dtype("histc", "histc", input.dtype, out, input.dtype)
    if x.dtype.kind != "f":
        raise _not_implemented("histogram_cpu", x.dtype)
    if int(bins) <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dimension 0")
    bins = int(bins)
    lo, hi = x.dtype.type(min), x.dtype.type(max)
    if lo == hi and x.size:
        lo, hi = x.min(), x.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(
            f"torch.histc(): range of [{lo}, {hi}] is not finite (pass finite min and max)"
        )
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    flat = x.reshape(-1)
    inside = flat[(flat >= lo) & (flat <= hi)]
    # torch's linear interpolation: the bin of ``elt`` is (elt - lo) * bins / (hi - lo),
    # computed in the input's dtype, with elt == hi in the last bin
    pos = ((inside - lo) * x.dtype.type(bins) / (hi - lo)).astype(np.int64)
    pos = np.minimum(pos, bins - 1)
    counts = _wrap(np.bincount(pos, minlength=bins).astype(x.dtype))
    if out is None:
        return counts
    return write_out("histc", counts, out, rule="histc", input_dtype=input.dtype)


def _weight_values(weight, fname: str):
    if weight is None:
        return None, None
    _tensor_arg(weight, fname, "weight")
    return _data(weight), tuple(weight.shape)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """A histogram of the values of ``input`` (any shape, a float dtype).

    Parameters
    ----------
    input : Tensor
        The values (float32 or float64).
    bins : int or Tensor
        The number of equal-width bins, or a 1-d tensor of increasing bin edges (of
        ``input``'s dtype, the rightmost edge included in the last bin).
    range : tuple of two floats, optional
        The leftmost and rightmost edges when ``bins`` is an int (default: the data's
        minimum and maximum).
    weight : Tensor, optional
        A weight per element (``input``'s dtype and number of elements), summed in place
        of the counts.
    density : bool
        Divide by the total weight and by the bins' widths, so the histogram integrates
        to 1.
    out : tuple of two Tensors, optional
        Written with ``hist`` and ``bin_edges``.

    Returns
    -------
    (hist, bin_edges)
        The named tuple ``histogram``: ``hist`` of ``input``'s dtype, ``bin_edges`` with one
        more element.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> x = gt.tensor([0.0, 1.0, 2.0, 2.5, 3.0])
    >>> histogram(x, gt.tensor([0.0, 1.0, 2.5, 3.0])).hist.tolist()
    [1.0, 2.0, 2.0]
    >>> histogram(x.double(), 3, density=True).hist.tolist()
    [0.2, 0.2, 0.6]
    """
    _tensor_arg(input, "histogram", "input")
    x = _data(input)
    points = x.reshape(-1, 1)
    w, w_shape = _weight_values(weight, "histogram")
    if w is not None:
        w = w.reshape(-1)
    if isinstance(bins, Tensor):
        if range is not None:
            raise TypeError(
                "histogram() received an invalid combination of arguments - got (Tensor, "
                "bins=Tensor, range=...): the tensor-of-edges form takes no range"
            )
        edges_np = _data(bins)
        _check_inputs(points, [edges_np], w, points.shape, w.shape if w is not None else ())
        _check_bins_count([edges_np.size - 1], "torch.histogram()")
        _check_float(x)
        edges = edges_np.copy()
        search = "binary"
    else:
        if isinstance(bins, builtins.bool) or not isinstance(bins, (builtins.int, np.integer)):
            raise TypeError(
                f"histogram(): argument 'bins' must be int or Tensor, not {type(bins).__name__}"
            )
        _check_bins_count([int(bins)], "torch.histogram()")
        if range is not None and len(range) != 2:
            raise RuntimeError(
                "torch.histogramdd: for a 1-dimensional histogram range should have 2 "
                f"elements, but got {len(range)}"
            )
        _check_float(x)
        lows, highs = _outer_edges(points, 1, range)
        edges = _linspace(lows[0], highs[0], int(bins) + 1, x.dtype)
        _check_inputs(points, [edges], w, points.shape, w.shape if w is not None else ())
        search = "local"
    del w_shape
    hist = _histogramdd_kernel(points, w, [edges], bool(density), search)
    result = _histogram_result(_wrap(hist), _wrap(edges))
    if out is None:
        return result
    _check_out_dtypes(out, x.dtype, "torch.histogram")
    written = write_out("histogram", tuple(result), out)
    return _histogram_result(*written)


def _check_out_dtypes(out, dtype: np.dtype, fname: str) -> None:
    if isinstance(out, (tuple, list)) and len(out) == 2 and isinstance(out[0], Tensor):
        got = _data(out[0]).dtype
        if got != dtype:
            raise RuntimeError(
                f"{fname}: input tensor and hist tensor should have the same dtype, but got "
                f"input {_CPP_DTYPE.get(dtype.name, dtype.name)} and hist "
                f"{_CPP_DTYPE.get(got.name, got.name)}"
            )


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """A histogram of the points in the rows of ``input`` (``(..., N)``: N coordinates).

    ``bins`` is an int (that many equal bins per dimension), a sequence of N ints, or a
    sequence of N 1-d tensors of edges; ``range`` is a flat sequence of 2N floats
    ``(min_0, max_0, min_1, max_1, ...)``; ``weight`` has ``input``'s shape without its
    last dimension.  Returns the named tuple ``histogramdd(hist, bin_edges)`` with
    ``bin_edges`` a tuple of N tensors.

    >>> import gradstack_tensor as gt
    >>> p = gt.tensor([[0.0, 0.0], [1.0, 1.0], [0.9, 0.1]])
    >>> histogramdd(p, bins=[2, 2]).hist.tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    _tensor_arg(input, "histogramdd", "input")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    x = _data(input)
    n_dims = x.shape[-1]
    points = x.reshape(-1, n_dims)
    w, w_shape = _weight_values(weight, "histogramdd")
    if isinstance(bins, (builtins.int, np.integer)) and not isinstance(bins, builtins.bool):
        bins = [int(bins)] * n_dims
    if isinstance(bins, Tensor) or not isinstance(bins, (list, tuple)):
        raise TypeError(
            "histogramdd(): argument 'bins' must be an int, a sequence of ints or a sequence "
            f"of Tensors, not {type(bins).__name__}"
        )
    for i, b in enumerate(bins):  # (every element's type before the count, as torch)
        if not isinstance(b, (Tensor, builtins.int, np.integer)) or isinstance(b, builtins.bool):
            raise TypeError(
                f"histogramdd(): expected Tensor as element {i} in argument 'bins', but got "
                f"{type(b).__name__}"
            )
    if len(bins) != n_dims:
        raise RuntimeError(
            "histogramdd: The size of bins must be equal to the innermost dimension of the input."
        )
    if all(isinstance(b, Tensor) for b in bins):
        edges = [_data(b) for b in bins]
        _check_inputs(points, edges, w, x.shape, w_shape or ())
        _check_bins_count([e.size - 1 for e in edges], "torch.histogramdd()")
        _check_float(x)
        edges = [e.copy() for e in edges]
        search = "binary"
        edge_tensors = tuple(bins)
    else:
        counts = [int(b) for b in bins]
        _check_bins_count(counts, "torch.histogramdd()")
        if range is not None and len(range) != 2 * n_dims:
            raise RuntimeError(
                f"torch.histogramdd: for a {n_dims}-dimensional histogram range should have "
                f"{2 * n_dims} elements, but got {len(range)}"
            )
        _check_float(x)
        lows, highs = _outer_edges(points, n_dims, range)
        edges = [
            _linspace(lo, hi, c + 1, x.dtype) for lo, hi, c in zip(lows, highs, counts, strict=True)
        ]
        _check_inputs(points, edges, w, x.shape, w_shape or ())
        search = "local"
        edge_tensors = tuple(_wrap(e) for e in edges)
    flat_w = None if w is None else w.reshape(-1)
    hist = _histogramdd_kernel(points, flat_w, edges, bool(density), search)
    return _histogramdd_result(_wrap(hist), edge_tensors)
