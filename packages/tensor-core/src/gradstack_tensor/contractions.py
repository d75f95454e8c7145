"""Tensor contractions: einsum, tensordot, inner and kron, as torch composes them (views,
``bmm``/``mm`` and products), so that they differentiate through the ops they use.

Note [einsum contracts pairwise with bmm]
``einsum`` first takes each operand's repeated subscripts as a diagonal (``"ii->i"``) and
sums the subscripts that no other operand and not the output use; then it contracts the
operands left to right, two at a time: the subscripts both share and still need are batch
dims, those only they share are summed by one ``bmm`` of ``(batch, rows, k) @ (batch, k,
cols)``, and the others stay.  This never makes the broadcast product of all the
operands (``"bhqd,bhkd->bhqk"`` is one ``bmm``, not a five-dim product), which is also
what torch's einsum does (its order of contraction is left to right unless opt_einsum
chooses another; the values agree to rounding).  A size-1 dim against a larger one
broadcasts, as in torch.

Examples
--------
>>> import gradstack_tensor as gt
>>> a, b = gt.arange(6.0).reshape(2, 3), gt.arange(3.0)
>>> gt.einsum("ij,j->i", a, b).tolist()
[5.0, 14.0]
>>> gt.einsum("ii", gt.eye(3)).item()
3.0
>>> gt.tensordot(a, b, dims=1).tolist()
[5.0, 14.0]
>>> gt.kron(gt.tensor([1, 2]), gt.tensor([1, 10])).tolist()
[1, 10, 2, 20]
"""

from __future__ import annotations

import string

import numpy as np

from ._out import write_out
from ._tensor import Tensor, _wrap

__all__ = ["einsum", "tensordot", "inner", "kron"]

_LETTERS = set(string.ascii_letters)


def _tensor(x, fname: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _out(name: str, result: Tensor, out) -> Tensor:
    return result if out is None else write_out(name, result, out, rule="exact")


# ---------------------------------------------------------------------------- einsum


def _from_sublists(args):
    """``einsum(a, [0, 1], b, [1, 2], [0, 2])``: the equation written with letters."""
    letters = string.ascii_letters

    def sub(items):
        out = []
        for i in items:
            if i is Ellipsis:
                out.append("...")
            elif isinstance(i, (int, np.integer)) and 0 <= int(i) < len(letters):
                out.append(letters[int(i)])
            elif not isinstance(i, (int, np.integer)):  # (torch's TypeError for a non-int)
                raise TypeError(
                    f"einsum(): expected subscript to be within the range [0, 52), but got {i}"
                )
            else:
                raise RuntimeError(
                    f"einsum(): expected subscript to be within the range [0, 52), but got {i}"
                )
        return "".join(out)

    operands, subs = list(args[0::2]), list(args[1::2])
    if len(subs) > len(operands):
        raise RuntimeError("einsum(): more sublists than operands")
    output = None
    if len(operands) > len(subs):  # an odd count: the last item is the output's sublist
        output = operands.pop()
        if isinstance(output, Tensor):
            raise RuntimeError("einsum(): missing sublist for the last operand")
    eq = ",".join(sub(s) for s in subs)
    if output is not None:
        eq += "->" + sub(output)
    return eq, operands


def _parse(equation: str, operands):
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->", 1)
        explicit = True
    else:
        lhs, out, explicit = eq, "", False
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation"
            if len(operands) > len(terms)
            else "einsum(): fewer operands were provided than specified in the equation"
        )
    # each '...' stands for the operand's dims not named by letters, aligned to the right
    ell_dims = 0
    parsed = []
    for term, op in zip(terms, operands):
        named = term.replace("...", "")
        for c in named:
            if c not in _LETTERS:
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {term.index(c)} in the "
                    "equation string, subscripts must be in [a-zA-Z]"
                )
        has_ell = "..." in term
        if term.count("...") > 1 or term.replace("...", "").count("."):
            raise RuntimeError("einsum(): found '.' for operand that is not part of any ellipsis")
        k = op.dim() - len(named)
        if (k < 0) or (k > 0 and not has_ell):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(named)}) does not "
                f"match the number of dimensions ({op.dim()}) for operand "
                f"{len(parsed)}{'' if has_ell else ' and no ellipsis was given'}"
            )
        ell_dims = max(ell_dims, k if has_ell else 0)
        parsed.append((term, k))
    ell = [chr(0x100 + i) for i in range(ell_dims)]  # placeholders, never letters
    subs = []
    for term, k in parsed:
        if "..." in term:
            left, right = term.split("...")
            subs.append(list(left) + ell[ell_dims - k :] + list(right))
        else:
            subs.append(list(term))
    if explicit:
        if out.count("...") > 1:
            raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis")
        if "..." in out:
            left, right = out.split("...")
            output = list(left) + ell + list(right)
        else:
            output = list(out)
        for i, c in enumerate(out.replace("...", "")):
            if c not in _LETTERS:
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                    "equation string, subscripts must be in [a-zA-Z]"
                )
        seen = set()
        for c in output:
            if c in seen:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            seen.add(c)
            if not any(c in s for s in subs):
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any "
                    "input operand"
                )
    else:
        counts: dict = {}
        for s in subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        output = ell + sorted(c for c, n in counts.items() if n == 1 and c in _LETTERS)
    return subs, output


