"""``torch.save(model)`` / ``torch.load(path, weights_only=False)`` of a whole module run
unchanged under ``import gradstack as torch``, and the safe default refuses the file as torch
2.13's does (Note [Pickled objects, as torch.save] in nn-mini's ``serialization.py``)."""

from __future__ import annotations

import pickle

import gradstack as gs
import pytest

torch = pytest.importorskip("torch")


def test_whole_module_as_torch_programs_write_it(tmp_path):
    for lib in (torch, gs):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.Tanh())
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(model, path)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            lib.load(path)
        again = lib.load(path, weights_only=False)
        assert repr(again) == repr(model)
        assert again[0].weight.tolist() == model[0].weight.tolist()
