"""Derivatives of the factorizations of tensor-core's ``_impl_factorizations.py``:
``linalg_eig``, ``linalg_eigh``, ``linalg_qr``, ``linalg_lstsq``,
``linalg_solve_triangular``, ``linalg_lu`` and ``linalg_pinv``.

The formulas are torch's (FunctionsManual.cpp: ``linalg_eig_backward``,
``linalg_qr_backward``, ``linalg_lstsq_backward``, ``linalg_solve_triangular_backward``,
``linalg_lu_backward``, ``pinv_backward`` and their forward-mode twins), written in torch's
convention for complex numbers (the conjugate Wirtinger gradient, Note [The conjugate
Wirtinger gradient]: ``mH`` where the real formula has ``mT``) and with gradstack ops, so
that they differentiate again.

Note [Eigenvectors are defined up to a phase]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A complex eigenvector ``v`` (every eigenvector of ``eig``, and ``eigh``'s of a complex
matrix) may be multiplied by any ``e^{i phi}``: a loss that changes with ``phi`` has no
gradient.  Its change is ``Im(diag(V^H gV))``; as torch, the backward raises when that is
not close to zero (``rtol = atol = 1e-2``).  Real eigenvectors (``eigh`` of a real
matrix) are defined up to a sign, which no gradient sees.
"""

from __future__ import annotations

import gradstack_tensor as gt
from gradstack_tensor import linalg as _linalg

from ._table import jvp, register
from .batching import per_sample

__all__: list[str] = []

_PER_SAMPLE = per_sample("a factorization of each matrix; rare inside vmap")


def _diag(t):
    return t.diagonal(0, -2, -1)


def _set_diag(t, d):
    """``t`` with ``d`` on its diagonal (out of place, differentiable in both)."""
    return t - gt.diag_embed(_diag(t)) + gt.diag_embed(d)


def _eye_like(k, t):
    return gt.eye(k, dtype=t.dtype)


# ---------------------------------------------------------------------------------------
# eig and eigh


def _check_gauge(vhgv, hermitian):
    """Note [Eigenvectors are defined up to a phase]."""
    im = _diag(vhgv).imag
    if not gt.allclose(im, gt.zeros_like(im), rtol=1e-2, atol=1e-2):
        name = "linalg_eigh_backward" if hermitian else "linalg_eig_backward"
        raise RuntimeError(
            f"{name}: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined."
        )


def _is_real(t):
    """``t`` is real, or complex with every imaginary part zero."""
    return not t.is_complex() or not bool((t.imag != 0).any())


def eig_backward(g_l, g_v, values, vectors, hermitian):
    """torch's ``linalg_eig_backward`` (arXiv 1701.00392, eq. 4.77, for unit-norm
    eigenvectors): ``gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / E*) V^H``,
    ``E_ij = L_j - L_i`` off the diagonal; for a Hermitian matrix ``V^-1 = V^H`` and the
    middle term is projected on the skew-Hermitian matrices."""
    v = vectors
    if g_l is None and g_v is None:
        return None
    if g_v is None:
        if hermitian:
            return (v * g_l.unsqueeze(-2)).matmul(v.mH)
        if _is_real(v) and _is_real(g_l):
            # Note [A real spectrum's eig backward in real arithmetic]
            # A real matrix with a real spectrum (symmetric ones, most benchmarks) has real
            # eigenvectors: the solve with V^H is then a real one, a quarter of the complex
            # solve's flops (LU and substitution), and gives the same values (the imaginary
            # parts, all zero, add nothing to any rounding).
            vr = v.real
            gr = g_l.real if g_l.is_complex() else g_l
            return _linalg.solve(vr.mT, gr.unsqueeze(-1) * vr.mT).to(v.dtype)
        return _linalg.solve(v.mH, g_l.unsqueeze(-1) * v.mH)
    vhgv = v.mH.matmul(g_v)
    if v.is_complex():
        _check_gauge(vhgv, hermitian)
    if hermitian:
        vhgv = 0.5 * (vhgv - vhgv.mH)
    else:
        vhgv = vhgv - v.mH.matmul(v * _diag(vhgv).real.unsqueeze(-2))
    k = values.shape[-1]
    lc = values.conj() if values.is_complex() else values
    e = lc.unsqueeze(-2) - lc.unsqueeze(-1) + _eye_like(k, lc)
    middle = vhgv / e
    if g_l is not None:
        middle = _set_diag(middle, g_l.to(middle.dtype))
    if hermitian:
        return v.matmul(middle.matmul(v.mH))
    return _linalg.solve(v.mH, middle.matmul(v.mH))


