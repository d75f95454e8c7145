"""torch's ``cov`` and ``corrcoef``: the covariance and correlation matrices of the
variables in a tensor's rows, with torch's formulas op for op (weighted means, ``mm``,
``true_divide``), so that they differentiate through those ops (Note [Composites record
their parts] in composites.py).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.cov(gt.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
[[1.0, -1.0], [-1.0, 1.0]]
"""

from __future__ import annotations

import warnings

from ._composite_args import _floating, _gt, _int, _integral, _name, _tensor
from ._tensor import Tensor, _data

__all__ = ["cov", "corrcoef"]


def _check_weights(w: Tensor, kind: str, observations: int) -> None:
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with "
            f"{w.dim()} dimensions"
        )
    ok = _integral(w.dtype) if kind == "fweights" else _floating(w.dtype)
    if not ok:
        what = "integral" if kind == "fweights" else "floating point"
        raise RuntimeError(
            f"cov(): expected {kind} to have {what} dtype but got {kind} with "
            f"{_name(w.dtype)} dtype"
        )
    if w.numel() != observations:
        raise RuntimeError(
            f"cov(): expected {kind} to have the same numel as there are observations in the "
            f"input but got {w.numel()} != {observations}"
        )
    if observations and (_data(w) < 0).any():
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with integer frequency weights ``fweights`` and float observation weights
    ``aweights``; torch's formula, op for op.

    A 1-d input is one variable (a 0-d result).  With ``correction`` at least the number
    of observations (the weights' sum), torch warns and divides by zero.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.cov(gt.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    gt = _gt()
    x = _tensor(input, "cov")
    correction = _int(correction, "cov", "correction")
    if x.dim() > 2:
        raise RuntimeError(
            "cov(): expected input to have two or fewer dimensions but got an input with "
            f"{x.dim()} dimensions"
        )
    if x.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    data = x.reshape(1, -1) if x.dim() < 2 else x
    observations = data.shape[1]
    w = None
    if fweights is not None:
        _check_weights(_tensor(fweights, "cov", "fweights"), "fweights", observations)
        w = fweights
    if aweights is not None:
        _check_weights(_tensor(aweights, "cov", "aweights"), "aweights", observations)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = gt.scalar_tensor(observations, dtype=gt.int64)
    else:
        w_sum = w.sum()
        if not bool(_data(w_sum) != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (data if w is None else data * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(_data(norm) <= 0):
        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.",
            UserWarning,
            stacklevel=2,
        )
        norm = gt.zeros_like(norm)
    centred = data - avg.unsqueeze(1)
    c = gt.mm(centred, (centred if w is None else centred * w).t())
    return gt.true_divide(c, norm).squeeze()


def corrcoef(input) -> Tensor:
    """Pearson's correlation coefficients of the rows of ``input``: ``cov`` divided by the
    outer product of the standard deviations, clipped to [-1, 1] (torch's formula).

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> gt.corrcoef(gt.tensor([[0.0, 1.0, 2.0], [4.0, 2.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = _tensor(input, "corrcoef")
    if x.dim() > 2:
        raise RuntimeError(
            "corrcoef(): expected input to have two or fewer dimensions but got an input with "
            f"{x.dim()} dimensions"
        )
    c = cov(x)
    if c.dim() == 0:
        return c / c  # NaN for a covariance of 0, inf or NaN, else 1
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)
