# A short torch program written for gradstack's drop-in tests (issue 35): a test helper
# built on torch.testing.assert_close and make_tensor, printing the failures it catches.
import torch
from torch.testing import assert_close, make_tensor


def check(name, actual, expected, **kwargs):
    try:
        assert_close(actual, expected, **kwargs)
        print(f"{name}: ok")
    except AssertionError as e:
        print(f"{name}: FAILED\n{e}\n")


a = make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-1, high=1)
print(a)
check("identity", a, a.clone())
check("perturbed", a, a + 1e-3)
check("tolerant", a, a + 1e-3, rtol=0, atol=1e-2)
check("dtype", a, a.double())
check("dtype ignored", a, a.double(), check_dtype=False)
check("shape", a, a[:2])
check("ints", torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
check("nan", torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))
check(
    "nan equal",
    torch.tensor([float("nan"), 1.0]),
    torch.tensor([float("nan"), 1.0]),
    equal_nan=True,
)
check("nested", {"w": [a, 1.0]}, {"w": [a, 1.5]})
b = make_tensor(2, 3, dtype=torch.int64, device="cpu", exclude_zero=True)
print(b, (b != 0).all().item())
c = make_tensor(4, dtype=torch.float64, device="cpu", requires_grad=True, noncontiguous=True)
print(c.is_contiguous(), c.requires_grad, c)
