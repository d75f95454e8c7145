"""torch's convention for complex gradients, applied to formulas written for real numbers.

Note [The conjugate Wirtinger gradient]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
For a real loss ``L`` of a complex ``z = x + iy``, torch's ``z.grad`` is
``dL/dx + i dL/dy``, twice the conjugate Wirtinger derivative ``dL/dz*`` (torch's docs,
"Autograd for Complex Numbers").  Through a holomorphic ``w = f(z)`` this is
``grad_z = grad_w * conj(f'(z))``: mul's ``self`` gets ``grad * other.conj()``, matmul's
``grad @ other.mH``.  A formula written for real numbers as ``grad * f'(z)`` (linear in
``grad``, holomorphic in the inputs) gives torch's complex gradient as
``conj(formula(conj(grad)))``, so the rows of holomorphic ops keep their one formula and
are wrapped: :func:`holomorphic` does it for a registered formula, ``elementwise`` rows do
it unless they say ``holomorphic=False`` (``abs``, whose formula ``grad * self.sgn()`` is
written in torch's convention already).  A real gradient runs the formula unchanged, at the
cost of one dtype test; a real input of a complex op receives the real part of its complex
gradient (the engine's cast, torch's ``handle_r_to_c``).
"""

from __future__ import annotations

import functools

from gradstack_tensor import Tensor
from gradstack_tensor.extension import data_of

__all__ = ["holomorphic", "is_complex", "conj"]


def is_complex(t) -> bool:
    """Whether ``t`` is a complex tensor."""
    return isinstance(t, Tensor) and data_of(t).dtype.kind == "c"


def conj(t):
    """The conjugate of a complex tensor, computed (Note [Gradients are never lazy views]);
    anything else unchanged.

    Note [Gradients are never lazy views]
    tensor-core's ``conj()`` is a lazy view that shares its input's version counter and
    is kept equal to it by writes (Note [The conjugate and negative bits]); the engine
    writes into gradients in place without versions (input buffers) and a leaf's
    ``.grad`` takes over a gradient's array, so the formulas conjugate with
    ``conj_physical()``: the same values, an array of its own.
    """
    return t.conj_physical() if is_complex(t) else t


def holomorphic(formula):
    """Wrap ``formula(ctx, grad)`` of a holomorphic op for complex gradients (Note [The
    conjugate Wirtinger gradient])."""

    @functools.wraps(formula)
    def wrapped(ctx, grad):
        if not grad.is_complex():
            return formula(ctx, grad)
        return tuple(conj(g) for g in formula(ctx, grad.conj_physical()))

    return wrapped