def _diagonal(x: Tensor, sub: list):
    """``x`` with each repeated subscript taken once, on the diagonal of its dims."""
    while len(set(sub)) != len(sub):
        c = next(c for c in sub if sub.count(c) > 1)
        dims = [i for i, s in enumerate(sub) if s == c]
        n = x.shape[dims[0]]
        for d in dims[1:]:
            if x.shape[d] != n:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand but the sizes don't match, "
                    f"{x.shape[d]} != {n}"
                )
        rest = [i for i in range(len(sub)) if i not in dims]
        x = x.permute(*(dims + rest))
        ar = _wrap(np.arange(n, dtype=np.int64))
        x = x[(ar,) * len(dims)]  # the diagonal becomes the first dim
        sub = [c] + [sub[i] for i in rest]
    return x, sub


def _sum_unused(x: Tensor, sub: list, keep: set):
    dims = [i for i, c in enumerate(sub) if c not in keep]
    if not dims:
        return x, sub
    return x.sum(tuple(dims)), [c for c in sub if c in keep]


def _size(x, sub, c):
    return x.shape[sub.index(c)] if c in sub else 1


def _contract(a: Tensor, sa: list, b: Tensor, sb: list, keep: set):
    """Note [einsum contracts pairwise with bmm]."""
    batch = [c for c in sa if c in sb and c in keep]
    summed = [c for c in sa if c in sb and c not in keep]
    a_only = [c for c in sa if c not in sb]
    b_only = [c for c in sb if c not in sa]
    # a size-1 dim against a larger one broadcasts (expand is a view)
    sizes = {}
    for c in batch + summed:
        na, nb = _size(a, sa, c), _size(b, sb, c)
        if na != nb and 1 not in (na, nb):
            raise RuntimeError(
                f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                f"{list(a.shape)}->{[_size(a, sa, s) for s in sa]} "
                f"{list(b.shape)}->{[_size(b, sb, s) for s in sb]}"
            )
        sizes[c] = max(na, nb)
    a = a.expand([sizes.get(c, _size(a, sa, c)) for c in sa]) if sa else a
    b = b.expand([sizes.get(c, _size(b, sb, c)) for c in sb]) if sb else b
    pa = [sa.index(c) for c in batch + a_only + summed]
    pb = [sb.index(c) for c in batch + summed + b_only]
    nb_ = int(np.prod([sizes[c] for c in batch], dtype=np.int64))
    nk = int(np.prod([sizes[c] for c in summed], dtype=np.int64))
    rows = [a.shape[sa.index(c)] for c in a_only]
    cols = [b.shape[sb.index(c)] for c in b_only]
    nm = int(np.prod(rows, dtype=np.int64))
    nn = int(np.prod(cols, dtype=np.int64))
    left = a.permute(*pa).reshape(nb_, nm, nk)
    right = b.permute(*pb).reshape(nb_, nk, nn)
    out = left.bmm(right).reshape(*([sizes[c] for c in batch] + rows + cols))
    return out, batch + a_only + b_only


