"""Advanced indexing, gather, index_select, copy_, addmm and cat follow torch's rules.

Note [torch selects ints first] in ``_impl_indexing.py``: torch applies int indices as
``select`` before advanced indexing, so ``zeros(3, 4, 5)[0, :, [1, 1]]`` has shape
[4, 2] (numpy, counting the int as advanced, gives [2, 4]).  Each key below is compared
with torch 2.13: shape and values of ``x[key]``, and the tensor after ``x[key] = v``.
"""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest

torch = pytest.importorskip("torch")

BASE = np.arange(60.0).reshape(3, 4, 5)
MASK4 = np.array([True, False, True, True])
MASK3 = np.array([False, True, True])
MASK45 = np.arange(20).reshape(4, 5) % 3 == 0
# numpy's own phrasings, which must never reach a user
NUMPY_WORDS = (
    "for axis",
    "could not be broadcast together with shapes (",
    "AxisError",
    "ufunc",
    "ndarray",
    "tuple index out of range",
    "repeated axis",
    "array",
)


def _key(lib, key):
    """The key with numpy arrays as library tensors (lists and scalars stay Python)."""
    out = []
    for k in key:
        if isinstance(k, np.ndarray):
            out.append(lib.tensor(k))
        elif isinstance(k, tuple) and k and k[0] == "t":  # ("t", 1): a 0-d int tensor
            out.append(lib.tensor(k[1]))
        else:
            out.append(k)
    return tuple(out)


