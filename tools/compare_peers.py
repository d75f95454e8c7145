"""The peers of ``tools/compare.py``: each workload written for HIPS autograd, for MyGrad
and in numpy by hand (the reference every framework's numbers are checked against).

Each ``*_impls()`` returns a namespace of the workloads' implementations for its framework
(None when the framework is not installed); an implementation takes the inputs and returns
``(run, result)`` as ``compare.py``'s runner says.  PyTorch and gradstack share one
torch-shaped implementation, in ``compare.py``.  This module is imported after
``compare.py`` has set the thread variables (Note [Threads are chosen before numpy loads]).
"""

from __future__ import annotations

import importlib

import numpy as np


def _optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class NotSupported(Exception):
    """The framework has no way to do this workload (shown as such in the table)."""


# ---------------------------------------------------------------------------- HIPS autograd


def autograd_impls():
    ag = _optional("autograd")
    if ag is None:
        return None
    import autograd.numpy as anp

    def _sgd_impl(inp, loss_fn):
        """One SGD step on plain arrays updated in place, with ``value_and_grad``."""
        lr = np.float32(inp["lr"])
        vg = ag.value_and_grad(loss_fn)
        params = [p.copy() for p in inp["params"]]

        def step(params):
            loss, grads = vg(params)
            for p, g in zip(params, grads, strict=True):
                p -= lr * g
            return loss

        def result():
            fresh = [p.copy() for p in inp["params"]]
            return [np.array(step(fresh))] + fresh

        return (lambda: step(params)), result

    def tinymodel(inp):
        x, ideal = inp["x"], inp["ideal"]

        def loss_fn(params):
            w1, b1, w2, b2 = params
            h = anp.maximum(anp.dot(x, w1.T) + b1, 0)
            return anp.sum((ideal - (anp.dot(h, w2.T) + b2)) ** 2)

        return _sgd_impl(inp, loss_fn)

    def mlp(inp):
        x, onehot = inp["x"], inp["onehot"]

        def loss_fn(params):
            h = x
            for i in range(0, 6, 2):
                h = anp.dot(h, params[i].T) + params[i + 1]
                if i < 4:
                    h = anp.maximum(h, 0)
            m = anp.max(h, axis=1, keepdims=True)
            lse = anp.log(anp.sum(anp.exp(h - m), axis=1, keepdims=True)) + m
            return -anp.sum(onehot * (h - lse)) / h.shape[0]

        return _sgd_impl(inp, loss_fn)

    def tiny_ops(inp):
        def f(x, y, z):
            for _ in range(1000):
                z = (z / x) * y
            return anp.sum(z)

        g = ag.grad(f, argnum=(0, 1, 2))

        def run():
            return g(inp["x"], inp["y"], inp["z"])

        return run, lambda: [np.asarray(a) for a in run()]

    def elementwise(inp):
        def f(x):
            return anp.sum(anp.tanh(anp.sin(x) * anp.cos(x) + x * x))

        vg = ag.value_and_grad(f)

        def run():
            return vg(inp["x"])

        return run, lambda: [np.array(v) for v in run()]

    def hessian(inp):
        h = ag.hessian(lambda x: anp.sum(anp.sin(x) * anp.cos(x)) + anp.sum(x**3))
        return (lambda: h(inp["x"])), lambda: [h(inp["x"])]

    def chain(inp):
        def f(x):
            y = x
            for _ in range(10_000):
                y = y * 1.0001
                y = y + 0.0001
            return anp.sum(y)

        g = ag.grad(f)

        def run():
            return g(inp["x"])

        def result():
            y = inp["x"]
            for _ in range(10_000):
                y = y * 1.0001 + 0.0001
            return [y, run()]

        return run, result

    def jacobian(inp):
        f = lambda x, y: 2 * anp.exp(x) + 3 * y  # noqa: E731
        jx, jy = ag.jacobian(f, 0), ag.jacobian(f, 1)

        def run():
            return jx(inp["x"], inp["y"]), jy(inp["x"], inp["y"])

        return run, lambda: list(run())

    return dict(
        tinymodel_step=tinymodel,
        mlp_step=mlp,
        tiny_ops_2000=tiny_ops,
        elementwise_1m=elementwise,
        hessian_100=hessian,
        chain_20000=chain,
        jacobian_small=jacobian,
    )


