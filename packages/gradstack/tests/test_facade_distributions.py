"""``gradstack.distributions`` and its submodules are where torch keeps them, and are
gradstack-nn-mini's own objects (not copies)."""

from __future__ import annotations

import subprocess
import sys

import gradstack as torch
import gradstack_nn
import pytest

real_torch = pytest.importorskip("torch")


def test_the_public_submodules_are_torchs():
    ours = {name for name in dir(torch.distributions) if not name.startswith("_")}
    for name in dir(real_torch.distributions):
        module = getattr(real_torch.distributions, name)
        if type(module).__name__ == "module" and module.__name__.startswith("torch.distributions."):
            assert name in ours, name
            assert getattr(torch.distributions, name) is getattr(gradstack_nn.distributions, name)


def test_submodule_imports_in_a_fresh_interpreter():
    code = (
        "import gradstack.distributions.constraints as C\n"
        "from gradstack.distributions.normal import Normal\n"
        "from gradstack.distributions.transforms import ExpTransform\n"
        "from gradstack.distributions.kl import register_kl\n"
        "import gradstack, gradstack_nn.distributions as impl\n"
        "assert C is impl.constraints and Normal is impl.Normal\n"
        "assert ExpTransform is impl.ExpTransform and register_kl is impl.register_kl\n"
        "print(Normal(0.0, 1.0).log_prob(gradstack.tensor(0.0)).item())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(
        real_torch.distributions.Normal(0.0, 1.0).log_prob(real_torch.tensor(0.0)).item()
    )


def test_names_match_torch():
    assert set(torch.distributions.__all__) == set(real_torch.distributions.__all__)