def eig_jvp(da, values, vectors, hermitian):
    """torch's ``linalg_eig_jvp``: ``dP = V^-1 dA V``, ``dL = diag(dP)``,
    ``dV = V ((dP - diag) / E) - V Re diag(V^H dX)`` (the last term keeps unit norms)."""
    v = vectors
    if hermitian:
        dp = v.mH.matmul(da.to(v.dtype)).matmul(v)
    else:
        dp = _linalg.solve(v, da.to(v.dtype).matmul(v))
    dl = _diag(dp)
    if hermitian and not values.is_complex():
        dl = dl.real if dl.is_complex() else dl
    k = values.shape[-1]
    off = 1.0 - gt.eye(k, dtype=values.real.dtype if values.is_complex() else values.dtype)
    diff = values.unsqueeze(-2) - values.unsqueeze(-1) + gt.eye(k, dtype=values.dtype)
    dx = v.matmul(dp / diff * off)
    if hermitian:
        return dl, dx
    return dl, dx - v * _diag(v.mH.matmul(dx)).real.unsqueeze(-2)


def _register_eig(signature, node, hermitian):
    """linalg_eig's or linalg_eigh's formulas: `hermitian` tells which."""
    name = signature.partition("(")[0]

    def backward(ctx, g_l=None, g_v=None):
        values, vectors = ctx.saved_value("result")
        return (eig_backward(g_l, g_v, values, vectors, hermitian),)

    def forward(args, out, tangents, lead):
        return eig_jvp(tangents[0], out[0], out[1], hermitian)

    backward.__name__ = backward.__qualname__ = f"_{name}"
    forward.__name__ = forward.__qualname__ = f"_{name}_jvp"
    register(signature, node, save="result", batch=_PER_SAMPLE)(backward)
    jvp(name)(forward)


_register_eig("linalg_eig(self)", "LinalgEigBackward0", False)
_register_eig("linalg_eigh(self, UPLO)", "LinalgEighBackward0", True)


# ---------------------------------------------------------------------------------------
# qr


def _qr_checks(mode, m, n):
    if mode == "r":
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when "
            "mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
            "going to differentiate through linalg.qr."
        )
    if mode == "complete" and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."
        )


def _halve_diag(t):
    """``t`` with its diagonal halved (for the real part of ``X + X^H``'s diagonal, or the
    imaginary part of ``X - X^H``'s: the other part is zero)."""
    return t - 0.5 * gt.diag_embed(_diag(t))


@register("linalg_qr(self, mode)", "LinalgQrBackward0", save="mode, result", batch=_PER_SAMPLE)
def _linalg_qr(ctx, g_q=None, g_r=None):
    # torch's linalg_qr_backward: for m >= n, gA = (gQ + Q syminvadj(triu(gR R^H -
    # Q^H gQ))) R^-H; for m < n, Q trilImInvAdjSkew(Q^H gQ - gR R^H) R_1^-H padded with
    # zero columns, plus Q gR
    mode = ctx.saved_value("mode")
    q, r = ctx.saved_value("result")
    _qr_checks(mode, r.shape[-2], r.shape[-1])  # (R is m x n when 'complete')
    m, n = q.shape[-2], r.shape[-1]
    if g_q is None and g_r is None:
        return (None,)
    if g_q is not None and g_r is not None:
        g_a = g_r.matmul(r.mH) - q.mH.matmul(g_q)
    elif g_q is not None:
        g_a = -q.mH.matmul(g_q)
    else:
        g_a = g_r.matmul(r.mH)
    if m >= n:
        t = g_a.triu()
        g_a = q.matmul(_halve_diag(t + t.mH))
        if g_q is not None:
            g_a = g_a + g_q
        return (_linalg.solve_triangular(r.mH, g_a, upper=False, left=False),)
    skew = _halve_diag((-g_a - (-g_a).mH).tril())
    g_a = q.matmul(skew)
    g_a = _linalg.solve_triangular(r[..., :, :m].mH, g_a, upper=False, left=False)
    zeros = gt.zeros(*g_a.shape[:-1], n - m, dtype=g_a.dtype)
    g_a = gt.cat([g_a, zeros], -1)
    if g_r is not None:
        g_a = g_a + q.matmul(g_r)
    return (g_a,)


