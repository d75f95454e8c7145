"""``kl_divergence(p, q)`` and ``register_kl``: torch's closed forms by pair of types."""

from __future__ import annotations

import math

import gradstack_tensor as gt

from .bernoulli import Bernoulli
from .categorical import Categorical
from .normal import Normal
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as ``KL(p || q)`` for these types."""

    def deco(fn):
        _KL[(type_p, type_q)] = fn
        return fn

    return deco


def kl_divergence(p, q):
    """``KL(p || q)`` (torch's closed form for the pair of types)."""
    for (tp, tq), fn in _KL.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise NotImplementedError(
        f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
    )


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = gt.where(q.probs == 0, float("inf"), t)
    t = gt.where(p.probs == 0, 0.0, t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    import gradstack_nn.functional as F

    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = gt.where(q.probs == 0, float("inf"), t1)
    t1 = gt.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = gt.where(q.probs == 1, float("inf"), t2)
    t2 = gt.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return gt.where(outside, float("inf"), result)


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p, q):
    return gt.full(tuple(p.loc.shape), float("inf"), dtype=p.loc.dtype)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common).log()
    t2 = common.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
