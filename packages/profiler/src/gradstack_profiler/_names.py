"""Event names: what an op, a backward node or a labelled block is called in a profile.

Note [Event naming scheme]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A profile of gradstack should read like a profile of the same code under torch, so that
people can compare the two line by line:

- an op that torch also has is named as torch's dispatcher names it, ``aten::<op>``
  (``aten::mul``, ``aten::div``, ``aten::add_``, ``aten::sum``).  The set below lists the
  gradstack ops known to have an ``aten`` counterpart of the same name; a test checks each
  of them against torch when torch is installed;
- a few gradstack ops have a different torch name: ``to_dtype`` is ``aten::to``;
- an op without an ``aten`` counterpart, or one registered by an extension with
  ``gradstack_tensor.register_op``, is ``gradstack::<op>`` (``gradstack::getitem``: torch
  spreads indexing over ``aten::select``/``aten::slice``/``aten::index``; gradstack runs it
  as one op);
- a backward node run by the engine is named by its class, as ``grad_fn`` prints it
  (``MulBackward0``, ``AccumulateGrad``).  torch wraps each one in an extra
  ``autograd::engine::evaluate_function: MulBackward0`` event; gradstack records one event;
- a ``record_function(name)`` block is named ``name``;
- bytes freed outside any event are ``[memory]`` events, as in torch.
"""

from __future__ import annotations

__all__ = ["event_name", "ATEN_OPS", "RENAMED"]

# gradstack ops whose torch counterpart is aten::<same name> (checked against torch)
ATEN_OPS = frozenset(
    """
bernoulli bernoulli_ exponential_ multinomial normal random_
abs abs_ acos acos_ add add_ addmm alias amax amin argmax argmin asin asin_ atan atan2
acosh acosh_ asinh asinh_ atanh atanh_
atan2_ atan_ bitwise_and bitwise_and_ bitwise_not bitwise_not_ bitwise_or bitwise_or_
bitwise_xor bitwise_xor_ bmm cat ceil ceil_ chunk clamp clamp_ clone contiguous copy_
cos cos_ cosh cosh_ cumsum detach diag diagonal unfold div div_ dot eq exp exp2 exp2_ exp_ expand
expand_as expm1 expm1_ fill_ flatten flip floor floor_ floor_divide floor_divide_ gather
ge gt index_select le log log10 log10_ log1p log1p_ log2 log2_ log_ log_softmax
logical_and logical_not logical_not_ logical_or logical_xor logsumexp lt masked_fill
masked_fill_ matmul max maximum mean min minimum mm mul mul_ mv narrow ne neg neg_ norm
normal_ outer permute pow pow_ prod reciprocal reciprocal_ relu relu_ remainder
remainder_ repeat reshape round round_ rsqrt rsqrt_ rsub select sigmoid sigmoid_ sgn sgn_ sign
sign_ sin sin_ sinh sinh_ softmax sort split sqrt sqrt_ squeeze stack std sub sub_ sum t
tan tan_ tanh tanh_ topk trace transpose tril triu trunc trunc_ unbind uniform_
unsqueeze var view where zero_
scatter scatter_ scatter_add scatter_add_ index_add index_add_ index_copy index_copy_
index_fill index_fill_
linalg_inv linalg_det linalg_solve linalg_cholesky
batch_norm binary_cross_entropy binary_cross_entropy_with_logits embedding embedding_renorm_
gelu gelu_backward huber_loss layer_norm leaky_relu leaky_relu_ log_sigmoid mse_loss nll_loss
nll_loss2d silu silu_ smooth_l1_loss
count_nonzero isfinite isinf isnan
erf erfinv lgamma digamma polygamma
im2col col2im max_pool2d_with_indices
""".split()
)

# gradstack ops that torch calls by another aten name
RENAMED = {
    "to_dtype": "aten::to",
    "div_rounding": "aten::div",
    "mul_scalar": "aten::mul",
    "div_scalar": "aten::div",
    "linalg_logabsdet": "aten::linalg_slogdet",  # (slogdet's differentiable half)
}

_cache: dict[str, str] = {}


def event_name(op_name: str) -> str:
    """The profile's name for the op called ``op_name`` (Note [Event naming scheme]).

    >>> event_name("mul"), event_name("to_dtype"), event_name("getitem")
    ('aten::mul', 'aten::to', 'gradstack::getitem')
    """
    name = _cache.get(op_name)
    if name is None:
        if op_name in RENAMED:
            name = RENAMED[op_name]
        elif op_name in ATEN_OPS:
            name = "aten::" + op_name
        else:
            name = "gradstack::" + op_name
        _cache[op_name] = name
    return name