@jvp("linalg_qr")
def _linalg_qr_jvp(args, out, tangents, lead):
    # torch's linalg_qr_jvp: for m >= n, dR = syminv(sym(Q^H dA R^-1)) R and
    # dQ = dA R^-1 - Q syminv(...); for m < n from the leading m x m block
    mode = args[1] if len(args) > 1 else "reduced"
    q, r = out
    da = tangents[0]
    m, n = da.shape[-2], da.shape[-1]
    _qr_checks(mode, m, n)
    if m >= n:
        da_rinv = _linalg.solve_triangular(r, da, upper=True, left=False)
        s = q.mH.matmul(da_rinv)
        s = s + s.mH
        dr = _halve_diag(s.triu())
        dq = da_rinv - q.matmul(dr)
        return dq, dr.matmul(r)
    qhda = q.mH.matmul(da)
    x = _linalg.solve_triangular(r[..., :, :m], qhda[..., :, :m], upper=True, left=False)
    if x.is_complex():
        low = x.tril()
        low = low - gt.diag_embed(_diag(low).real.to(low.dtype))
        dq = _halve_diag(low - low.mH)
    else:
        low = x.tril(-1)
        dq = low - low.mT
    dr = qhda - dq.matmul(r)
    return q.matmul(dq), dr


# ---------------------------------------------------------------------------------------
# solve_triangular


@register(
    "linalg_solve_triangular(self, B, upper, left, unitriangular)",
    "LinalgSolveTriangularBackward0",
    inputs="self, B",
    save="self, upper, left, unitriangular, result",
    batch=_PER_SAMPLE,
)
def _linalg_solve_triangular(ctx, grad):
    # torch's linalg_solve_triangular_backward: gB = A^-H gX, gA = -gB X^H (X^H gB when
    # not left) projected on A's triangle
    a, upper, left, unit, x = (
        ctx.saved_value(k) for k in ("self", "upper", "left", "unitriangular", "result")
    )
    need_a, need_b = ctx.needs_input_grad
    g_b = _linalg.solve_triangular(a.mH, grad, upper=not upper, left=left, unitriangular=unit)
    g_a = None
    if need_a:
        g_a = -g_b.matmul(x.mH) if left else -x.mH.matmul(g_b)
        g_a = g_a.triu(int(unit)) if upper else g_a.tril(-int(unit))
    return (g_a, g_b if need_b else None)


@jvp("linalg_solve_triangular")
def _linalg_solve_triangular_jvp(args, out, tangents, lead):
    a, upper = args[0], args[2]
    left = args[3] if len(args) > 3 else True
    unit = args[4] if len(args) > 4 else False
    ta, tb = tangents[0], tangents[1]
    rhs = tb
    if ta is not None:
        proj = ta.triu(int(unit)) if upper else ta.tril(-int(unit))
        da_x = proj.matmul(out) if left else out.matmul(proj)
        rhs = -da_x if rhs is None else rhs - da_x
    return _linalg.solve_triangular(a, rhs, upper=upper, left=left, unitriangular=unit)


# ---------------------------------------------------------------------------------------
# pinv and lstsq


def pinv_backward(grad, pinv_a, a):
    """torch's ``pinv_backward``: the gradient of ``A^+`` for ``gA^+ = grad``, in the
    orientation with the smaller intermediate matrices."""
    m, n = a.shape[-2], a.shape[-1]
    pinv_ah = pinv_a.mH
    grad_h = grad.mH
    if m <= n:
        k = grad_h.matmul(pinv_a)
        k_pinv_ah = k.matmul(pinv_ah)
        return (
            -(pinv_a.matmul(k)).mH
            + k_pinv_ah
            - a.matmul(pinv_a).matmul(k_pinv_ah)
            + pinv_ah.matmul(pinv_a).matmul(grad_h - k.matmul(a))
        )
    k = pinv_a.matmul(grad_h)
    pinv_ah_k = pinv_ah.matmul(k)
    return (
        -(k.matmul(pinv_a)).mH
        + (grad_h - a.matmul(k)).matmul(pinv_a).matmul(pinv_ah)
        + pinv_ah_k
        - pinv_ah_k.matmul(pinv_a).matmul(a)
    )


@register(
    "linalg_pinv(self, atol, rtol, hermitian)",
    "LinalgPinvBackward0",
    save="self, result",
    batch=_PER_SAMPLE,
)
def _linalg_pinv(ctx, grad):
    a, pinv_a = ctx.saved_value("self"), ctx.saved_value("result")
    return (pinv_backward(grad, pinv_a, a),)


