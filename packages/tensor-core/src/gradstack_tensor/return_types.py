"""Named tuples returned by ops with several results, as ``torch.return_types``.

>>> from gradstack_tensor.return_types import max as max_result
>>> max_result._fields
('values', 'indices')
"""

from __future__ import annotations

from collections import namedtuple

__all__ = [
    "max",
    "min",
    "sort",
    "topk",
    "histogram",
    "histogramdd",
    "aminmax",
    "median",
    "nanmedian",
    "kthvalue",
    "mode",
    "cummax",
    "cummin",
    "slogdet",
    "linalg_slogdet",
    "svd",
    "linalg_svd",
    "linalg_eig",
    "linalg_eigh",
    "linalg_qr",
    "qr",
    "linalg_lstsq",
    "linalg_lu",
    "lu_unpack",
    "linalg_lu_factor",
    "linalg_lu_factor_ex",
    "linalg_inv_ex",
    "linalg_cholesky_ex",
    "linalg_solve_ex",
    "triangular_solve",
    "geqrf",
    "linalg_ldl_factor",
    "linalg_ldl_factor_ex",
    "frexp",
]


def _structseq(name: str, fields: list[str]):
    """A named tuple printed as torch's ``torch.return_types`` ones: the type's qualified
    name, then one ``field=value`` a line (Note [Return types print as torch's])."""
    cls = namedtuple(name, fields)  # type: ignore[misc]
    cls.__module__ = "gradstack.return_types"
    cls.__repr__ = _repr  # type: ignore[method-assign]
    return cls


def _repr(self) -> str:
    # Note [Return types print as torch's]
    # torch's structseqs print ``torch.return_types.max(\nvalues=tensor(...),\nindices=...)``;
    # here the module is gradstack's (as a dtype prints ``gradstack.float32``), the layout
    # torch's.
    items = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"{type(self).__module__}.{type(self).__name__}(\n{items})"


max = _structseq("max", ["values", "indices"])  # noqa: A001 - torch's names
min = _structseq("min", ["values", "indices"])  # noqa: A001
sort = _structseq("sort", ["values", "indices"])
topk = _structseq("topk", ["values", "indices"])
histogram = _structseq("histogram", ["hist", "bin_edges"])
histogramdd = _structseq("histogramdd", ["hist", "bin_edges"])
aminmax = _structseq("aminmax", ["min", "max"])
median = _structseq("median", ["values", "indices"])
nanmedian = _structseq("nanmedian", ["values", "indices"])
kthvalue = _structseq("kthvalue", ["values", "indices"])
mode = _structseq("mode", ["values", "indices"])
cummax = _structseq("cummax", ["values", "indices"])
cummin = _structseq("cummin", ["values", "indices"])
slogdet = _structseq("slogdet", ["sign", "logabsdet"])
linalg_slogdet = _structseq("linalg_slogdet", ["sign", "logabsdet"])
svd = _structseq("svd", ["U", "S", "V"])
linalg_svd = _structseq("linalg_svd", ["U", "S", "Vh"])
linalg_eig = _structseq("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_eigh = _structseq("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_qr = _structseq("linalg_qr", ["Q", "R"])
qr = _structseq("qr", ["Q", "R"])
linalg_lstsq = _structseq("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lu = _structseq("linalg_lu", ["P", "L", "U"])
lu_unpack = _structseq("lu_unpack", ["P", "L", "U"])
linalg_lu_factor = _structseq("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_inv_ex = _structseq("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = _structseq("linalg_solve_ex", ["result", "info"])
triangular_solve = _structseq("triangular_solve", ["solution", "cloned_coefficient"])
geqrf = _structseq("geqrf", ["a", "tau"])
linalg_ldl_factor = _structseq("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = _structseq("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
frexp = _structseq("frexp", ["mantissa", "exponent"])
