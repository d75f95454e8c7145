"""Samples of the nn ops (``gradstack_autograd.derivatives.nn``) for graph-engine's op database.

``autograd_op_db.py`` calls :func:`extend` with itself at import, so every generic test
over the database runs on these ops too: gradcheck and gradgradcheck in float64, values,
node names and first/second-order gradients against torch 2.13 (``test_derivatives.py``),
forward mode against reverse mode (``test_forward_ad.py``) and the batched backward
(``test_batched_backward.py``).

gradstack calls each op through the registry (``L.OPS[name](...)``, ``L`` being
``gradstack_tensor``); torch calls its functional API, which reaches the same aten op
(``torch_fn``).  Class targets, indices and running statistics are not differentiable and
are built inside the call.  Inputs stay away from the points where a loss is not
differentiable (``|input - target| == beta`` for smooth L1, ``x == 0`` for leaky ReLU).

Examples
--------
>>> import numpy as np
>>> entries = {}
>>> class FakeDb:
...     GradOp = GradSample = None
>>> len(_REDUCTIONS)
3
"""

from __future__ import annotations

import numpy as np

__all__ = ["extend"]

_REDUCTIONS = ("mean", "sum", "none")


def _F(L):
    return L.nn.functional


def _conv2d_as_torch(L, x, w, b, args):
    """The conv2d op called as torch's ``F.conv2d`` calls it: an unbatched input is
    unsqueezed into a batch of one and the result squeezed (torch's SqueezeBackward1)."""
    if x.dim() == 3:
        return L.OPS["conv2d"](x.unsqueeze(0), w, b, *args).squeeze(0)
    return L.OPS["conv2d"](x, w, b, *args)


