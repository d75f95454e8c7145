"""``gradstack.utils``: :mod:`gradstack.utils.data` (data sets, samplers, ``DataLoader``)
and :mod:`gradstack.utils.benchmark` (``Timer``)."""

from . import benchmark, data

__all__ = ["benchmark", "data"]
