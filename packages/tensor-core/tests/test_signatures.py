"""The argument checks made from torch's signatures (``_signatures.py``, issue 36): a wrong
type is a TypeError naming the argument, before any value is read; every type the
signature allows still passes, with the op's value."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_tensor import _signatures
from gradstack_tensor.extension import checked_arguments


def test_checker_tests_each_type():
    check = _signatures.checker(
        "f", "int a, int[] b, size c, float d, Scalar e, bool f, Tensor g, str h, int? i", 0
    )
    good = (
        np.int64(2),
        (1, np.int32(2)),
        [3],
        np.float32(1.5),
        gt.tensor([2.0]),
        np.bool_(True),
        gt.zeros(1),
        "x",
        None,
    )
    check(*good)
    check(1, 2, (), 2, 3, False, gt.zeros(()), "", 4)  # an int for int[] (torch's int[1])
    bad = {
        "a": [1.5, True, None, "1", gt.tensor(1.0)],
        "b": [1.5, [1.5], None, ["a"]],
        "c": [3, None, [[1]]],
        "d": [None, "1", [1.0], object()],
        "e": [gt.zeros(2), None, "1"],
        "f": [1, None, 0.0],
        "g": [1.0, [1.0], None, np.zeros(1)],
        "h": [1, None],
        "i": [1.5, "1"],
    }
    names = "abcdefghi"
    for position, name in enumerate(names):
        for value in bad[name]:
            args = list(good)
            args[position] = value
            with pytest.raises(TypeError, match=f"f\\(\\): argument '{name}' \\(position "):
                check(*args)
    check(gt.tensor(3), *good[1:])  # an integer tensor of one element is an int


def test_keywords_are_checked_and_defaults_are_not():
    @checked_arguments("g", "Tensor input, int n, bool flag", first=0)
    def g(input, n=1, flag=False):
        return input * n

    assert g(gt.ones(1)).tolist() == [1.0]
    assert g(gt.ones(1), flag=True, n=3).tolist() == [3.0]
    with pytest.raises(TypeError, match="argument 'flag'"):
        g(gt.ones(1), flag=1)
    with pytest.raises(TypeError, match="argument 'input' \\(position 1\\) must be Tensor"):
        g([1.0])


def test_ops_refuse_what_torch_refuses():
    t = gt.arange(6.0).reshape(2, 3)
    for call, name in [
        (lambda: t.tril(1.5), "diagonal"),
        (lambda: t.chunk(2.5), "chunks"),
        (lambda: gt.chunk(t, 2.5), "chunks"),
        (lambda: t.split(1.5), "split_sizes"),
        (lambda: t.topk(None), "k"),
        (lambda: t.rot90(1.5), "k"),
        (lambda: t.rot90(1, 0), "dims"),
        (lambda: t.histc(2.5), "bins"),
        (lambda: t.median(None), "dim"),
        (lambda: gt.median(t, None), "dim"),
        (lambda: t.std(0, 1.5), "unbiased"),
        (lambda: t.squeeze(None), "dim"),
        (lambda: t.copysign([[1.0]]), "other"),
        (lambda: t.ldexp(1.5), "other"),
        (lambda: t.new_full(3, 1.0), "size"),
        (lambda: t.is_pinned([1]), "device"),
        (lambda: gt.where(t > 1, None, t), "input"),
        (lambda: gt.where(t > 1, t), "condition alone"),
        (lambda: t.transpose(0, 1.5), "dim1"),
        (lambda: t.flatten(None), "start_dim"),
        (lambda: t.permute(0, None), "dims"),
        (lambda: t.mm(1.5), "mat2"),
        (lambda: gt.arange(t), "end"),
        (lambda: gt.full(t, 1.0), "size"),
    ]:
        with pytest.raises(TypeError, match=name if " " in name else f"argument '{name}'"):
            call()


def test_the_calls_torch_takes_still_work():
    t = gt.arange(6.0).reshape(2, 3)
    assert [p.tolist() for p in t.chunk(np.int64(2), 1)] == [
        [[0.0, 1.0], [3.0, 4.0]],
        [[2.0], [5.0]],
    ]
    assert t.tril(gt.tensor(0)).tolist() == [[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]]
    assert [p.shape[0] for p in t.split([1, 1])] == [1, 1]
    assert t.median().item() == 2.0
    assert t.median(dim=1).values.tolist() == [1.0, 4.0]
    assert gt.nanmedian(t, 0, keepdim=True).values.shape == (1, 3)
    assert t.std(0, True).tolist() == t.std(0).tolist()
    assert t.std(0, False, True).shape == (1, 3)
    assert gt.std_mean(t, 0)[0].tolist() == t.std(0).tolist()
    assert t.squeeze().shape == (2, 3) and gt.zeros(1, 2).squeeze_().shape == (2,)
    assert gt.where(t > 1)[0].tolist() == [0, 1, 1, 1]
    assert gt.where(t > 1, t, 0.0).tolist() == [[0.0, 0.0, 2.0], [3.0, 4.0, 5.0]]
    assert t.rot90(1, [0, 1]).shape == (3, 2)
    assert t.new_full((2,), 7).tolist() == [7.0, 7.0]
    assert t.nan_to_num(None).tolist() == t.tolist()
    assert t.norm(None).item() == pytest.approx(t.norm().item())
    assert gt.arange(gt.tensor(3)).tolist() == [0, 1, 2]
    assert gt.full([2], gt.tensor(1.5)).tolist() == [1.5, 1.5]
    assert t.repeat_interleave(2).shape == (12,)
    assert gt.repeat_interleave(gt.tensor([1, 2])).tolist() == [0, 1, 1]
    seq = [0]
    seq += gt.tensor([1, 2])  # Python's list extension, as torch
    assert [int(v) for v in seq] == [0, 1, 2]