def pinv_jvp(a, pinv_a, da):
    """The tangent of ``A^+`` at constant rank (Golub and Pereyra):
    ``-A^+ dA A^+ + A^+ A^+^H dA^H (I - A A^+) + (I - A^+ A) dA^H A^+^H A^+``."""
    dah = da.mH
    pinv_ah = pinv_a.mH
    first = -pinv_a.matmul(da).matmul(pinv_a)
    second = pinv_a.matmul(pinv_ah).matmul(dah - dah.matmul(a).matmul(pinv_a))
    third = (dah - pinv_a.matmul(a).matmul(dah)).matmul(pinv_ah).matmul(pinv_a)
    return first + second + third


@jvp("linalg_pinv")
def _linalg_pinv_jvp(args, out, tangents, lead):
    return pinv_jvp(args[0], out, tangents[0])


def _is_vector_rhs(a, b):
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and tuple(b.shape) == tuple(a.shape[:-1]))


@register(
    "linalg_lstsq(self, b, rcond, driver)",
    "LinalgLstsqBackward0",
    inputs="self, b",
    save="self, b, result",
    batch=_PER_SAMPLE,
)
def _linalg_lstsq(ctx, g_x=None, g_res=None, g_rank=None, g_sv=None):
    # torch's linalg_lstsq_backward: through X = pinv(A) B (pinv_backward of gX B^H, and
    # pinv(A)^H gX), plus the residuals' 2 (gL r) X^H and -2 gL r, r = A X - B
    a, b = ctx.saved_value("self"), ctx.saved_value("b")
    x = ctx.saved_value("result")[0]
    need_a, need_b = ctx.needs_input_grad
    has_res = g_res is not None and g_res.numel() > 0
    if g_x is None and not has_res:
        return (None, None)
    vector = _is_vector_rhs(a, b)
    bm = b.unsqueeze(-1) if vector else b
    g_a = g_b = None
    if g_x is not None:
        gx = g_x.unsqueeze(-1) if vector else g_x
        pinv_a = _linalg.pinv(a)
        if need_a:
            g_a = pinv_backward(gx.matmul(bm.mH), pinv_a, a)
        if need_b:
            g_b = pinv_a.mH.matmul(gx)
    if has_res:
        xm = x.unsqueeze(-1) if vector else x
        r = a.matmul(xm) - bm
        gl = g_res.unsqueeze(-2) if not vector else g_res.reshape(*g_res.shape, 1, 1)
        if need_a:
            extra = 2 * (gl * r).matmul(xm.mH)
            g_a = extra if g_a is None else g_a + extra
        if need_b:
            extra = -2 * gl * r
            g_b = extra if g_b is None else g_b + extra
    if g_b is not None and vector:
        g_b = g_b.squeeze(-1)
    return (g_a, g_b)


@jvp("linalg_lstsq")
def _linalg_lstsq_jvp(args, out, tangents, lead):
    # torch's linalg_lstsq_solution_jvp (dX = d(A^+) B + A^+ dB) and residuals_jvp
    # (Danskin: dL = 2 Re(r * conj(dA X - dB)) summed over rows, r = A X - B)
    a, b = args[0], args[1]
    ta, tb = tangents[0], tangents[1]
    vector = _is_vector_rhs(a, b)
    bm = b.unsqueeze(-1) if vector else b
    tbm = None if tb is None else (tb.unsqueeze(-1) if vector else tb)
    pinv_a = _linalg.pinv(a)
    dx = None
    if ta is not None:
        dx = pinv_jvp(a, pinv_a, ta).matmul(bm)
    if tbm is not None:
        dx = pinv_a.matmul(tbm) if dx is None else dx + pinv_a.matmul(tbm)
    x, res = out[0], out[1]
    d_res = None
    if res.numel() > 0 and (ta is not None or tbm is not None):
        xm = x.unsqueeze(-1) if vector else x
        r = a.matmul(xm) - bm
        if ta is None:
            dr = -tbm  # type: ignore[operator]  # (one of the two tangents is given)
        else:
            dr = ta.matmul(xm) if tbm is None else ta.matmul(xm) - tbm
        prod = r * (dr.conj() if dr.is_complex() else dr)
        d_res = 2 * (prod.real if prod.is_complex() else prod).sum(-2)
    if dx is not None and vector:
        dx = dx.squeeze(-1)
    return dx, d_res, None, None


# ---------------------------------------------------------------------------------------
# lu


