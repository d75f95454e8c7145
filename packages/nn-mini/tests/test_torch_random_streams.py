"""With torch's generator in tensor-core, nn-mini's random parts give torch's numbers after
the same manual_seed: initial weights, dropout masks, DataLoader shuffle orders, samplers
and random_split."""

from __future__ import annotations

import gradstack_nn as gnn
import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn.utils import data as gdata

torch = pytest.importorskip("torch")


def _both(program):
    out = []
    for lib, nn, data in ((gt, gnn, gdata), (torch, torch.nn, torch.utils.data)):
        lib.manual_seed(7)
        out.append(program(lib, nn, data))
    return out


def test_linear_init_and_dropout_masks_are_torch_s():
    def program(lib, nn, data):
        lin = nn.Linear(5, 3)
        drop = nn.Dropout(0.3)
        x = lib.ones(4, 5)
        return (
            np.asarray(lin.weight.tolist()).tolist(),
            np.asarray(drop(x).tolist()).tolist(),
            np.asarray(nn.functional.dropout(x, 0.8).tolist()).tolist(),
        )

    ours, theirs = _both(program)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1:] == theirs[1:]


def test_dataloader_shuffle_and_samplers_are_torch_s():
    def program(lib, nn, data):
        ds = data.TensorDataset(lib.arange(23))
        dl = data.DataLoader(ds, batch_size=5, shuffle=True)
        epochs = [[b[0].tolist() for b in dl] for _ in range(2)]
        split = [list(s) for s in data.random_split(range(10), [3, 7])]
        with_replacement = list(data.RandomSampler(range(5), replacement=True, num_samples=40))
        subset = list(data.SubsetRandomSampler([4, 5, 6, 7]))
        return epochs, split, with_replacement, subset

    ours, theirs = _both(program)
    assert ours == theirs
