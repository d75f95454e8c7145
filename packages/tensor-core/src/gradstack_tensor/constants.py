"""torch's module constants: ``inf``, ``nan``, ``pi``, ``e`` (Python floats, as
``math``'s) and ``newaxis`` (``None``, for indexing).

Examples
--------
>>> import gradstack_tensor as gt
>>> gt.tensor([1.0, 2.0]).masked_fill(gt.tensor([True, False]), -inf).tolist()
[-inf, 2.0]
>>> gt.ones(3)[newaxis].shape
gradstack.Size([1, 3])
>>> round(pi, 5), round(e, 5)
(3.14159, 2.71828)
"""

import math

__all__ = ["inf", "nan", "pi", "e", "newaxis"]

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None
