"""Bad arguments raise what torch raises: the same exception type, never numpy's words.

Every op of the op database whose kernel is written in Python (``_impl_elementwise``,
``_impl_reduce``, ``_impl_shape``, ``_impl_linalg``) is called with its valid samples
mutated one argument at a time: an int argument out of range (dims, sizes, indices), a
dim tuple with a repeated dim, a tensor argument of a shape that does not fit or of
another dtype, an input of another shape or dtype.  Whenever torch 2.13 raises, gradstack
must raise the same type with a message free of numpy's phrasing ("for axis",
AxisError, "repeated axis", "tuple index out of range", numpy's broadcast message ...);
whenever torch accepts the call, gradstack must not raise.  Calls on empty tensors are
left out (torch skips most checks when there is nothing to compute).
"""

from __future__ import annotations

import importlib
import re
import warnings

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")


db = importlib.import_module("gradstack_tensor_tests_op_db")

PYTHON_KERNELS = {
    "gradstack_tensor._impl_elementwise",
    "gradstack_tensor._impl_indexing",
    "gradstack_tensor._impl_reduce",
    "gradstack_tensor._impl_shape",
    "gradstack_tensor._impl_linalg",
}
NUMPY_WORDS = re.compile(
    r"for axis|axis \d|AxisError|ufunc|ndarray|tuple index out of range|repeated axis"
    r"|duplicate value in 'axis'|could not be broadcast together with shapes \(|operands could"
    r"|array of shape|dtype\('|object of type|unhashable|zero-size array",
    re.IGNORECASE,
)


def _python_kernel_ops():
    names = []
    for name, info in sorted(db.OP_DB.items()):
        kernel = gt.OPS[name].kernel
        if kernel is None or getattr(kernel, "__module__", "") not in PYTHON_KERNELS:
            continue
        if info.torch_skip:
            continue
        names.append(name)
    return names


def mutations(sample):
    """``(description, sample)`` pairs, each with one bad argument."""
    make = db.SampleInput
    args, kwargs = list(sample.args), dict(sample.kwargs)
    out = []

    def with_arg(i, value, desc):
        new = list(args)
        new[i] = value
        out.append((desc, make(sample.input, tuple(new), kwargs)))

    for i, a in enumerate(args):
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            for v in (9, -9):
                with_arg(i, v, f"arg {i} = {v}")
        if isinstance(a, tuple) and a and all(isinstance(v, int) for v in a):
            with_arg(i, (a[0], a[0]) if len(a) > 1 else (9,), f"arg {i} repeated/out of range")
        if isinstance(a, np.ndarray):
            for shape in ((7,), (2, 7, 1, 3)):
                with_arg(i, np.ones(shape, a.dtype), f"arg {i} of shape {shape}")
            other = np.float32 if a.dtype.kind != "f" else np.int64
            with_arg(i, a.astype(other), f"arg {i} as {np.dtype(other)}")
    for k, v in kwargs.items():
        if k in ("dim", "dims") or (isinstance(v, int) and not isinstance(v, bool)):
            if isinstance(v, tuple):
                bad = [(0, 0), (9,)] if v else [(9,)]
            else:
                bad = [9, -9]
            for b in bad:
                out.append((f"{k}={b}", make(sample.input, tuple(args), {**kwargs, k: b})))
    if isinstance(sample.input, np.ndarray):
        for dt in (np.bool_, np.int64, np.float16, np.uint8):
            if sample.input.dtype != dt:
                bad = make(sample.input.astype(dt), tuple(args), kwargs)
                out.append((f"input as {np.dtype(dt)}", bad))
        for shape in ((7,), (2, 7, 1, 3)):
            out.append(
                (
                    f"input of shape {shape}",
                    make(np.ones(shape, sample.input.dtype), tuple(args), kwargs),
                )
            )
    return out


def _call_gs(info, s):
    x, a, k = db.to_gs(s.input, gt), db.to_gs(s.args, gt), db.to_gs(s.kwargs, gt)
    if info.function:
        return getattr(gt, info.function)(x, *a, **k)
    if info.method:
        return getattr(x, info.method)(*a, **k)
    return info.call(gt, x, *a, **k)


def _call_torch(info, s):
    x, a, k = db.to_torch(s.input, torch), db.to_torch(s.args, torch), db.to_torch(s.kwargs, torch)
    if info.torch_call is not None:
        return info.torch_call(torch, x, *a, **k)
    if info.function:
        return getattr(torch, info.function)(x, *a, **k)
    return getattr(x, info.method)(*a, **k)


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e), str(e)
    return None, None


def _empty(sample):
    return any(isinstance(a, np.ndarray) and a.size == 0 for a in (sample.input, *sample.args))


