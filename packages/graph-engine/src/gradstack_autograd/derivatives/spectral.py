"""The discrete Fourier transforms behind torch.fft: torch's ``_fft_c2c``, ``_fft_r2c``,
``_fft_c2r`` and their derivatives (torch's ``fft_r2c_backward``/``fft_c2r_backward``).

The transforms are linear, so each backward is the adjoint transform of the gradient with
the same normalisation: the inverse direction for c2c; for r2c onesided, a c2r of the
gradient with the bins that stand for two halved (Note [The onesided r2c backward as a
c2r]: torch's zero-filled inverse c2c, its real part, in a quarter of the work); for c2r, an r2c of
the gradient with the bins that stand for two (their mirror image is not stored) doubled.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import OPS
from gradstack_tensor.extension import dispatch

from ._formulas import _lead
from ._table import jvp, register
from .batching import per_sample

__all__: list[str] = []

_NO_RULE = "the FFT ops have no batching rule yet; vmap runs them per sample"


def _shifted(dim, grad):
    """The transformed dims of a gradient that may carry a batch prefix (Note [Batched
    formulas])."""
    nl = len(_lead(grad))
    return tuple(d + nl for d in dim) if nl else dim


def _c2c(x, dim, normalization, forward):
    return dispatch(OPS["fft_c2c"], (x, dim, normalization, forward))


def _r2c(x, dim, normalization, onesided):
    return dispatch(OPS["fft_r2c"], (x, dim, normalization, onesided))


def _c2r(x, dim, normalization, last_dim_size):
    return dispatch(OPS["fft_c2r"], (x, dim, normalization, last_dim_size))


@register(
    "fft_c2c(self, dim, normalization, forward)",
    "FftC2CBackward0",
    save="dim, normalization, forward",
    batch=per_sample(_NO_RULE),
)
def _fft_c2c(ctx, grad):
    dim, norm, forward = (ctx.saved_value(n) for n in ("dim", "normalization", "forward"))
    return (_c2c(grad, _shifted(dim, grad), norm, not forward),)


@jvp("fft_c2c")
def _fft_c2c_jvp(args, out, tangents, lead):
    return _c2c(tangents[0], tuple(d + len(lead) for d in args[1]), args[2], args[3])


@register(
    "fft_r2c(self, dim, normalization, onesided)",
    "FftR2CBackward0",
    save="self, dim, normalization, onesided",
    batch=per_sample(_NO_RULE),
)
def _fft_r2c(ctx, grad):
    x = ctx.saved_value("self")
    dim, norm, onesided = (ctx.saved_value(n) for n in ("dim", "normalization", "onesided"))
    gdim = _shifted(dim, grad)
    if onesided:
        # Note [The onesided r2c backward as a c2r]
        # torch fills the missing bins with zeros, runs the inverse c2c and keeps the real
        # part.  That real part is the c2r (which reads a half spectrum as Hermitian) of
        # the gradient with the bins 1 .. (n - 1) // 2 halved: each is read twice by the
        # c2r (as itself and, conjugated, as its mirror), once by Re(c2c); the zero and
        # Nyquist bins are read once by both (their imaginary parts drop out of both).  A
        # half-length c2r instead of a padded copy and a full complex transform: ~4x less
        # work at 1000 x 1000 (the inverse c2c was 2/3 of r2c's forward + backward).
        n = x.shape[dim[-1]]
        half = (n - 1) // 2
        if half > 0:
            grad = grad * _bin_weights(grad, gdim[-1], half, 0.5)
        return (_c2r(grad, gdim, norm, n),)
    return (_c2c(grad, gdim, norm, False).real,)


@jvp("fft_r2c")
def _fft_r2c_jvp(args, out, tangents, lead):
    return _r2c(tangents[0], tuple(d + len(lead) for d in args[1]), args[2], args[3])


@register(
    "fft_c2r(self, dim, normalization, last_dim_size)",
    "FftC2RBackward0",
    save="dim, normalization",
    batch=per_sample(_NO_RULE),
)
def _fft_c2r(ctx, grad):
    dim, norm = ctx.saved_value("dim"), ctx.saved_value("normalization")
    dim = _shifted(dim, grad)
    g = _r2c(grad, dim, norm, True)
    last = dim[-1]
    double = grad.shape[last] - g.shape[last]
    if double > 0:
        # the bins 1 .. n - (n//2 + 1) stand for their mirror images too
        g = g * _bin_weights(g, last, double, 2.0)
    return (g,)


def _bin_weights(g, last, count, value):
    """A constant that multiplies the bins ``1 .. count`` of ``g``'s dim ``last`` by
    ``value`` (the others by 1), shaped to broadcast against ``g``: one tensor made from
    numpy (four gradstack ops cost more than the transform on small inputs)."""
    shape = [1] * g.dim()
    shape[last] = g.shape[last]
    w = np.ones(g.shape[last], g.dtype.to_real().numpy)
    w[1 : 1 + count] = value
    return gt.from_numpy(w.reshape(shape))


@jvp("fft_c2r")
def _fft_c2r_jvp(args, out, tangents, lead):
    return _c2r(tangents[0], tuple(d + len(lead) for d in args[1]), args[2], args[3])
