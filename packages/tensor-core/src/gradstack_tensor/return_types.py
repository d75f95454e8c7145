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
    "frexp",
]

max = namedtuple("max", ["values", "indices"])  # noqa: A001 - torch's names
min = namedtuple("min", ["values", "indices"])  # noqa: A001
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])
aminmax = namedtuple("aminmax", ["min", "max"])
median = namedtuple("median", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
svd = namedtuple("svd", ["U", "S", "V"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])

for _t in (
    max, min, sort, topk, histogram, histogramdd, aminmax,
    median, nanmedian, kthvalue, mode, cummax, cummin, slogdet, linalg_slogdet, svd,
    linalg_svd, frexp,
):  # fmt: skip
    _t.__module__ = "gradstack.return_types"
