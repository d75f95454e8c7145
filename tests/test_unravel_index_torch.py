"""``unravel_index`` against torch 2.13: values and dtypes (indices of any integer dtype
and shape, negative and past-the-end indices wrapping as torch's), and errors."""

from __future__ import annotations

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")

CALLS = [
    "torch.unravel_index(torch.tensor(4), (3, 2))",
    "torch.unravel_index(torch.tensor([4, 1, 0, 5]), (3, 2))",
    "torch.unravel_index(torch.tensor([[4], [1]]), torch.Size([3, 2]))",
    "torch.unravel_index(torch.tensor([4, 1]), 6)",
    "torch.unravel_index(torch.tensor([-1, 1, -7]), (3, 2))",
    "torch.unravel_index(torch.tensor([6, 13]), (3, 2))",
    "torch.unravel_index(torch.tensor([1, 22], dtype=torch.int32), (2, 3, 4))",
    "torch.unravel_index(torch.tensor([1, 200], dtype=torch.uint8), [5, 7, 9])",
    "torch.unravel_index(torch.tensor([], dtype=torch.int64), (3, 2))",
    "torch.unravel_index(torch.tensor([1]), ())",
    "torch.unravel_index(torch.tensor([1.0]), (3, 2))",
    "torch.unravel_index(torch.tensor([True]), (3, 2))",
    "torch.unravel_index(torch.tensor([1]), (3, -2))",
    "torch.unravel_index(torch.tensor([1]), (3.0, 2))",
    "torch.unravel_index(torch.tensor([0]), (0, 2))",
]


def _outcome(src, lib):
    try:
        r = eval(src, {"torch": lib})
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return type(e).__name__, str(e).split(":")[0]
    return tuple((str(t.dtype).split(".")[-1], t.tolist()) for t in r)


@pytest.mark.parametrize("src", CALLS)
def test_as_torch(src):
    assert _outcome(src, gs) == _outcome(src, torch)
