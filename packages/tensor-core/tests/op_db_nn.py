"""The op database's entries for the neural-network ops of ``_impl_nn.py``.

``op_db.py`` calls :func:`extend` with itself at import, so the generic tests of
``test_ops.py`` and ``test_fuzz.py`` (values against a numpy reference and against torch,
unsupported dtypes, in-place versions, raw calls with random arguments) run over these ops
as over every other.  The references below are written independently of the kernels
(loops over the batch, textbook formulas), in float64.

Examples
--------
>>> import numpy as np
>>> _nll_ref(np.log(np.array([[0.5, 0.5], [0.9, 0.1]])), np.array([0, 0]), None, "sum", -100)
0.7985076962177716
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["extend"]

FLOATS = ("float32", "float64")
REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss, reduction):
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean() if loss.size else np.nan
    return loss


# ---------------------------------------------------------------------------------------
# references


def _nll_ref(x, target, weight, reduction, ignore_index):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 1:
        x, target = x[None], np.asarray(target).reshape(1)
        out = _nll_ref(x, target, weight, reduction, ignore_index)
        return out.reshape(()) if reduction == "none" else out
    n, c = x.shape[:2]
    losses = np.zeros(target.shape)
    weights = np.zeros(target.shape)
    for pos in np.ndindex(target.shape):
        k = int(target[pos])
        if k == ignore_index:
            continue
        w = 1.0 if weight is None else float(weight[k])
        losses[pos] = -x[(pos[0], k) + pos[1:]] * w
        weights[pos] = w
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / weights.sum() if weights.sum() else np.nan


def _mse_ref(x, y, reduction="mean"):
    return _reduce((x - y) ** 2, reduction)


def _smooth_l1_ref(x, y, reduction="mean", beta=1.0):
    d = np.abs(x - y)
    loss = np.array([v - 0.5 * beta if v >= beta else 0.5 * v * v / beta for v in d.ravel()])
    return _reduce(loss.reshape(d.shape), reduction)


def _huber_ref(x, y, reduction="mean", delta=1.0):
    d = np.abs(x - y)
    loss = np.array([delta * (v - 0.5 * delta) if v >= delta else 0.5 * v * v for v in d.ravel()])
    return _reduce(loss.reshape(d.shape), reduction)


def _bce_ref(x, y, weight=None, reduction="mean"):
    loss = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_logits_ref(x, y, weight=None, pos_weight=None, reduction="mean"):
    pw = 1.0 if pos_weight is None else pos_weight
    # -log(sigmoid(x)) = softplus(-x), -log(1 - sigmoid(x)) = softplus(x)
    loss = pw * y * np.logaddexp(0, -x) + (1 - y) * np.logaddexp(0, x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _layer_norm_ref(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    k = len(normalized_shape)
    rows = x.reshape(-1, math.prod(normalized_shape))
    mean = rows.mean(1, keepdims=True)
    var = ((rows - mean) ** 2).mean(1, keepdims=True)
    out = ((rows - mean) / np.sqrt(var + eps)).reshape(x.shape)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    assert out.shape[x.ndim - k :] == tuple(normalized_shape)
    return out


def _batch_norm_ref(x, weight, bias, running_mean, running_var, training, momentum, eps):
    c = x.shape[1]
    moved = np.moveaxis(x, 1, -1).reshape(-1, c)
    if training or running_mean is None:
        mean, var = moved.mean(0), moved.var(0)
    else:
        mean, var = running_mean, running_var
    out = (moved - mean) / np.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    shape = (x.shape[0],) + x.shape[2:] + (c,)
    return np.moveaxis(out.reshape(shape), -1, 1)


def _embedding_ref(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    rows = [weight[i] for i in np.asarray(indices).ravel()]
    return np.asarray(rows, dtype=weight.dtype).reshape(np.shape(indices) + weight.shape[1:])


def _renorm_ref(weight, indices, max_norm, norm_type):
    w = weight.copy()
    for i in np.unique(indices):
        norm = np.sum(np.abs(w[i]) ** norm_type) ** (1 / norm_type)
        if norm > max_norm:
            w[i] = w[i] * (max_norm / (norm + 1e-7))
    return w


def _windows_ref(h, w, k, d, p, s, out):
    """Every window of a (h, w) plane padded by p: (row, col, position in the window,
    input row, input col) for each output position, in torch's scan order."""
    for a in range(out[0]):
        for b in range(out[1]):
            pos = 0
            for i in range(k[0]):
                for j in range(k[1]):
                    yield a, b, pos, a * s[0] - p[0] + i * d[0], b * s[1] - p[1] + j * d[1]
                    pos += 1