def einsum(*args) -> Tensor:
    """Sums of products of the operands' elements over the subscripts of ``equation``
    (numpy's and torch's notation: ``"ij,jk->ik"``, ``"...ij,...jk"``, ``"ii->i"``; without
    ``->`` the output has the subscripts used once, in alphabetical order).  The operands
    may also be given as one list, or in the sublist format ``einsum(a, [0, 1], b, [1,
    2])``.  See Note [einsum contracts pairwise with bmm].

    >>> import gradstack_tensor as gt
    >>> q, k = gt.ones(2, 3, 4), gt.ones(2, 5, 4)
    >>> gt.einsum("bqd,bkd->bqk", q, k).shape
    gradstack.Size([2, 3, 5])
    """
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand")
    if isinstance(args[0], Tensor):
        equation, operands = _from_sublists(args)
    else:
        equation, operands = args[0], list(args[1:])
        if not isinstance(equation, str):
            # torch's Python einsum raises ValueError when no operand follows, its parser a
            # TypeError when some do
            raise (TypeError if operands else ValueError)(
                f"einsum(): argument 'equation' must be str, not {type(equation).__name__}"
            )
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    for i, op in enumerate(operands):
        _tensor(op, "einsum", f"operands[{i}]")
    subs, output = _parse(equation, operands)
    ops = []
    for i, (op, sub) in enumerate(zip(operands, subs)):
        x, s = _diagonal(op, sub)
        others = set(output)
        for j, t in enumerate(subs):
            if j != i:
                others.update(t)
        ops.append(_sum_unused(x, s, others))
    x, sx = ops[0]
    for i in range(1, len(ops)):
        y, sy = ops[i]
        keep = set(output)
        for t in subs[i + 1 :]:
            keep.update(t)
        x, sx = _contract(x, sx, y, sy, keep)
    x, sx = _sum_unused(x, sx, set(output))
    if sx != output:
        x = x.permute(*[sx.index(c) for c in output])
    return x


# ------------------------------------------------------------------ tensordot, inner, kron


def _dim_lists(dims, na: int, nb: int):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(na, nb):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(na - dims, na)), list(range(dims))
    if len(dims) != 2:
        raise RuntimeError("tensordot expects dims to be an int or a pair of lists of dims")
    da, db = dims
    da = [da] if isinstance(da, (int, np.integer)) else list(da)
    db = [db] if isinstance(db, (int, np.integer)) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return [int(d) % max(na, 1) for d in da], [int(d) % max(nb, 1) for d in db]


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """The sum of products of ``a`` and ``b`` over ``dims``: an int ``n`` pairs the last
    ``n`` dims of ``a`` with the first ``n`` of ``b``; a pair of lists names the dims.  The
    result has ``a``'s other dims, then ``b``'s (permute, reshape and ``mm``, as torch).

    >>> import gradstack_tensor as gt
    >>> gt.tensordot(gt.ones(2, 3, 4), gt.ones(4, 3, 5), dims=([1, 2], [1, 0])).shape
    gradstack.Size([2, 5])
    """
    _tensor(a, "tensordot", "a")
    _tensor(b, "tensordot", "b")
    da, db = _dim_lists(dims, a.dim(), b.dim())
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                f"{i} and second has size {b.shape[j]} in dim {j}"
            )
    free_a = [i for i in range(a.dim()) if i not in da]
    free_b = [j for j in range(b.dim()) if j not in db]
    k = int(np.prod([a.shape[i] for i in da], dtype=np.int64))
    rows = [a.shape[i] for i in free_a]
    cols = [b.shape[j] for j in free_b]
    left = a.permute(*(free_a + da)).reshape(int(np.prod(rows, dtype=np.int64)), k)
    right = b.permute(*(db + free_b)).reshape(k, int(np.prod(cols, dtype=np.int64)))
    return _out("tensordot", left.mm(right).reshape(*(rows + cols)), out)


def inner(input, other, *, out=None) -> Tensor:
    """The sum of products over the last dims of ``input`` and ``other`` (their product
    when either is 0-d); the result has ``input``'s other dims, then ``other``'s."""
    _tensor(input, "inner", "input")
    _tensor(other, "inner", "other")
    if input.dim() == 0 or other.dim() == 0:
        result = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(
                f"inner() the last dimension must match on both input tensors but got shapes "
                f"{list(input.shape)} and {list(other.shape)}"
            )
        result = tensordot(input, other, ([input.dim() - 1], [other.dim() - 1]))
    return _out("inner", result, out)


def kron(input, other, *, out=None) -> Tensor:
    """The Kronecker product: blocks ``input[i] * other``, the two padded with leading
    1-sized dims to one rank (a product of views and a reshape, as torch)."""
    _tensor(input, "kron", "input")
    _tensor(other, "kron", "other")
    n = max(input.dim(), other.dim())
    a = input.reshape(*((1,) * (n - input.dim()) + tuple(input.shape)))
    b = other.reshape(*((1,) * (n - other.dim()) + tuple(other.shape)))
    a_view = []
    b_view = []
    for i in range(n):
        a_view += [a.shape[i], 1]
        b_view += [1, b.shape[i]]
    result = (a.reshape(*a_view) * b.reshape(*b_view)).reshape(
        *[a.shape[i] * b.shape[i] for i in range(n)]
    )
    return _out("kron", result, out)
