"""Complex numbers: view_as_real, view_as_complex, conj, conj_physical, angle, polar,
complex (torch's formulas, in torch's convention for complex gradients: Note [The
conjugate Wirtinger gradient] in ``_wirtinger``)."""

from __future__ import annotations

import gradstack_tensor as gt

from ._table import jvp, register
from .batching import per_sample

__all__: list[str] = []

_NO_RULE = "complex views and constructors have no batching rule yet; rare in vmap"


@register("view_as_real(self)", "ViewAsRealBackward0", batch=per_sample(_NO_RULE))
def _view_as_real(ctx, grad):
    return (gt.view_as_complex(grad.contiguous()),)


@jvp("view_as_real")
def _view_as_real_jvp(args, out, tangents, lead):
    return gt.view_as_real(tangents[0])


@register("view_as_complex(self)", "ViewAsComplexBackward0", batch=per_sample(_NO_RULE))
def _view_as_complex(ctx, grad):
    return (gt.view_as_real(grad.contiguous()),)


@jvp("view_as_complex")
def _view_as_complex_jvp(args, out, tangents, lead):
    return gt.view_as_complex(tangents[0].contiguous())


@register("conj(self)", "ConjBackward0", batch=per_sample(_NO_RULE))
def _conj(ctx, grad):
    # (torch's grad.conj(), computed: Note [Gradients are never lazy views] in _wirtinger)
    return (grad.conj_physical(),)


@register("_neg_view(self)", "NegViewBackward0", batch=per_sample(_NO_RULE))
def _neg_view(ctx, grad):
    return (grad.neg(),)


@jvp("_neg_view")
def _neg_view_jvp(args, out, tangents, lead):
    return tangents[0].neg()


@register("conj_physical(self)", "ConjPhysicalBackward0", batch=per_sample(_NO_RULE))
def _conj_physical(ctx, grad):
    return (grad.conj_physical(),)


@jvp("conj", "conj_physical")
def _conj_jvp(args, out, tangents, lead):
    return tangents[0].conj_physical()


@register("angle(self)", "AngleBackward0", save="self", batch=per_sample(_NO_RULE))
def _angle(ctx, grad):
    # torch's angle_backward: grad * i z / |z|^2, zero where z is zero
    z = ctx.saved_value("self")
    g = grad * z / z.abs().pow(2) * 1j
    return (gt.where(z == 0, gt.zeros((), dtype=g.dtype), g),)


@register(
    "polar(abs, angle)",
    "PolarBackward0",
    inputs="abs, angle",
    save="result",
    batch=per_sample(_NO_RULE),
)
def _polar(ctx, grad):
    # torch's polar_backward
    result = ctx.saved_value("result")
    grad_conj = grad.conj_physical()
    need_abs, need_angle = ctx.needs_input_grad
    g_abs = (grad_conj * result.sgn()).real if need_abs else None
    g_angle = (grad_conj * (result * 1j)).real if need_angle else None
    return g_abs, g_angle


@register(
    "complex(real, imag)", "ComplexBackward0", inputs="real, imag", batch=per_sample(_NO_RULE)
)
def _complex(ctx, grad):
    need_re, need_im = ctx.needs_input_grad
    return (grad.real if need_re else None), (grad.imag if need_im else None)


@jvp("angle")
def _angle_jvp(args, out, tangents, lead):
    # d angle(z) = Im(dz / z) = Im(dz * conj(z)) / |z|^2, zero at z = 0 (as the backward)
    z = args[0]
    r = (tangents[0] * z.conj()).imag / z.abs().pow(2)
    return gt.where(z == 0, gt.zeros((), dtype=r.dtype), r)


@jvp("polar")
def _polar_jvp(args, out, tangents, lead):
    # d (r e^{i theta}) = dr e^{i theta} + i r e^{i theta} d theta
    t_abs, t_angle = tangents
    r = None
    if t_abs is not None:
        r = t_abs * gt.polar(gt.ones_like(args[1]), args[1])
    if t_angle is not None:
        term = t_angle * (out * 1j)
        r = term if r is None else r + term
    return r


@jvp("complex")
def _complex_jvp(args, out, tangents, lead):
    t_re, t_im = tangents
    like = t_re if t_re is not None else t_im
    t_re = t_re if t_re is not None else gt.zeros_like(like)
    t_im = t_im if t_im is not None else gt.zeros_like(like)
    return gt.complex(t_re, t_im)
