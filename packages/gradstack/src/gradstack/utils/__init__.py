"""``gradstack.utils``: :mod:`gradstack.utils.data` (data sets, samplers, ``DataLoader``)."""

from . import data

__all__ = ["data"]
