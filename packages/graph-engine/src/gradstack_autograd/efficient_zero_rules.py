"""Which backward nodes pass torch's efficient zero on (Note [Efficient zeros] in _node.pyx).

torch's ZeroTensor is kept by the ops that know it (``mul``, ``add``, ``div`` by it ...) and
materialized into real zeros by the others (``neg``, ``mm``, ``where`` ...), so whether a
node's formula hands an input an efficient zero or real zeros (which an ``inf`` or NaN in
the formula turns into NaN) depends on how torch wrote that formula.  This table says it
for each node, input by input, as torch 2.13 behaves: ``True`` for every input, or one bool
per differentiable input.  It was read off torch by feeding each node the efficient zero of
``y.sgn()`` with inputs holding 0, -0, +-inf, NaN and tiny values, and checking
``_is_zerotensor()`` on the gradients.  A node that is not listed runs its formula on real
zeros: torch does the same for most of those (``t``, ``expand``, slices, ``mean``, ``mm``,
``tanh``, ``sigmoid``, ``reciprocal``, ``neg``, ``where``, ``clamp`` ...), and where a listed
rule is missing the result is what real zeros give, as before efficient zeros existed.

Examples
--------
>>> KEEPS["DivBackward0"]
(True, False)
"""

from __future__ import annotations

__all__ = ["KEEPS"]

_ALL = True

KEEPS: dict[str, object] = {
    # unary formulas of the form grad * f(x): the product with a ZeroTensor is one
    **dict.fromkeys(
        [
            "SgnBackward0",
            "AbsBackward0",
            "ExpBackward0",
            "Exp2Backward0",
            "Expm1Backward0",
            "LogBackward0",
            "Log2Backward0",
            "Log10Backward0",
            "Log1PBackward0",
            "SqrtBackward0",
            "RsqrtBackward0",
            "SinBackward0",
            "CosBackward0",
            "TanBackward0",
            "AsinBackward0",
            "AcosBackward0",
            "AtanBackward0",
            "SinhBackward0",
            "CoshBackward0",
            "ErfBackward0",
            "CloneBackward0",
            "PowBackward0",  # tensor ** number (square included)
            "SumBackward0",  # sum of all elements (SumBackward1, over dims, materializes)
            "ViewBackward0",  # view, reshape and flatten of a contiguous tensor
            "UnsqueezeBackward0",
            "SqueezeBackward0",
            "SqueezeBackward1",
            "LinalgVectorNormBackward0",
            "LogsumexpBackward0",
            "AmaxBackward0",
            "VarBackward0",
            "DiagEmbedBackward0",
        ],
        _ALL,
    ),
    # binary formulas: an input whose formula starts with ``-grad`` (neg materializes) or
    # goes through mm gets real zeros
    "MulBackward0": _ALL,  # (also outer, which torch writes as a product)
    "AddBackward0": _ALL,
    "SubBackward0": (True, False),
    "DivBackward0": (True, False),
    "PowBackward1": _ALL,  # (its self formula masks the product, which stays zero)
    "Atan2Backward0": _ALL,
    "HypotBackward0": _ALL,
    "RemainderBackward1": (True, False),
    "FmodBackward1": (True, False),
    "DotBackward0": _ALL,
    "MvBackward0": (True, False),
    "CatBackward0": _ALL,
    "StackBackward0": _ALL,
}