@pytest.mark.parametrize("name", _python_kernel_ops())
def test_bad_arguments_raise_torchs_exception_type(name):
    info = db.OP_DB[name]
    rng = np.random.default_rng(0)
    problems, checked = [], 0
    for dtype in ("float32", "int64"):
        if dtype not in info.dtypes:
            continue
        for sample in info.samples(dtype, rng)[:12]:
            for desc, bad in mutations(sample):
                if _empty(bad):
                    continue
                theirs, their_msg = _outcome(lambda bad=bad: _call_torch(info, bad))
                ours, our_msg = _outcome(lambda bad=bad: _call_gs(info, bad))
                checked += theirs is not None
                if theirs is not None and ours is not theirs:
                    problems.append(
                        f"{desc}: gradstack {ours and ours.__name__} ({our_msg}), torch "
                        f"{theirs.__name__} ({their_msg})"
                    )
                elif ours is not None and theirs is None:
                    problems.append(
                        f"{desc}: gradstack raises {ours.__name__} ({our_msg}), torch works"
                    )
                elif our_msg and NUMPY_WORDS.search(our_msg):
                    problems.append(f"{desc}: numpy's words in {our_msg!r}")
    assert not problems, f"{name}:\n" + "\n".join(problems[:10])
    assert checked or name in _NOTHING_TO_REFUSE, f"{name}: no bad call was refused by torch"


# ops whose samples leave no argument to break (fills of a Python number ...)
_NOTHING_TO_REFUSE = {
    "zero_",
    "clone",
    "contiguous",
    "detach",
    "alias",
    "uniform_",
    "normal_",
    "clamp",
    "fill_",
    "to_dtype",
    "isnan",
    "isinf",
    "isfinite",
}


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda L: L.ones(2, 3).flip(0, -2), RuntimeError, "dim 0 appears multiple times"),
        (lambda L: L.ones(1, 2).squeeze((0, 0)), RuntimeError, "dim 0 appears multiple times"),
        (lambda L: L.ones(2, 3).amax((1, -1)), RuntimeError, "dim 1 appears multiple times"),
        (lambda L: L.ones(2, 3).std((0, 0)), RuntimeError, "dim 0 appears multiple times"),
        (lambda L: L.ones(2, 3).norm(dim=(0, 0)), RuntimeError, "appears multiple times"),
        (lambda L: L.tensor(1.0).cumsum(9), IndexError, "Dimension out of range"),
        (lambda L: L.tensor(1.0).softmax(-2), IndexError, "Dimension out of range"),
        (lambda L: L.tensor(1.0).sort(1), IndexError, "Dimension out of range"),
        (lambda L: L.tensor(1.0).logsumexp((0, -1)), RuntimeError, "appears multiple times"),
        (lambda L: L.ones(5).narrow(0, 9, 1), IndexError, "start out of range"),
        (lambda L: L.ones(5).narrow(0, 2, 4), RuntimeError, "exceeds dimension size"),
        (lambda L: L.ones(5).narrow(0, 2, -1), RuntimeError, "length must be non-negative"),
        (lambda L: L.tensor(1.0).narrow(0, 0, 1), RuntimeError, "cannot be applied to a 0-dim"),
        (
            lambda L: L.ones(2).masked_fill(L.ones(2), 0),
            RuntimeError,
            "only supports boolean masks",
        ),
        (lambda L: L.where(L.ones(2), L.ones(2), L.ones(2)), RuntimeError, "boolean tensor"),
        (
            lambda L: L.ones(2, 2).softmax(0).int().softmax(0),
            NotImplementedError,
            "not implemented",
        ),
        (lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.int64)), RuntimeError, "same dtype"),
        (lambda L: L.mm(L.ones(2, 2).bool(), L.ones(2, 2).bool()), NotImplementedError, "'Bool'"),
        (lambda L: L.ones(2, 2).bool().trace(), NotImplementedError, "'Bool'"),
        (
            lambda L: L.addmm(L.ones(2, 2).long(), L.ones(2, 2), L.ones(2, 2)),
            RuntimeError,
            "same dtype",
        ),
        (
            lambda L: L.ones(3).__setitem__([0, 1], L.ones(2).long()),
            RuntimeError,
            "Index put requires",
        ),
    ],
)
def test_errors_of_the_python_kernels_in_torch_words(call, error, words):
    with pytest.raises(error, match=words):
        call(gt)
    with pytest.raises(error, match=words):
        call(torch)


def test_accepted_where_torch_accepts():
    """The other side of the same rules: what torch allows, gradstack allows."""
    for L in (gt, torch):
        assert L.outer(L.ones(3), L.ones(2, dtype=L.int64)).dtype is L.float32
        assert L.ones(1, 2).squeeze((0, 1)).shape == (2,)
        x = L.ones(3)
        x[L.tensor([True, False, True])] = L.tensor(2.0, dtype=L.float64)  # masked_fill path
        assert x.tolist() == [2.0, 1.0, 2.0]
    # torch warns once per process: only gradstack's warning is checked
    with pytest.warns(UserWarning, match="uint8 condition"):
        r = gt.where(gt.ones(2, dtype=gt.uint8), gt.ones(2), gt.zeros(2))
    assert r.tolist() == torch.where(torch.ones(2, dtype=torch.uint8), 1.0, 0.0).tolist()
