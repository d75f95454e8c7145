"""The reparameterised gradients of gamma and Dirichlet draws: torch's
``_standard_gamma_grad`` and ``_dirichlet_grad`` (ATen's ``standard_gamma_grad_one`` and
``dirichlet_grad_one``), vectorised over numpy arrays.

A gamma draw ``x`` of ``Gamma(alpha, 1)`` has no closed-form inverse CDF, so its
derivative with respect to ``alpha`` is the implicit one, ``-(dF/dalpha)(x) / pdf(x)``,
which ATen approximates piecewise: a Taylor series for small ``x``, Rice's saddle-point
expansion for large ``alpha``, and a bivariate rational fit elsewhere.  The Dirichlet
gradient is the same idea for a Beta marginal.

Note [Implicit gradients in float64]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
ATen evaluates these in ``double`` (its ``accscalar_t``), except a few steps of the
Dirichlet formulas that it does in the tensor's ``scalar_t``.  Here every step is in
float64 and the result is rounded to the input's dtype: float64 gradients agree with
torch's to a few ulps (numpy's ``log``/``exp``/``pow`` are not always the C library's),
float32 ones to float32 rounding.

Examples
--------
>>> import numpy as np
>>> [round(v, 6) for v in standard_gamma_grad(np.array([0.5, 2.0, 20.0]),
...                                            np.array([0.3, 1.5, 22.0])).tolist()]
[1.009802, 0.93662, 1.057105]
"""

from __future__ import annotations

import numpy as np

__all__ = ["digamma", "standard_gamma_grad", "dirichlet_grad"]

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (
    8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
    -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
    8.33333333333333333333e-2,
)  # fmt: skip
_F = np.float32  # ATen's float literals (0.8f ...) as doubles
_0_8F, _0_9F, _1_1F, _1E17F = float(_F(0.8)), float(_F(0.9)), float(_F(1.1)), float(_F(1e17))