KEYS = [
    (0, slice(None), [1, 1]),
    (0, slice(None), [1, 2]),
    ([0, 2], slice(None), 1),
    (slice(None), 0, [1, 3]),
    (None, 0, slice(None), [1, 1]),
    (0, None, [1, 1]),
    ([1, 0], None, 0),
    (Ellipsis, 0, [1, 2]),
    (1, MASK4),
    (MASK3, slice(None), 0),
    (0, MASK45),
    (True,),
    (True, [0, 1]),
    ([0, 1], True),
    (0, True, [1]),
    (False,),
    ([[0, 1], [1, 2]], 0),
    (("t", 1), slice(None), [0, 4]),
    (slice(None, None, 2), 1, [[0], [2]]),
    (-1, slice(None), [-1]),
    ([0, 2], 1, [3, 4]),
    ([0, 2], slice(None), [3, 4]),
    (
        slice(1, 3),
        [0, 0, 3],
        slice(None),
    ),
    (1, slice(None), 2),
    ([], slice(None), 0),
]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_getitem_matches_torch(key):
    ours = gt.tensor(BASE)[_key(gt, key)]
    theirs = torch.tensor(BASE)[_key(torch, key)]
    assert list(ours.shape) == list(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_setitem_matches_torch(key):
    shape = tuple(torch.tensor(BASE)[_key(torch, key)].shape)
    value = -1.0 - np.arange(float(np.prod(shape))).reshape(shape)
    ours, theirs = gt.tensor(BASE), torch.tensor(BASE)
    # duplicate indices write the same element twice: use a value constant along them
    dup = any(isinstance(k, list) and len(set(map(str, k))) < len(k) for k in key)
    v = np.full(shape, -7.0) if dup else value
    ours[_key(gt, key)] = gt.tensor(v)
    theirs[_key(torch, key)] = torch.tensor(v)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # a scalar value broadcasts too
    ours[_key(gt, key)] = 0.5
    theirs[_key(torch, key)] = 0.5
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_the_issue_11_shape():
    assert list(gt.zeros(3, 4, 5)[0, :, [1, 1]].shape) == [4, 2]


@pytest.mark.parametrize(
    ("key", "value_shape", "error", "words"),
    [
        (
            (0, slice(None), [1, 1]),
            (3,),
            RuntimeError,
            "shape mismatch: value tensor of shape \\[3\\] cannot be broadcast to indexing "
            "result of shape \\[4, 2\\]",
        ),
        (
            (0,),
            (3,),
            RuntimeError,
            "The expanded size of the tensor \\(5\\) must match the existing size \\(3\\)",
        ),
        (
            (0, slice(None), [7]),
            (),
            IndexError,
            "index 7 is out of bounds for dimension 2 with size 5",
        ),
        (
            (5, slice(None), [1]),
            (),
            IndexError,
            "index 5 is out of bounds for dimension 0 with size 3",
        ),
        (
            (slice(None), False, [0, 1]),
            (),
            IndexError,
            "shape mismatch: indexing tensors could not be broadcast together",
        ),
    ],
)
def test_index_errors_in_torch_words(key, value_shape, error, words):
    x = gt.zeros(3, 4, 5)
    with pytest.raises(error, match=words):
        x[key] = gt.ones(value_shape)
    with pytest.raises(error):
        torch.zeros(3, 4, 5)[key] = torch.ones(value_shape)


def test_uint8_index_is_a_mask_with_torch_warning():
    idx = np.array([1, 0, 1], dtype=np.uint8)
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        ours = gt.tensor(BASE)[gt.tensor(idx)]
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        theirs = torch.tensor(BASE)[torch.tensor(idx)]
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# gather / index_select: (call, expected torch outcome) on both libraries


def _gather_calls(lib):
    x = lib.arange(6.0).reshape(2, 3)
    t = lib.tensor
    return {
        "smaller_index": lambda: lib.gather(x, 0, t([[0]])),
        "smaller_dim1": lambda: lib.gather(x, 1, t([[2], [0]])),
        "larger_along_dim": lambda: lib.gather(x, 0, t([[0, 0, 0], [1, 1, 1], [0, 1, 0]])),
        "larger_elsewhere": lambda: lib.gather(x, 0, t([[0, 0, 0, 0]])),
        "negative": lambda: lib.gather(x, 0, t([[-1]])),
        "out_of_range": lambda: lib.gather(x, 0, t([[2]])),
        "fewer_dims": lambda: lib.gather(x, 0, t([0])),
        "int32": lambda: lib.gather(x, 0, t([[1]], dtype=lib.int32)),
        "float_index": lambda: lib.gather(x, 0, t([[0.0]])),
        "zero_d": lambda: lib.gather(t(5.0), 0, t(0)),
        "zero_d_vector_index": lambda: lib.gather(t(5.0), 0, t([0, 0])),
        "empty_index": lambda: lib.gather(x, 0, lib.zeros(0, 3, dtype=lib.int64)),
        "bad_dim": lambda: lib.gather(x, 2, t([[0]])),
        "is_negative": lambda: x.index_select(0, t([-1])),
        "is_out_of_range": lambda: x.index_select(1, t([3])),
        "is_int32": lambda: x.index_select(0, t([1], dtype=lib.int32)),
        "is_matrix_index": lambda: x.index_select(0, t([[1]])),
        "is_0d_index": lambda: x.index_select(1, t(2)),
        "is_float_index": lambda: x.index_select(0, t([1.0])),
        "is_0d_input": lambda: t(5.0).index_select(0, t([0])),
        "is_0d_input_oob": lambda: t(5.0).index_select(0, t([1])),
        "copy_leading_one": lambda: lib.zeros(2).copy_(lib.ones(1, 2)),
        "copy_mismatch": lambda: lib.zeros(2).copy_(lib.ones(3)),
        "copy_broadcast": lambda: lib.zeros(2, 2).copy_(lib.ones(1)),
        "copy_same_numel": lambda: lib.zeros(2, 2).copy_(lib.ones(4)),
        "addmm_3d_input": lambda: lib.addmm(lib.ones(3, 1, 1), lib.ones(2, 2), lib.ones(2, 2)),
        "addmm_bad_vector": lambda: lib.addmm(lib.ones(3), lib.ones(2, 2), lib.ones(2, 2)),
        "addmm_column": lambda: lib.addmm(lib.ones(2, 1), lib.ones(2, 2), lib.ones(2, 2)),
        "addmm_0d": lambda: lib.addmm(t(1.0), lib.ones(2, 2), lib.ones(2, 2)),
        "addmm_beta0_bad": lambda: lib.addmm(lib.ones(3), lib.ones(2, 2), lib.ones(2, 2), beta=0),
        "addmm_bad_rows": lambda: lib.addmm(lib.ones(4, 2), lib.ones(2, 2), lib.ones(2, 2)),
        "cat_empty_list": lambda: lib.cat([]),
        "cat_empty_tuple": lambda: lib.cat(()),
        "stack_empty": lambda: lib.stack([]),
    }


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the outcome is compared, whatever it is
        return type(e), str(e)
    return None, (list(r.shape), r.tolist())


@pytest.mark.parametrize("name", list(_gather_calls(torch)))
def test_gather_index_select_copy_addmm_cat_match_torch(name):
    ours_type, ours = _outcome(_gather_calls(gt)[name])
    theirs_type, theirs = _outcome(_gather_calls(torch)[name])
    assert ours_type is theirs_type, (ours, theirs)
    if theirs_type is None:
        assert ours == theirs
    else:
        # torch's words, without numpy's; the first sentence of torch's message
        head = theirs.replace("torch.cat", "cat").split(". ")[0].split(" (")[0]
        assert head[:40] in ours, (ours, theirs)
        for numpy_words in NUMPY_WORDS:
            assert numpy_words not in ours


def test_the_issue_11_gather_and_index_select():
    assert gt.gather(gt.arange(6.0).reshape(2, 3), 0, gt.tensor([[0]])).tolist() == [[0.0]]
    with pytest.raises(IndexError, match="index out of range in self"):
        gt.arange(6.0).index_select(0, gt.tensor([-1]))


def _shape_or_error(lib, shape, key, value=None):
    x = lib.zeros(shape)
    try:
        if value is None:
            return list(x[key].shape)
        x[key] = value
        return x.tolist()
    except IndexError as e:
        return ("IndexError", str(e).split(" (indexing")[0])


@pytest.mark.parametrize(
    "shape,key,value",
    [
        # seed 1 #1643, #3249, #5828, #6775, #27502, #7230, #23624: an empty result reads
        # no index, so an index out of bounds raises nothing (torch's kernel checks reads)
        ((1, 0, 1, 1, 1, 1), (0, None, [0], []), None),
        ((1, 1, 1), (slice(None, 0), [1, 1, 1, 2], slice(None)), None),
        ((1, 1, 1, 1), (None, [2], slice(None, -3, 2)), None),
        ((1, 0), ([-1, 2], slice(None)), None),
        ((3, 1), ([0, 3], slice(None, -2, 3), None), 1.0),
        ((1, 1, 1, 1, 1), ([-1, -1, 0, 2], None, 0, [0], slice(None, 0, 3)), 3.0),
        # with elements, the same indices raise torch's IndexError
        ((1, 2), ([-1, 2], slice(None)), None),
        ((3, 2), ([0, 3], 1), None),
        ((3, 1), ([0, 3], slice(None)), 3.0),
        # an index into a dim of size 0 is refused, once broadcast (seed 20261201 #1782)
        ((0, 1), ([0, 0], slice(None, 0, 2)), None),
        ((0, 1), ([0, 0], slice(None, 0, 2)), 0.5),
        ((0, 3), ([0], []), None),
    ],
)
def test_an_empty_result_checks_no_index(shape, key, value):
    got = _shape_or_error(gt, shape, key, value)
    want = _shape_or_error(torch, shape, key, value)
    assert got == want


@pytest.mark.parametrize("dim", [-2, 1, 5, 0, -1])
def test_cat_of_only_legacy_empty_tensors_takes_any_dim(dim):
    # seed 1 #3774, #9544, #32246: torch skips (0,) tensors, so with nothing else any
    # dim is accepted; gradstack checked dim against one dimension
    def run(lib):
        a = lib.zeros(0, dtype=lib.int16)
        r = lib.cat([a, lib.zeros(0, dtype=lib.float16), a], dim)
        return list(r.shape), str(r.dtype).split(".")[-1]

    assert run(gt) == run(torch)


@pytest.mark.parametrize(
    "op,sa,da,sb,db",
    [
        # seed 1 #4187, #24121, #10135: an empty batched product checks no dtype and takes
        # the second operand's (torch's bmm allocates with batch2's options)
        ("bmm", (3, 1, 0), "float64", (3, 0, 1), "float32"),
        ("bmm", (0, 3, 2), "int64", (0, 2, 1), "float32"),
        ("bmm", (1, 0, 2), "float16", (1, 2, 3), "float64"),
        ("matmul", (1, 0), "int64", (1, 0, 1), "int16"),
        ("matmul", (2, 2, 0), "int64", (2, 0, 1), "float32"),
        # not empty, or folded into mm/mv by torch: the dtype error stays
        ("bmm", (3, 1, 2), "float64", (3, 2, 1), "float32"),
        ("matmul", (1, 0), "int32", (0, 3), "float32"),
        ("matmul", (0,), "int64", (2, 0, 1), "float32"),
    ],
)
def test_an_empty_batched_product_checks_no_dtype(op, sa, da, sb, db):
    def run(lib):
        a = lib.zeros(sa, dtype=getattr(lib, da))
        b = lib.ones(sb, dtype=getattr(lib, db))
        try:
            r = getattr(lib, op)(a, b)
        except RuntimeError:
            return "RuntimeError"
        return list(r.shape), str(r.dtype).split(".")[-1], r.tolist()

    assert run(gt) == run(torch)


def test_setitem_converts_the_value_before_it_looks_at_the_index():
    # fuzz seed 38 #5823: torch's valueToTensor runs first, so a number that does not fit
    # the dtype is refused even where the index is out of range (or not an index at all)
    t = gt.zeros((0, 2, 1), dtype=gt.uint8)
    for index in ([[0], [0, -1, -2]], 5, (0, 0, 0)):
        with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t"):
            t[index] = -0.75
    with pytest.raises(RuntimeError, match="cannot be converted to type float"):
        gt.zeros(3)[5] = 1e300
    with pytest.raises(TypeError, match="can't assign a str"):
        t[[0], [0, 1]] = "s"
    with pytest.raises(IndexError):
        t[[0], [0, 1]] = 1  # a value that fits: the index's error


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
@pytest.mark.parametrize("key", ["a", b"x", (1, "a"), ("a", 1), (0, 0, "a"), ("a", Ellipsis)])
def test_a_str_index_raises_as_in_torch(shape, key):
    # torch reads a str as a sequence and fails to make a tensor of it (TypeError), after
    # its count of dims (IndexError)
    for op in ("get", "set"):
        outcomes = []
        for lib in (gt, torch):
            t = lib.zeros(*shape)
            with pytest.raises((TypeError, IndexError)) as info:
                if op == "get":
                    t[key]
                else:
                    t[key] = 1.0
            outcomes.append((info.type, str(info.value).split(" (")[0]))
        assert outcomes[0] == outcomes[1], (op, outcomes)