# ---------------------------------------------------------------------------- MyGrad


def mygrad_impls():
    mg = _optional("mygrad")
    if mg is None:
        return None

    def _step_impl(inp, loss_fn):
        lr = np.float32(inp["lr"])

        def build():
            return [mg.tensor(p.copy()) for p in inp["params"]]

        params = build()

        def step(params):
            for p in params:
                p.null_grad()
            loss = loss_fn(params)
            loss.backward()
            for p in params:
                p.data -= lr * p.grad
            return loss

        def result():
            fresh = build()
            loss = step(fresh)
            return [np.array(loss.item())] + [p.data.copy() for p in fresh]

        return (lambda: step(params)), result

    def tinymodel(inp):
        x, ideal = mg.tensor(inp["x"]), mg.tensor(inp["ideal"])

        def loss_fn(params):
            w1, b1, w2, b2 = params
            h = mg.nnet.activations.relu(mg.matmul(x, w1.T) + b1)
            return mg.sum((ideal - (mg.matmul(h, w2.T) + b2)) ** 2)

        return _step_impl(inp, loss_fn)

    def mlp(inp):
        x, labels = mg.tensor(inp["x"]), inp["labels"]

        def loss_fn(params):
            h = x
            for i in range(0, 6, 2):
                h = mg.matmul(h, params[i].T) + params[i + 1]
                if i < 4:
                    h = mg.nnet.activations.relu(h)
            return mg.nnet.losses.softmax_crossentropy(h, labels)

        return _step_impl(inp, loss_fn)

    def tiny_ops(inp):
        def run():
            x, y, z = (mg.tensor(inp[k]) for k in "xyz")
            w = z
            for _ in range(1000):
                w = (w / x) * y
            w.sum().backward()
            return x, y, z

        return run, lambda: [t.grad.copy() for t in run()]

    def elementwise(inp):
        def run():
            x = mg.tensor(inp["x"])
            out = mg.tanh(mg.sin(x) * mg.cos(x) + x * x).sum()
            out.backward()
            return out, x

        def result():
            out, x = run()
            return [np.array(out.item()), x.grad.copy()]

        return run, result

    def hessian(inp):
        raise NotSupported("no higher-order derivatives")

    def chain(inp):
        def run():
            x = mg.tensor(inp["x"])
            y = x
            for _ in range(10_000):
                y = y * 1.0001
                y = y + 0.0001
            y.sum().backward()
            return y, x

        def result():
            y, x = run()
            return [y.data.copy(), x.grad.copy()]

        return run, result

    def jacobian(inp):
        def run():  # no jacobian function: one backward per output row
            rows_x, rows_y = [], []
            for i in range(3):
                x, y = mg.tensor(inp["x"]), mg.tensor(inp["y"])
                (2 * mg.exp(x) + 3 * y)[i].backward()
                rows_x.append(x.grad)
                rows_y.append(y.grad)
            return np.stack(rows_x), np.stack(rows_y)

        return run, lambda: list(run())

    return dict(
        tinymodel_step=tinymodel,
        mlp_step=mlp,
        tiny_ops_2000=tiny_ops,
        elementwise_1m=elementwise,
        hessian_100=hessian,
        chain_20000=chain,
        jacobian_small=jacobian,
    )


# ---------------------------------------------------------------------------- numpy by hand


