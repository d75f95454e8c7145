"""gradgradcheck draws its default ``grad_outputs`` from the global generator, as torch.

torch's gradgradcheck makes them with ``torch.testing.make_tensor(low=-1, high=1)``: one
``uniform_`` over the output's shape (twice as wide in the last dim, every other element
kept, with ``gen_non_contig_grad_outputs``).  A program that seeds, runs gradgradcheck and
then draws again (the "Extending PyTorch" page's examples, tests/real_programs) must get
torch's numbers afterwards.
"""

from __future__ import annotations

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _after_gradgradcheck(lib, func, shape, **kwargs):
    lib.manual_seed(0)
    x = lib.randn(*shape, dtype=lib.float64, requires_grad=True)
    assert lib.autograd.gradgradcheck(func(lib), (x,), **kwargs) is True
    return lib.randn(5).numpy()


@pytest.mark.parametrize("non_contig", [False, True])
@pytest.mark.parametrize(
    ("name", "func", "shape"),
    [
        ("cube_rows", lambda L: lambda t: (t**3).sum(1), (3, 4)),
        ("sin", lambda L: lambda t: t.sin() * 2, (2, 5)),
        ("two_outputs", lambda L: lambda t: (t.exp(), t * t), (4,)),
        ("scalar", lambda L: lambda t: (t * t).sum(), (3,)),
    ],
)
def test_draws_after_gradgradcheck_match_torch(name, func, shape, non_contig):
    got = _after_gradgradcheck(gs, func, shape, gen_non_contig_grad_outputs=non_contig)
    want = _after_gradgradcheck(torch, func, shape, gen_non_contig_grad_outputs=non_contig)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
