"""torch's barebones unsigned dtypes (uint16, uint32, uint64) and Tensor.hash_tensor
against torch 2.13: what torch does with them (creation, conversion, views, indexing,
printing, the kernels it has) gives torch's values; what it refuses (promotion with other
integer dtypes, the arithmetic it has no loop for) raises torch's error."""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")

DTYPES = ["uint16", "uint32", "uint64"]


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001 - the class and words are what is compared
        return type(e), str(e).split("\n")[0]
    if isinstance(r, tuple):
        r = r[0]
    if hasattr(r, "dtype"):
        return str(r.dtype).split(".")[-1], r.tolist()
    return str(r).split(".")[-1] if "dtype" in type(r).__name__ else r


def _big(L, d):
    top = {"uint16": 65535, "uint32": 2**32 - 1, "uint64": 2**63 + 5}[d]
    return L.tensor([[1, 2, top], [7, 0, 3]], dtype=getattr(L, d))


ALLOWED = {
    "zeros": lambda L, d: L.zeros(2, dtype=getattr(L, d)),
    "ones": lambda L, d: L.ones(2, dtype=getattr(L, d)),
    "full": lambda L, d: L.full((2,), 7, dtype=getattr(L, d)),
    "wrap -1": lambda L, d: L.tensor([-1], dtype=getattr(L, d)),
    "float into": lambda L, d: L.tensor([1.5], dtype=getattr(L, d)),
    "full -1": lambda L, d: L.full((2,), -1, dtype=getattr(L, d)),
    "to": lambda L, d: L.tensor([1.5, 2.7]).to(getattr(L, d)),
    "to float": lambda L, d: _big(L, d).to(L.float64),
    "to int64": lambda L, d: L.tensor([1, 2], dtype=getattr(L, d)).to(L.int64),
    "mul": lambda L, d: _big(L, d) * _big(L, d),
    "mul scalar": lambda L, d: _big(L, d) * 3,
    "mul float": lambda L, d: _big(L, d) * 2.5,
    "div": lambda L, d: _big(L, d) / L.tensor(3, dtype=getattr(L, d)),
    "add float": lambda L, d: _big(L, d) + 2.5,
    "add float tensor": lambda L, d: _big(L, d) + L.ones(3),
    "eq": lambda L, d: _big(L, d) == 2,
    "ne": lambda L, d: _big(L, d) != _big(L, d),
    "lt float": lambda L, d: _big(L, d) < 2.5,
    "and": lambda L, d: _big(L, d) & _big(L, d),
    "xor": lambda L, d: _big(L, d) ^ _big(L, d),
    "sum": lambda L, d: L.tensor([1, 2, 3], dtype=getattr(L, d)).sum(),
    "cumsum": lambda L, d: L.tensor([1, 2, 3], dtype=getattr(L, d)).cumsum(0),
    "cat": lambda L, d: L.cat([_big(L, d), _big(L, d)]),
    "index": lambda L, d: _big(L, d)[1:, ::2],
    "gather": lambda L, d: _big(L, d)[L.tensor([1, 0])],
    "transpose": lambda L, d: _big(L, d).t().contiguous(),
    "flip": lambda L, d: _big(L, d).flip(0),
    "clone fill": lambda L, d: _big(L, d).clone().fill_(3),
    "copy": lambda L, d: _big(L, d).clone().copy_(_big(L, d).flip(0)),
    "sqrt": lambda L, d: L.tensor([4, 9], dtype=getattr(L, d)).sqrt(),
    "item": lambda L, d: _big(L, d)[0, 2].item(),
    "type": lambda L, d: _big(L, d).type().split(".")[-1],
    "promote float": lambda L, d: L.promote_types(getattr(L, d), L.float32),
    "iinfo": lambda L, d: [int(L.iinfo(getattr(L, d)).max), L.iinfo(getattr(L, d)).bits],
    "is_signed": lambda L, d: getattr(L, d).is_signed,
    "numpy": lambda L, d: str(_big(L, d).numpy().dtype),
}