def numpy_impls():
    def tinymodel(inp):
        x, ideal, lr = inp["x"], inp["ideal"], np.float32(inp["lr"])

        def step(params):
            w1, b1, w2, b2 = params
            pre = x @ w1.T + b1
            h = np.maximum(pre, 0)
            diff = ideal - (h @ w2.T + b2)
            loss = (diff * diff).sum()
            d_out = -2 * diff
            d_h = (d_out @ w2) * (pre > 0)
            grads = [d_h.T @ x, d_h.sum(0), d_out.T @ h, d_out.sum(0)]
            for p, g in zip(params, grads, strict=True):
                p -= lr * g
            return loss

        params = [p.copy() for p in inp["params"]]

        def result():
            fresh = [p.copy() for p in inp["params"]]
            return [np.array(step(fresh))] + fresh

        return (lambda: step(params)), result

    def mlp(inp):
        x, onehot, lr = inp["x"], inp["onehot"], np.float32(inp["lr"])
        n = x.shape[0]

        def step(params):
            acts, pres = [x], []
            h = x
            for i in range(0, 6, 2):
                pre = h @ params[i].T + params[i + 1]
                pres.append(pre)
                h = np.maximum(pre, 0) if i < 4 else pre
                acts.append(h)
            m = h.max(1, keepdims=True)
            e = np.exp(h - m)
            s = e.sum(1, keepdims=True)
            loss = -(onehot * (h - m - np.log(s))).sum() / n
            d = (e / s - onehot) / n
            grads = [None] * 6
            for layer in (2, 1, 0):
                grads[2 * layer] = d.T @ acts[layer]
                grads[2 * layer + 1] = d.sum(0)
                if layer:
                    d = (d @ params[2 * layer]) * (pres[layer - 1] > 0)
            for p, g in zip(params, grads, strict=True):
                p -= lr * g
            return loss

        params = [p.copy() for p in inp["params"]]

        def result():
            fresh = [p.copy() for p in inp["params"]]
            return [np.array(step(fresh))] + fresh

        return (lambda: step(params)), result

    def tiny_ops(inp):
        x, y, z = inp["x"], inp["y"], inp["z"]

        def run():
            ws = [z]
            w = z
            for _ in range(1000):
                w = (w / x) * y
                ws.append(w)
            gw = np.ones_like(z)
            gx, gy = np.zeros_like(x), np.zeros_like(y)
            for i in range(1000, 0, -1):
                prev = ws[i - 1]
                gy += gw * (prev / x)
                gq = gw * y  # gradient of the quotient prev / x
                gx -= gq * prev / (x * x)
                gw = gq / x
            return gx, gy, gw

        return run, lambda: list(run())

    def elementwise(inp):
        x = inp["x"]

        def run():
            s, c = np.sin(x), np.cos(x)
            t = np.tanh(s * c + x * x)
            return t.sum(), (1 - t * t) * (c * c - s * s + 2 * x)

        return run, lambda: [np.array(v) for v in run()]

    def hessian(inp):
        x = inp["x"]

        def run():  # d2/dx2 (sin x cos x) = -2 sin 2x; d2/dx2 x^3 = 6x
            return np.diag(-2 * np.sin(2 * x) + 6 * x)

        return run, lambda: [run()]

    def chain(inp):
        def run():
            y = inp["x"]
            a, b = 1.0001, 0.0001
            for _ in range(10_000):
                y = y * a
                y = y + b
            g = np.ones_like(y)
            for _ in range(10_000):
                g = g * a  # the add passes the gradient through unchanged
            return y, g

        return run, lambda: list(run())

    def jacobian(inp):
        def run():
            return np.diag(2 * np.exp(inp["x"])), 3 * np.eye(3, dtype=np.float32)

        return run, lambda: list(run())

    return dict(
        tinymodel_step=tinymodel,
        mlp_step=mlp,
        tiny_ops_2000=tiny_ops,
        elementwise_1m=elementwise,
        hessian_100=hessian,
        chain_20000=chain,
        jacobian_small=jacobian,
    )