def digamma(x: np.ndarray) -> np.ndarray:
    """ATen's ``digamma_one`` (Cephes) over an array of float64.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(digamma(np.array([1.0]))[0]), 10)
    -0.5772156649
    """
    x0 = np.array(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        neg = x0 < 0
        additional = np.where(neg, -np.pi / np.tan(np.pi * x0), 0.0)
        x = np.where(neg, 1 - x0, x0)
        result = np.zeros_like(x)
        for _ in range(10):  # push x up to at least 10 (x >= 0 here)
            small = x < 10
            result = np.where(small, result - 1 / x, result)
            x = np.where(small, x + 1, x)
        z = 1.0 / (x * x)
        poly = np.zeros_like(x)
        for coef in _DIGAMMA_A:
            poly = poly * z + coef
        y = np.where(x < _1E17F, z * poly, 0.0)
        out = result + np.log(x) - (0.5 / x) - y + additional
        out = np.where(x == 10, result + _PSI_10 + additional, out)
        out = np.where((neg & (x0 == np.floor(x0))) | (x0 == 0), np.inf, out)
    return out


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``d x / d alpha`` for draws ``x`` of ``Gamma(alpha, 1)``, ATen's
    ``standard_gamma_grad_one``."""
    dtype = np.result_type(alpha, x)
    alpha, x = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        # Taylor series for small x
        numer = np.ones_like(x)
        denom = alpha.copy()
        series1 = numer / denom
        series2 = numer / (denom * denom)
        for i in range(1, 6):
            numer = numer * (-x / i)
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / (denom * denom)
        pow_x_alpha = np.power(x, alpha)
        gamma_pdf = np.power(x, alpha - 1) * np.exp(-x)
        gamma_cdf = pow_x_alpha * series1
        gamma_cdf_alpha = (np.log(x) - digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
        small_x = -gamma_cdf_alpha / gamma_pdf
        small_x = np.where(np.isnan(small_x), 0.0, small_x)

        # Rice saddle point expansion for large alpha, near the mean ...
        numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
        numer_2 = (
            1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
            + alpha * (107 + 3600 * x)
        )  # fmt: skip
        near_mean = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        # ... and away from it
        denom_r = np.sqrt(8 * alpha)
        term2 = denom_r / (alpha - x)
        term3 = np.power(x - alpha - alpha * np.log(x / alpha), -1.5)
        term23 = np.where(x < alpha, term2 - term3, term2 + term3)
        term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / (
            (alpha - x) * (alpha - x)
        )
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        far_mean = -stirling * (x * term1) / denom_r

        # bivariate rational approximation elsewhere
        u = np.log(x / alpha)
        v = np.log(alpha)
        coef_uv = (
            (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
             1, 0.32668115, 0.10406089, 0.0014179084),
            (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
             0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
            (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
             0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
        )  # fmt: skip
        cv = [coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]) for i in range(8)]
        p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
        q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
        rational = np.exp(p / q)

        near = (_0_9F * alpha <= x) & (x <= _1_1F * alpha)
        large = np.where(near, near_mean, far_mean)
        result = np.where(x < _0_8F, small_x, np.where(alpha > 8.0, large, rational))
    return result.astype(dtype)


def _beta_grad_alpha_small(x, alpha, beta):
    factor = digamma(alpha) - digamma(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * np.power(1 - x, -beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    factor = digamma(alpha + beta) - digamma(beta)
    numer = np.ones_like(x)
    betas = np.ones_like(x)
    dbetas = np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -np.power(1 - x, 1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))  # fmt: skip
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    near_mean = prefactor_num / (1 - x) * poly / prefactor_den

    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = (
        (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
        * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
        / (1 + 1 / (12 * total) + 1 / (288 * total * total))
    )
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1_den = np.sqrt(2 * alpha / beta) * np.power(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4_base = beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))
    term4 = np.power(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    away = stirling * prefactor * term1234
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near_mean, away)


_DIRICHLET_C = np.array(
    [
        [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
          [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
          [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
         [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
          [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
          [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
         [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
          [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
          [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
        [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
          [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
          [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
         [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
          [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
          [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
         [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
          [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
          [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
    ]
)  # fmt: skip


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """ATen's ``dirichlet_grad_one``: ``-(dF/dalpha)(x) / pdf(x) / (1 - x)`` for a draw
    ``x`` of ``Beta(alpha, total - alpha)``.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(dirichlet_grad(np.array([0.3]), np.array([1.0]), np.array([3.0]))[0]), 6)
    0.412272
    """
    dtype = np.result_type(x, alpha, total)
    x, alpha, total = np.broadcast_arrays(
        np.asarray(x, np.float64), np.asarray(alpha, np.float64), np.asarray(total, np.float64)
    )
    with np.errstate(all="ignore"):
        beta = total - alpha
        boundary = total * x * (1 - x)
        small = _beta_grad_alpha_small(x, alpha, beta)
        large = -_beta_grad_beta_small(1 - x, beta, alpha)
        mid = _beta_grad_alpha_mid(x, alpha, beta)

        u = np.log(x)
        a = np.log(alpha) - u
        b = np.log(total) - a
        pow_u = (np.ones_like(u), u, u * u)
        pow_a = (np.ones_like(a), a, a * a)
        p = np.zeros_like(x)
        q = np.zeros_like(x)
        c = _DIRICHLET_C
        for i in range(3):
            for j in range(3):
                ua = pow_u[i] * pow_a[j]
                p = p + ua * (
                    c[0, i, j, 0] + b * (c[0, i, j, 1] + b * (c[0, i, j, 2] + b * c[0, i, j, 3]))
                )
                q = q + ua * (
                    c[1, i, j, 0] + b * (c[1, i, j, 1] + b * (c[1, i, j, 2] + b * c[1, i, j, 3]))
                )
        approx = x * (digamma(total) - digamma(alpha)) / beta
        rational = p / q * approx

        result = np.where(
            (x <= 0.5) & (boundary < 2.5),
            small,
            np.where(
                (x >= 0.5) & (boundary < 0.75),
                large,
                np.where((alpha > 6) & (beta > 6), mid, rational),
            ),
        )
    return result.astype(dtype)