REFUSED = {
    "add": lambda L, d: _big(L, d) + _big(L, d),
    "add scalar": lambda L, d: _big(L, d) + 1,
    "add_": lambda L, d: _big(L, d).add_(1),
    "sub": lambda L, d: _big(L, d) - _big(L, d),
    "rsub": lambda L, d: 1 - _big(L, d),
    "neg": lambda L, d: -_big(L, d),
    "abs": lambda L, d: _big(L, d).abs(),
    "lt": lambda L, d: _big(L, d) < _big(L, d),
    "gt scalar": lambda L, d: _big(L, d) > 1,
    "max": lambda L, d: _big(L, d).max(),
    "min": lambda L, d: _big(L, d).min(),
    "amax": lambda L, d: _big(L, d).amax(0),
    "argmax": lambda L, d: _big(L, d).argmax(),
    "maximum": lambda L, d: L.maximum(_big(L, d), _big(L, d)),
    "clamp": lambda L, d: _big(L, d).clamp(2, 4),
    "floor divide": lambda L, d: _big(L, d) // _big(L, d),
    "remainder": lambda L, d: _big(L, d) % 3,
    "shift": lambda L, d: _big(L, d) << 1,
    "mm": lambda L, d: _big(L, d) @ _big(L, d).t(),
    "dot": lambda L, d: L.tensor([1, 2], dtype=getattr(L, d)).dot(
        L.tensor([1, 2], dtype=getattr(L, d))
    ),
    "promote int64": lambda L, d: _big(L, d) + L.tensor([1, 2, 3]),
    "promote uint8": lambda L, d: _big(L, d) * L.tensor([1, 2, 3], dtype=L.uint8),
    "promote bool": lambda L, d: L.promote_types(getattr(L, d), L.bool),
    "promote complex": lambda L, d: L.promote_types(getattr(L, d), L.complex64),
    "overflow": lambda L, d: L.tensor([70000], dtype=getattr(L, d)) if d == "uint16" else 1 / 0,
    "requires grad": lambda L, d: _big(L, d).requires_grad_(),
    "relu": lambda L, d: _big(L, d).relu(),
    "logical_not": lambda L, d: _big(L, d).logical_not(),
    "bitwise_not": lambda L, d: ~_big(L, d),
    "count_nonzero": lambda L, d: _big(L, d).count_nonzero(),
    "tril": lambda L, d: _big(L, d).tril(),
    "trace": lambda L, d: _big(L, d)[:, :2].trace(),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_what_torch_does(name, dtype):
    got = _outcome(lambda: ALLOWED[name](gs, dtype))
    want = _outcome(lambda: ALLOWED[name](torch, dtype))
    if name == "iinfo" and dtype == "uint64":  # (torch's uint64 iinfo.max is a float)
        want = [2**64 - 1, 64]
    if isinstance(want, tuple) and len(want) == 2 and isinstance(want[1], list):
        assert got[0] == want[0]
        np.testing.assert_allclose(np.array(got[1], dtype=float), np.array(want[1], dtype=float))
        assert got[1] == want[1] or "float" in want[0]
    else:
        assert got == want


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_torch_refuses(name, dtype):
    got = _outcome(lambda: REFUSED[name](gs, dtype))
    want = _outcome(lambda: REFUSED[name](torch, dtype))
    assert isinstance(want[0], type) and issubclass(want[0], Exception), want
    assert got[0] is want[0], (got, want)
    if want[0] is NotImplementedError or "Promotion" in want[1]:
        assert got[1] == want[1]


def test_printing():
    for d in DTYPES:
        assert repr(_big(gs, d)).replace("gradstack", "torch") == repr(_big(torch, d))


HASHES = {
    "floats": lambda L: L.tensor([1.0, 2.0, 3.0]).hash_tensor(),
    "ints dim": lambda L: L.tensor([[1, 2], [3, 4]]).hash_tensor(0),
    "keepdim": lambda L: L.tensor([[1, 2], [3, 4]]).hash_tensor(1, keepdim=True),
    "dims": lambda L: L.ones(2, 3).hash_tensor((0, 1)),
    "negative int32": lambda L: L.tensor([-1, 2], dtype=L.int32).hash_tensor(),
    "bool": lambda L: L.tensor([True, False, True]).hash_tensor(),
    "half": lambda L: L.tensor([1.0, 2.0]).half().hash_tensor(),
    "bfloat16": lambda L: L.tensor([1.5]).bfloat16().hash_tensor(),
    "nan and -0": lambda L: L.tensor([float("nan"), -0.0]).hash_tensor(),
    "0-d": lambda L: L.tensor(3.0).hash_tensor(),
    "float64 3-d": lambda L: L.arange(24.0, dtype=L.float64).reshape(2, 3, 4).hash_tensor(-1),
    "function": lambda L: L.hash_tensor(L.tensor([5, 9])),
    "empty kept dim": lambda L: L.ones(0, 3).hash_tensor(1),
    "empty": lambda L: L.tensor([]).hash_tensor(),
    "empty dim": lambda L: L.ones(0, 3).hash_tensor(0),
    "mode": lambda L: L.tensor([1.0]).hash_tensor(mode=1),
    "complex": lambda L: L.tensor([1 + 2j]).hash_tensor(),
    "uint16": lambda L: L.tensor([1, 2], dtype=L.uint16).hash_tensor(),
    "dim float": lambda L: L.ones(2).hash_tensor(1.5),
    "dim range": lambda L: L.ones(2, 3).hash_tensor(dim=3),
}


@pytest.mark.parametrize("name", sorted(HASHES))
def test_hash_tensor(name):
    got, want = _outcome(lambda: HASHES[name](gs)), _outcome(lambda: HASHES[name](torch))
    if isinstance(want[0], type):
        assert got[0] is want[0], (got, want)
        if want[0] is not TypeError:
            assert got[1] == want[1]
    else:
        assert got == want
