"""``nn.utils.parametrizations``: ``weight_norm``, ``spectral_norm`` and ``orthogonal``
as parametrizations (:mod:`gradstack_nn.utils.parametrize`), torch's.

- ``weight_norm(module, "weight", dim=0)``: ``weight = g * v / ||v||`` (the norm over every
  dim but ``dim``), with ``g`` and ``v`` the parameters ``parametrizations.weight.original0``
  and ``original1``.
- ``spectral_norm(module, "weight", n_power_iterations=1)``: ``weight / sigma``, ``sigma``
  the largest singular value estimated by power iteration on the buffers ``_u`` and
  ``_v`` (one more iteration at each forward in training mode; 15 at registration, from
  torch's random start: the same draws after the same seed).
- ``orthogonal(module, "weight")``: an orthogonal (or semi-orthogonal) matrix, by the
  matrix exponential (square matrices), the Cayley map or Householder reflections
  (non-square), of a skew-symmetric or lower-triangular parameter, with torch's
  "trivialization" (``base @ map(X)``, ``base`` taken from the assigned matrix).

Examples
--------
>>> import gradstack_tensor as gt
>>> import gradstack_nn as nn
>>> gt.manual_seed(0)  # doctest: +ELLIPSIS
<...>
>>> m = weight_norm(nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
>>> q = orthogonal(nn.Linear(3, 3)).weight
>>> bool(((q @ q.T) - gt.eye(3)).abs().max() < 1e-5)
True
"""

from __future__ import annotations

import enum

import gradstack_autograd as ag
import gradstack_tensor as gt
import numpy as np
from gradstack_tensor.composites import _weight_norm

from ..functional import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(Q) -> bool:
    n, k = Q.size(-2), Q.size(-1)
    eye = gt.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * gt.finfo(Q.dtype).eps
    return gt.allclose(Q.mT @ Q, eye, atol=eps)


def _make_orthogonal(A):
    """The Q of ``A = QR`` with ``diag(R) >= 0`` (LAPACK's Householder QR, as torch's
    ``geqrf`` + ``householder_product``; unique for a full-rank ``A``)."""
    a = A.detach().numpy()
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    signs = np.where(signs == 0, 1.0, signs)
    return gt.tensor(np.ascontiguousarray(q * signs[..., None, :]), dtype=A.dtype)


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = gt.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = gt.linalg.matrix_exp(A)
            else:
                eye = gt.eye(n, dtype=A.dtype)
                Q = gt.linalg.solve(gt.add(eye, A, alpha=-0.5), gt.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = gt.linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:  # (use_trivialization)
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with ag.no_grad():
            if Q.shape != self.shape:
                raise ValueError(
                    f"Expected a matrix or batch of matrices of shape {self.shape}. "
                    f"Got a tensor of shape {Q.shape}."
                )
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                raise NotImplementedError(
                    "orthogonal(use_trivialization=False) with the householder map needs "
                    "torch.geqrf, which gradstack does not have"
                )
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:
                N = gt.randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(gt.cat([Q, N], dim=-1))
            self.base = Q
            neg_id = gt.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Make ``module.<name>`` orthogonal (see the module's docstring); ``orthogonal_map``
    is ``"matrix_exp"`` (the default for square matrices), ``"cayley"`` or
    ``"householder"`` (the default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, gt.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return gt.norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Weight normalisation of ``module.<name>`` (see the module's docstring); ``dim=None``
    normalises the whole tensor."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                "Dimension out of range (expected to be in range of "
                f"[-{ndim}, {ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        # (torch writes the buffers in place: F.normalize(..., out=self._u))
        with ag.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(gt.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(gt.mv(weight_mat.mT, self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = gt.vdot(u, gt.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Spectral normalisation of ``module.<name>`` (see the module's docstring); ``dim`` is
    the output dim (1 for transposed convolutions, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, gt.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
        dim = 1 if isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module
