"""gradstack.backends and gradstack.accelerator answer as torch does on a CPU-only machine."""

from __future__ import annotations

import gradstack
import pytest

torch = pytest.importorskip("torch")


def test_accelerator_probes_match_torch_without_a_gpu():
    assert gradstack.accelerator.is_available() is torch.accelerator.is_available() is False
    assert gradstack.accelerator.current_accelerator() is None
    assert gradstack.accelerator.device_count() == torch.accelerator.device_count() == 0
    for call in ("current_device_index", "synchronize"):
        with pytest.raises(RuntimeError, match="none is available"):
            getattr(gradstack.accelerator, call)()
        with pytest.raises(RuntimeError, match="none is available"):
            getattr(torch.accelerator, call)()


def test_backends_flags_can_be_set_and_read_back():
    import gradstack.backends.cudnn as cudnn

    saved = (cudnn.deterministic, cudnn.benchmark)
    try:
        assert (cudnn.deterministic, cudnn.benchmark) == (
            torch.backends.cudnn.deterministic,
            torch.backends.cudnn.benchmark,
        )
        gradstack.backends.cudnn.deterministic = True
        gradstack.backends.cudnn.benchmark = False
        assert cudnn.deterministic is True
    finally:
        cudnn.deterministic, cudnn.benchmark = saved
    assert gradstack.backends.cudnn.enabled is torch.backends.cudnn.enabled
    assert gradstack.backends.cudnn.is_available() is False
    assert gradstack.backends.cudnn.version() is None
    assert gradstack.backends.cuda.matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32
    assert gradstack.backends.cuda.is_built() is False
    assert gradstack.backends.mps.is_available() is torch.backends.mps.is_available()
    assert gradstack.backends.mps.is_built() is False


def test_the_device_pick_idiom_gives_the_cpu():
    device = (
        gradstack.accelerator.current_accelerator()
        if gradstack.accelerator.is_available()
        else gradstack.device("cpu")
    )
    assert device == gradstack.get_default_device()
    assert gradstack.zeros(2, device=device).device == device


def test_random_module_is_torch_s():
    import gradstack.random as grandom

    assert sorted(grandom.__all__) == sorted(
        n for n in ("Generator", "default_generator", "fork_rng", "get_rng_state",
                    "initial_seed", "manual_seed", "seed", "set_rng_state")
        if hasattr(torch.random, n)
    )  # fmt: skip
    gradstack.manual_seed(5)
    torch.manual_seed(5)
    with gradstack.random.fork_rng():
        inside = gradstack.rand(3).tolist()
    with torch.random.fork_rng():
        torch_inside = torch.rand(3).tolist()
    assert inside == torch_inside == gradstack.rand(3).tolist() == torch.rand(3).tolist()
