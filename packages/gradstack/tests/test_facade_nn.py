"""The nn, optim and utils.data names are where torch keeps them."""

from __future__ import annotations

import importlib

import gradstack as torch
import gradstack_nn
import pytest

real_torch = pytest.importorskip("torch")


def test_modules_import_like_torch():
    for name in [
        "gradstack.nn.utils",
        "gradstack.nn.utils.clip_grad",
        "gradstack.optim.lr_scheduler",
        "gradstack.utils",
        "gradstack.utils.data",
    ]:
        importlib.import_module(name)
    from gradstack.optim.lr_scheduler import CosineAnnealingLR, LRScheduler, StepLR
    from gradstack.utils.data import DataLoader, TensorDataset, random_split

    assert StepLR is gradstack_nn.optim.lr_scheduler.StepLR
    assert issubclass(CosineAnnealingLR, LRScheduler)
    assert DataLoader is gradstack_nn.utils.data.DataLoader
    assert TensorDataset is gradstack_nn.utils.data.TensorDataset
    assert random_split is gradstack_nn.utils.data.random_split


@pytest.mark.parametrize(
    "path",
    [
        "nn.LazyLinear",
        "nn.Embedding",
        "nn.LayerNorm",
        "nn.BatchNorm1d",
        "nn.GELU",
        "nn.SiLU",
        "nn.ModuleDict",
        "nn.ParameterList",
        "nn.DataParallel",
        "nn.BCELoss",
        "nn.BCEWithLogitsLoss",
        "nn.SmoothL1Loss",
        "nn.HuberLoss",
        "nn.UninitializedParameter",
        "nn.functional.one_hot",
        "nn.functional.gelu",
        "nn.functional.silu",
        "nn.functional.layer_norm",
        "nn.functional.batch_norm",
        "nn.functional.embedding",
        "nn.functional.binary_cross_entropy",
        "nn.functional.binary_cross_entropy_with_logits",
        "nn.functional.smooth_l1_loss",
        "nn.functional.huber_loss",
        "nn.functional.logsigmoid",
        "nn.init.orthogonal_",
        "nn.init.trunc_normal_",
        "nn.utils.clip_grad_norm_",
        "nn.utils.clip_grad_value_",
        "optim.Adam",
        "optim.AdamW",
        "optim.RMSprop",
        "optim.Adagrad",
        "optim.lr_scheduler.StepLR",
        "optim.lr_scheduler.MultiStepLR",
        "optim.lr_scheduler.ExponentialLR",
        "optim.lr_scheduler.CosineAnnealingLR",
        "optim.lr_scheduler.LambdaLR",
        "optim.lr_scheduler.ReduceLROnPlateau",
        "utils.data.Dataset",
        "utils.data.IterableDataset",
        "utils.data.TensorDataset",
        "utils.data.Subset",
        "utils.data.ConcatDataset",
        "utils.data.DataLoader",
        "utils.data.random_split",
        "utils.data.SequentialSampler",
        "utils.data.RandomSampler",
        "utils.data.BatchSampler",
        "utils.data.SubsetRandomSampler",
        "utils.data.default_collate",
        "utils.data.get_worker_info",
    ],
)
def test_every_name_resolves_in_gradstack_and_in_torch(path):
    obj_g, obj_t = torch, real_torch
    for part in path.split("."):
        obj_g, obj_t = getattr(obj_g, part), getattr(obj_t, part)
    assert obj_g is not None and obj_t is not None


def test_every_all_name_resolves():
    import gradstack.nn.utils
    import gradstack.optim.lr_scheduler
    import gradstack.utils.data

    for module in (
        gradstack.nn.utils,
        gradstack.optim,
        gradstack.optim.lr_scheduler,
        gradstack.utils,
        gradstack.utils.data,
    ):
        for name in module.__all__:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"


def test_a_torch_training_loop_runs_unchanged():
    """The usual program: DataLoader over a TensorDataset, Adam, a scheduler, clipping."""
    torch.manual_seed(0)
    x = torch.randn(64, 3)
    y = (x.sum(1) > 0).long()
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(x, y), batch_size=16, shuffle=True
    )
    model = torch.nn.Sequential(
        torch.nn.LazyLinear(8), torch.nn.LayerNorm(8), torch.nn.GELU(), torch.nn.Linear(8, 2)
    )
    model(x[:1])
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
    losses = []
    for _ in range(10):
        for xb, yb in loader:
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        sched.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert sched.get_last_lr() == [0.05 * 0.25]