def _blocks_ref(size, k, d, p, s):
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in (0, 1))


def _im2col_ref(x, k, d, p, s):
    x = np.asarray(x)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    n, c, h, w = x.shape
    out = _blocks_ref((h, w), k, d, p, s)
    cols = np.zeros((n, c, k[0] * k[1], out[0] * out[1]), dtype=x.dtype)
    for a, b, pos, r, q in _windows_ref(h, w, k, d, p, s, out):
        if 0 <= r < h and 0 <= q < w:
            cols[:, :, pos, a * out[1] + b] = x[:, :, r, q]
    cols = cols.reshape(n, c * k[0] * k[1], out[0] * out[1])
    return cols[0] if unbatched else cols


def _conv2d_ref(x, w, b, s, p, d, groups):
    """The 2-d convolution by its definition: a sum over each window, in the operands'
    dtype for integers (C's wraparound, as torch's), float64 for floats."""
    x, w = np.asarray(x), np.asarray(w)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    dtype = x.dtype
    acc = np.int64 if dtype.kind in "iu" else np.float64
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out = _blocks_ref((h, wd), (kh, kw), d, p, s)
    xp = np.zeros((n, c, h + 2 * p[0], wd + 2 * p[1]), dtype=acc)
    xp[:, :, p[0] : p[0] + h, p[1] : p[1] + wd] = x
    res = np.zeros((n, o, *out), dtype=acc)
    per = o // groups
    for oc in range(o):
        group = oc // per
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * d[0], i * d[0] + s[0] * (out[0] - 1) + 1, s[0])
                cols = slice(j * d[1], j * d[1] + s[1] * (out[1] - 1) + 1, s[1])
                patch = xp[:, group * cg : (group + 1) * cg, rows, cols]
                res[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j].astype(acc))
    if b is not None:
        res += np.asarray(b).astype(acc).reshape(o, 1, 1)
    res = res.astype(dtype)
    return res[0] if unbatched else res


def _col2im_ref(cols, size, k, d, p, s):
    cols = np.asarray(cols)
    unbatched = cols.ndim == 2
    cols = cols[None] if unbatched else cols
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    out = _blocks_ref(size, k, d, p, s)
    cols = cols.reshape(n, c, k[0] * k[1], out[0] * out[1])
    res = np.zeros((n, c) + tuple(size), dtype=cols.dtype)
    for a, b, pos, r, q in _windows_ref(size[0], size[1], k, d, p, s, out):
        if 0 <= r < size[0] and 0 <= q < size[1]:
            res[:, :, r, q] += cols[:, :, pos, a * out[1] + b]
    return res[0] if unbatched else res


def _max_pool2d_ref(x, k, s, p, d, ceil_mode):
    """Scan each window in order: a larger element or a NaN takes the place (torch's
    rule); the index starts at the window's first element inside the input."""
    x = np.asarray(x)
    unbatched = x.ndim == 3
    x = x[None] if unbatched else x
    n, c, h, w = x.shape
    s = k if s is None else s

    def size(i, length):
        top = length + 2 * p[i] - d[i] * (k[i] - 1) - 1 + ((s[i] - 1) if ceil_mode else 0)
        o = top // s[i] + 1
        return o - 1 if ceil_mode and (o - 1) * s[i] >= length + p[i] else o

    out = (size(0, h), size(1, w))
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    values = np.full((n, c) + out, low, dtype=x.dtype)
    index = np.zeros((n, c) + out, dtype=np.int64)
    for a in range(out[0]):
        for b in range(out[1]):
            r0, q0 = a * s[0] - p[0], b * s[1] - p[1]
            while r0 < 0:
                r0 += d[0]
            while q0 < 0:
                q0 += d[1]
            index[:, :, a, b] = r0 * w + q0
            for r in range(r0, min(a * s[0] - p[0] + d[0] * (k[0] - 1) + 1, h), d[0]):
                for q in range(q0, min(b * s[1] - p[1] + d[1] * (k[1] - 1) + 1, w), d[1]):
                    v = x[:, :, r, q]
                    take = (v > values[:, :, a, b]) | np.isnan(v)
                    values[:, :, a, b] = np.where(take, v, values[:, :, a, b])
                    index[:, :, a, b] = np.where(take, r * w + q, index[:, :, a, b])
    if unbatched:
        return values[0], index[0]
    return values, index


