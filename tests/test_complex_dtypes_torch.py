"""complex64 and complex128 against torch 2.13: creation, promotion, printing, the complex
functions (real/imag, view_as_real/view_as_complex, conj, angle, abs, polar, complex), the
arithmetic and reductions complex code uses, and torch's refusals."""

from __future__ import annotations

import math

import gradstack as gs
import numpy as np
import pytest

torch = pytest.importorskip("torch")


def _same(a, t, rtol=1e-6, atol=1e-6):
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (a.dtype, t.dtype)
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_allclose(
        a.resolve_conj().resolve_neg().numpy(),
        t.resolve_conj().resolve_neg().numpy(),
        rtol=rtol,
        atol=atol,
    )


def _both(src):
    """``src`` evaluated with ``torch`` bound to gradstack and to torch."""
    return eval(src, {"torch": gs, "math": math}), eval(src, {"torch": torch, "math": math})


# ---------------------------------------------------------------------------------------
# dtypes, creation, promotion


def test_dtype_names_and_predicates():
    assert gs.complex64 is gs.cfloat and gs.complex128 is gs.cdouble
    for name in ("complex64", "complex128"):
        d, td = getattr(gs, name), getattr(torch, name)
        assert repr(d) == repr(td).replace("torch", "gradstack")
        assert (d.is_complex, d.is_floating_point, d.is_signed, d.itemsize) == (
            td.is_complex,
            td.is_floating_point,
            td.is_signed,
            td.itemsize,
        )
        assert d.to_real().name == str(td.to_real()).split(".")[-1]
    assert gs.float32.to_complex() is gs.complex64
    assert gs.float64.to_complex() is gs.complex128


CREATION = [
    "torch.tensor([1+2j, 3-1j])",
    "torch.tensor([1+2j, 3-1j], dtype=torch.complex128)",
    "torch.tensor([[1, 2j], [0.5, 3]])",
    "torch.tensor(2j)",
    "torch.zeros(2, 3, dtype=torch.complex64)",
    "torch.ones(2, dtype=torch.cdouble)",
    "torch.full((2,), 1 + 1j)",
    "torch.full((2,), 1 + 1j, dtype=torch.complex128)",
    "torch.ones(3).to(torch.complex64)",
    "torch.tensor([1+2j]).to(torch.complex128)",
    "torch.ones(2).cfloat()",
    "torch.ones(2).cdouble()",
    "torch.zeros_like(torch.tensor([1j]))",
    "torch.empty(2, dtype=torch.complex64).zero_()",
]


@pytest.mark.parametrize("src", CREATION)
def test_creation_as_torch(src):
    a, t = _both(src)
    _same(a, t, 0, 0)


def test_tensor_from_numpy_complex_keeps_its_dtype():
    arr = np.array([1 + 2j], dtype=np.complex128)
    assert gs.tensor(arr).dtype is gs.complex128
    assert gs.from_numpy(arr.astype(np.complex64)).dtype is gs.complex64


def test_randn_complex_draws_torchs_numbers():
    for dtype in ("complex64", "complex128"):
        for shape in ((3,), (4, 20)):
            gs.manual_seed(3)
            torch.manual_seed(3)
            a = gs.randn(*shape, dtype=getattr(gs, dtype))
            t = torch.randn(*shape, dtype=getattr(torch, dtype))
            _same(a, t, 0, 0)


PROMOTION = [
    ("float64", "complex64", "complex128"),
    ("float32", "complex64", "complex64"),
    ("float16", "complex64", "complex64"),
    ("int64", "complex64", "complex64"),
    ("bool", "complex128", "complex128"),
    ("complex64", "complex128", "complex128"),
    ("float64", "complex128", "complex128"),
]


@pytest.mark.parametrize("a, b, want", PROMOTION)
def test_promote_types_as_torch(a, b, want):
    assert gs.promote_types(getattr(gs, a), getattr(gs, b)).name == want
    assert str(torch.promote_types(getattr(torch, a), getattr(torch, b))) == f"torch.{want}"