@register("linalg_lu(self, pivot)", "LinalgLuBackward0", save="pivot, result", batch=_PER_SAMPLE)
def _linalg_lu(ctx, g_p=None, g_l=None, g_u=None):
    p, low, up = ctx.saved_value("result")
    return (lu_backward(g_l, g_u, p, low, up),)


def lu_backward(g_l, g_u, p, low, up):
    """The gradient of ``A = P L U`` (torch's ``linalg_lu_backward``, derived again): with
    ``gL``, ``gU`` projected on ``L``'s strict lower and ``U``'s upper triangle, a square or
    wide ``A`` (``U = [U1 U2]``) gets
    ``P L^-H [tril(L^H gL - gU U^H, -1) U1^-H + gU1 | gU2]``, a tall one (``L = [L1; L2]``)
    ``P [L1^-H triu(gU U^H - L^H gL) + gL1; gL2] U^-H``."""
    if g_l is None and g_u is None:
        return None
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    g_l = g_l.tril(-1) if g_l is not None else None
    g_u = g_u.triu() if g_u is not None else None
    # phi = L^H gL - gU U^H (its negative for a tall A), without a zero matrix to start
    if g_l is None:
        phi = -g_u.matmul(up.mH)
    else:
        phi = low.mH.matmul(g_l)
        if g_u is not None:
            phi = phi - g_u.matmul(up.mH)
    if m <= n:
        g_a = _linalg.solve_triangular(up[..., :, :k].mH, phi.tril(-1), upper=False, left=False)
        if g_u is not None:
            g_a = g_a + g_u[..., :, :k]
            if n > k:
                g_a = gt.cat([g_a, g_u[..., :, k:]], -1)
        elif n > k:
            g_a = gt.cat([g_a, gt.zeros(*g_a.shape[:-1], n - k, dtype=g_a.dtype)], -1)
        g_a = _linalg.solve_triangular(low.mH, g_a, upper=True, unitriangular=True)
        return _permute_rows(p, g_a)
    g_a = _linalg.solve_triangular(low[..., :k, :].mH, -phi.triu(), upper=True, unitriangular=True)
    if g_l is not None:
        g_a = gt.cat([g_a + g_l[..., :k, :], g_l[..., k:, :]], -2)
    else:
        g_a = gt.cat([g_a, gt.zeros(*g_a.shape[:-2], m - k, n, dtype=g_a.dtype)], -2)
    g_a = _linalg.solve_triangular(up.mH, g_a, upper=False, left=False)
    return _permute_rows(p, g_a)


def _permute_rows(p, t):
    """``P t`` for the permutation matrix ``P`` of ``linalg_lu``, as a gather of ``t``'s
    rows (row ``r`` of ``P t`` is row ``i`` of ``t``, ``P[r, i] = 1``): m * n reads where
    the product is an m**2 n GEMM (~25 ms at m = n = 1000, float32).  Differentiable in
    ``t``; ``P`` gets no gradient, as the ``g_p`` of :func:`lu_backward` is unused."""
    rows = (p.real if p.is_complex() else p).argmax(-1)
    return t.gather(-2, rows.unsqueeze(-1).expand(*t.shape))


@jvp("linalg_lu")
def _linalg_lu_jvp(args, out, tangents, lead):
    # A = P L U: with X = L1^-1 (P^T dA)_1 U1^-1 on the leading k x k block,
    # dL1 = L1 tril(X, -1), dU1 = triu(X) U1; a wide matrix's dU2 = L^-1 (P^T dA)_2 -
    # tril(X, -1) U2, a tall one's dL2 = (P^T dA)_2 U^-1 - L2 triu(X)
    p, low, up = out
    pda = p.mT.matmul(tangents[0])
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    l1, u1 = low[..., :k, :], up[..., :, :k]
    y = _linalg.solve_triangular(l1, pda[..., :k, :k], upper=False, unitriangular=True)
    x = _linalg.solve_triangular(u1, y, upper=True, left=False)
    lower, upper = x.tril(-1), x.triu()
    d_l1, d_u1 = l1.matmul(lower), upper.matmul(u1)
    if m == n:
        return None, d_l1, d_u1
    if m < n:
        rest = _linalg.solve_triangular(l1, pda[..., :, k:], upper=False, unitriangular=True)
        d_u2 = rest - lower.matmul(up[..., :, k:])
        return None, d_l1, gt.cat([d_u1, d_u2], -1)
    rest = _linalg.solve_triangular(u1, pda[..., k:, :], upper=True, left=False)
    d_l2 = rest - low[..., k:, :].matmul(upper)
    return None, gt.cat([d_l1, d_l2], -2), d_u1