def _avg_windows(size, k, s, p, ceil_mode, count_include_pad, divisor):
    """Each output's window ``(r0, r1, q0, q1)`` inside the input and its divisor (torch's
    avg_pool2d rules, written out)."""

    def count(i, length):
        top = length + 2 * p[i] - k[i] + ((s[i] - 1) if ceil_mode else 0)
        o = top // s[i] + 1
        return o - 1 if ceil_mode and (o - 1) * s[i] >= length + p[i] else o

    out = (count(0, size[0]), count(1, size[1]))
    for a in range(out[0]):
        for b in range(out[1]):
            r0, q0 = a * s[0] - p[0], b * s[1] - p[1]
            r1, q1 = min(r0 + k[0], size[0] + p[0]), min(q0 + k[1], size[1] + p[1])
            padded = (r1 - r0) * (q1 - q0)
            r0, q0, r1, q1 = max(r0, 0), max(q0, 0), min(r1, size[0]), min(q1, size[1])
            inside = (r1 - r0) * (q1 - q0)
            div = divisor if divisor is not None else padded if count_include_pad else inside
            yield out, a, b, (r0, r1, q0, q1), div


def _avg_div(a, div):
    """``a / div``, rounded toward zero for integers (C's division)."""
    if a.dtype.kind == "i":
        return (np.sign(a) * (np.abs(a) // div)).astype(a.dtype)
    return a / div


def _avg_pool2d_ref(x, k, s, p, ceil_mode, count_include_pad, divisor):
    x = np.asarray(x)
    s = k if s is None else s
    res = None
    for out, a, b, (r0, r1, q0, q1), div in _avg_windows(
        x.shape[-2:], k, s, p, ceil_mode, count_include_pad, divisor
    ):
        if res is None:
            res = np.zeros(x.shape[:-2] + out, dtype=x.dtype)
        res[..., a, b] = _avg_div(x[..., r0:r1, q0:q1].sum(axis=(-2, -1)), div)
    return res


def _avg_pool2d_backward_ref(g, x, k, s, p, ceil_mode, count_include_pad, divisor):
    g = np.asarray(g)
    res = np.zeros(g.shape[:-2] + np.shape(x)[-2:], dtype=g.dtype)
    for _, a, b, (r0, r1, q0, q1), div in _avg_windows(
        np.shape(x)[-2:], k, s, p, ceil_mode, count_include_pad, divisor
    ):
        res[..., r0:r1, q0:q1] += _avg_div(g[..., a, b], div)[..., None, None]
    return res


_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _gelu_ref(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _ERF(x / math.sqrt(2)))


def _gelu_backward_ref(g, x, approximate="none"):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = np.tanh(k * (x + 0.044715 * x**3))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * k * (1 + 3 * 0.044715 * x**2))
    cdf = 0.5 * (1 + _ERF(x / math.sqrt(2)))
    return g * (cdf + x * np.exp(-(x**2) / 2) / math.sqrt(2 * math.pi))


def _silu_ref(x):
    return x / (1 + np.exp(-x))


def _softplus_ref(x, beta=1.0, threshold=20.0):
    xd = x.astype(np.float64)
    with np.errstate(over="ignore"):
        out = np.where(xd * beta > threshold, xd, np.log1p(np.exp(xd * beta)) / beta)
    return out.astype(x.dtype)


def _log_sigmoid_ref(x):
    return -np.logaddexp(0, -x)


def _leaky_relu_ref(x, negative_slope=0.01):
    return np.where(x > 0, x, negative_slope * x)


# ---------------------------------------------------------------------------------------
# samples


def _samples(db):
    make, S, describe = db.make_array, db.SampleInput, db.describe

    def nll(info, dtype, rng):
        x = make((5, 3), dtype, rng, (-3.0, 0.0))
        t = np.array([0, 2, 1, 2, 0])
        w = make((3,), dtype, rng, (0.5, 2.0))
        for reduction in REDUCTIONS:
            yield S(x, (t, None, reduction, -100), desc=f"{reduction}")
            yield S(x, (t, w, reduction, 2), desc=f"weight, ignore 2, {reduction}")
        yield S(make((5, 3), dtype, rng, layout="T"), (t, None, "mean", -100), desc="transposed")
        yield S(make((3,), dtype, rng), (np.array(1), None, "none", -100), desc="1-D input")
        yield S(make((3,), dtype, rng), (np.array(1), w, "mean", -100), desc="1-D weighted")
        yield S(make((0, 3), dtype, rng), (np.zeros(0, np.int64), None, "sum", -100), desc="empty")
        yield S(x, (t.astype(np.uint8), None, "mean", -100), desc="uint8 target")
        yield S(x, (np.full(5, 7), None, "mean", 7), desc="all ignored (nan)")

    def nll2d(info, dtype, rng):
        x = make((2, 3, 2, 2), dtype, rng, (-3.0, 0.0))
        t = rng.integers(0, 3, size=(2, 2, 2))
        w = make((3,), dtype, rng, (0.5, 2.0))
        for reduction in REDUCTIONS:
            yield S(x, (t, w, reduction, 1), desc=f"weight, ignore 1, {reduction}")
        yield S(x, (t, None, "mean", -100), desc="mean")

    def pair(lo=-2.0, hi=2.0):
        def gen(info, dtype, rng):
            for sa, sb in (((2, 3), (2, 3)), ((2, 3), (3,)), ((), ()), ((0, 2), (0, 2))):
                a, b = make(sa, dtype, rng, (lo, hi)), make(sb, dtype, rng, (lo, hi))
                for reduction in REDUCTIONS:
                    yield S(a, (b, reduction), desc=f"{describe(a)}, {describe(b)}, {reduction}")
            a, b = make((3, 4), dtype, rng, layout="T"), make((3, 4), dtype, rng, layout="flipped")
            yield S(a, (b, "mean"), desc="non-contiguous")

        return gen

    def with_param(name, values):
        base = pair()

        def gen(info, dtype, rng):
            yield from base(info, dtype, rng)
            a, b = make((4, 3), dtype, rng), make((4, 3), dtype, rng)
            for v in values:
                for reduction in REDUCTIONS:
                    yield S(a, (b, reduction, v), desc=f"{name}={v}, {reduction}")

        return gen

    def bce(info, dtype, rng):
        x = make((4, 3), dtype, rng, (0.05, 0.95) if dtype in FLOATS else (0, 1))
        y = make((4, 3), dtype, rng, (0.0, 1.0))
        w = make((3,), dtype, rng, (0.5, 2.0))
        for reduction in REDUCTIONS:
            yield S(x, (y, None, reduction), desc=reduction)
            yield S(x, (y, w, reduction), desc=f"weight, {reduction}")
        if np.dtype(dtype).kind == "f":
            edge, target = np.array([0.0, 1.0, 0.5], dtype), np.array([1.0, 0.0, 1.0], dtype)
            yield S(edge, (target, None, "none"), desc="log clamp")
        yield S(make((0,), dtype, rng), (make((0,), dtype, rng), None, "mean"), desc="empty")

    def bce_logits(info, dtype, rng):
        x = make((4, 3), dtype, rng, (-4.0, 4.0))
        y = make((4, 3), dtype, rng, (0.0, 1.0))
        w = make((3,), dtype, rng, (0.5, 2.0))
        pw = make((3,), dtype, rng, (0.5, 3.0))
        for reduction in REDUCTIONS:
            yield S(x, (y, None, None, reduction), desc=reduction)
            yield S(x, (y, w, pw, reduction), desc=f"weight, pos_weight, {reduction}")
        if np.dtype(dtype).kind == "f":
            big, target = np.array([-60.0, 0.0, 60.0], dtype), np.array([1.0, 0.5, 0.0], dtype)
            yield S(big, (target, None, None, "none"), desc="large")

    def layer_norm(info, dtype, rng):
        x = make((3, 4), dtype, rng)
        yield S(x, ((4,), make((4,), dtype, rng), make((4,), dtype, rng), 1e-5), desc="affine")
        yield S(x, ((4,), None, None, 1e-5), desc="no affine")
        yield S(make((2, 3, 4), dtype, rng, layout="T"), ((3, 4), None, None, 1e-3), desc="2 dims")
        yield S(make((2, 5), dtype, rng), ((5,), make((5,), dtype, rng), None, 1e-5), desc="w only")
        yield S(make((0, 4), dtype, rng), ((4,), None, None, 1e-5), desc="empty batch")

    def batch_norm(info, dtype, rng):
        for shape in ((6, 3), (4, 3, 5)):
            x = make(shape, dtype, rng)
            w, b = make((3,), dtype, rng), make((3,), dtype, rng)
            rm, rv = make((3,), dtype, rng), make((3,), dtype, rng, (0.5, 2.0))
            tag = f"{list(shape)}"
            yield S(x, (w, b, rm.copy(), rv.copy(), True, 0.1, 1e-5), desc=f"train {tag}")
            yield S(x, (w, b, rm.copy(), rv.copy(), False, 0.1, 1e-5), desc=f"eval {tag}")
            yield S(x, (None, None, None, None, True, 0.1, 1e-5), desc=f"no stats {tag}")
            yield S(x, (w, None, rm.copy(), rv.copy(), False, 0.2, 1e-3), desc=f"eval w {tag}")

    def embedding(info, dtype, rng):
        w = make((5, 3), dtype, rng)
        yield S(w, (np.array([[0, 2], [4, 2]]), -1, False, False), desc="2-D indices")
        yield S(w, (np.array([1, 1, 3]).astype(np.int32), 1, True, False), desc="int32, options")
        yield S(w, (np.array(3), -1, False, False), desc="0-d index")
        yield S(
            make((5, 3), dtype, rng, layout="T"), (np.array([4, 0]), -1, False, False), desc="T"
        )
        yield S(w, (np.zeros((0,), np.int64), -1, False, False), desc="no indices")

    def renorm(info, dtype, rng):
        w = make((5, 3), dtype, rng, (-2.0, 2.0))
        yield S(w, (np.array([0, 2, 2, 4]), 1.0, 2.0), desc="max_norm 1")
        yield S(w.copy(), (np.array([1, 3]), 0.5, 1.0), desc="p=1")

    def unary(info, dtype, rng, extra=()):
        for shape, layout in (
            ((), "c"),
            ((5,), "c"),
            ((3, 4), "T"),
            ((0, 2), "c"),
            ((2, 3), "flipped"),
        ):
            x = make(shape, dtype, rng, layout=layout)
            yield S(x, extra, desc=describe(x))

    def gelu(info, dtype, rng):
        for approximate in ("none", "tanh"):
            yield from unary(info, dtype, rng, (approximate,))
        if np.dtype(dtype).kind == "f":
            yield S(np.array([-30.0, -5.0, 0.0, 5.0, 30.0], dtype=dtype), ("none",), desc="tails")

    def gelu_backward(info, dtype, rng):
        for approximate in ("none", "tanh"):
            g, x = make((3, 4), dtype, rng), make((3, 4), dtype, rng)
            yield S(g, (x, approximate), desc=approximate)

    def silu(info, dtype, rng):
        yield from unary(info, dtype, rng)
        if np.dtype(dtype).kind == "f":
            yield S(np.array([-100.0, 0.0, 100.0], dtype=dtype), desc="tails")

    def softplus(info, dtype, rng):
        yield from unary(info, dtype, rng)
        if np.dtype(dtype).kind == "f":
            x = np.array([-100.0, -1.0, 0.0, 1.5, 19.0, 21.0, 100.0], dtype=dtype)
            yield S(x, desc="tails and the threshold")
            for beta, threshold in ((2.0, 20.0), (0.5, 3.0), (1.0, -1.0)):
                yield S(make((2, 3), dtype, rng), (beta, threshold), desc=f"beta {beta}")

    def leaky(info, dtype, rng):
        yield from unary(info, dtype, rng)
        for slope in (0.2, -0.5):
            x = make((2, 3), dtype, rng)
            yield S(x, (slope,), desc=f"slope {slope}")

    def im2col(info, dtype, rng):
        for shape, args in (
            ((2, 3, 5, 4), ((2, 2), (1, 1), (0, 0), (1, 1))),
            ((1, 2, 6, 7), ((3, 2), (2, 1), (1, 2), (2, 3))),
            ((3, 4, 4), ((2, 3), (1, 1), (1, 0), (1, 2))),
            ((0, 2, 3, 3), ((1, 1), (1, 1), (0, 0), (1, 1))),
        ):
            yield S(make(shape, dtype, rng), args, desc=f"{list(shape)} {args}")

    def conv2d(info, dtype, rng):
        for shape, wshape, bias, args, layout in (
            ((2, 3, 5, 4), (4, 3, 2, 2), True, ((1, 1), (0, 0), (1, 1), 1), "c"),
            ((1, 4, 6, 7), (6, 2, 3, 2), False, ((2, 1), (1, 2), (2, 1), 2), "c"),
            ((3, 5, 6), (2, 3, 3, 3), True, ((1, 2), (1, 0), (1, 1), 1), "c"),
            ((2, 3, 5, 4), (4, 3, 3, 1), True, ((1, 1), (1, 1), (1, 1), 1), "T"),
            ((0, 2, 4, 4), (3, 2, 3, 3), True, ((1, 1), (1, 1), (1, 1), 1), "c"),
        ):
            if args[2] != (1, 1) and np.dtype(dtype).kind != "f":
                continue  # torch's dilated CPU convolution takes floats only
            x = make(shape, dtype, rng, layout=layout)
            w = make(wshape, dtype, rng, layout="sliced" if layout == "T" else "c")
            b = make((wshape[0],), dtype, rng) if bias else None
            yield S(x, (w, b) + args, desc=f"{list(shape)} {list(wshape)} {args} {layout}")

    def col2im(info, dtype, rng):
        for shape, args in (
            ((2, 12, 12), ((5, 4), (2, 2), (1, 1), (0, 0), (1, 1))),
            ((1, 12, 8), ((6, 7), (3, 2), (2, 1), (1, 2), (2, 3))),
            ((24, 5), ((4, 4), (2, 3), (1, 1), (1, 0), (1, 2))),
        ):
            yield S(make(shape, dtype, rng), args, desc=f"{list(shape)} {args}")

    def max_pool(info, dtype, rng):
        for shape, args in (
            ((2, 3, 6, 5), ((2, 2), (2, 2), (0, 0), (1, 1), False)),
            ((1, 2, 7, 7), ((3, 2), (2, 1), (1, 1), (2, 1), True)),
            ((3, 5, 4), ((2, 3), (1, 2), (1, 1), (1, 2), False)),
            ((1, 1, 4, 4), ((2, 2), None, (1, 0), (1, 1), True)),
        ):
            yield S(make(shape, dtype, rng), args, desc=f"{list(shape)} {args}")
        if np.dtype(dtype).kind == "f":
            x = make((1, 1, 3, 4), dtype, rng)
            x[0, 0, 0, 1] = np.nan
            x[0, 0, 1, :] = -np.inf
            yield S(x, ((2, 2), (1, 1), (0, 0), (1, 1), False), desc="nan and -inf")

    avg_args = (
        ((2, 2), None, (0, 0), False, True, None),
        ((3, 3), (2, 2), (1, 1), False, True, None),
        ((3, 3), (2, 2), (1, 1), True, False, None),
        ((2, 3), (1, 2), (1, 0), True, True, 4),
        ((3, 2), (3, 3), (1, 1), True, True, None),
    )

    def avg_pool(info, dtype, rng):
        for shape in ((2, 3, 7, 6), (3, 5, 4), (0, 2, 4, 4)):
            for args in avg_args:
                yield S(make(shape, dtype, rng), args, desc=f"{list(shape)} {args}")

    def avg_pool_backward(info, dtype, rng):
        for shape in ((2, 3, 7, 6), (3, 5, 4)):
            for k, st, p, cm, cip, div in avg_args:
                st = k if st is None else st
                x = make(shape, dtype, rng)
                out = _avg_pool2d_ref(x, k, st, p, cm, cip, div)
                g = make(out.shape, dtype, rng)
                yield S(g, (x, k, st, p, cm, cip, div), desc=f"{list(shape)} {k} {st} {p}")

    return dict(
        avg_pool=avg_pool,
        avg_pool_backward=avg_pool_backward,
        im2col=im2col,
        conv2d=conv2d,
        col2im=col2im,
        max_pool=max_pool,
        nll=nll,
        nll2d=nll2d,
        pair=pair,
        with_param=with_param,
        bce=bce,
        bce_logits=bce_logits,
        layer_norm=layer_norm,
        batch_norm=batch_norm,
        embedding=embedding,
        renorm=renorm,
        gelu=gelu,
        gelu_backward=gelu_backward,
        silu=silu,
        softplus=softplus,
        leaky=leaky,
        unary=unary,
    )


# ---------------------------------------------------------------------------------------
# torch calls (the functional API; a reduction is a string there too)


def _tf(torch):
    return torch.nn.functional


def _torch_nll(torch, x, t, w, reduction, ignore_index):
    return _tf(torch).nll_loss(x, t, w, ignore_index=ignore_index, reduction=reduction)


def _torch_layer_norm(torch, x, shape, w, b, eps):
    return _tf(torch).layer_norm(x, shape, w, b, eps)


def _torch_batch_norm(torch, x, w, b, rm, rv, training, momentum, eps):
    return _tf(torch).batch_norm(x, rm, rv, w, b, training, momentum, eps)


def _torch_embedding(torch, w, idx, padding_idx, scale, sparse):
    return torch.embedding(w, idx, padding_idx, scale, sparse)


def extend(db) -> None:
    """Add the nn ops' entries to the op database module ``db`` (``op_db.py``)."""
    s = _samples(db)
    OpInfo = db.OpInfo

    def call(name):
        return lambda gt, x, *args: gt.OPS[name](x, *args)

    def add(name, ref, samples, torch_call, dtypes=FLOATS, **kw):
        db._add(
            OpInfo(name, ref, samples, dtypes, call=call(name), torch_call=torch_call, **kw),
            function=False,
            method=False,
        )

    add("nll_loss", _nll_ref, s["nll"], _torch_nll)
    windows = FLOATS + ("bool",)  # torch's im2col/col2im: floats and bool, no integers
    pooled = tuple(d for d in db.ALL if d != "bool")
    add(
        "im2col",
        _im2col_ref,
        s["im2col"],
        lambda torch, x, *a: _tf(torch).unfold(x, *a),
        dtypes=windows,
    )
    add(
        "col2im",
        _col2im_ref,
        s["col2im"],
        lambda torch, x, *a: _tf(torch).fold(x, *a),
        dtypes=windows,
    )
    add(
        "max_pool2d_with_indices",
        _max_pool2d_ref,
        s["max_pool"],
        lambda torch, x, k, st, p, d, cm: _tf(torch).max_pool2d(x, k, st, p, d, cm, True),
        dtypes=pooled,
    )
    add(
        "avg_pool2d",
        _avg_pool2d_ref,
        s["avg_pool"],
        lambda torch, x, *a: _tf(torch).avg_pool2d(x, *a),
        dtypes=FLOATS + ("int64",),  # torch's: int64 summed and divided as integers
    )
    add(
        "avg_pool2d_backward",
        _avg_pool2d_backward_ref,
        s["avg_pool_backward"],
        lambda torch, g, *a: torch.ops.aten.avg_pool2d_backward(g, *a),
        dtypes=FLOATS + ("int64",),
    )
    add(
        "conv2d",
        _conv2d_ref,
        s["conv2d"],
        lambda torch, x, *a: _tf(torch).conv2d(x, *a),
        dtypes=pooled,  # torch's CPU convolution: every numeric dtype, no bool
    )
    add("nll_loss2d", _nll_ref, s["nll2d"], _torch_nll)
    add(
        "mse_loss",
        _mse_ref,
        s["pair"](),
        lambda torch, x, y, r: torch._C._nn.mse_loss(x, y, ["none", "mean", "sum"].index(r)),
    )
    add(
        "smooth_l1_loss",
        _smooth_l1_ref,
        s["with_param"]("beta", (0.5, 0.0)),
        lambda torch, x, y, r, beta=1.0: torch._C._nn.smooth_l1_loss(
            x, y, ["none", "mean", "sum"].index(r), beta
        ),
    )
    add(
        "huber_loss",
        _huber_ref,
        s["with_param"]("delta", (0.5, 2.0)),
        lambda torch, x, y, r, delta=1.0: torch._C._nn.huber_loss(
            x, y, ["none", "mean", "sum"].index(r), delta
        ),
    )
    add(
        "binary_cross_entropy",
        _bce_ref,
        s["bce"],
        lambda torch, x, y, w, r: _tf(torch).binary_cross_entropy(x, y, w, reduction=r),
    )
    add(
        "binary_cross_entropy_with_logits",
        _bce_logits_ref,
        s["bce_logits"],
        lambda torch, x, y, w, pw, r: _tf(torch).binary_cross_entropy_with_logits(
            x, y, w, reduction=r, pos_weight=pw
        ),
        rtol={"float32": 1e-5},
        atol={"float32": 1e-5},
    )
    add(
        "layer_norm",
        _layer_norm_ref,
        s["layer_norm"],
        _torch_layer_norm,
        rtol={"float32": 1e-4},
        atol={"float32": 1e-5},
    )
    add(
        "batch_norm",
        _batch_norm_ref,
        s["batch_norm"],
        _torch_batch_norm,
        rtol={"float32": 1e-4},
        atol={"float32": 1e-5},
    )
    add("embedding", _embedding_ref, s["embedding"], _torch_embedding, dtypes=db.ALL)
    add(
        "embedding_renorm_",
        _renorm_ref,
        s["renorm"],
        lambda torch, w, idx, max_norm, p: torch.embedding_renorm_(w, idx, max_norm, p),
        inplace=True,
    )
    add("gelu", _gelu_ref, s["gelu"], lambda torch, x, a="none": _tf(torch).gelu(x, approximate=a))
    add(
        "gelu_backward",
        _gelu_backward_ref,
        s["gelu_backward"],
        lambda torch, g, x, a="none": torch.ops.aten.gelu_backward(g, x, approximate=a),
    )
    add("silu", _silu_ref, s["silu"], lambda torch, x: _tf(torch).silu(x))
    add(
        "silu_",
        _silu_ref,
        s["silu"],
        lambda torch, x: _tf(torch).silu(x, inplace=True),
        inplace=True,
    )
    add("log_sigmoid", _log_sigmoid_ref, s["silu"], lambda torch, x: _tf(torch).logsigmoid(x))
    add(
        "softplus",
        _softplus_ref,
        s["softplus"],
        lambda torch, x, beta=1.0, threshold=20.0: _tf(torch).softplus(x, beta, threshold),
    )
    add(
        "leaky_relu",
        _leaky_relu_ref,
        s["leaky"],
        lambda torch, x, slope=0.01: _tf(torch).leaky_relu(x, slope),
    )
    add(
        "leaky_relu_",
        _leaky_relu_ref,
        s["leaky"],
        lambda torch, x, slope=0.01: _tf(torch).leaky_relu_(x, slope),
        inplace=True,
    )