def extend(db) -> None:
    """Add the nn ops' samples to the autograd op database module ``db``."""
    GradOp, arr, add = db.GradOp, db.arr, db._add

    def S(inputs, fn, desc, torch_fn=None):
        return db.GradSample(tuple(inputs), fn, desc, torch_fn)

    # -- negative log-likelihood ------------------------------------------------------

    def nll(rng):
        x = arr(rng, (4, 3), -3.0, 0.0)
        w = np.array([0.5, 2.0, 1.0])
        out = []
        for reduction in _REDUCTIONS:
            out.append(
                S(
                    (x,),
                    lambda L, a, r=reduction: L.OPS["nll_loss"](
                        a, L.from_numpy(np.array([0, 2, 1, 2])), None, r, -100
                    ),
                    f"nll_loss {reduction}",
                    lambda L, a, r=reduction: _F(L).nll_loss(
                        a, L.from_numpy(np.array([0, 2, 1, 2])), reduction=r
                    ),
                )
            )
            out.append(
                S(
                    (x,),
                    lambda L, a, r=reduction: L.OPS["nll_loss"](
                        a, L.from_numpy(np.array([0, 2, 1, 1])), L.from_numpy(w.copy()), r, 1
                    ),
                    f"nll_loss weight, ignore_index, {reduction}",
                    lambda L, a, r=reduction: _F(L).nll_loss(
                        a,
                        L.from_numpy(np.array([0, 2, 1, 1])),
                        L.from_numpy(w.copy()),
                        ignore_index=1,
                        reduction=r,
                    ),
                )
            )
        x1 = arr(rng, (3,), -3.0, 0.0)
        out.append(
            S(
                (x1,),
                lambda L, a: L.OPS["nll_loss"](a, L.from_numpy(np.array(2)), None, "mean", -100),
                "nll_loss 1-d",
                lambda L, a: _F(L).nll_loss(a, L.from_numpy(np.array(2))),
            )
        )
        return out

    def nll2d(rng):
        x = arr(rng, (2, 3, 2, 2), -3.0, 0.0)
        t = rng.integers(0, 3, size=(2, 2, 2))
        w = np.array([0.5, 2.0, 1.0])
        out = []
        for reduction in _REDUCTIONS:
            out.append(
                S(
                    (x,),
                    lambda L, a, r=reduction: L.OPS["nll_loss2d"](
                        a, L.from_numpy(t.copy()), L.from_numpy(w.copy()), r, 0
                    ),
                    f"nll_loss2d weight, ignore 0, {reduction}",
                    lambda L, a, r=reduction: _F(L).nll_loss(
                        a,
                        L.from_numpy(t.copy()),
                        L.from_numpy(w.copy()),
                        ignore_index=0,
                        reduction=r,
                    ),
                )
            )
        return out

    add(GradOp("nll_loss", nll))
    add(GradOp("nll_loss2d", nll2d))

    # -- regression losses ------------------------------------------------------------

    def regression(name, param=None, values=()):
        def torch_call(L, a, b, r, v):
            kw = {} if param is None else {param: v}
            return getattr(_F(L), name)(a, b.expand_as(a), reduction=r, **kw)

        def gs_call(L, a, b, r, v):
            args = (a, b, r) if param is None else (a, b, r, v)
            return L.OPS[name](*args)

        def gen(rng):
            out = []
            for v in values or (None,):
                away = (0.0,) if v is None else (-v, 0.0, v)
                y = arr(rng, (2, 3))
                x = y + arr(rng, (2, 3), -2.5, 2.5, away=away)
                for reduction in _REDUCTIONS:
                    out.append(
                        S(
                            (x, y),
                            lambda L, a, b, r=reduction, v=v: gs_call(L, a, b, r, v),
                            f"{name} {param}={v} {reduction}",
                            lambda L, a, b, r=reduction, v=v: torch_call(L, a, b, r, v),
                        )
                    )
            # a target broadcast against the input (F.* expands it first, as torch)
            v = values[0] if values else None
            y = arr(rng, (3,))
            x = y + arr(rng, (2, 3), -2.5, 2.5, away=(0.0,) if v is None else (-v, 0.0, v))
            out.append(
                S(
                    (x, y),
                    lambda L, a, b, v=v: gs_call(L, a, b, "mean", v),
                    f"{name} broadcast target",
                    lambda L, a, b, v=v: torch_call(L, a, b, "mean", v),
                )
            )
            return out

        return gen

    add(GradOp("mse_loss", regression("mse_loss")))
    add(GradOp("smooth_l1_loss", regression("smooth_l1_loss", "beta", (1.0, 0.5))))
    add(GradOp("huber_loss", regression("huber_loss", "delta", (1.0, 2.0))))

    # -- binary classification --------------------------------------------------------

    def bce(rng):
        x = arr(rng, (3, 4), 0.1, 0.9)
        y = arr(rng, (3, 4), 0.0, 1.0)
        w = np.array([0.5, 1.0, 2.0, 1.5])
        out = []
        for reduction in _REDUCTIONS:
            out.append(
                S(
                    (x, y),
                    lambda L, a, b, r=reduction: L.OPS["binary_cross_entropy"](a, b, None, r),
                    f"bce {reduction}",
                    lambda L, a, b, r=reduction: _F(L).binary_cross_entropy(a, b, reduction=r),
                )
            )
        out.append(
            S(
                (x,),
                lambda L, a: L.OPS["binary_cross_entropy"](
                    a, L.from_numpy(y.copy()), L.from_numpy(w.copy()), "mean"
                ),
                "bce weight",
                lambda L, a: _F(L).binary_cross_entropy(
                    a, L.from_numpy(y.copy()), L.from_numpy(w.copy())
                ),
            )
        )
        return out

    def bce_logits(rng):
        x = arr(rng, (3, 4), -3.0, 3.0)
        y = arr(rng, (3, 4), 0.0, 1.0)
        w = np.array([0.5, 1.0, 2.0, 1.5])
        pw = np.array([2.0, 0.5, 1.0, 3.0])
        out = []
        for reduction in _REDUCTIONS:
            out.append(
                S(
                    (x, y),
                    lambda L, a, b, r=reduction: L.OPS["binary_cross_entropy_with_logits"](
                        a, b, None, None, r
                    ),
                    f"bce_with_logits {reduction}",
                    lambda L, a, b, r=reduction: _F(L).binary_cross_entropy_with_logits(
                        a, b, reduction=r
                    ),
                )
            )
            out.append(
                S(
                    (x, y),
                    lambda L, a, b, r=reduction: L.OPS["binary_cross_entropy_with_logits"](
                        a, b, L.from_numpy(w.copy()), L.from_numpy(pw.copy()), r
                    ),
                    f"bce_with_logits weight, pos_weight, {reduction}",
                    lambda L, a, b, r=reduction: _F(L).binary_cross_entropy_with_logits(
                        a,
                        b,
                        L.from_numpy(w.copy()),
                        reduction=r,
                        pos_weight=L.from_numpy(pw.copy()),
                    ),
                )
            )
        return out

    add(GradOp("binary_cross_entropy", bce))
    add(GradOp("binary_cross_entropy_with_logits", bce_logits))

    # -- normalisation ----------------------------------------------------------------

    def layer_norm(rng):
        x = arr(rng, (3, 4), transposed=True)
        w, b = arr(rng, (4,)), arr(rng, (4,))
        x3, w3 = arr(rng, (2, 3, 2)), arr(rng, (3, 2))
        return [
            S(
                (x, w, b),
                lambda L, a, ww, bb: L.OPS["layer_norm"](a, (4,), ww, bb, 1e-5),
                "layer_norm affine",
                lambda L, a, ww, bb: _F(L).layer_norm(a, (4,), ww, bb, 1e-5),
            ),
            S(
                (x,),
                lambda L, a: L.OPS["layer_norm"](a, (4,), None, None, 1e-5),
                "layer_norm no affine",
                lambda L, a: _F(L).layer_norm(a, (4,)),
            ),
            S(
                (x3, w3),
                lambda L, a, ww: L.OPS["layer_norm"](a, (3, 2), ww, None, 1e-3),
                "layer_norm 2 dims, weight only",
                lambda L, a, ww: _F(L).layer_norm(a, (3, 2), ww, None, 1e-3),
            ),
        ]

    def batch_norm(rng):
        out = []
        rm, rv = np.array([0.1, -0.2, 0.3]), np.array([0.5, 1.5, 1.0])
        for shape in ((5, 3), (4, 3, 2)):
            x = arr(rng, shape)
            w, b = arr(rng, (3,)), arr(rng, (3,))
            for training in (True, False):
                out.append(
                    S(
                        (x, w, b),
                        lambda L, a, ww, bb, t=training: L.OPS["batch_norm"](
                            a,
                            ww,
                            bb,
                            L.from_numpy(rm.copy()),
                            L.from_numpy(rv.copy()),
                            t,
                            0.1,
                            1e-5,
                        ),
                        f"batch_norm {list(shape)} training={training}",
                        lambda L, a, ww, bb, t=training: _F(L).batch_norm(
                            a,
                            L.from_numpy(rm.copy()),
                            L.from_numpy(rv.copy()),
                            ww,
                            bb,
                            t,
                            0.1,
                            1e-5,
                        ),
                    )
                )
            out.append(
                S(
                    (x,),
                    lambda L, a: L.OPS["batch_norm"](a, None, None, None, None, True, 0.1, 1e-5),
                    f"batch_norm {list(shape)} no stats, no affine",
                    lambda L, a: _F(L).batch_norm(a, None, None, training=True),
                )
            )
        return out

    add(GradOp("layer_norm", layer_norm))
    add(GradOp("batch_norm", batch_norm))

    # -- embedding --------------------------------------------------------------------

    def embedding(rng):
        w = arr(rng, (5, 3))
        idx = np.array([[0, 2, 2], [4, 2, 1]])
        return [
            S(
                (w,),
                lambda L, ww: L.OPS["embedding"](ww, L.from_numpy(idx.copy()), -1, False, False),
                "embedding",
                lambda L, ww: _F(L).embedding(L.from_numpy(idx.copy()), ww),
            ),
            S(
                (w,),
                lambda L, ww: L.OPS["embedding"](ww, L.from_numpy(idx[0].copy()), -1, False, False),
                "embedding 1-d indices",
                lambda L, ww: _F(L).embedding(L.from_numpy(idx[0].copy()), ww),
            ),
        ]

    # padding_idx and scale_grad_by_freq change the gradient on purpose (it is no longer the
    # derivative, so no gradcheck): nn-mini's tests compare them with torch
    add(GradOp("embedding", embedding))

    # -- windows: unfold, fold, max pooling --------------------------------------------

    window_args = (
        ((2, 2), (1, 1), (0, 0), (1, 1)),
        ((3, 2), (2, 1), (1, 2), (2, 3)),
    )

    def im2col(rng):
        out = []
        for shape, a in (((2, 3, 5, 4), window_args[0]), ((2, 6, 7), window_args[1])):
            out.append(
                S(
                    (arr(rng, shape),),
                    lambda L, x, a=a: L.OPS["im2col"](x, *a),
                    f"im2col {list(shape)} {a}",
                    lambda L, x, a=a: _F(L).unfold(x, *a),
                )
            )
        return out

    def col2im(rng):
        out = []
        for shape, size, a in (
            ((2, 12, 12), (5, 4), window_args[0]),
            ((12, 8), (6, 7), window_args[1]),
        ):
            out.append(
                S(
                    (arr(rng, shape),),
                    lambda L, x, size=size, a=a: L.OPS["col2im"](x, size, *a),
                    f"col2im {list(shape)} {size} {a}",
                    lambda L, x, size=size, a=a: _F(L).fold(x, size, *a),
                )
            )
        return out

    def max_pool(rng):
        out = []
        for shape, a in (
            ((2, 2, 5, 4), ((2, 2), (2, 2), (0, 0), (1, 1), False)),
            ((3, 6, 7), ((3, 2), (1, 2), (1, 1), (2, 1), True)),
        ):
            # distinct values, far apart: finite differences never change the maximum
            x = rng.permutation(int(np.prod(shape))).reshape(shape) * 0.25 - 3.0
            out.append(
                S(
                    (x,),
                    lambda L, x, a=a: L.OPS["max_pool2d_with_indices"](x, *a)[0],
                    f"max_pool2d {list(shape)} {a}",
                    lambda L, x, a=a: _F(L).max_pool2d(x, a[0], a[1], a[2], a[3], a[4]),
                )
            )
        return out

    avg_args = (
        ((2, 2), (2, 2), (0, 0), False, True, None),
        ((3, 3), (2, 2), (1, 1), True, False, None),
        ((2, 3), (1, 2), (1, 0), True, True, 4),
    )

    def avg_pool(rng):
        out = []
        for shape, a in (((2, 2, 5, 4), avg_args[0]), ((3, 6, 7), avg_args[1]),
                         ((1, 2, 4, 5), avg_args[2])):  # fmt: skip
            out.append(
                S(
                    (arr(rng, shape),),
                    lambda L, x, a=a: L.OPS["avg_pool2d"](x, *a),
                    f"avg_pool2d {list(shape)} {a}",
                    lambda L, x, a=a: _F(L).avg_pool2d(x, *a),
                )
            )
        return out

    def avg_pool_backward(rng):
        out = []
        for shape, grad_shape, a in (
            ((2, 2, 5, 4), (2, 2, 2, 2), avg_args[0]),
            ((3, 6, 7), (3, 4, 4), avg_args[1]),
        ):
            x = arr(rng, shape)
            out.append(
                S(
                    (arr(rng, grad_shape),),
                    lambda L, g, x=x, a=a: L.OPS["avg_pool2d_backward"](g, L.tensor(x), *a),
                    f"avg_pool2d_backward {list(shape)} {a}",
                    lambda L, g, x=x, a=a: L.ops.aten.avg_pool2d_backward(g, L.tensor(x), *a),
                )
            )
        return out

    def conv2d(rng):
        # (input, weight, bias or None, stride, padding, dilation, groups)
        out = []
        for shape, wshape, bias, a in (
            ((2, 3, 5, 4), (4, 3, 2, 2), True, ((1, 1), (0, 0), (1, 1), 1)),
            ((1, 4, 6, 5), (4, 2, 3, 2), False, ((2, 1), (1, 2), (1, 2), 2)),
            ((3, 5, 6), (2, 3, 3, 3), True, ((1, 2), (1, 0), (1, 1), 1)),
        ):
            inputs = (arr(rng, shape), arr(rng, wshape)) + ((arr(rng, wshape[:1]),) if bias else ())
            out.append(
                S(
                    inputs,
                    lambda L, x, w, b=None, a=a: _conv2d_as_torch(L, x, w, b, a),
                    f"conv2d {list(shape)} {list(wshape)} bias={bias} {a}",
                    lambda L, x, w, b=None, a=a: _F(L).conv2d(x, w, b, *a),
                )
            )
        return out

    add(GradOp("conv2d", conv2d))
    add(GradOp("avg_pool2d", avg_pool))
    add(GradOp("avg_pool2d_backward", avg_pool_backward))
    add(GradOp("im2col", im2col))
    add(GradOp("col2im", col2im))
    add(GradOp("max_pool2d_with_indices", max_pool))

    # -- activations ------------------------------------------------------------------

    def unary(name, torch_call, extra=(), away=(), lo=-3.0, hi=3.0):
        def gen(rng):
            out = []
            for shape, tr in (((), False), ((4,), False), ((2, 3), True)):
                x = arr(rng, shape, lo, hi, away=away, transposed=tr)
                for e in extra or (None,):
                    out.append(
                        S(
                            (x,),
                            lambda L, a, e=e: L.OPS[name](a, *(() if e is None else (e,))),
                            f"{name} {list(shape)} {e}",
                            lambda L, a, e=e: torch_call(L, a, e),
                        )
                    )
            return out

        return gen

    add(
        GradOp(
            "gelu",
            unary("gelu", lambda L, a, e: _F(L).gelu(a, approximate=e), ("none", "tanh")),
        )
    )

    def gelu_backward(rng):
        out = []
        for approximate in ("none", "tanh"):
            g, x = arr(rng, (2, 3)), arr(rng, (2, 3))
            out.append(
                S(
                    (g, x),
                    lambda L, a, b, e=approximate: L.OPS["gelu_backward"](a, b, e),
                    f"gelu_backward {approximate}",
                    lambda L, a, b, e=approximate: L.ops.aten.gelu_backward(a, b, approximate=e),
                )
            )
        return out

    add(GradOp("gelu_backward", gelu_backward))
    add(GradOp("silu", unary("silu", lambda L, a, e: _F(L).silu(a))))

    def silu_inplace(rng):
        x = arr(rng, (2, 3))
        return [
            S(
                (x,),
                lambda L, a: L.OPS["silu_"](a.clone()),
                "silu_ on a clone",
                lambda L, a: _F(L).silu(a.clone(), inplace=True),
            )
        ]

    add(GradOp("silu_", silu_inplace))
    add(GradOp("log_sigmoid", unary("log_sigmoid", lambda L, a, e: _F(L).logsigmoid(a))))

    def softplus(rng):
        out = []
        for shape, tr in (((), False), ((4,), False), ((2, 3), True)):
            x = arr(rng, shape, -3.0, 3.0, away=(0.5, -1.0), transposed=tr)
            for beta, threshold in ((1.0, 20.0), (2.0, 1.0), (0.5, -0.5)):
                out.append(
                    S(
                        (x,),
                        lambda L, a, b=beta, t=threshold: L.OPS["softplus"](a, b, t),
                        f"softplus {list(shape)} beta {beta} threshold {threshold}",
                        lambda L, a, b=beta, t=threshold: _F(L).softplus(a, b, t),
                    )
                )
        return out

    add(GradOp("softplus", softplus))
    add(
        GradOp(
            "leaky_relu",
            unary(
                "leaky_relu",
                lambda L, a, e: _F(L).leaky_relu(a, e),
                (0.01, 0.2, -0.5),
                away=(0.0,),
            ),
        )
    )

    def leaky_inplace(rng):
        x = arr(rng, (2, 3), away=(0.0,))
        return [
            S((x,), lambda L, a: L.OPS["leaky_relu_"](a.clone(), 0.2), "leaky_relu_ on a clone")
        ]

    # torch names this node LeakyReluBackward1 (gradstack: its out-of-place twin's name, the
    # registry's rule); nn-mini's tests compare its values and gradients with torch
    add(GradOp("leaky_relu_", leaky_inplace, torch=False))