RESULT_TYPES = [
    "torch.result_type(torch.ones(2), 1j)",
    "torch.result_type(torch.ones(2, dtype=torch.float64), 1j)",
    "torch.result_type(torch.ones(2, dtype=torch.int64), 1j)",
    "torch.result_type(torch.ones(2), torch.tensor(1j, dtype=torch.complex128))",
    "torch.result_type(torch.ones(2, dtype=torch.float64), torch.tensor(1j))",
    "(torch.ones(2) * 1j).dtype",
    "(torch.ones(2, dtype=torch.float64) + torch.tensor([1j])).dtype",
    "(torch.tensor(1 + 2j) + torch.ones(2)).dtype",
    "(torch.ones(2, dtype=torch.int64) * 1j).dtype",
    "(torch.tensor([1j]) / 2).dtype",
    "(torch.tensor([1+1j]).abs()).dtype",
    "(torch.tensor([1+1j], dtype=torch.complex128).angle()).dtype",
    "torch.tensor([1j]).is_complex()",
    "torch.tensor([1j]).is_floating_point()",
    "torch.is_complex(torch.ones(1))",
    "torch.tensor([1j]).is_signed()",
]


@pytest.mark.parametrize("src", RESULT_TYPES)
def test_result_types_as_torch(src):
    a, t = _both(src)
    assert str(a).replace("gradstack", "torch") == str(t)


# ---------------------------------------------------------------------------------------
# printing

REPRS = [
    "torch.tensor([1+2j, 3-1j])",
    "torch.tensor([1+2j, 3-1j], dtype=torch.complex128)",
    "torch.tensor(1+2j)",
    "torch.tensor([1.123456+2j, 300-1e-5j])",
    "torch.tensor([1e10+2j, 3-1j])",
    "torch.tensor([[1.5+2j, -3.25-1j], [0j, 100+0.5j]], dtype=torch.complex128)",
    "torch.tensor([float('nan')+2j, float('inf')-1j])",
    "torch.tensor([-0.0-0.0j, 0.5j])",
    "torch.tensor([], dtype=torch.complex64)",
    "torch.zeros(0, 2, dtype=torch.complex128)",
    "torch.arange(12.).reshape(2, 3, 2).to(torch.complex64) * 1j",
    "torch.arange(2000.).to(torch.complex64) * (1 - 2j)",
    "torch.arange(30.).to(torch.complex64) / 7",
    "torch.tensor([1+2j, 3-1j], requires_grad=True)",
    "torch.tensor([1+2j, 3-1j], requires_grad=True) * 2",
]


@pytest.mark.parametrize("src", REPRS)
def test_repr_as_torch(src):
    a, t = _both(src)
    assert repr(a).replace("gradstack", "torch") == repr(t)


# ---------------------------------------------------------------------------------------
# the complex functions and the arithmetic

