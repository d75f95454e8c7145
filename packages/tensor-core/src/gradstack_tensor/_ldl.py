"""LAPACK's symmetric indefinite factorization, in numpy: ``sytf2`` (Bunch-Kaufman
pivoting, the lower triangle) and ``sytrs`` (the solve with its factors), the kernels of
``linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve``.

Note [LDL by Bunch-Kaufman in numpy]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
numpy exposes no ``sytrf``.  This is LAPACK's unblocked ``sytf2`` with ``UPLO='L'`` (what
``sytrf`` runs for matrices of fewer than its block size, 64 columns): at column ``k``,
with ``alpha = (1 + sqrt(17)) / 8``, a 1x1 pivot when ``|a_kk| >= alpha * colmax`` (or
``>= alpha * colmax^2 / rowmax``), else a 1x1 pivot on ``imax`` when ``|a_imax,imax| >=
alpha * rowmax``, else a 2x2 pivot on ``(k, imax)``; then the rank-1 or rank-2 update of
the rest.  The pivots and their packed format are LAPACK's (``pivots[k] > 0``: rows ``k``
and ``pivots[k]`` swapped, a 1x1 block; two equal negative entries: a 2x2 block, row
``k + 1`` swapped with ``-pivots[k]``); the values differ from a blocked ``sytrf`` (larger
matrices) by rounding only.  Magnitudes of complex numbers are LAPACK's ``|re| + |im|``.
Hermitian complex matrices take ``hetf2``/``hetrs``'s
variants (real diagonals, ``x x^H``, conjugated swaps).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["sytf2", "sytrs"]

_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _abs1(x):
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


def sytf2(a: np.ndarray, hermitian: bool = False):
    """``(LD, pivots, info)`` of one symmetric matrix ``a`` (Hermitian when ``hermitian``:
    LAPACK's ``hetf2``; its lower triangle read): LAPACK's packed factors (the strict
    upper triangle zero), 1-based int32 pivots, ``info`` the 1-based index of a zero
    diagonal block (0 if none)."""
    a = np.tril(np.array(a, copy=True))
    herm = hermitian and np.iscomplexobj(a)
    if herm:
        idx = np.arange(a.shape[0])
        a[idx, idx] = a[idx, idx].real
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    with np.errstate(all="ignore"):
        while k < n:
            kstep = 1
            absakk = float(abs(a[k, k].real) if herm else _abs1(a[k, k]))
            if k < n - 1:
                col = _abs1(a[k + 1 :, k])
                imax = k + 1 + int(np.argmax(col))
                colmax = float(col.max())
            else:
                imax, colmax = k, 0.0
            if max(absakk, colmax) == 0.0 or math.isnan(absakk):
                info = info or k + 1
                kp = k
            else:
                if absakk >= _ALPHA * colmax:
                    kp = k
                else:
                    rowmax = float(_abs1(a[imax, k:imax]).max())
                    if imax < n - 1:
                        rowmax = max(rowmax, float(_abs1(a[imax + 1 :, imax]).max()))
                    if absakk >= _ALPHA * colmax * (colmax / rowmax):
                        kp = k
                    elif float(abs(a[imax, imax].real) if herm else _abs1(a[imax, imax])) >= (
                        _ALPHA * rowmax
                    ):
                        kp = imax
                    else:
                        kp, kstep = imax, 2
                kk = k + kstep - 1
                if kp != kk:  # swap rows and columns kk and kp of the trailing block
                    if kp < n - 1:
                        tail = a[kp + 1 :, kk].copy()
                        a[kp + 1 :, kk] = a[kp + 1 :, kp]
                        a[kp + 1 :, kp] = tail
                    mid = a[kk + 1 : kp, kk].copy()
                    if herm:  # (the swapped segment crosses the diagonal: conjugated)
                        a[kk + 1 : kp, kk] = np.conj(a[kp, kk + 1 : kp])
                        a[kp, kk + 1 : kp] = np.conj(mid)
                        a[kp, kk] = np.conj(a[kp, kk])
                    else:
                        a[kk + 1 : kp, kk] = a[kp, kk + 1 : kp]
                        a[kp, kk + 1 : kp] = mid
                    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                    if kstep == 2:
                        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
                if herm:
                    _update_hermitian(a, k, kstep)
                else:
                    _update(a, k, kstep)
            if kstep == 1:
                ipiv[k] = kp + 1
            else:
                ipiv[k] = ipiv[k + 1] = -(kp + 1)
            k += kstep
    return a, ipiv, info


def _update(a: np.ndarray, k: int, kstep: int) -> None:
    n = a.shape[0]
    if kstep == 1:
        if k < n - 1:
            d11 = 1.0 / a[k, k]
            x = a[k + 1 :, k].copy()
            a[k + 1 :, k + 1 :] += np.tril(np.outer(x, -d11 * x))  # (dsyr's rounding)
            a[k + 1 :, k] = x * d11
        return
    if k < n - 2:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
        ak, ak1 = a[k + 2 :, k].copy(), a[k + 2 :, k + 1].copy()
        wk = d21 * (d11 * ak - ak1)
        wkp1 = d21 * (d22 * ak1 - ak)
        a[k + 2 :, k + 2 :] -= np.tril(np.outer(ak, wk) + np.outer(ak1, wkp1))
        a[k + 2 :, k] = wk
        a[k + 2 :, k + 1] = wkp1


def _update_hermitian(a: np.ndarray, k: int, kstep: int) -> None:
    """``hetf2``'s updates: real diagonals, ``x x^H`` for ``x x^T``."""
    n = a.shape[0]
    if kstep == 1:
        a[k, k] = a[k, k].real
        if k < n - 1:
            r1 = 1.0 / a[k, k].real
            x = a[k + 1 :, k].copy()
            a[k + 1 :, k + 1 :] += np.tril(np.outer(x, -r1 * np.conj(x)))
            idx = np.arange(k + 1, n)
            a[idx, idx] = a[idx, idx].real
            a[k + 1 :, k] = x * r1
        return
    a[k, k] = a[k, k].real
    a[k + 1, k + 1] = a[k + 1, k + 1].real
    if k < n - 2:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
        ak, ak1 = a[k + 2 :, k].copy(), a[k + 2 :, k + 1].copy()
        wk = d * (d11 * ak - d21 * ak1)
        wkp1 = d * (d22 * ak1 - np.conj(d21) * ak)
        a[k + 2 :, k + 2 :] -= np.tril(np.outer(ak, np.conj(wk)) + np.outer(ak1, np.conj(wkp1)))
        idx = np.arange(k + 2, n)
        a[idx, idx] = a[idx, idx].real
        a[k + 2 :, k] = wk
        a[k + 2 :, k + 1] = wkp1


def sytrs(ld: np.ndarray, ipiv: np.ndarray, b: np.ndarray, hermitian: bool = False):
    """``X`` with ``A X = b`` from one matrix's :func:`sytf2` factors (``hetrs`` when
    ``hermitian``)."""
    herm = hermitian and np.iscomplexobj(ld)
    cj = np.conj if herm else (lambda v: v)
    x = np.array(b, dtype=np.result_type(ld.dtype, b.dtype), copy=True)
    n = ld.shape[0]
    with np.errstate(all="ignore"):
        k = 0
        while k < n:  # L D Y = B
            if ipiv[k] > 0:
                kp = ipiv[k] - 1
                if kp != k:
                    x[[k, kp]] = x[[kp, k]]
                x[k + 1 :] -= np.outer(ld[k + 1 :, k], x[k])
                x[k] = x[k] * (1.0 / ld[k, k].real) if herm else x[k] / ld[k, k]
                k += 1
            else:
                kp = -ipiv[k] - 1
                if kp != k + 1:
                    x[[k + 1, kp]] = x[[kp, k + 1]]
                x[k + 2 :] -= np.outer(ld[k + 2 :, k], x[k]) + np.outer(
                    ld[k + 2 :, k + 1], x[k + 1]
                )
                akm1k = ld[k + 1, k]
                akm1 = ld[k, k] / cj(akm1k)
                ak = ld[k + 1, k + 1] / akm1k
                denom = akm1 * ak - 1.0
                bkm1, bk = x[k] / cj(akm1k), x[k + 1] / akm1k
                x[k] = (ak * bkm1 - bk) / denom
                x[k + 1] = (akm1 * bk - bkm1) / denom
                k += 2
        k = n - 1
        while k >= 0:  # L^T X = Y
            if ipiv[k] > 0:
                x[k] -= cj(ld[k + 1 :, k]) @ x[k + 1 :]
                kp = ipiv[k] - 1
                if kp != k:
                    x[[k, kp]] = x[[kp, k]]
                k -= 1
            else:
                x[k] -= cj(ld[k + 1 :, k]) @ x[k + 1 :]
                x[k - 1] -= cj(ld[k + 1 :, k - 1]) @ x[k + 1 :]
                kp = -ipiv[k] - 1
                if kp != k:
                    x[[k, kp]] = x[[kp, k]]
                k -= 2
    return x
