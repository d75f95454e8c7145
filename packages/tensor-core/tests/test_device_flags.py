"""The device, layout and kind flags of a tensor answer as torch 2.13's for a CPU tensor
(Note [The other devices' and layouts' flags] in ``_tensor.pyx``)."""

from __future__ import annotations

import gradstack_tensor as gt
import pytest

torch = pytest.importorskip("torch")

FLAGS = [
    "is_cpu",
    "is_cuda",
    "is_xpu",
    "is_mps",
    "is_xla",
    "is_ipu",
    "is_maia",
    "is_mtia",
    "is_vulkan",
    "is_mkldnn",
    "is_nested",
    "is_quantized",
    "is_sparse",
    "is_sparse_csr",
]


@pytest.mark.parametrize("flag", FLAGS)
def test_flag_as_torch(flag):
    for make_t, make_g in [
        (lambda: torch.ones(2, 3), lambda: gt.ones(2, 3)),
        (lambda: torch.ones(3, 2).t(), lambda: gt.ones(3, 2).t()),
        (lambda: torch.zeros(0, dtype=torch.int64), lambda: gt.zeros(0, dtype=gt.int64)),
    ]:
        assert getattr(make_g(), flag) is getattr(make_t(), flag)


def test_flags_are_read_only():
    with pytest.raises(AttributeError):
        gt.ones(1).is_xpu = True
