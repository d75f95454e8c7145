"""The derivative table: one entry per op of gradstack_tensor, in family modules.

Each op has one block, in the module of its family:

- ``arithmetic``: add ... pow, the unary functions, where, clamp, masked_fill;
- ``reductions``: sum, mean, prod, max/min, var/std, norm, logsumexp, softmax, cumsum;
- ``linalg``: matmul and its family, addmm, trace, tril/triu, diag;
- ``decompositions``: linalg_inv, linalg_det, linalg_logabsdet, linalg_solve,
  linalg_cholesky (the matrix functions with a factorization);
- ``factorizations``: linalg_eig, linalg_eigh, linalg_qr, linalg_lstsq,
  linalg_solve_triangular, linalg_lu, linalg_pinv;
- ``views``: getitem, view/reshape, transpose, permute, expand, narrow, split, cat, stack,
  gather, index_select, sort/topk ...;
- ``indexed_writes``: scatter, scatter_add, index_add, index_copy, index_fill;
- ``inplace``: in-place ops without an out-of-place twin (``zero_``, ``fill_``, ``copy_``,
  ``setitem_`` ...);
- ``nondifferentiable``: comparisons, logical and bitwise ops, argmax, detach;
- ``nn``: losses, normalisation, embedding, activations;
- ``rnn``: the recurrent layers' ops (``_lstm_layer``, ``_gru_layer``);
- ``random_ops``: bernoulli, normal, multinomial, the in-place fills;
- ``special_functions``: torch.special's Bessel functions, polynomials, erfcx, zeta,
  igamma/igammac, i0 and nextafter;
- ``windows``: im2col/col2im (``F.unfold``/``F.fold``, and so convolutions), max pooling.

A block is the op's row, ``@register("op(arg, ...)", node, inputs=..., save=...,
fused=..., batch=...)`` on its backward formula, followed by its forward formula
(``@jvp``); a batching rule written for the op sits right above the row.  The row builds
the op's entry (a ``Derivative``, ``entry(name)``), by argument name as torch's
derivatives.yaml:

- ``"mul(self, other)"``: the op and the names of its positional arguments (tensor-core's
  canonical order);
- ``node``: the name of the backward node, as torch names it (``MulBackward0``), or a
  function of the op's arguments for ops whose torch name depends on them;
- ``inputs``: the differentiable arguments (``next_functions`` has one entry per input,
  ``(None, 0)`` when that argument needs no gradient);
- ``save``: the values the formula reads, ``"result"`` (the op's output) last; tensors are
  saved with their version; ``save_for``/``output_for`` save a value only when a gradient
  that reads it is wanted (Note [Save what a gradient needs], _layer.pyx);
- ``fused``: the kernel that may replace the first-order formula (Note [Native
  first-order formulas], _native.pyx);
- ``batch``: vmap's batching rule, or the kind of rule (Note [A batching rule per entry]
  in ``batching``);
- the function: ``formula(ctx, grad) -> tuple`` with one gradient (or None) per input.
  ``ctx`` is the node: ``ctx.saved_value("self")`` unpacks a saved value,
  ``ctx.needs_input_grad``, ``ctx.input_shape(i)``, ``ctx.fused(...)`` and ``ctx.extra``
  are there too.

The same entry holds the op's forward formula (``entry.jvp``, set by ``@jvp``) and vmap's
batching rule (``entry.batch_rule``, from the row's ``batch=``); the engine, the native
fast path, forward mode and vmap read nothing else.  The machinery is in ``_table``
(``register``, ``jvp``), the helpers the formulas share in ``_formulas`` and
``_tangents``, the kinds of batching rule in ``batching``.

A pointwise op's row is shorter: ``elementwise`` (``_elementwise``) takes each input's
local derivative once, as a formula of the incoming gradient (``grad * self.cos()``), and
makes the backward formula, the forward formula and the batching rule from it, as torch's
``auto_element_wise`` (Note [A pointwise derivative is written once])::

    @elementwise("cosh(self)", "CoshBackward0", keeps_zero="self")
    def _cosh(grad, self):
        return grad * self.sinh()

Note [Entries by name]
~~~~~~~~~~~~~~~~~~~~~~
Rows name arguments, never positions, so that a row reads as torch's derivatives.yaml
and users find the same names on the nodes (``grad_fn._saved_self``, Note [Saved values
by name] in _op_node.pyx).  ``register`` resolves the names to positions once; recording a
node (the hot path) works with positions only and costs nothing more.

Note [Formulas are written with gradstack ops]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Formulas use Tensor operations, so with ``create_graph=True`` (grad mode on during the
backward pass) they are recorded like any other computation and can be differentiated
again, to any order.  Without it, the engine runs them under no-grad and a few hot
formulas take their entry's fused Cython kernel instead (``ctx.fused``); the tests check both paths
against each other.

Note [Broadcasting is the engine's job]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A formula may return a gradient with the *broadcast* shape of the op's output: the engine
reduces it to the input's shape (and casts it to the input's dtype) in one place
(``validate_grad``), so formulas never repeat that logic.

Ops that are not differentiable (comparisons, argmax ...) are listed in
``NOT_DIFFERENTIABLE``; a test fails if an op of the registry is in neither place.

Note [Forward formulas sit with their backward formulas]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Each op's forward-mode (JVP) formula follows its backward formula: ``@jvp("mul")`` right
after the ``mul`` row sets the entry's ``jvp`` (and its in-place variant's), so that one
op is read and changed in one place, as torch's derivatives.yaml keeps ``self:`` and
``result:`` formulas together.  A formula shared by several ops follows the last of
their rows (the entries must exist when ``@jvp`` runs).  forward_ad calls it as
``formula(args, out, tangents, lead)``:

- ``args``: the op's arguments (for an in-place op, ``args[0]`` is ``self`` *before* the
  write);
- ``out``: the op's result (a tuple for ops with several outputs);
- ``tangents``: one per differentiable input of the entry (per element of the list for
  ``cat``/``stack``), None for a zero tangent;
- ``lead``: the batch prefix every tangent carries, ``()`` normally, ``(batch,)`` for
  batched tangents (Note [Batched tangents] in ``forward_ad``).

It returns the output's tangent (broadcastable to ``lead + out.shape``; forward_ad expands
and casts it), None for a zero tangent, or a tuple with one entry per output.  Tangents
are computed with gradstack ops, as the backward formulas, so that a tangent computed with
grad mode on is part of the graph and can be differentiated backward again; many are the
backward formula's transpose (``t @ b + a @ t_b`` for matmul).  A pointwise op's is never
written: ``elementwise`` derives it from the backward's local derivative (``t * cos(x)``
for sin).  Every differentiable op has a forward formula or a reason in ``NO_JVP``; a test fails
otherwise.

Note [Aligning a batch of tangents]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A tangent has its input's shape, which for broadcasting ops may have fewer dims than the
output: unbatched that broadcasts as numpy does, but with a batch prefix ``(B,) + (3,)``
against ``(2, 3)`` would pair B with 2.  ``_pad`` inserts the missing unit dims after the
prefix first.  Dims given to an op (sum's ``dim``, transpose's ...) are shifted past the
prefix with ``_shift``.
"""

from __future__ import annotations

# the families: importing a module binds its rows to their ops
from . import (
    _table,
    arithmetic,
    batching,
    complex_numbers,
    decompositions,
    factorizations,
    indexed_writes,
    inplace,
    linalg,
    nn,
    nondifferentiable,
    random_ops,
    reducing_writes,
    reductions,
    rnn,
    rnn_cells,
    special_functions,
    spectral,
    views,
    windows,
)
from ._elementwise import elementwise
from ._formulas import index_scatter
from ._table import NO_JVP, entry, jvp, register
from .arithmetic import ZERO_GRADIENT
from .nondifferentiable import NOT_IMPLEMENTED

# every op whose outputs never require grad, whichever family lists it
NOT_DIFFERENTIABLE = tuple(_table.NOT_DIFFERENTIABLE)

__all__ = [
    "register",
    "elementwise",
    "entry",
    "jvp",
    "index_scatter",
    "batching",
    "NO_JVP",
    "NOT_DIFFERENTIABLE",
    "NOT_IMPLEMENTED",
    "ZERO_GRADIENT",
    "arithmetic",
    "reductions",
    "linalg",
    "views",
    "inplace",
    "nondifferentiable",
    "nn",
    "random_ops",
]
