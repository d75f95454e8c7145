"""A forward on the meta device records torch's graph (Note [Meta tensors fold as
contiguous ones], derivatives/_layout.py): the formulas that ask whether a reshape copies
(matmul's folded operands, reshape's ViewBackward0 / UnsafeViewBackward0) answer for the
contiguous tensors torch's meta ops give, without reading the meta tensor's array."""

import gradstack_autograd  # noqa: F401  (installs the autograd layer)
import gradstack_tensor as gt
import pytest
from gradstack_autograd.derivatives._layout import layout_of
from gradstack_tensor.extension import data_of

torch = pytest.importorskip("torch")

CASES = {
    "reshape": lambda L, x, w, b, a: x.reshape(-1, 32),
    "flatten": lambda L, x, w, b, a: x.flatten(0, 1),
    "reshape_0d_batch": lambda L, x, w, b, a: x[:0].reshape(0, 32),
    "matmul_3d_2d": lambda L, x, w, b, a: x @ w.t(),
    "linear": lambda L, x, w, b, a: L.nn.functional.linear(x, w),
    "matmul_2d_3d": lambda L, x, w, b, a: a @ b,
    "matmul_3d_3d": lambda L, x, w, b, a: x @ b[:2],
    "matmul_1d_3d": lambda L, x, w, b, a: a[0] @ b,
    "matmul_3d_1d": lambda L, x, w, b, a: x @ w[0],
}


def _inputs(L):
    shapes = {"x": (2, 7, 32), "w": (4, 32), "b": (3, 32, 5), "a": (4, 32)}
    return [L.empty(*s, device="meta", requires_grad=True) for s in shapes.values()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_meta_forward_records_torchs_node(name):
    import gradstack as gs

    want = CASES[name](torch, *_inputs(torch))
    got = CASES[name](gs, *_inputs(gs))
    assert got.is_meta and tuple(got.shape) == tuple(want.shape)
    assert got.grad_fn.name() == want.grad_fn.name()


@pytest.mark.parametrize("shape", [(2, 3), (4, 0, 5), (), (3, 1, 2)])
@pytest.mark.parametrize("dtype", [gt.float32, gt.float64, gt.int64])
def test_layout_of_a_meta_tensor_has_contiguous_strides(shape, dtype):
    real = gt.zeros(shape, dtype=dtype)
    stand_in = layout_of(real.to("meta"))
    assert stand_in.shape == tuple(shape) and stand_in.dtype == real.numpy().dtype
    want = torch.empty(shape, device="meta", dtype=getattr(torch, dtype.name))
    assert stand_in.strides == tuple(s * want.element_size() for s in want.stride())
    assert not stand_in.flags.writeable
    assert layout_of(real) is data_of(real)  # a real tensor's own array
