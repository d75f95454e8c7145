"""tools/census.py: the out-of-scope rules mean what they say, presence is read at torch's
path, and the use counter reads programs as Note [What counts as a use] says."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("gradstack_census", ROOT / "tools" / "census.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


census = _load()


def _rule(name):
    rule = census.out_of_scope(name)
    return None if rule is None else rule.key


# -- the rules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, key",
    [
        ("torch.cuda.is_available", "cuda"),
        ("torch.Tensor.cuda", "cuda"),
        ("torch.Tensor.pin_memory", "cuda"),
        ("torch.backends.cudnn.benchmark", "cuda"),
        ("torch.Tensor.is_mps", "devices"),
        ("torch.get_autocast_ipu_dtype", "devices"),
        ("torch.mkldnn_convolution", "devices"),
        ("torch.quantize_per_tensor", "quantization"),
        ("torch.qint8", "quantization"),
        ("torch.float8_e4m3fn", "quantization"),
        ("torch.Tensor.q_scale", "quantization"),
        ("torch.jit.script", "jit"),
        ("torch.fx.symbolic_trace", "jit"),
        ("torch.futures.Future", "jit"),
        ("torch.onnx.export", "onnx"),
        ("torch.from_dlpack", "onnx"),
        ("torch.sparse_coo_tensor", "sparse"),
        ("torch.Tensor.to_dense", "sparse"),
        ("torch.Tensor.refine_names", "sparse"),
        ("torch.UntypedStorage", "storage"),
        ("torch.Tensor.data_ptr", "storage"),
        ("torch.view_copy", "view_copy"),
        ("torch.lstm_cell", "aten_internals"),
        ("torch.multiprocessing.spawn", "multiprocessing"),
        ("torch.utils.tensorboard.SummaryWriter", "tensorboard"),
        ("torch.distributed.rpc.init_rpc", "distributed_internals"),
        ("torch.symeig", "deprecated"),
        ("torch.nn.init.xavier_uniform", "deprecated"),
        ("torch.utils.data.IterDataPipe", "datapipes"),
        ("torch._C", "private"),
        ("torch.nn.functional.Tensor", "private"),
    ],
)
def test_a_rule_puts_its_names_out_of_scope(name, key):
    assert _rule(name) == key


@pytest.mark.parametrize(
    "name",
    [
        # names that look like an out-of-scope group's and are not
        "torch.trace",  # a matrix's trace, not tracing
        "torch.quantile",  # a statistic, not quantization
        "torch.nanquantile",
        "torch.sum",  # the observability rule's torch.SUM is case-sensitive
        "torch.Tensor.get_device",  # -1 on the CPU
        "torch.Tensor.storage_offset",  # a view's offset
        "torch.narrow_copy",  # not a view op's _copy form
        "torch.nn.init.xavier_uniform_",
        "torch.__version__",
        "torch.distributed.all_reduce",
        "torch.autograd.graph.saved_tensors_hooks",
        "torch.inf",
        "torch.bfloat16",
        "torch.complex64",
    ],
)
def test_in_scope_names_match_no_rule(name):
    assert _rule(name) is None


def test_every_rule_has_a_reason_and_names_something():
    table = census.census()
    used = {e.rule.key for entries in table.values() for e in entries if e.rule is not None}
    for rule in census.RULES:
        assert len(rule.reason) > 30, rule.key
    # every rule but those that concern names outside the census' namespaces matches one
    outside = {"multiprocessing", "tensorboard", "distributed_internals"}
    assert used >= set(census.RULES_BY_KEY) - outside


# -- the names --------------------------------------------------------------------------


def test_public_names_are_torch_s_own():
    nn = census.torch_names("torch.nn")
    assert "Linear" in nn and "Module" in nn
    lr = census.torch_names("torch.optim.lr_scheduler")
    assert "StepLR" in lr
    assert "Optimizer" not in lr  # torch.optim's, imported there
    assert "Optional" not in census.torch_names("torch.nn.init")  # typing's
    assert "view" in census.torch_names("torch.Tensor")
    assert "_version" not in census.torch_names("torch.Tensor")
    dist = census.torch_names("torch.distributed")
    assert set(dist) <= set(census.DISTRIBUTED_COMMON) and "all_reduce" in dist


def test_presence_is_the_same_path_under_gradstack():
    assert census.gradstack_has("torch.nn.Linear")
    assert census.gradstack_has("torch.Tensor.view")
    assert census.gradstack_has("torch.nn.functional.relu")
    assert census.gradstack_has("torch.utils.data.dataloader.DataLoader")  # a submodule
    assert census.gradstack_has("torch.inf")
    assert not census.gradstack_has("torch.no_such_name")
    # Note [A stub is not present]: a function that only raises NotImplementedError
    ok, stub = census.resolve("gradstack.linalg.qr")
    if ok and census.is_stub(stub):
        assert not census.gradstack_has("torch.linalg.qr")

    def missing(*args):
        """Not here."""
        raise NotImplementedError("not implemented in gradstack")

    def partial(x):
        if x:
            raise NotImplementedError
        return x

    assert census.is_stub(missing) and not census.is_stub(partial)
    assert not census.is_stub(census.gradstack_has)
    assert not census.gradstack_has("torch.Tensor.no_such_method")


# -- the uses ---------------------------------------------------------------------------

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import matplotlib.pyplot as plt
from torch.utils.data import DataLoader

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return F.relu(self.fc(x.view(-1, 4)))

a = torch.randn(3, 4)
b = a.sum(dim=0)
loader = DataLoader([a])
plt.scatter([1], [2])
values = torch.topk(a, 2).values
c = {}.items()
d = unknown_thing.unsqueeze(0)
"""


