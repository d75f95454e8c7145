"""Calls torch 2.13 refuses are refused, calls it takes are taken (issue 36, item 5).

Each case is run by gradstack and by torch: both raise the same class, or both return
the same values.  The one difference on purpose (an integer tensor written from a value
that requires grad) is tested on its own, with its Note.
"""

from __future__ import annotations

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def _outcome(lib, call):
    try:
        r = call(lib)
    except Exception as e:  # noqa: BLE001 - the class is the outcome
        return type(e)
    if isinstance(r, lib.Tensor):
        return ("value", tuple(r.shape), r.tolist())
    if isinstance(r, tuple) and r and isinstance(r[0], lib.Tensor):
        return ("values", [x.tolist() for x in r])
    return ("value", r)


def _t(lib):
    return lib.arange(6.0).reshape(2, 3)


E = Ellipsis
CASES = {
    # star-args and sequence forms of permute / reshape / view
    "permute(1, 0)": lambda L: _t(L).permute(1, 0),
    "permute((1, 0))": lambda L: _t(L).permute((1, 0)),
    "permute([1, 0])": lambda L: _t(L).permute([1, 0]),
    "permute((1,), 0)": lambda L: _t(L).permute((1,), 0),
    "permute([1], [0])": lambda L: _t(L).permute([1], [0]),
    "reshape(3, 2)": lambda L: _t(L).reshape(3, 2),
    "reshape((3,), 2)": lambda L: _t(L).reshape((3,), 2),
    "reshape([3, 2])": lambda L: _t(L).reshape([3, 2]),
    # expand: a size is required (expand(()) is the 0-d one)
    "expand()": lambda L: _t(L).expand(),
    "0-d expand()": lambda L: L.tensor(2.0).expand(),
    "0-d expand(())": lambda L: L.tensor(2.0).expand(()),
    "expand(size=)": lambda L: L.tensor([1.0]).expand(size=(2, 1)),
    # reductions: keepdim without dim, dim=None where the dim is an int
    "sum(keepdim=True)": lambda L: _t(L).sum(keepdim=True),
    "sum(dim=None, keepdim=True)": lambda L: _t(L).sum(dim=None, keepdim=True),
    "sum(None)": lambda L: _t(L).sum(None),
    "mean(keepdim=True)": lambda L: _t(L).mean(keepdim=True),
    "mean(None, True)": lambda L: _t(L).mean(None, True),
    "prod(dim=None)": lambda L: _t(L).prod(dim=None),
    "prod(keepdim=True)": lambda L: _t(L).prod(keepdim=True),
    "prod()": lambda L: _t(L).prod(),
    "max(dim=None)": lambda L: _t(L).max(dim=None),
    "min(None)": lambda L: _t(L).min(None),
    "max(keepdim=True)": lambda L: _t(L).max(keepdim=True),
    "max()": lambda L: _t(L).max(),
    "max(1, True)": lambda L: _t(L).max(1, True),
    "sum(0, 1)": lambda L: _t(L).sum(0, 1),
    "amax(0, 1)": lambda L: _t(L).amax(0, 1),
    "all(0, None)": lambda L: _t(L).all(0, None),
    "sum(0, keepdim=np_true)": lambda L: _t(L).sum(0, keepdim=True),
    # several Ellipses: torch applies each (Note [Several Ellipses in an index])
    "[..., ...]": lambda L: _t(L)[E, E],
    "[..., 0, ...]": lambda L: L.arange(24.0).reshape(2, 3, 4)[E, 0, E],
    "[0, ..., 1, ...]": lambda L: L.arange(24.0).reshape(2, 3, 4)[0, E, 1, E],
    "[..., None, ...]": lambda L: L.arange(24.0).reshape(2, 3, 4)[E, None, E],
    "[..., 1, ..., 2]": lambda L: L.arange(24.0).reshape(2, 3, 4)[E, 1, E, 2],
    "[0, 1, 2, 3, ..., ...]": lambda L: L.arange(24.0).reshape(2, 3, 4)[0, 1, 2, 3, E, E],
    "setitem [..., 0, ...]": lambda L: _set(L, (E, 0, E)),
    # copy_ of a Python number is a fill (torch takes it)
    "copy_(3)": lambda L: _t(L).copy_(3),
    "copy_(2.5) into int": lambda L: L.zeros(2, dtype=L.int64).copy_(2.5),
    "copy_(True)": lambda L: L.zeros(2).copy_(True),
    "copy_(None)": lambda L: _t(L).copy_(None),
    "copy_(t, None)": lambda L: _t(L).copy_(_t(L), None),
    # bool addmm: refused by both
    "bool addmm": lambda L: L.addmm(*(L.ones(2, 2, dtype=L.bool),) * 3),
    # cat's forms
    "cat((t, t), 0)": lambda L: L.cat((_t(L), _t(L)), 0),
    "cat([t, t], dim=1)": lambda L: L.cat([_t(L), _t(L)], dim=1),
    "cat(t, t)": lambda L: L.cat(_t(L), _t(L)),
    "cat(None)": lambda L: L.cat(None),
    "cat([t, None])": lambda L: L.cat([_t(L), None]),
    "stack(None)": lambda L: L.stack(None),
    "contiguous(None)": lambda L: _t(L).contiguous(None),
    "requires_grad_(1)": lambda L: _t(L).requires_grad_(1),
}


def _set(lib, index):
    x = lib.arange(24.0).reshape(2, 3, 4)
    x[index] = -1.0
    return x


@pytest.mark.parametrize("name", list(CASES))
def test_as_torch(name):
    call = CASES[name]
    assert _outcome(gs, call) == _outcome(torch, call)


def test_integer_tensor_written_from_a_value_that_requires_grad():
    """Note [An integer tensor written from a value that requires grad]: torch 2.13 makes
    ``x`` require grad (and its backward then fails an internal assert); here x stays out
    of the graph, in every form."""
    v = gs.tensor(2.5, requires_grad=True)
    for index in (0, (0, 1), slice(0, 1), Ellipsis):
        x = gs.zeros(3, 2, dtype=gs.int64)
        x[index] = v
        assert not x.requires_grad and x.grad_fn is None
    assert x.tolist() == [[2, 2], [2, 2], [2, 2]]
    xt = torch.zeros(3, 2, dtype=torch.int64)
    xt[0] = torch.tensor(2.5, requires_grad=True)
    assert xt.requires_grad  # torch's, which the Note explains
