"""``GS``: nn-mini and the layers below it under torch's names (``GS.tensor``,
``GS.nn.Linear``, ``GS.nn.functional``, ``GS.autograd.grad``, ``GS.distributions`` ...),
so that nn-mini's tests run a program written once for ``torch`` on gradstack without the
``gradstack`` facade, a layer above nn-mini (its wheel is tested alone)."""

from __future__ import annotations

import types

import gradstack_autograd
import gradstack_nn
import gradstack_tensor as gt

__all__ = ["GS"]

GS = types.SimpleNamespace(**{name: getattr(gt, name) for name in gt.__all__})
GS.nn = gradstack_nn
GS.optim = gradstack_nn.optim
GS.distributions = gradstack_nn.distributions
GS.autograd = gradstack_autograd
GS.no_grad = gradstack_autograd.no_grad
GS.enable_grad = gradstack_autograd.enable_grad