def _count(sources):
    counter = census.UseCounter()
    counter.count_source(sources)
    return counter.counts


def test_the_uses_of_a_program():
    counts = _count([PROGRAM])
    assert counts["torch.nn.Module"] == 1
    assert counts["torch.nn.Linear"] == 1
    assert counts["torch.nn.functional.relu"] == 1
    assert counts["torch.randn"] == 1
    assert counts["torch.Tensor.view"] == 1  # forward's parameter is a tensor
    assert counts["torch.Tensor.sum"] == 1  # a is torch.randn's result
    assert counts["torch.Tensor.unsqueeze"] == 1  # only a tensor has unsqueeze
    assert counts["torch.utils.data.DataLoader"] == 2  # the import and the call
    assert counts["(module).torch.nn"] == 1
    assert counts["(module).torch.nn.functional"] == 1
    assert counts["(module).torch.utils.data"] == 1
    assert "torch.Tensor.scatter" not in counts  # matplotlib's
    assert "torch.Tensor.values" not in counts  # topk's named tuple
    assert "torch.Tensor.items" not in counts


def test_notebook_cells_and_d2l_chapters():
    notebook = json.dumps(
        {
            "cells": [
                {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n"]},
                {"cell_type": "markdown", "source": "torch.zeros is not code here"},
                {"cell_type": "code", "source": "x = torch.ones(2)\n!pip install foo\n"},
                {"cell_type": "code", "source": "this is not python"},
            ]
        }
    )
    counts = _count(census.program_sources("a.ipynb", notebook))
    assert counts == {"torch.ones": 1}
    chapter = "\n".join(
        [
            "```{.python .input}",
            "%%tab pytorch",
            "import torch",
            "```",
            "```{.python .input}",
            "%%tab mxnet",
            "from mxnet.gluon import nn",
            "nn.Dense(3)",
            "```",
            "```{.python .input}",
            "#@tab all",
            "torch.zeros(3)",
            "```",
            "```{.python .input}",
            "torch.ones(3)",  # untagged: MXNet's
            "```",
        ]
    )
    counts = _count(census.program_sources("chapter.md", chapter + "\n"))
    assert counts == {"torch.zeros": 1}


def test_a_corpus_from_a_bare_git_directory(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "train.py").write_text("import torch\ntorch.manual_seed(0)\n")
    (work / "notes.txt").write_text("torch.zeros")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    subprocess.run([*git, "-C", str(work), "add", "."], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "x"], check=True)
    usage = census.scan([work / ".git"])
    (repo,) = usage["repositories"]
    assert repo["programs"] == 1 and len(repo["commit"]) == 40
    assert usage["counts"] == {"torch.manual_seed": 1}
    uses = census.weigh(usage)
    assert [(u.name, u.count, u.present, u.rule) for u in uses] == [
        ("torch.manual_seed", 1, True, None)
    ]