VALUES = [
    "torch.tensor([1+2j, 3-1j]).real",
    "torch.tensor([1+2j, 3-1j]).imag",
    "torch.real(torch.tensor([[1+2j], [3-1j]], dtype=torch.complex128))",
    "torch.imag(torch.tensor([[1+2j], [3-1j]]))",
    "torch.tensor([1.5, -2.]).real",
    "torch.view_as_real(torch.tensor([1+2j, 3-1j]))",
    "torch.view_as_real(torch.tensor([[1+2j, 3-1j]]).t())",
    "torch.view_as_real(torch.tensor(1+2j, dtype=torch.complex128))",
    "torch.view_as_complex(torch.tensor([[1., 2.], [3., 4.]]))",
    "torch.view_as_complex(torch.ones(2, 4, dtype=torch.float64)[:, :2])",
    "torch.tensor([1+2j, 3-1j]).conj()",
    "torch.conj(torch.tensor([1.5, 2]))",
    "torch.tensor([1+2j, 3-1j]).conj_physical()",
    "torch.conj_physical(torch.tensor([1+2j]))",
    "torch.tensor([1+2j, 3-1j]).conj().resolve_conj()",
    "torch.resolve_conj(torch.tensor([1j]))",
    "torch.tensor([[1+2j, 3-1j]]).mH",
    "torch.tensor([[1+2j, 3-1j]]).H",
    "torch.tensor([[1+2j, 3-1j]]).adjoint()",
    "torch.tensor([1+2j, -3-1j, 0j]).angle()",
    "torch.angle(torch.tensor([1.5, -2., 0.]))",
    "torch.tensor([1+2j, 3-1j]).abs()",
    "torch.abs(torch.tensor([3+4j], dtype=torch.complex128))",
    "torch.tensor([1+2j, 0j, -1j]).sgn()",
    "torch.polar(torch.tensor([1., 2.]), torch.tensor([0.5, -2.]))",
    "torch.polar(torch.tensor([[1.], [2.]], dtype=torch.float64),"
    " torch.tensor([0.5, 1.], dtype=torch.float64))",
    "torch.complex(torch.tensor([1., 2.]), torch.tensor([0.5, 1.]))",
    "torch.complex(torch.tensor([[1.]]), torch.tensor([0.5, 1.]))",
    "torch.tensor([1+2j, 3-1j]) * torch.tensor([2-1j, 1j])",
    "torch.tensor([1+2j, 3-1j]) / torch.tensor([2-1j, 1j])",
    "torch.tensor([1+2j, 3-1j]) - 1",
    "torch.tensor([1+2j, 3-1j]) + torch.ones(2, dtype=torch.float64)",
    "torch.tensor([1., 2.]) * (2 - 1j)",
    "1 / torch.tensor([1+2j, 3-1j])",
    "torch.tensor([1+2j, 3-1j]) ** 2",
    "torch.tensor([1+2j, 3-1j]) ** 0.5",
    "torch.tensor([1+2j, 3-1j]).pow(torch.tensor([2., 0.5]))",
    "2 ** torch.tensor([1+2j, 3-1j])",
    "-torch.tensor([1+2j, 3-1j])",
    "torch.tensor([1+2j, 3-1j]).exp()",
    "torch.tensor([1+2j, 3-1j]).log()",
    "torch.tensor([1+2j, 3-1j]).sqrt()",
    "torch.tensor([1+2j, 3-1j]).sin()",
    "torch.tensor([1+2j, 3-1j]).tanh()",
    "torch.tensor([1+2j, 3-1j]).sigmoid()",
    "torch.tensor([1+2j, 3-1j]).rsqrt()",
    "torch.tensor([1+2j, 3-1j]).reciprocal()",
    "torch.tensor([1+2j, 3-1j]).square()",
    "torch.tensor([1+2j, 3-1j]).mul_(2j)",
    "torch.tensor([1+2j, 3-1j]).add_(1)",
    "torch.tensor([1+2j, 3-1j]).exp_()",
    "torch.tensor([[1+2j, 3-1j]]) @ torch.tensor([[1j], [2.+0j]])",
    "torch.tensor([[1+2j, 3-1j], [0j, 1+0j]]) @ torch.tensor([1+0j, 2j])",
    "torch.tensor([1+2j, 3-1j]).dot(torch.tensor([1j, 1.+0j]))",
    "torch.vdot(torch.tensor([1+2j, 3-1j]), torch.tensor([1j, 1.+0j]))",
    "torch.tensor([1+2j, 3-1j]).sum()",
    "torch.tensor([[1+2j, 3-1j], [1j, 2.+0j]]).sum(0)",
    "torch.tensor([1+2j, 3-1j]).mean()",
    "torch.tensor([[1+2j, 3-1j], [1j, 2.+0j]]).mean(1, keepdim=True)",
    "torch.tensor([1+2j, 3-1j]).prod()",
    "torch.tensor([1+2j, 3-1j]).cumsum(0)",
    "torch.tensor([1+2j, 3-1j, 1j]).var()",
    "torch.tensor([1+2j, 3-1j]).norm()",
    "torch.linalg.vector_norm(torch.tensor([1+2j, 3-1j]), 1)",
    "torch.cat([torch.tensor([1+2j]), torch.tensor([1.])])",
    "torch.stack([torch.tensor([1+2j]), torch.tensor([3j])])",
    "torch.where(torch.tensor([True, False]), torch.tensor([1+2j, 3-1j]), 0.)",
    "torch.tensor([1+2j, 3-1j]).flip(0)",
    "torch.tensor([1+2j, 3-1j]) == torch.tensor([1+2j, 3+1j])",
    "torch.isclose(torch.tensor([1+2j]), torch.tensor([1+2.000001j]))",
]


@pytest.mark.parametrize("src", VALUES)
def test_values_as_torch(src):
    a, t = _both(src)
    _same(a, t)


def test_real_imag_and_view_as_real_are_views():
    z = gs.tensor([1 + 2j, 3 - 1j])
    z.real.mul_(10)
    z.imag.add_(1)
    assert z.tolist() == [10 + 3j, 30 + 0j]
    r = gs.view_as_real(z)
    r[0, 1] = -5.0
    assert z[0].item() == 10 - 5j
    assert gs.view_as_complex(r).data_ptr() == z.data_ptr()


def test_conj_is_a_lazy_view():
    # Note [The conjugate and negative bits]; tests/test_conj_bit_torch.py has the rest
    z = gs.tensor([1 + 2j])
    assert z.conj().is_conj() and gs.is_conj(z.conj()) and not z.is_neg()
    assert z.conj().tolist() == [1 - 2j] and z.tolist() == [1 + 2j]


def test_finfo_of_a_complex_dtype_is_its_parts():
    for name in ("complex64", "complex128"):
        a, t = gs.finfo(getattr(gs, name)), torch.finfo(getattr(torch, name))
        assert (a.eps, a.max, a.tiny, a.bits, a.dtype) == (t.eps, t.max, t.tiny, t.bits, t.dtype)


ERRORS = [
    "torch.view_as_real(torch.ones(2))",
    "torch.view_as_complex(torch.ones(3))",
    "torch.view_as_complex(torch.ones(3, 2).t())",
    "torch.view_as_complex(torch.ones(2, 2, dtype=torch.int64))",
    "torch.view_as_complex(torch.ones(5)[1:].view(2, 2))",
    "torch.ones(2).imag",
    "torch.polar(torch.ones(2), torch.ones(2, dtype=torch.float64))",
    "torch.polar(torch.ones(2, dtype=torch.int32), torch.ones(2, dtype=torch.int32))",
    "torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64))",
    "torch.complex(torch.ones(3), torch.ones(2))",
    "torch.tensor([1+2j]).clamp(0)",
    "torch.tensor([1+2j]).relu()",
    "torch.tensor([1+2j]) < 1",
    "torch.tensor([1+2j]) >= torch.tensor([1j])",
    "torch.tensor([1+2j]).max()",
    "torch.tensor([1+2j]).amax()",
    "torch.tensor([1+2j]).argmin()",
    "torch.tensor([1+2j]).floor()",
    "torch.tensor([1+2j]).sign()",
    "torch.maximum(torch.tensor([1+2j]), torch.tensor([1j]))",
    ("torch.ones(2).mul_(2j)", "can't be cast to the desired output type"),
    ("torch.ones(2, dtype=torch.int64).add_(torch.tensor([1j]))", "can't be cast"),
    "torch.tensor([1j], requires_grad=True).max()",
]


@pytest.mark.parametrize("src", ERRORS)
def test_errors_as_torch(src):
    src, ours = src if isinstance(src, tuple) else (src, None)
    with pytest.raises(Exception) as te:
        eval(src, {"torch": torch})
    with pytest.raises(type(te.value)) as ge:
        eval(src, {"torch": gs})
    if ours is not None:  # (our words name the dtypes gradstack's way)
        assert ours in str(ge.value) and ours in str(te.value)
        return
    words = str(te.value).split("\n")[0].split(" (")[0]
    # torch's message, or its first words where ours explains more
    assert words[:30].lower() in str(ge.value).lower() or str(ge.value)[:20] in words, (
        str(ge.value),
        str(te.value),
    )
